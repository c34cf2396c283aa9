"""The Array API's fft extension as namespace functions (``fft_fft``, ``fft_rfftn``, ...):
the rows of the C++ function registry that :mod:`b2lazy.fft`'s functions call, and that
expression strings call by the same names. Lazy: a region of a transform along an axis
pulls the whole lanes it crosses and transforms them by FFTW; lanes longer than
``b2lazy._core.fft_lane_length()`` elements are transformed in four steps (Bailey's), each
a lazy stage the plan keeps for the next, so a lane need not fit ``max_memory``."""

from __future__ import annotations

import numbers

import numpy as np

from . import Array, _core, asarray
from ._dtypes import as_dtype
from ._registry import registered as _registered

__all__ = [
    "fft_fft",
    "fft_ifft",
    "fft_fftn",
    "fft_ifftn",
    "fft_rfft",
    "fft_irfft",
    "fft_rfftn",
    "fft_irfftn",
    "fft_hfft",
    "fft_ihfft",
    "fft_fftfreq",
    "fft_rfftfreq",
    "fft_fftshift",
    "fft_ifftshift",
]


def _int(v, name, fn):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Integral, np.integer)):
        raise TypeError(f"{fn}(): {name} must be an int, got {type(v).__name__} {v!r}")
    return int(v)


def _n(n, fn):
    return None if n is None else _int(n, "n", fn)


def _axis(axis, fn):
    axis = _int(axis, "axis", fn)
    if not -(2**31) <= axis < 2**31:
        raise np.exceptions.AxisError(f"{fn}: axis {axis} is out of bounds")
    return axis


def _ints(v, name, fn):
    if v is None:
        return None
    if isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return [int(v)]
    try:
        return [_int(e, name, fn) for e in v]
    except TypeError:
        raise TypeError(f"{fn}(): {name} must be None, an int or a sequence of ints, got {v!r}") from None


def _norm(norm, fn):
    if norm not in ("backward", "ortho", "forward"):
        raise ValueError(f"{fn}(): norm must be 'backward', 'ortho' or 'forward', got {norm!r}")
    return norm


def _one(kind, x, n, axis, norm):
    return Array(_core.fft_1d(kind, asarray(x)._a, _n(n, kind), _axis(axis, kind), _norm(norm, kind)))


def _nd(kind, x, s, axes, norm):
    return Array(_core.fft_nd(kind, asarray(x)._a, _ints(s, "s", kind), _ints(axes, "axes", kind), _norm(norm, kind)))


def _freq(real, fn, n, d, dtype, device):
    if device not in (None, "cpu"):
        raise ValueError(f"{fn}(): device must be 'cpu' or None, got {device!r}")
    if isinstance(d, (bool, np.bool_)) or not isinstance(d, (numbers.Real, np.number)):
        raise TypeError(f"{fn}(): d must be a real number, got {type(d).__name__} {d!r}")
    name = None if dtype is None else np.dtype(as_dtype(dtype, fn)).name
    return Array(_core.fft_freq(real, _int(n, "n", fn), float(d), name))


# --- docstrings: one per function, shared with b2lazy.fft's ---------------------------------
_X = "    x : array_like\n        Input array{what}.\n"
_N = (
    "    n : int, optional\n        Length of the transform{which}: `x` is cropped or padded with zeros along "
    "`axis` to\n        {read} (None: {default}).\n"
)
_AXIS = "    axis : int, optional\n        The axis to transform (default the last).\n"
_NORM = (
    "    norm : {'backward', 'ortho', 'forward'}, optional\n        Which direction is scaled by 1/n: "
    "'backward' the inverse, 'forward' the forward\n        transform, 'ortho' both by 1/sqrt(n).\n"
)
_S = (
    "    s : sequence of int, optional\n        Lengths of the transforms along `axes` (-1: the input's length{last}); "
    "`x` is\n        cropped or padded with zeros to them.\n"
)
_AXES = (
    "    axes : sequence of int, optional\n        The axes to transform (None: the last len(s) axes, or all of "
    "them).\n"
)


def _doc(summary, params, returns, example, extra=""):
    params = "".join(line[4:] + "\n" for line in params.splitlines())  # (written indented by 4 above)
    text = f"{summary}\n\n{extra}Parameters\n----------\n{params}\nReturns\n-------\nArray\n    {returns}\n\n"
    return text + f"Examples\n--------\n>>> import numpy as np\n>>> import b2lazy as bl\n{example}"


