"""Reductions of the namespace (one function per registry row: sum, mean, std, max, ...),
median and quantiles, scans (cumulative_sum, cumsum, ...), where, clip and astype."""

from __future__ import annotations

import builtins as _builtins
import functools

import numpy as np

from . import _core, _registry, _unwrap
from ._array import Array
from ._registry import registered as _registered
from ._shape_functions import _axis
from ._serial import namespace as _ns

__all__: list[str] = []


def _check_axis(axis, fn):
    if axis is None or isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
        return None if axis is None else _axis(axis, fn)
    if isinstance(axis, (tuple, list)) and _builtins.all(
        isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in axis
    ):
        return tuple(_axis(a, fn) for a in axis)
    raise TypeError(f"axis must be None, an int or a tuple of ints, got {axis!r}")


def _reduction(entry):
    name = entry["name"]

    def body(x, axis, keepdims, dtype=None, correction=None, ddof=None):
        if entry["single_axis"] and axis is not None and not isinstance(axis, (int, np.integer)):
            raise TypeError(f"{name}(): axis must be None or an int")
        if correction is not None and ddof is not None:
            raise TypeError(f"{name}(): give correction or ddof, not both")
        corr = correction if correction is not None else (ddof if ddof is not None else 0)
        if not isinstance(keepdims, (bool, np.bool_)):
            raise TypeError(f"{name}(): keepdims must be a bool, got {keepdims!r}")
        return Array(
            _core.reduce(name, _ns().asarray(x)._a, _check_axis(axis, name), bool(keepdims), dtype, float(corr))
        )

    flattened = "the array flattened" if entry["single_axis"] else "all axes"
    return _registry.generated(name, body, f"Lazy {name} over `axis` (None: {flattened}), NumPy semantics.")


# One function per reduction of the registry (names, arguments and defaults shared with
# the expression strings and the command).
_reduction_names = [e["name"] for e in _registry.ENTRIES.values() if e["family"] == "reduction"]
for _n in _reduction_names:
    globals()[_n] = _reduction(_registry.ENTRIES[_n])
del _n
globals()["logsumexp"].__doc__ = "Lazy log(sum(exp(x))) over `axis` (scipy.special.logsumexp), without overflow."


def _holistic(name, q, x, axis, keepdims, method):
    if not isinstance(keepdims, (bool, np.bool_)):
        raise TypeError(f"{name}(): keepdims must be a bool, got {keepdims!r}")
    x = _ns().asarray(x)
    qs = np.asarray(q, dtype=np.float64)
    if qs.ndim == 0:
        return Array(_core.quantile(name, x._a, float(qs), _check_axis(axis, name), bool(keepdims), method))
    # Several quantiles: stacked along a new first axis, as NumPy's (each a recorded call of
    # its own, so a saved expression holds them as such).
    one = getattr(_ns(), name)
    parts = [one(x, float(v), axis=axis, method=method, keepdims=keepdims) for v in qs.ravel()]
    return _ns().reshape(_ns().stack(parts), qs.shape + parts[0].shape)


@_registered
def median(x, /, axis, *, keepdims):
    """Lazy median over `axis` (None: all axes), as np.median (a slice with NaN gives NaN).
    Each output pulls its slice whole when it fits the budget, else selects it in passes."""
    return _holistic("median", 0.5, x, axis, keepdims, "linear")


@_registered
def quantile(x, /, q, axis, *, method, keepdims):
    """Lazy q-th quantile(s), 0 <= q <= 1, over `axis`, as np.quantile (methods 'linear',
    'lower', 'higher', 'nearest', 'midpoint')."""
    return _holistic("quantile", q, x, axis, keepdims, method)


@_registered
def percentile(x, /, q, axis, *, method, keepdims):
    """Lazy q-th percentile(s), 0 <= q <= 100, over `axis`, as np.percentile."""
    return _holistic("percentile", q, x, axis, keepdims, method)


__all__ += ["median", "quantile", "percentile"]


def _axis_int(axis, fn):
    if axis is None:
        return None
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{fn}(): axis must be None or an int, got {axis!r}")
    return _axis(axis, fn)


@_registered
def cumulative_sum(x, /, *, axis, dtype, include_initial):
    """Array API cumulative sum (axis required for more than one dimension)."""
    return Array(
        _core.scan("sum", _ns().asarray(x)._a, _axis_int(axis, "cumulative_sum"), dtype, bool(include_initial), False)
    )


@_registered
def cumulative_prod(x, /, *, axis, dtype, include_initial):
    return Array(
        _core.scan("prod", _ns().asarray(x)._a, _axis_int(axis, "cumulative_prod"), dtype, bool(include_initial), False)
    )


@_registered
def cumsum(x, axis, dtype):
    """NumPy cumsum: axis=None scans the array flattened in C order."""
    return Array(_core.scan("sum", _ns().asarray(x)._a, _axis_int(axis, "cumsum"), dtype, False, True))


@_registered
def cumprod(x, axis, dtype):
    return Array(_core.scan("prod", _ns().asarray(x)._a, _axis_int(axis, "cumprod"), dtype, False, True))


__all__ += _reduction_names + ["cumulative_sum", "cumulative_prod", "cumsum", "cumprod"]


def _method(f):
    """f as an Array method; its signature (inspect.signature) is f's, self as x."""

    @functools.wraps(f)
    def method(self, /, *args, **kwargs):
        return f(self, *args, **kwargs)

    return method


@_registered
def where(condition, x, y):
    """Elements of `x` where `condition` is true, else of `y`; with only `condition`,
    nonzero(condition)."""
    if x is None and y is None:
        return _ns().nonzero(condition)
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
    return Array(_core.where(_unwrap(condition), _unwrap(x), _unwrap(y)))


@_registered
def clip(x, /, min, max):
    return Array(_core.clip(_unwrap(x), None if min is None else _unwrap(min), None if max is None else _unwrap(max)))


@_registered
def astype(x, dtype, /, *, copy, device):
    """`x` cast to `dtype`, lazily (see Array.astype)."""
    return _ns().asarray(x).astype(dtype, copy=copy, device=device)
