"""Shape functions of the namespace: permute_dims and transpose, take, nonzero, reshape and
flatten, expand_dims, squeeze, flip, moveaxis, broadcast_to, concat, stack, roll — and the
axis arguments they (and _linalg.py, _reductions.py) share."""

from __future__ import annotations

import numpy as np

from . import _context, _core
from ._array import Array
from ._registry import registered as _registered
from ._serial import namespace as _ns

__all__: list[str] = []


def _axis(v, what):
    """An axis as an int; one beyond a C int is out of bounds (AxisError), as the engine
    says of any axis out of range, not a conversion error."""
    v = int(v)
    if not -(2**31) <= v < 2**31:
        raise np.exceptions.AxisError(f"{what}: axis {v} is out of bounds")
    return v


def _int_axes(v, what, as_axes=True):
    conv = (lambda x: _axis(x, what)) if as_axes else int
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return [conv(v)]
    try:
        out = [conv(x) for x in v if isinstance(x, (int, np.integer)) and not isinstance(x, bool)]
        if len(out) == len(v):
            return out
    except TypeError:
        pass
    raise TypeError(f"{what} must be an int or a sequence of ints, got {v!r}")


@_registered
def transpose(x, axes):
    """NumPy's transpose: reversed axes by default."""
    x = _ns().asarray(x)
    return _ns().permute_dims(x, tuple(range(x.ndim))[::-1] if axes is None else axes)


@_registered
def take(x, indices, /, axis):
    """Elements of `x` at integer `indices` along `axis` (NumPy's take; axis=None takes
    from `x` flattened). Lazy: only the chunks the indices touch are read."""
    axis = _axis_or_none(axis, "take")
    idx = _int_indices(indices, "take")
    return Array(_core.take(_ns().asarray(x)._a, idx, axis))


def _int_indices(indices, fn):
    """Integer indices as a C-contiguous int64 NumPy array (lazy ones are evaluated)."""
    if isinstance(indices, Array):
        indices = indices.to_numpy()
    idx = np.asarray(indices)
    if idx.size == 0 and idx.dtype.kind == "f":
        idx = idx.astype(np.int64)  # [] is an empty integer index, as in NumPy
    if idx.dtype.kind not in "iub":
        raise TypeError(f"{fn}: indices must be integers, got dtype {idx.dtype}")
    if idx.dtype.kind == "u" and idx.size and idx.max() > np.iinfo(np.int64).max:
        raise IndexError(f"{fn}: index {idx.max()} is out of bounds")
    return np.require(idx.astype(np.int64, copy=False), requirements="C")  # keeps 0-d arrays 0-d


def _axis_or_none(axis, fn):
    if axis is not None and (not isinstance(axis, (int, np.integer)) or isinstance(axis, bool)):
        raise TypeError(f"{fn}: axis must be an int or None, got {axis!r}")
    return None if axis is None else _axis(axis, fn)


@_registered
def take_along_axis(x, indices, /, axis):
    """NumPy's take_along_axis: `indices` (as many axes as `x`) select along `axis` and
    broadcast against `x` on the other axes; axis=None works on `x` flattened. Lazy:
    only the chunks the indices touch are read."""
    axis = _axis_or_none(axis, "take_along_axis")
    return Array(_core.take_along_axis(_ns().asarray(x)._a, _int_indices(indices, "take_along_axis"), axis))


@_registered
def nonzero(x, /):
    """Coordinates of the nonzero elements, one int64 array per axis (C order). Counts
    the nonzero elements now (one pass over `x`); the coordinates are lazy."""
    return tuple(Array(a) for a in _core.nonzero(_ns().asarray(x)._a, _context(None)))


@_registered
def flatten(x, /):
    """The elements in C order as one axis; lazy."""
    return Array(_core.reshape(_ns().asarray(x)._a, [-1]))


@_registered
def reshape(x, /, shape, *, copy):
    """The same elements in C order with a new `shape` (one entry may be -1); lazy."""
    if copy is False:
        raise ValueError("reshape: copy=False is not supported (a lazy reshape is never a view)")
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    for s in shape:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"reshape: shape entries must be integers, got {s!r}")
    return Array(_core.reshape(_ns().asarray(x)._a, [int(s) for s in shape]))


def _axes_arg(axis, fn):
    if axis is None:
        return None
    return _int_axes(axis, f"{fn}: axis")


@_registered
def broadcast_to(x, /, shape):
    """`x` repeated along broadcast axes to `shape`, without copying; lazy."""
    return Array(_core.broadcast_to(_ns().asarray(x)._a, shape))


@_registered
def concat(arrays, /, *, axis):
    """Arrays joined along an existing axis (axis=None: flattened first); lazy."""
    if axis is not None and (not isinstance(axis, (int, np.integer)) or isinstance(axis, bool)):
        raise TypeError(f"concat: axis must be an int or None, got {axis!r}")
    return Array(_core.concat([_ns().asarray(a)._a for a in arrays], None if axis is None else _axis(axis, "concat")))


@_registered
def stack(arrays, /, *, axis):
    """Arrays of one shape joined along a new axis; lazy."""
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"stack: axis must be an int, got {axis!r}")
    return Array(_core.stack([_ns().asarray(a)._a for a in arrays], _axis(axis, "stack")))


@_registered
def roll(x, /, shift, *, axis):
    """Elements shifted along `axis`, wrapping around; lazy."""
    shifts = _int_axes(shift, "roll: shift", as_axes=False)
    return Array(_core.roll(_ns().asarray(x)._a, shifts, _axes_arg(axis, "roll")))


__all__ += [
    "transpose",
    "take",
    "broadcast_to",
    "concat",
    "stack",
    "roll",
    "reshape",
    "flatten",
    "take_along_axis",
    "nonzero",
]