def _ex(call, oracle, x="x = np.array([1.0, 2.0, 0.5, -1.0, 3.0, 0.0])"):
    return f">>> {x}\n>>> np.allclose(bl.fft.{call}.to_numpy(), np.fft.{oracle})\nTrue\n"


_LAZY = (
    "Lazy: a region of the result pulls the whole lanes of `x` along the axis it crosses and\n"
    "transforms them (FFTW); lanes longer than ``b2lazy._core.fft_lane_length()`` elements are\n"
    "transformed out of core, in four steps.\n\n"
)
_C1 = "Complex: complex64 for complex64, float32 and float16 `x`, else complex128."
_R1 = "Real: float32 for complex64, float32 and float16 `x`, else float64."
_CR = "Complex: complex64 for float32 and float16 `x`, else complex128."
DOCS = {
    "fft": _doc(
        "The one-dimensional discrete Fourier transform along `axis`.",
        _X.format(what="") + _N.format(which="", read="n", default="its length") + _AXIS + _NORM,
        _C1,
        _ex("fft(x)", "fft(x)"),
        _LAZY,
    ),
    "ifft": _doc(
        "The one-dimensional inverse discrete Fourier transform along `axis`.",
        _X.format(what="") + _N.format(which="", read="n", default="its length") + _AXIS + _NORM,
        _C1,
        _ex("ifft(bl.fft.fft(x))", "ifft(np.fft.fft(x))"),
        _LAZY,
    ),
    "rfft": _doc(
        "The one-dimensional discrete Fourier transform of real `x`: the n // 2 + 1\nnon-negative frequencies.",
        _X.format(what=" (real)") + _N.format(which="", read="n", default="its length") + _AXIS + _NORM,
        _CR,
        _ex("rfft(x, n=8)", "rfft(x, n=8)"),
        _LAZY,
    ),
    "irfft": _doc(
        "The inverse of rfft: n real values from the n // 2 + 1 non-negative frequencies.",
        _X.format(what=" (its non-negative frequencies)")
        + _N.format(which=" (of the output)", read="n // 2 + 1", default="2 * (m - 1), m the length of `x`")
        + _AXIS
        + _NORM,
        _R1,
        _ex("irfft(bl.fft.rfft(x))", "irfft(np.fft.rfft(x))"),
        _LAZY,
    ),
    "hfft": _doc(
        "The discrete Fourier transform of a signal with Hermitian symmetry (real spectrum):\n"
        "`x` holds its first half.",
        _X.format(what=" (the first half of the Hermitian signal)")
        + _N.format(which=" (of the output)", read="n // 2 + 1", default="2 * (m - 1), m the length of `x`")
        + _AXIS
        + _NORM,
        _R1,
        _ex("hfft(x)", "hfft(x)"),
        _LAZY,
    ),
    "ihfft": _doc(
        "The inverse of hfft: the first half of the Hermitian signal whose transform is real `x`.",
        _X.format(what=" (real)") + _N.format(which="", read="n", default="its length") + _AXIS + _NORM,
        _CR,
        _ex("ihfft(x)", "ihfft(x)"),
        _LAZY,
    ),
    "fftn": _doc(
        "The n-dimensional discrete Fourier transform over `axes`: one-dimensional\ntransforms along each of them.",
        _X.format(what="") + _S.format(last="") + _AXES + _NORM,
        _C1,
        _ex("fftn(x)", "fftn(x)", "x = np.arange(12.0).reshape(3, 4)"),
        _LAZY,
    ),
    "ifftn": _doc(
        "The n-dimensional inverse discrete Fourier transform over `axes`.",
        _X.format(what="") + _S.format(last="") + _AXES + _NORM,
        _C1,
        _ex("ifftn(x, axes=(0,))", "ifftn(x, axes=(0,))", "x = np.arange(12.0).reshape(3, 4)"),
        _LAZY,
    ),
    "rfftn": _doc(
        "The n-dimensional discrete Fourier transform of real `x`: rfft along the last of\n"
        "`axes`, then fft along the others.",
        _X.format(what=" (real)") + _S.format(last="") + _AXES + _NORM,
        _CR,
        _ex("rfftn(x)", "rfftn(x)", "x = np.arange(12.0).reshape(3, 4)"),
        _LAZY,
    ),
    "irfftn": _doc(
        "The inverse of rfftn: ifft along all of `axes` but the last, then irfft along it.",
        _X.format(what="") + _S.format(last="; along the last axis 2 * (m - 1)") + _AXES + _NORM,
        _R1,
        _ex(
            "irfftn(bl.fft.rfftn(x), s=(3, 4))",
            "irfftn(np.fft.rfftn(x), s=(3, 4))",
            "x = np.arange(12.0).reshape(3, 4)",
        ),
        _LAZY,
    ),
    "fftfreq": _doc(
        "The sample frequencies of a transform of length n: [0, 1, ..., -(n // 2), ..., -1]\n"
        "/ (d n). A creation function: computed for whatever region is asked.",
        "    n : int\n        The transform's length.\n    d : float, optional\n        The sample "
        "spacing.\n    dtype : dtype, optional\n        float64 (default) or float32.\n"
        "    device : str, optional\n        ``'cpu'`` or None.\n",
        "Frequencies, float64 unless `dtype` says otherwise.",
        ">>> bl.fft.fftfreq(5, d=0.5).to_numpy()\narray([ 0. ,  0.4,  0.8, -0.8, -0.4])\n",
    ),
    "rfftfreq": _doc(
        "The sample frequencies of rfft of length n: [0, 1, ..., n // 2] / (d n).",
        "    n : int\n        The transform's length.\n    d : float, optional\n        The sample "
        "spacing.\n    dtype : dtype, optional\n        float64 (default) or float32.\n"
        "    device : str, optional\n        ``'cpu'`` or None.\n",
        "Frequencies, float64 unless `dtype` says otherwise.",
        ">>> bl.fft.rfftfreq(5, d=0.5).to_numpy()\narray([0. , 0.4, 0.8])\n",
    ),
    "fftshift": _doc(
        "`x` with the zero frequency moved to the middle of `axes` (a lazy roll by half of\neach axis).",
        _X.format(what="") + "    axes : int or sequence of int, optional\n        The axes to shift (None: all).\n",
        "Same dtype as `x`.",
        ">>> bl.fft.fftshift(bl.fft.fftfreq(5)).to_numpy()\narray([-0.4, -0.2,  0. ,  0.2,  0.4])\n",
    ),
    "ifftshift": _doc(
        "The inverse of fftshift (they differ for odd lengths).",
        _X.format(what="") + "    axes : int or sequence of int, optional\n        The axes to shift (None: all).\n",
        "Same dtype as `x`.",
        ">>> bl.fft.ifftshift(bl.fft.fftshift(bl.fft.fftfreq(5))).to_numpy()\narray([ 0. ,  0.2,  0.4, -0.4, -0.2])\n",
    ),
}


