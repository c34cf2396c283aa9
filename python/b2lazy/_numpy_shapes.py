"""NumPy's shape and joining functions on b2lazy arrays (np.concatenate, np.transpose,
np.split, np.rot90, ...): adapters from NumPy's signatures to b2lazy's lazy ones and their
table, part of the one behind Array.__array_function__ (b2lazy/_numpy_functions.py).
"""

from __future__ import annotations

import numpy as np

from ._numpy_protocol import _NV, _Eager, _asarray, _bl, _no


def _perm_of(numpy_fn, ndim, *args):
    """The axis permutation NumPy's `numpy_fn` applies (on a zero-strided stand-in whose axis
    lengths name the axes: nothing is allocated)."""
    probe = np.broadcast_to(np.zeros((), np.int8), tuple(range(1, ndim + 1)))
    return tuple(s - 1 for s in numpy_fn(probe, *args).shape)


def _concatenate(f, arrays, axis=0, *, dtype=None, casting="same_kind"):
    arrays = [_asarray(a) for a in arrays]
    if dtype is not None:
        arrays = [a.astype(dtype) for a in arrays]
    return f(arrays, axis=axis)


def _stack(f, arrays, axis=0, *, dtype=None, casting="same_kind"):
    arrays = [_asarray(a) for a in arrays]
    if dtype is not None:
        arrays = [a.astype(dtype) for a in arrays]
    return f(arrays, axis=axis)


def _atleast(nd, x):
    """NumPy's atleast_{1,2,3}d for one operand, lazily."""
    x = _asarray(x)
    if x.ndim >= nd:
        return x
    shape = tuple(x.shape)
    if nd == 1:
        new = (1,)
    elif nd == 2:
        new = (1,) + shape if x.ndim == 1 else (1, 1)
    else:
        new = {0: (1, 1, 1), 1: (1,) + shape + (1,), 2: shape + (1,)}[x.ndim]
    return _bl().reshape(x, new)


def _atleast_nd(nd):
    def adapt(f, *arys):
        out = tuple(_atleast(nd, a) for a in arys)
        return out[0] if len(out) == 1 else out

    return adapt


def _vstack(f, tup, *, dtype=None, casting="same_kind"):
    return _concatenate(_bl().concat, [_atleast(2, a) for a in tup], 0, dtype=dtype)


def _hstack(f, tup, *, dtype=None, casting="same_kind"):
    arrs = [_atleast(1, a) for a in tup]
    return _concatenate(_bl().concat, arrs, 0 if arrs and arrs[0].ndim == 1 else 1, dtype=dtype)


def _dstack(f, tup):
    return _bl().concat([_atleast(3, a) for a in tup], axis=2)


def _column_stack(f, tup):
    bl = _bl()
    arrs = [_asarray(a) for a in tup]
    arrs = [bl.reshape(a, (-1, 1)) if a.ndim < 2 else a for a in arrs]
    return bl.concat(arrs, axis=1)


def _transpose(f, a, axes=None):
    return f(a, axes)


def _swapaxes(f, a, axis1, axis2):
    a = _asarray(a)
    return _bl().permute_dims(a, _perm_of(np.swapaxes, a.ndim, axis1, axis2))


def _rollaxis(f, a, axis, start=0):
    a = _asarray(a)
    return _bl().permute_dims(a, _perm_of(np.rollaxis, a.ndim, axis, start))


def _reshape(f, a, shape=None, order="C", *, newshape=None, copy=None):
    _no("reshape", order=(order, "C"))
    return f(a, newshape if shape is None else shape, copy=copy)


def _ravel(f, a, order="C"):
    _no("ravel", order=(order, "C"))
    return _bl().reshape(a, (-1,))


def _expand_dims(f, a, axis):
    a = _asarray(a)
    if isinstance(axis, (int, np.integer)):
        return f(a, axis=int(axis))
    out_ndim = a.ndim + len(axis)
    for ax in sorted(int(v) % out_ndim if -out_ndim <= int(v) < out_ndim else int(v) for v in axis):
        a = f(a, axis=ax)
    return a


def _axis_call(f, a, axis=None):
    return f(a, axis=axis)


def _flip_axis(ax):
    def adapt(f, m):
        return f(m, axis=ax)

    return adapt


def _rot90(f, m, k=1, axes=(0, 1)):
    bl = _bl()
    m = _asarray(m)
    k %= 4
    perm = list(range(m.ndim))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    if k == 0:
        return m
    if k == 2:
        return bl.flip(bl.flip(m, axis=axes[0]), axis=axes[1])
    if k == 1:
        return bl.permute_dims(bl.flip(m, axis=axes[1]), perm)
    return bl.flip(bl.permute_dims(m, perm), axis=axes[1])


def _roll(f, a, shift, axis=None):
    return f(a, shift, axis=axis)


def _broadcast_to(f, array, shape, subok=False):
    return f(array, shape)


def _broadcast_arrays(f, *args, subok=False):
    return tuple(f(*args))


def _tile(f, A, reps):
    return f(A, tuple(reps) if isinstance(reps, (list, tuple)) else (int(reps),))


def _repeat(f, a, repeats, axis=None):
    return f(a, repeats, axis=axis)


def _take(f, a, indices, axis=None, mode="raise"):
    _no("take", mode=(mode, "raise"))
    return f(a, indices, axis=axis)


def _take_along_axis(f, arr, indices, axis=-1):
    return f(arr, indices, axis=axis)


def _diagonal(f, a, offset=0, axis1=0, axis2=1):
    return f(a, offset=offset, axis1=axis1, axis2=axis2)


def _trace(f, a, offset=0, axis1=0, axis2=1, dtype=None):
    return f(a, offset=offset, axis1=axis1, axis2=axis2, dtype=dtype)


