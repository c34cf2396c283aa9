"""numpy.linalg on b2lazy arrays: the norms (vector, Frobenius, 1 and inf; lazily), chained
and repeated products, the Array API's products, and lstsq of a NumPy matrix against lazy
right-hand sides (xarray's polyfit); the decompositions and other solvers stay NumPy's (eager).
Part of the table behind Array.__array_function__.
"""

from __future__ import annotations

import operator

import numpy as np

from ._numpy_protocol import _Eager, _asarray, _bl, _is_b2lazy


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
    return bl.sum(a**ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


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


def _lstsq(f, a, b, rcond=None):
    """numpy.linalg.lstsq(a, b) for a small NumPy `a` (M, N) and a lazy `b` (M,) or (M, K):
    the solution is pinv(a) @ b (a's SVD, NumPy's rank cut-off), a lazy product; the
    residuals (lazy) as NumPy gives them: squared 2-norms of b - a @ x when a has full
    column rank and M > N, else empty. xarray's polyfit calls it this way."""
    if _is_b2lazy(a) or not _is_b2lazy(b):
        raise _Eager("lstsq is lazy for a NumPy coefficient matrix and lazy right-hand sides only")
    a = np.asarray(a)
    if a.ndim != 2 or b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise _Eager(f"lstsq of shapes {a.shape} and {b.shape}")  # NumPy's own error message
    m, n = a.shape
    dtype = np.result_type(a.dtype, b.dtype, np.float32)  # NumPy's: floating, at least a's
    a = a.astype(dtype)
    s = np.linalg.svd(a, compute_uv=False)
    if rcond is None:
        rcond = np.finfo(dtype).eps * max(m, n)
    cutoff = rcond * (s.max() if s.size else 0.0)
    rank = int(np.count_nonzero(s > cutoff))
    pinv = np.linalg.pinv(a, rcond=rcond)
    bl = _bl()
    y = _unflattened(b, m)
    if y is not None:  # products over the N-d array: reshaping them back (xarray does) is free
        y = bl.astype(y, dtype)
        x_nd = bl.tensordot(pinv, y, axes=1)
        x = bl.reshape(x_nd, (n, -1))
        r = y - bl.tensordot(a, x_nd, axes=1)
    else:
        x = f(pinv, bl.astype(b, dtype))
    if rank == n and m > n:
        if y is None:
            r = bl.astype(b, dtype) - f(a, x)
        resid = bl.sum(bl.real(r * bl.conj(r)) if dtype.kind == "c" else r * r, axis=0)
        resid = bl.reshape(resid, (1,) if b.ndim == 1 else (-1,))
    else:
        resid = np.empty((0,), dtype=np.finfo(dtype).dtype)
    return x, resid, rank, s


def _unflattened(b, m):
    """The N-d lazy array `b` was reshaped from when b is reshape(y, (m, -1)) (xarray's
    polyfit flattens its right-hand sides so): a product of the flattened array read
    back in its N-d shape pulls the product once per reshaped piece, which re-reads the
    whole contraction axis each time; over `y` itself it is one pass. None otherwise."""
    call = getattr(b, "_call", None)
    if b.ndim != 2 or not call or call[1] is not None or call[0][0] != "reshape":
        return None
    y = call[0][1][0] if call[0][1] else None
    if not _is_b2lazy(y) or y.ndim < 3 or y.shape[0] != m or int(np.prod(y.shape[1:])) != b.shape[1]:
        return None
    return y


# numpy.linalg name -> (b2lazy function name, adapter), as FUNCTIONS.
LINALG = {
    "norm": ("sqrt", _norm),
    "vector_norm": ("sqrt", _linalg_vector_norm),
    "matrix_norm": ("sqrt", _linalg_matrix_norm),
    "matmul": ("matmul", lambda f, x1, x2: f(x1, x2)),
    "outer": ("outer", lambda f, x1, x2: f(x1, x2)),
    "tensordot": ("tensordot", lambda f, x1, x2, *, axes=2: f(x1, x2, axes=axes)),
    "vecdot": ("vecdot", lambda f, x1, x2, *, axis=-1: f(x1, x2, axis=axis)),
    "matrix_transpose": ("matrix_transpose", lambda f, x: f(x)),
    "trace": ("trace", lambda f, x, *, offset=0, dtype=None: f(x, offset=offset, dtype=dtype)),
    "diagonal": ("diagonal", lambda f, x, *, offset=0: f(x, offset=offset)),
    "multi_dot": ("matmul", _multi_dot),
    "lstsq": ("matmul", _lstsq),
    "matrix_power": ("matmul", _matrix_power),
}
