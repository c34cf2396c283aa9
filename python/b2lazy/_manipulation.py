"""Array API manipulation and utility functions beyond the package's shape functions:
broadcast_arrays, unstack, tile, repeat, diagonal, trace and diff. All lazy: tile,
repeat and diagonal are nodes of their own that read only the input they map to."""

from __future__ import annotations

import numpy as np

from . import Array, _axis, _core, asarray
from ._creation import _diagonal_index
from ._dtypes import as_dtype
from ._registry import registered as _registered

__all__ = ["broadcast_arrays", "tile", "repeat", "diagonal", "trace", "diff"]


@_registered
def broadcast_arrays(*arrays):
    """The arrays broadcast to their common shape (views, nothing is copied)."""
    return [Array(a) for a in _core.broadcast_arrays([asarray(a)._a for a in arrays])]


def _axis_arg(axis, fn):
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{fn}: axis must be an int, got {axis!r}")
    return _axis(axis, fn)


def _normalized(axis, ndim, fn):
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"{fn}: axis {axis} is out of bounds for an array of {ndim} dimensions")
    return axis % ndim


@_registered
def tile(x, repetitions, /):
    """`x` repeated along each axis (NumPy's tile: short `repetitions` apply to the last
    axes, long ones add leading axes). Lazy: a region reads the input it wraps onto."""
    if isinstance(repetitions, (int, np.integer)) and not isinstance(repetitions, bool):
        repetitions = (repetitions,)
    return Array(_core.tile(asarray(x)._a, tuple(repetitions)))


@_registered
def repeat(x, repeats, /, *, axis):
    """Each element repeated `repeats` times along `axis` (None: x flattened first);
    `repeats` is an int or one count per element (an integer array, read now: the
    result's length depends on it). Lazy otherwise."""
    if axis is not None:
        axis = _axis_arg(axis, "repeat")
    if isinstance(repeats, bool):
        raise TypeError("repeat: repeats must be an integer or an integer array, got a bool")
    if not isinstance(repeats, (int, np.integer)):
        r = np.asarray(repeats.to_numpy() if isinstance(repeats, Array) else repeats)
        if r.dtype.kind not in "iu" and not (r.size == 0 and r.dtype.kind == "f"):
            raise TypeError(f"repeat: repeats must be integers, got dtype {r.dtype}")
        if r.ndim > 1:
            raise ValueError(f"repeat: repeats must be an integer or a 1-d array, got shape {r.shape}")
        if r.dtype.kind == "u" and r.size and r.max() > np.iinfo(np.int64).max:
            raise ValueError("repeat: a repeat count beyond int64")
        r = np.ascontiguousarray(r.reshape(-1), dtype=np.int64)
        repeats = int(r[0]) if r.size == 1 and np.ndim(repeats) == 0 else r
    return Array(_core.repeat(asarray(x)._a, repeats, axis))


def _matrix_axes(x, axis1, axis2, fn):
    """x with axes axis1, axis2 moved last (lazily), for diagonal and trace."""
    from . import moveaxis

    if x.ndim < 2:
        raise ValueError(f"{fn}: the array must have at least two dimensions, got shape {x.shape}")
    a1 = _normalized(_axis_arg(axis1, fn), x.ndim, fn)
    a2 = _normalized(_axis_arg(axis2, fn), x.ndim, fn)
    if a1 == a2:
        raise ValueError(f"{fn}: axis1 and axis2 cannot be the same axis ({a1})")
    if (a1, a2) == (x.ndim - 2, x.ndim - 1):
        return x
    return moveaxis(x, (a1, a2), (-2, -1))


@_registered
def diagonal(x, /, *, offset, axis1, axis2):
    """The diagonal `offset` of the matrices on axes axis1, axis2 (by default the last two,
    as the Array API's linalg.diagonal; NumPy's own diagonal defaults to the first two),
    as the last axis. Lazy: only the chunks the diagonal crosses are read."""
    x = _matrix_axes(asarray(x), axis1, axis2, "diagonal")
    return Array(_core.diagonal(x._a, _diagonal_index(offset, "diagonal: offset")))


@_registered
def trace(x, /, *, offset, dtype, axis1, axis2):
    """The sum of diagonal `offset` of the matrices on axes axis1, axis2 (the last two by
    default, as the Array API's linalg.trace), with sum's dtype rules."""
    x = _matrix_axes(asarray(x), axis1, axis2, "trace")
    return Array(
        _core.trace(x._a, _diagonal_index(offset, "trace: offset"), None if dtype is None else as_dtype(dtype, "trace"))
    )


@_registered
def diff(x, /, *, axis, n, prepend, append):
    """The n-th forward difference along `axis` (not_equal for booleans, as NumPy), after
    joining `prepend` and `append` (arrays, or scalars standing for one slice) to `x`."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"diff: n must be an int, got {n!r}")
    extra = [None if e is None else asarray(e)._a for e in (prepend, append)]
    return Array(_core.diff(asarray(x)._a, _axis_arg(axis, "diff"), n, *extra))
