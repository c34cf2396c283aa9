"""NumPy functions on b2lazy arrays, the table behind Array.__array_function__
(b2lazy/_numpy_protocol.py): a NumPy name -> the b2lazy function (by name, looked up at call
time) and an adapter from NumPy's signature to b2lazy's. An adapter gets NumPy's arguments by
NumPy's parameter names (positional-only ones by position, `out` taken off) and raises _Eager
for arguments it cannot take lazily.
"""

from __future__ import annotations

import operator

import numpy as np

from ._numpy_protocol import _NV, _Eager, _asarray, _bl, _is_b2lazy, _to_numpy

# --- shared argument helpers ----------------------------------------------------------
def _unset(v):
    return v is _NV or v is None


def _no(fname, **given):
    """Refuse (lazily) arguments other than their defaults: these go eager."""
    for k, (v, default) in given.items():
        if v is _NV or v is default or (isinstance(default, (bool, int, float, str)) and
                                        isinstance(v, type(default)) and v == default):
            continue
        raise _Eager(f"{k}={v!r} is not supported lazily")


def _keep(keepdims):
    return False if keepdims is _NV else bool(keepdims)


def _perm_of(numpy_fn, ndim, *args):
    """The axis permutation NumPy's `numpy_fn` applies (on a zero-strided stand-in whose axis
    lengths name the axes: nothing is allocated)."""
    probe = np.broadcast_to(np.zeros((), np.int8), tuple(range(1, ndim + 1)))
    return tuple(s - 1 for s in numpy_fn(probe, *args).shape)


# --- reductions -----------------------------------------------------------------------
_INITIAL = {"sum": operator.add, "nansum": operator.add, "prod": operator.mul, "nanprod": operator.mul,
            "max": "maximum", "min": "minimum", "nanmax": "maximum", "nanmin": "minimum"}
_HAS_DTYPE = {"sum", "prod", "mean", "std", "var", "nansum", "nanprod", "nanmean", "nanstd", "nanvar"}


def _reduction(bname):
    def adapt(f, a, axis=None, dtype=None, keepdims=_NV, initial=_NV, where=_NV, ddof=0, correction=_NV,
              mean=_NV):
        _no(bname, where=(where, True), mean=(mean, None))
        kw = {"axis": axis, "keepdims": _keep(keepdims)}
        if dtype is not None:
            if bname not in _HAS_DTYPE:
                raise _Eager(f"dtype={dtype!r} is not supported lazily")
            kw["dtype"] = dtype
        if bname in ("std", "var", "nanstd", "nanvar"):
            kw["correction"] = ddof if _unset(correction) else correction
        r = f(a, **kw)
        if not _unset(initial):
            op = _INITIAL.get(bname)
            if op is None:
                raise _Eager("initial= is not supported lazily")
            r = op(r, initial) if callable(op) else getattr(_bl(), op)(r, initial)
        return r
    return bname, adapt


def _ptp(f, a, axis=None, keepdims=_NV):
    bl = _bl()
    return bl.max(a, axis=axis, keepdims=_keep(keepdims)) - bl.min(a, axis=axis, keepdims=_keep(keepdims))