def _documented(fn):
    fn.__doc__ = DOCS[fn.__name__.removeprefix("fft_")]
    return fn


@_registered
@_documented
def fft_fft(x, /, *, n, axis, norm):
    return _one("fft", x, n, axis, norm)


@_registered
@_documented
def fft_ifft(x, /, *, n, axis, norm):
    return _one("ifft", x, n, axis, norm)


@_registered
@_documented
def fft_rfft(x, /, *, n, axis, norm):
    return _one("rfft", x, n, axis, norm)


@_registered
@_documented
def fft_irfft(x, /, *, n, axis, norm):
    return _one("irfft", x, n, axis, norm)


@_registered
@_documented
def fft_hfft(x, /, *, n, axis, norm):
    return _one("hfft", x, n, axis, norm)


@_registered
@_documented
def fft_ihfft(x, /, *, n, axis, norm):
    return _one("ihfft", x, n, axis, norm)


@_registered
@_documented
def fft_fftn(x, /, *, s, axes, norm):
    return _nd("fftn", x, s, axes, norm)


@_registered
@_documented
def fft_ifftn(x, /, *, s, axes, norm):
    return _nd("ifftn", x, s, axes, norm)


@_registered
@_documented
def fft_rfftn(x, /, *, s, axes, norm):
    return _nd("rfftn", x, s, axes, norm)


@_registered
@_documented
def fft_irfftn(x, /, *, s, axes, norm):
    return _nd("irfftn", x, s, axes, norm)


@_registered
@_documented
def fft_fftfreq(n, /, *, d, dtype, device):
    return _freq(False, "fftfreq", n, d, dtype, device)


@_registered
@_documented
def fft_rfftfreq(n, /, *, d, dtype, device):
    return _freq(True, "rfftfreq", n, d, dtype, device)


@_registered
@_documented
def fft_fftshift(x, /, *, axes):
    return Array(_core.fft_shift(False, asarray(x)._a, _ints(axes, "axes", "fftshift")))


@_registered
@_documented
def fft_ifftshift(x, /, *, axes):
    return Array(_core.fft_shift(True, asarray(x)._a, _ints(axes, "axes", "ifftshift")))
