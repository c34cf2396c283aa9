"""The Array API inspection namespace (``b2lazy.__array_namespace_info__()``): what b2lazy
can do, its one device and its default dtypes."""

from __future__ import annotations

from ._dtypes import DTYPES, _KINDS

# b2lazy computes on the CPU, in its own thread pool; its one device has this name.
CPU = "cpu"


def check_device(device, fn):
    """`device` must be None or b2lazy's one device; ValueError naming `fn` otherwise."""
    if device is not None and device != CPU:
        raise ValueError(f"{fn}: unsupported device {device!r} (b2lazy has one device, {CPU!r})")


class Info:
    """What ``__array_namespace_info__()`` returns."""

    __slots__ = ()

    def capabilities(self):
        # Boolean masks and data-dependent shapes (nonzero, x[mask]) are counted in a
        # first pass, then evaluated lazily; arrays of any number of axes.
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}

    def default_device(self):
        return CPU

    def devices(self):
        return [CPU]

    def default_dtypes(self, *, device=None):
        check_device(device, "default_dtypes")
        return {
            "real floating": DTYPES["float64"],
            "complex floating": DTYPES["complex128"],
            "integral": DTYPES["int64"],
            "indexing": DTYPES["int64"],
        }

    def dtypes(self, *, device=None, kind=None):
        check_device(device, "dtypes")
        if kind is None:
            return dict(DTYPES)
        kinds = kind if isinstance(kind, tuple) else (kind,)
        for k in kinds:
            if k not in _KINDS:
                raise ValueError(f"dtypes: unknown kind {k!r} (known: {', '.join(_KINDS)})")
        letters = {c for k in kinds for c in _KINDS[k]}
        return {n: d for n, d in DTYPES.items() if d.kind in letters}


def __array_namespace_info__():
    """The Array API's inspection namespace: b2lazy's capabilities, device and dtypes.

    Returns
    -------
    Info
        With capabilities(), default_device(), devices(), default_dtypes() and dtypes().

    Examples
    --------
    >>> info = bl.__array_namespace_info__()
    >>> info.default_device(), info.devices()
    ('cpu', ['cpu'])
    >>> info.default_dtypes()["real floating"]
    dtype('float64')
    """
    return Info()