def _average(f, a, axis=None, weights=None, returned=False, *, keepdims=_NV):
    bl = _bl()
    kd = _keep(keepdims)
    if weights is None:
        avg = bl.mean(a, axis=axis, keepdims=kd)
        wsum = bl.full(avg.shape, bl.asarray(a).size // max(avg.size, 1), dtype=avg.dtype)
    else:
        a, w = _asarray(a), _asarray(weights)
        if w.shape != a.shape:
            raise _Eager("weights of another shape than a are not supported lazily")
        wsum = bl.sum(w, axis=axis, keepdims=kd)
        avg = bl.sum(a * w, axis=axis, keepdims=kd) / wsum
        wsum = bl.broadcast_to(wsum, avg.shape) if wsum.shape != avg.shape else wsum
    return (avg, wsum.astype(avg.dtype)) if returned else avg


def _quantile(bname, percent=False):
    def adapt(f, a, q, axis=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None,
              interpolation=None):
        _no(bname, weights=(weights, None), interpolation=(interpolation, None))
        return f(a, q, axis=axis, method=method, keepdims=bool(keepdims))
    return bname, adapt


def _median(bname):
    def adapt(f, a, axis=None, overwrite_input=False, keepdims=False):
        return f(a, axis=axis, keepdims=bool(keepdims))
    return bname, adapt


def _count_nonzero(f, a, axis=None, *, keepdims=False):
    return f(a, axis=axis, keepdims=bool(keepdims))


# --- scans ----------------------------------------------------------------------------
def _scan(bname, nan_fill=None):
    def adapt(f, a, axis=None, dtype=None):
        if nan_fill is not None:
            a = _asarray(a)
            if a.dtype.kind in "fc":
                a = _bl().where(_bl().isnan(a), nan_fill, a)
        return f(a, axis=axis, dtype=dtype)
    return bname, adapt


def _cumulative(f, x, axis=None, dtype=None, include_initial=False):
    return f(x, axis=axis, dtype=dtype, include_initial=include_initial)


# --- products -------------------------------------------------------------------------
def _dot(f, a, b):
    bl = _bl()
    a, b = _asarray(a), _asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return bl.multiply(a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return bl.matmul(a, b)
    return bl.tensordot(a, b, axes=([-1], [0 if b.ndim == 1 else -2]))


def _inner(f, a, b):
    bl = _bl()
    a, b = _asarray(a), _asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return bl.multiply(a, b)
    return bl.tensordot(a, b, axes=([-1], [-1]))


def _vdot(f, a, b):
    bl = _bl()
    a, b = bl.reshape(_asarray(a), (-1,)), bl.reshape(_asarray(b), (-1,))
    return bl.vecdot(a, b, axis=-1)  # the Array API's vecdot conjugates its first operand


def _tensordot(f, a, b, axes=2):
    return f(a, b, axes=axes)


def _einsum(f, *operands, dtype=None, order="K", casting="safe", optimize=False):
    _no("einsum", dtype=(dtype, None), order=(order, "K"), casting=(casting, "safe"))
    return f(*operands)


# --- manipulation ----------------------------------------------------------------------
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
    return f(a, n=n, axis=axis, prepend=None if prepend is _NV else prepend,
             append=None if append is _NV else append)


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


def _where(f, condition, x=None, y=None):
    if x is None and y is None:
        return f(condition)
    return f(condition, x, y)


def _clip(f, a, a_min=_NV, a_max=_NV, *, min=_NV, max=_NV, **kwargs):
    if kwargs:
        raise _Eager(f"keywords {sorted(kwargs)} are not supported lazily")
    lo = min if a_min is _NV else a_min
    hi = max if a_max is _NV else a_max
    lo, hi = (None if v is _NV else v for v in (lo, hi))
    return f(a, lo, hi)


def _sort(bname):
    def adapt(f, a, axis=-1, kind=None, order=None, *, stable=None):
        _no(bname, order=(order, None))
        if axis is None:
            a, axis = _bl().reshape(a, (-1,)), -1
        return f(a, axis=axis, stable=True if stable is None else bool(stable))
    return bname, adapt


def _partition(bname):
    """np.partition / argpartition: a full (stable) sort is a partition around every kth —
    NumPy leaves the order inside the parts undefined."""
    def adapt(f, a, kth, axis=-1, kind="introselect", order=None):
        _no(bname, order=(order, None))
        a = _asarray(a)
        if axis is None:
            a, axis = _bl().reshape(a, (-1,)), -1
        n = a.shape[axis]
        for k in np.atleast_1d(np.asarray(kth)).ravel():
            if not -n <= int(k) < n:
                raise ValueError(f"numpy.{'arg' if bname == 'argsort' else ''}partition: kth(={int(k)}) "
                                 f"out of bounds ({n})")
        return f(a, axis=axis, stable=True)
    return bname, adapt


def _searchsorted(f, a, v, side="left", sorter=None):
    return f(a, v, side=side, sorter=sorter)


def _unique(f, ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
            equal_nan=True, sorted=True):
    _no("unique", axis=(axis, None), return_index=(return_index, False), return_inverse=(return_inverse, False),
        equal_nan=(equal_nan, True))
    bl = _bl()
    if return_counts:
        r = bl.unique_counts(ar)
        return r.values, r.counts
    return bl.unique_values(ar)


def _unique_fn(bname):
    def adapt(f, x, **kwargs):
        return f(x)
    return bname, adapt


def _unravel_index(f, indices, shape, order="C"):
    """Coordinates of flat indices, lazily; the indices' range is checked first (one pass
    over them: NumPy raises for an index out of bounds, so must this)."""
    _no("unravel_index", order=(order, "C"))
    bl = _bl()
    idx = _asarray(indices)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"numpy.unravel_index: only int indices permitted, got {idx.dtype}")
    size = int(np.prod(shape))
    if idx.size and (int(bl.min(idx).to_numpy()) < 0 or int(bl.max(idx).to_numpy()) >= size):
        raise ValueError(f"numpy.unravel_index: an index is out of bounds for an array of size {size}")
    idx = idx.astype(np.intp)
    out, stride = [], size
    for n in shape:
        stride //= max(n, 1)
        out.append(bl.remainder(bl.floor_divide(idx, max(stride, 1)), max(n, 1)))
    return tuple(out)


def _ravel_multi_index(f, multi_index, dims, mode="raise", order="C"):
    """Flat indices of coordinates, lazily; with mode='raise' each coordinate's range is
    checked first (one pass over it), as NumPy raises for one out of bounds."""
    _no("ravel_multi_index", order=(order, "C"), mode=(mode, "raise"))
    bl = _bl()
    dims = (int(dims),) if isinstance(dims, (int, np.integer)) else tuple(int(d) for d in dims)
    coords = [_asarray(c) for c in multi_index]
    if len(coords) != len(dims):
        raise ValueError(f"numpy.ravel_multi_index: {len(coords)} coordinate arrays for {len(dims)} dimensions")
    flat, stride = None, 1
    for c, n in reversed(list(zip(coords, dims))):
        if c.dtype.kind not in "iu":
            raise TypeError(f"numpy.ravel_multi_index: only int indices permitted, got {c.dtype}")
        if c.size and (int(bl.min(c).to_numpy()) < 0 or int(bl.max(c).to_numpy()) >= n):
            raise ValueError("numpy.ravel_multi_index: invalid entry in coordinates array")
        term = c.astype(np.intp) * stride
        flat = term if flat is None else flat + term
        stride *= n
    return flat


def _nonzero(f, a):
    return f(a)


def _argwhere(f, a):
    a = _asarray(a)
    if a.ndim == 0:
        raise _Eager("argwhere of a 0-d array is not lazy")
    return _bl().stack(list(_bl().nonzero(a)), axis=1)


def _flatnonzero(f, a):
    return _bl().nonzero(_bl().reshape(a, (-1,)))[0]


def _round(f, a, decimals=0):
    bl = _bl()
    a = _asarray(a)
    if decimals == 0:
        return bl.round(a)
    if a.dtype.kind not in "fc":
        raise _Eager("round with decimals on integers is not lazy")
    if decimals > 0:  # as NumPy: rint(a * 10**d) / 10**d, or rint(a / 10**-d) * 10**-d
        scale = 10.0 ** decimals
        return (bl.round(a * scale) / scale).astype(a.dtype)
    scale = 10.0 ** -decimals
    return (bl.round(a / scale) * scale).astype(a.dtype)


def _angle(f, z, deg=False):
    r = _bl().angle(z)
    return r * (180.0 / np.pi) if deg else r


def _isclose_impl(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    bl = _bl()
    a, b = _asarray(a), _asarray(b)
    dt = np.result_type(b.dtype, 1.0)
    a, b = a.astype(np.result_type(a.dtype, dt)), b.astype(dt)
    r = bl.logical_or(bl.logical_and(bl.less_equal(bl.abs(a - b), atol + rtol * bl.abs(b)), bl.isfinite(b)),
                      bl.equal(a, b))
    if equal_nan:
        r = bl.logical_or(r, bl.logical_and(bl.isnan(a), bl.isnan(b)))
    return r


def _isclose(f, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _isclose_impl(a, b, rtol, atol, equal_nan)


def _allclose(f, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(_bl().all(_isclose_impl(a, b, rtol, atol, equal_nan)))


def _array_equal(f, a1, a2, equal_nan=False):
    bl = _bl()
    a1, a2 = _asarray(a1), _asarray(a2)
    if a1.shape != a2.shape:
        return False
    eq = bl.equal(a1, a2)
    if equal_nan and a1.dtype.kind in "fc" and a2.dtype.kind in "fc":
        eq = bl.logical_or(eq, bl.logical_and(bl.isnan(a1), bl.isnan(a2)))
    return bool(bl.all(eq))


def _array_equiv(f, a1, a2):
    bl = _bl()
    a1, a2 = _asarray(a1), _asarray(a2)
    try:
        np.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return False
    return bool(bl.all(bl.equal(a1, a2)))


def _iscomplex(want):
    def adapt(f, x):
        bl = _bl()
        x = _asarray(x)
        if x.dtype.kind != "c":
            return bl.full(x.shape, not want, dtype=bool)
        return bl.not_equal(bl.imag(x), 0) if want else bl.equal(bl.imag(x), 0)
    return adapt


def _isinf_sign(neg):
    def adapt(f, x):
        bl = _bl()
        x = _asarray(x)
        s = bl.signbit(x)
        return bl.logical_and(bl.isinf(x), s if neg else bl.logical_not(s))
    return adapt


def _fix(f, x):
    x = _asarray(x)
    return _bl().trunc(x) if x.dtype.kind == "f" else x


def _nan_to_num(f, x, copy=True, nan=0.0, posinf=None, neginf=None):
    bl = _bl()
    x = _asarray(x)
    if x.dtype.kind != "f":
        if x.dtype.kind == "c":
            raise _Eager("complex nan_to_num is not lazy")
        return x
    fi = np.finfo(x.dtype)
    pos, neg = bl.logical_and(bl.isinf(x), x > 0), bl.logical_and(bl.isinf(x), x < 0)  # of x, as NumPy's masks
    r = bl.where(bl.isnan(x), nan, x)
    r = bl.where(pos, fi.max if posinf is None else posinf, r)
    return bl.where(neg, fi.min if neginf is None else neginf, r).astype(x.dtype)


def _trapezoid(f, y, x=None, dx=1.0, axis=-1):
    _no("trapezoid", x=(x, None))
    bl = _bl()
    y = _asarray(y)
    ax = axis % y.ndim
    lo = (slice(None),) * ax + (slice(1, None),)
    hi = (slice(None),) * ax + (slice(None, -1),)
    return bl.sum((y[lo] + y[hi]) * (dx / 2.0), axis=ax)


def _select(f, condlist, choicelist, default=0):
    bl = _bl()
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("select with an empty condition list is not possible")
    dt = np.result_type(*[_asarray(c).dtype for c in choicelist], np.asarray(default))
    r = bl.asarray(default).astype(dt)
    for c, v in zip(reversed(condlist), reversed(choicelist)):
        r = bl.where(c, _asarray(v).astype(dt), r)
    return bl.broadcast_to(r, np.broadcast_shapes(*[_asarray(c).shape for c in condlist],
                                                  *[_asarray(v).shape for v in choicelist])) if r.ndim == 0 else r


def _extract(f, condition, arr):
    bl = _bl()
    return bl.reshape(arr, (-1,))[bl.reshape(bl.asarray(condition).astype(bool), (-1,))]


def _compress(f, condition, a, axis=None):
    bl = _bl()
    idx = np.nonzero(_to_numpy(condition))[0]  # a 1-d selector: its values decide what is read
    if axis is None:
        return bl.take(bl.reshape(a, (-1,)), idx, axis=0)
    return bl.take(a, idx, axis=axis)


def _union1d(f, ar1, ar2):
    bl = _bl()
    return bl.unique_values(bl.concat([bl.reshape(ar1, (-1,)), bl.reshape(ar2, (-1,))], axis=0))


def _like(bname):
    def adapt(f, a, dtype=None, order="K", subok=True, shape=None, *, device=None, fill_value=_NV):
        bl = _bl()
        a = _asarray(a)
        dt = a.dtype if dtype is None else dtype
        if shape is not None:
            shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
            if bname == "full_like":
                return bl.full(shape, fill_value, dtype=dt)
            return getattr(bl, bname[:-5])(shape, dtype=dt)
        if bname == "full_like":
            return f(a, fill_value, dtype=dt)
        return f(a, dtype=dt)
    return bname, adapt


def _full_like(f, a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _like("full_like")[1](f, a, dtype, order, subok, shape, device=device, fill_value=fill_value)


def _astype(f, x, dtype, /, *, copy=True, device=None):
    return f(x, dtype, copy=copy)


def _copy(f, a, order="K", subok=False):
    return _bl().asarray(a, copy=True)


def _meshgrid(f, *xi, copy=True, sparse=False, indexing="xy"):
    _no("meshgrid", sparse=(sparse, False))
    return tuple(f(*xi, indexing=indexing))


def _matrix_transpose(f, x):
    return f(x)


def _permute_dims(f, a, axes=None):
    return _bl().transpose(a, axes)


def _real_imag(f, val):
    return f(val)


# Metadata-only functions: NumPy answers them from shape and dtype, here on zero-strided
# stand-ins of the b2lazy operands (no value is read, nothing is allocated).
def _standin(x):
    if _is_b2lazy(x):
        return np.broadcast_to(np.zeros((), x.dtype), x.shape)
    if isinstance(x, (list, tuple)):
        return type(x)(_standin(v) for v in x)
    if isinstance(x, dict):
        return {k: _standin(v) for k, v in x.items()}
    return x


def metadata(func):
    def adapt(f, *args, **kwargs):
        r = func(*_standin(args), **_standin(kwargs))
        if isinstance(r, tuple) and r and all(isinstance(v, np.ndarray) for v in r):
            return tuple(_bl().asarray(v) for v in r)  # index arrays (tril_indices_from, ...)
        return r
    return adapt


# Constructors NumPy dispatches by their `like=` argument (Dask builds its metas so).
def _as_array(f, a=None, dtype=None, order=None, *, device=None, copy=None, like=None, object=None, **_):
    return f(a if object is None else object, dtype=dtype)


def _shaped(f, shape, dtype=None, order="C", *, device=None, like=None):
    return f(shape, dtype=dtype)


def _full(f, shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    return f(shape, fill_value, dtype=dtype)


def _arange(f, start_or_stop, stop=None, step=1, *, dtype=None, device=None, like=None):
    return f(start_or_stop, stop, step, dtype=dtype)


def _eye(f, N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    return f(N, M, k=k, dtype=dtype)


# NumPy name -> (b2lazy function name, adapter(b2lazy function, *NumPy's arguments)).
# Names b2lazy does not have yet (other parts add them) are resolved at call time.
FUNCTIONS = {
    **{n: _reduction(n) for n in ("sum", "prod", "mean", "std", "var", "max", "min", "all", "any",
                                  "nansum", "nanprod", "nanmean", "nanstd", "nanvar", "nanmax", "nanmin")},
    "amax": _reduction("max"), "amin": _reduction("min"),
    "argmax": ("argmax", lambda f, a, axis=None, *, keepdims=_NV: f(a, axis=axis, keepdims=_keep(keepdims))),
    "argmin": ("argmin", lambda f, a, axis=None, *, keepdims=_NV: f(a, axis=axis, keepdims=_keep(keepdims))),
    "nanargmax": ("nanargmax", lambda f, a, axis=None, *, keepdims=_NV: f(a, axis=axis, keepdims=_keep(keepdims))),
    "nanargmin": ("nanargmin", lambda f, a, axis=None, *, keepdims=_NV: f(a, axis=axis, keepdims=_keep(keepdims))),
    "ptp": ("max", _ptp), "average": ("mean", _average), "count_nonzero": ("count_nonzero", _count_nonzero),
    "median": _median("median"), "nanmedian": _median("nanmedian"),
    "quantile": _quantile("quantile"), "percentile": _quantile("percentile"),
    "nanquantile": _quantile("nanquantile"), "nanpercentile": _quantile("nanpercentile"),
    "cumsum": _scan("cumsum"), "cumprod": _scan("cumprod"),
    "nancumsum": _scan("cumsum", 0), "nancumprod": _scan("cumprod", 1),
    "cumulative_sum": ("cumulative_sum", _cumulative), "cumulative_prod": ("cumulative_prod", _cumulative),
    "dot": ("matmul", _dot), "inner": ("tensordot", _inner), "vdot": ("vecdot", _vdot),
    "tensordot": ("tensordot", _tensordot), "outer": ("outer", lambda f, a, b: f(a, b)),
    "einsum": ("einsum", _einsum),
    "concatenate": ("concat", _concatenate), "concat": ("concat", _concatenate), "stack": ("stack", _stack),
    "vstack": ("concat", _vstack), "hstack": ("concat", _hstack), "dstack": ("concat", _dstack),
    "column_stack": ("concat", _column_stack),
    "atleast_1d": ("reshape", _atleast_nd(1)), "atleast_2d": ("reshape", _atleast_nd(2)),
    "atleast_3d": ("reshape", _atleast_nd(3)),
    "transpose": ("transpose", _transpose), "permute_dims": ("transpose", _permute_dims),
    "matrix_transpose": ("matrix_transpose", _matrix_transpose),
    "swapaxes": ("permute_dims", _swapaxes), "rollaxis": ("permute_dims", _rollaxis),
    "reshape": ("reshape", _reshape), "ravel": ("reshape", _ravel),
    "squeeze": ("squeeze", _axis_call), "expand_dims": ("expand_dims", _expand_dims),
    "moveaxis": ("moveaxis", lambda f, a, source, destination: f(a, source, destination)),
    "flip": ("flip", lambda f, m, axis=None: f(m, axis=axis)),
    "fliplr": ("flip", _flip_axis(1)), "flipud": ("flip", _flip_axis(0)),
    "rot90": ("flip", _rot90), "roll": ("roll", _roll),
    "broadcast_to": ("broadcast_to", _broadcast_to), "broadcast_arrays": ("broadcast_arrays", _broadcast_arrays),
    "tile": ("tile", _tile), "repeat": ("repeat", _repeat), "take": ("take", _take),
    "take_along_axis": ("take_along_axis", _take_along_axis),
    "diagonal": ("diagonal", _diagonal), "trace": ("trace", _trace), "diag": ("diagonal", _diag),
    "tril": ("tril", _tri), "triu": ("triu", _tri), "diff": ("diff", _diff), "ediff1d": ("diff", _ediff1d),
    "split": ("reshape", _split(True)), "array_split": ("reshape", _split(False)),
    "hsplit": ("reshape", _split(True, 1)), "vsplit": ("reshape", _split(True, 0)),
    "dsplit": ("reshape", _split(True, 2)),
    "unstack": ("unstack", _unstack), "block": ("concat", _block), "append": ("concat", _append),
    "where": ("where", _where), "clip": ("clip", _clip), "select": ("where", _select),
    "extract": ("reshape", _extract), "compress": ("take", _compress),
    "sort": _sort("sort"), "argsort": _sort("argsort"),
    "partition": _partition("sort"), "argpartition": _partition("argsort"),
    "searchsorted": ("searchsorted", _searchsorted),
    "unique": ("unique_values", _unique), "union1d": ("unique_values", _union1d),
    **{n: _unique_fn(n) for n in ("unique_values", "unique_counts", "unique_inverse", "unique_all")},
    "unravel_index": ("floor_divide", _unravel_index), "ravel_multi_index": ("multiply", _ravel_multi_index),
    "nonzero": ("nonzero", _nonzero), "argwhere": ("nonzero", _argwhere), "flatnonzero": ("nonzero", _flatnonzero),
    "round": ("round", _round), "around": ("round", _round), "fix": ("trunc", _fix),
    "real": ("real", _real_imag), "imag": ("imag", _real_imag), "angle": ("angle", _angle),
    "iscomplex": ("imag", _iscomplex(True)), "isreal": ("imag", _iscomplex(False)),
    "isneginf": ("isinf", _isinf_sign(True)), "isposinf": ("isinf", _isinf_sign(False)),
    "nan_to_num": ("where", _nan_to_num), "trapezoid": ("sum", _trapezoid),
    "isclose": ("isfinite", _isclose), "allclose": ("all", _allclose),
    "array_equal": ("all", _array_equal), "array_equiv": ("all", _array_equiv),
    "empty_like": _like("empty_like"), "zeros_like": _like("zeros_like"), "ones_like": _like("ones_like"),
    "full_like": ("full_like", _full_like), "astype": ("astype", _astype), "copy": ("asarray", _copy),
    "meshgrid": ("meshgrid", _meshgrid),
    # names other parts add (looked up at call time; NumPy's keywords passed on as given)
    "pad": ("pad", lambda f, array, pad_width, mode="constant", **kw: f(array, pad_width, mode=mode, **kw)),
    "isin": ("isin", lambda f, element, test_elements, **kw: f(element, test_elements, **kw)),
    "digitize": ("digitize", lambda f, x, bins, right=False: f(x, bins, right=right)),
    "bincount": ("bincount", lambda f, x, /, weights=None, minlength=0: f(x, weights=weights, minlength=minlength)),
    "histogram": ("histogram", lambda f, a, bins=10, **kw: f(a, bins=bins, **kw)),
    "histogram2d": ("histogram2d", lambda f, x, y, bins=10, **kw: f(x, y, bins=bins, **kw)),
    # metadata only: answered from shapes and dtypes
    **{n: ("asarray", metadata(getattr(np, n))) for n in (
        "shape", "ndim", "size", "result_type", "can_cast", "common_type", "iscomplexobj", "isrealobj",
        "diag_indices_from", "tril_indices_from", "triu_indices_from")},
    # constructors dispatched by like=
    **{n: (n, _shaped) for n in ("zeros", "ones", "empty")},
    "full": ("full", _full), "arange": ("arange", _arange), "eye": ("eye", _eye),
    **{n: ("asarray", _as_array) for n in ("asarray", "array", "asanyarray")},
}


# --- numpy.linalg ---------------------------------------------------------------------------
def _floating(x):
    """x as NumPy's norms take it: integers and bools as float64, floats and complex as they are."""
    x = _asarray(x)
    return x if x.dtype.kind in "fc" else x.astype(np.float64)


def _vector_norm(x, ord, axis, keepdims):
    bl = _bl()
    a = bl.abs(x)  # real, of x's precision
    if ord is None or ord == 2:
        return bl.sqrt(bl.sum(a * a, axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return bl.max(a, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return bl.min(a, axis=axis, keepdims=keepdims)
    if ord == 1:
        return bl.sum(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return bl.sum(bl.not_equal(a, 0).astype(a.dtype), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"numpy.linalg.norm: invalid norm order {ord!r} for vectors")
    return bl.sum(a ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def _matrix_norm(x, ord, axes, keepdims):
    bl = _bl()
    r, c = (ax % x.ndim for ax in axes)
    a = bl.abs(x)
    if ord in (None, "fro"):
        out = bl.sqrt(bl.sum(a * a, axis=(r, c), keepdims=keepdims))
    elif ord in (1, -1, np.inf, -np.inf):
        across, along = (r, c) if ord in (1, -1) else (c, r)  # 1: column sums, inf: row sums
        sums = bl.sum(a, axis=across, keepdims=True)
        pick = bl.max if ord in (1, np.inf) else bl.min
        out = pick(sums, axis=along, keepdims=True)
        if not keepdims:
            out = bl.squeeze(out, axis=(r, c))
    else:
        raise _Eager(f"the matrix norm ord={ord!r} (singular values) is not lazy")
    return out


def _norm(f, x, ord=None, axis=None, keepdims=False):
    x = _floating(x)
    if axis is None:
        if ord is None:  # the 2-norm of x flattened (Frobenius for a matrix)
            return _vector_norm(x, None, None, keepdims)
        if x.ndim == 1:
            return _vector_norm(x, ord, 0, keepdims)
        if x.ndim == 2:
            return _matrix_norm(x, ord, (0, 1), keepdims)
        raise ValueError("numpy.linalg.norm: improper number of dimensions to norm")
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(axes) == 1:
        return _vector_norm(x, ord, int(axes[0]), keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise ValueError("numpy.linalg.norm: improper number of dimensions to norm")


def _linalg_vector_norm(f, x, *, axis=None, keepdims=False, ord=2):
    x = _floating(x)
    if axis is None:
        flat = _vector_norm(_bl().reshape(x, (-1,)), ord, 0, False)
        return _bl().reshape(flat, (1,) * x.ndim) if keepdims else flat
    return _vector_norm(x, ord, axis, keepdims)


def _linalg_matrix_norm(f, x, *, keepdims=False, ord="fro"):
    return _matrix_norm(_floating(x), ord, (-2, -1), keepdims)


def _multi_dot(f, arrays):
    r = _asarray(arrays[0])
    for a in arrays[1:]:
        r = f(r, a)
    return r


def _matrix_power(f, a, n):
    a = _asarray(a)
    n = operator.index(n)
    if n < 0:
        raise _Eager("a negative power (an inverse) is not lazy")
    if n == 0:
        eye = _bl().eye(a.shape[-1], dtype=a.dtype)
        return _bl().broadcast_to(eye, a.shape) if a.ndim > 2 else eye
    r, p = None, a
    while n:  # by squaring: log2(n) products
        if n & 1:
            r = p if r is None else f(r, p)
        n >>= 1
        if n:
            p = f(p, p)
    return r


# numpy.linalg name -> (b2lazy function name, adapter), as FUNCTIONS.
LINALG = {
    "norm": ("sqrt", _norm), "vector_norm": ("sqrt", _linalg_vector_norm),
    "matrix_norm": ("sqrt", _linalg_matrix_norm),
    "matmul": ("matmul", lambda f, x1, x2: f(x1, x2)), "outer": ("outer", lambda f, x1, x2: f(x1, x2)),
    "tensordot": ("tensordot", lambda f, x1, x2, *, axes=2: f(x1, x2, axes=axes)),
    "vecdot": ("vecdot", lambda f, x1, x2, *, axis=-1: f(x1, x2, axis=axis)),
    "matrix_transpose": ("matrix_transpose", lambda f, x: f(x)),
    "trace": ("trace", lambda f, x, *, offset=0, dtype=None: f(x, offset=offset, dtype=dtype)),
    "diagonal": ("diagonal", lambda f, x, *, offset=0: f(x, offset=offset)),
    "multi_dot": ("matmul", _multi_dot), "matrix_power": ("matmul", _matrix_power),
}