def _diag(f, v, k=0):
    v = _asarray(v)
    if v.ndim != 2:
        raise _Eager("building a diagonal matrix from a 1-d array is not lazy")
    return _bl().diagonal(v, offset=k, axis1=0, axis2=1)


def _tri(f, m, k=0):
    return f(m, k=k)


def _diff(f, a, n=1, axis=-1, prepend=_NV, append=_NV):
    return f(a, n=n, axis=axis, prepend=None if prepend is _NV else prepend, append=None if append is _NV else append)


def _ediff1d(f, ary, to_end=None, to_begin=None):
    _no("ediff1d", to_end=(to_end, None), to_begin=(to_begin, None))
    return _bl().diff(_bl().reshape(ary, (-1,)))


def _split_points(n, sections, even):
    if isinstance(sections, (int, np.integer)):
        sections = int(sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        if even and n % sections:
            raise ValueError("array split does not result in an equal division")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        return list(np.cumsum([0] + sizes))
    return [0] + [int(i) for i in sections] + [n]


def _split(even, fixed_axis=None):
    def adapt(f, ary, indices_or_sections, axis=0):
        a = _asarray(ary)
        if fixed_axis is not None:
            axis = fixed_axis if not (fixed_axis == 1 and a.ndim == 1) else 0
        axis = axis % a.ndim
        pts = _split_points(a.shape[axis], indices_or_sections, even)
        out = []
        for lo, hi in zip(pts[:-1], pts[1:]):
            lo, hi = min(lo, a.shape[axis]), min(max(hi, lo), a.shape[axis])
            out.append(a[(slice(None),) * axis + (slice(lo, hi),)])
        return out

    return adapt


def _block(f, arrays):
    """np.block: nested lists concatenated from the innermost (last axis) out, every operand
    first given the result's number of axes (leading ones)."""

    def depth(x):
        if isinstance(x, tuple):
            raise TypeError("numpy.block: arrays is a tuple; only lists can be used to arrange blocks")
        return 1 + depth(x[0]) if isinstance(x, list) and x else (1 if isinstance(x, list) else 0)

    def leaves(x):
        return [a for v in x for a in leaves(v)] if isinstance(x, list) else [_asarray(x)]

    d = depth(arrays)
    ndim = max([d] + [a.ndim for a in leaves(arrays)])
    bl = _bl()

    def build(x, level):
        if isinstance(x, list):
            if not x:
                raise ValueError("numpy.block: lists cannot be empty")
            return bl.concat([build(v, level + 1) for v in x], axis=-(d - level))
        a = _asarray(x)
        return bl.reshape(a, (1,) * (ndim - a.ndim) + tuple(a.shape)) if a.ndim < ndim else a

    return build(arrays, 0)


def _unstack(f, x, *, axis=0):
    return f(x, axis=axis)


def _append(f, arr, values, axis=None):
    bl = _bl()
    if axis is None:
        return bl.concat([bl.reshape(arr, (-1,)), bl.reshape(values, (-1,))], axis=0)
    return bl.concat([_asarray(arr), _asarray(values)], axis=axis)


def _matrix_transpose(f, x):
    return f(x)


def _permute_dims(f, a, axes=None):
    return _bl().transpose(a, axes)


# NumPy name -> (b2lazy function name, adapter), as FUNCTIONS.
SHAPES = {
    "concatenate": ("concat", _concatenate),
    "concat": ("concat", _concatenate),
    "stack": ("stack", _stack),
    "vstack": ("concat", _vstack),
    "hstack": ("concat", _hstack),
    "dstack": ("concat", _dstack),
    "column_stack": ("concat", _column_stack),
    "atleast_1d": ("reshape", _atleast_nd(1)),
    "atleast_2d": ("reshape", _atleast_nd(2)),
    "atleast_3d": ("reshape", _atleast_nd(3)),
    "transpose": ("transpose", _transpose),
    "permute_dims": ("transpose", _permute_dims),
    "matrix_transpose": ("matrix_transpose", _matrix_transpose),
    "swapaxes": ("permute_dims", _swapaxes),
    "rollaxis": ("permute_dims", _rollaxis),
    "reshape": ("reshape", _reshape),
    "ravel": ("reshape", _ravel),
    "squeeze": ("squeeze", _axis_call),
    "expand_dims": ("expand_dims", _expand_dims),
    "moveaxis": ("moveaxis", lambda f, a, source, destination: f(a, source, destination)),
    "flip": ("flip", lambda f, m, axis=None: f(m, axis=axis)),
    "fliplr": ("flip", _flip_axis(1)),
    "flipud": ("flip", _flip_axis(0)),
    "rot90": ("flip", _rot90),
    "roll": ("roll", _roll),
    "broadcast_to": ("broadcast_to", _broadcast_to),
    "broadcast_arrays": ("broadcast_arrays", _broadcast_arrays),
    "tile": ("tile", _tile),
    "repeat": ("repeat", _repeat),
    "take": ("take", _take),
    "take_along_axis": ("take_along_axis", _take_along_axis),
    "diagonal": ("diagonal", _diagonal),
    "trace": ("trace", _trace),
    "diag": ("diagonal", _diag),
    "tril": ("tril", _tri),
    "triu": ("triu", _tri),
    "diff": ("diff", _diff),
    "ediff1d": ("diff", _ediff1d),
    "split": ("reshape", _split(True)),
    "array_split": ("reshape", _split(False)),
    "hsplit": ("reshape", _split(True, 1)),
    "vsplit": ("reshape", _split(True, 0)),
    "dsplit": ("reshape", _split(True, 2)),
    "unstack": ("unstack", _unstack),
    "block": ("concat", _block),
    "append": ("concat", _append),
}
