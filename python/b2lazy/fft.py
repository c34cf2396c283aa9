"""The Array API's fft extension, lazy and out of core: ``b2lazy.fft.fft(x)`` and the rest.

Every function returns a lazy :class:`b2lazy.Array`. A region of a transform along an axis
pulls the whole lanes of its input along that axis (the axis entire, the other axes as
asked), transforms them by FFTW and keeps the region's part; an n-dimensional transform is
one-dimensional transforms along each axis, each a lazy stage. A lane longer than
``b2lazy._core.fft_lane_length()`` elements (default 2**22) is transformed in four steps
(Bailey's): the lane as an N1 x N2 matrix, transforms along its columns, twiddle factors,
transforms along its rows, read transposed; each step a stage the plan keeps (spilled when
large), so the transform stays within ``max_memory``.

Dtypes are the standard's: complex64 stays complex64, float32 gives complex64, float64 and
integers complex128; irfft, irfftn and hfft give the matching real dtype; rfft, rfftn and
ihfft take real input. Each function is the namespace function ``b2lazy.fft_<name>`` (the
name expression strings call, and that saved expressions record).
"""

from __future__ import annotations

__all__ = [
    "fft",
    "ifft",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfftn",
    "irfftn",
    "hfft",
    "ihfft",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]


def _ns():
    import b2lazy  # (at call time: the recording wrappers of the namespace)

    return b2lazy


def fft(x, /, *, n=None, axis=-1, norm="backward"):
    return _ns().fft_fft(x, n=n, axis=axis, norm=norm)


def ifft(x, /, *, n=None, axis=-1, norm="backward"):
    return _ns().fft_ifft(x, n=n, axis=axis, norm=norm)


def rfft(x, /, *, n=None, axis=-1, norm="backward"):
    return _ns().fft_rfft(x, n=n, axis=axis, norm=norm)


def irfft(x, /, *, n=None, axis=-1, norm="backward"):
    return _ns().fft_irfft(x, n=n, axis=axis, norm=norm)


def hfft(x, /, *, n=None, axis=-1, norm="backward"):
    return _ns().fft_hfft(x, n=n, axis=axis, norm=norm)


def ihfft(x, /, *, n=None, axis=-1, norm="backward"):
    return _ns().fft_ihfft(x, n=n, axis=axis, norm=norm)


def fftn(x, /, *, s=None, axes=None, norm="backward"):
    return _ns().fft_fftn(x, s=s, axes=axes, norm=norm)


def ifftn(x, /, *, s=None, axes=None, norm="backward"):
    return _ns().fft_ifftn(x, s=s, axes=axes, norm=norm)


def rfftn(x, /, *, s=None, axes=None, norm="backward"):
    return _ns().fft_rfftn(x, s=s, axes=axes, norm=norm)


def irfftn(x, /, *, s=None, axes=None, norm="backward"):
    return _ns().fft_irfftn(x, s=s, axes=axes, norm=norm)


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    return _ns().fft_fftfreq(n, d=d, dtype=dtype, device=device)


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    return _ns().fft_rfftfreq(n, d=d, dtype=dtype, device=device)


def fftshift(x, /, *, axes=None):
    return _ns().fft_fftshift(x, axes=axes)


def ifftshift(x, /, *, axes=None):
    return _ns().fft_ifftshift(x, axes=axes)


def _document():
    from ._fft import DOCS

    for name in __all__:
        globals()[name].__doc__ = DOCS[name]


_document()
