"""The Array API's linear algebra extension, lazy: ``b2lazy.linalg``.

Every function returns lazy :class:`b2lazy.Array` objects (named tuples of them where the
standard says so), batched over leading axes, for float32, float64, complex64 and
complex128 (integer and bool operands are computed in float64, as NumPy does).

- The factorisations and solvers (``cholesky``, ``qr``, ``eigh``, ``eigvalsh``, ``svd``,
  ``svdvals``, ``det``, ``slogdet``, ``inv``, ``solve``, NumPy's ``eig`` and ``eigvals``) run
  LAPACK, from the OpenBLAS that b2lazy's products use, on one whole matrix at a time: an
  evaluation pulls the matrices of the batch elements it needs, factors each once for all
  the outputs it reads (Q and R, U, S and Vh, ...) and serves the regions asked. A matrix
  must fit ``max_memory`` with LAPACK's workspace, except these, which go out of core:
  ``qr``, ``svd`` (``full_matrices=False``) and ``svdvals`` of a tall-and-skinny (or
  short-and-wide) matrix, by TSQR over row panels; ``cholesky`` of a square matrix, and
  ``solve`` and ``inv`` of a symmetric positive-definite one, by tiles spilled to temporary
  files. Another matrix over the budget is refused when the evaluation is planned, naming
  the budget that would hold it.
- :func:`svd_compressed` (as ``dask.array.linalg.svd_compressed``): a rank-k SVD of a matrix
  of any size by randomized range finding, out of core.
- The products and views (``matmul``, ``tensordot``, ``vecdot``, ``outer``,
  ``matrix_transpose``, ``diagonal``, ``trace``, ``cross``, ``matrix_power``, ``multi_dot``)
  and the norms built on reductions (``vector_norm``, ``matrix_norm`` for 'fro', 1 and inf)
  are the namespace's out-of-core functions; ``pinv``, ``matrix_rank``, ``lstsq``, ``cond``
  and the 2-norm and nuclear norm are built from ``svd`` / ``svdvals``.

In expression strings the factorisations are the namespace functions ``linalg_qr``,
``linalg_svd``, ... (:func:`b2lazy.linalg_qr`).

Examples
--------
>>> import numpy as np
>>> import b2lazy as bl
>>> a = bl.asarray(np.array([[4.0, 2.0], [2.0, 3.0]]))
>>> q, r = bl.linalg.qr(a)
>>> bool(np.allclose((q @ r).to_numpy(), a.to_numpy()))
True
"""

from __future__ import annotations

import numbers
import operator
from typing import NamedTuple

import numpy as np

__all__ = [
    "cholesky",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "svd_compressed",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
    "lstsq",
    "eig",
    "eigvals",
    "norm",
    "multi_dot",
    "cond",
    "EighResult",
    "QRResult",
    "SlogdetResult",
    "SVDResult",
    "EigResult",
    "LstsqResult",
]


def _ns():
    import b2lazy  # (at call time: the recording wrappers of the namespace)

    return b2lazy


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class LstsqResult(NamedTuple):
    x: object
    residuals: object
    rank: object
    s: object


def _floating(x):
    """x as an Array of the dtype linalg computes in (ints and bool: float64)."""
    bl = _ns()
    x = bl.asarray(x)
    return x if x.dtype.kind in "fc" else x.astype(np.float64)


def _real_dtype(dt):
    return np.dtype(dt).type(0).real.dtype


def _matrices(x, fn):
    x = _ns().asarray(x)
    if x.ndim < 2:
        raise ValueError(f"{fn}: x must have at least 2 dimensions (a stack of matrices), got shape {x.shape}")
    return x


def _default_rtol(x):
    m, n = x.shape[-2:]
    return max(m, n) * float(np.finfo(_real_dtype(x.dtype)).eps)


# --- the factorisations --------------------------------------------------------------------


def cholesky(x, /, *, upper=False):
    """The Cholesky factor of Hermitian positive-definite matrices.

    Parameters
    ----------
    x : array_like
        (..., n, n); only the lower triangle is read.
    upper : bool, optional
        Return the upper factor U (x = U^H U) instead of the lower L (x = L L^H).

    Returns
    -------
    Array
        (..., n, n), lazy. A matrix that is not positive definite is a
        ``numpy.linalg.LinAlgError`` (a ValueError) when evaluated, naming the leading minor
        that is not. A 2-d matrix over ``max_memory`` is factored by square tiles spilled to
        temporary b2nd files (removed afterwards), a few tiles in memory at a time.

    Examples
    --------
    >>> import b2lazy as bl
    >>> bl.linalg.cholesky([[4.0, 2.0], [2.0, 5.0]]).to_numpy().tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    """
    return _ns().linalg_cholesky(x, upper=upper)


def qr(x, /, *, mode="reduced"):
    """The QR factorisation x = Q R, Q with orthonormal columns and R upper triangular.

    Parameters
    ----------
    x : array_like
        (..., m, n).
    mode : {'reduced', 'complete', 'r'}, optional
        'reduced': Q (..., m, k), R (..., k, n), k = min(m, n); 'complete': Q (..., m, m),
        R (..., m, n); 'r' (NumPy's): R alone.

    Returns
    -------
    QRResult
        (Q, R), lazy; both are computed by one factorisation per matrix. Mode 'r': R.

    Examples
    --------
    >>> import numpy as np
    >>> import b2lazy as bl
    >>> a = np.arange(12.0).reshape(4, 3) ** 2
    >>> q, r = bl.linalg.qr(a)
    >>> bool(np.allclose((q @ r).to_numpy(), a))
    True
    """
    if mode == "r":
        return _ns().linalg_qr(x, mode="r")[0]
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete' (or 'r'), got {mode!r}")
    return QRResult(*_ns().linalg_qr(x, mode=mode))


def eigh(x, /):
    """Eigenvalues and eigenvectors of Hermitian (symmetric) matrices.

    Parameters
    ----------
    x : array_like
        (..., n, n); only the lower triangle is read.

    Returns
    -------
    EighResult
        (eigenvalues (..., n), ascending, real; eigenvectors (..., n, n), as columns), lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> w, v = bl.linalg.eigh([[2.0, 1.0], [1.0, 2.0]])
    >>> [round(t, 12) for t in w.to_numpy().tolist()]
    [1.0, 3.0]
    """
    return EighResult(*_ns().linalg_eigh(x))


def eigvalsh(x, /):
    """Eigenvalues of Hermitian (symmetric) matrices, ascending.

    Parameters
    ----------
    x : array_like
        (..., n, n); only the lower triangle is read.

    Returns
    -------
    Array
        (..., n), real, lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> [round(t, 12) for t in bl.linalg.eigvalsh([[2.0, 1.0], [1.0, 2.0]]).to_numpy().tolist()]
    [1.0, 3.0]
    """
    return _ns().linalg_eigvalsh(x)


def svd(x, /, *, full_matrices=True):
    """The singular value decomposition x = U diag(S) Vh.

    Parameters
    ----------
    x : array_like
        (..., m, n).
    full_matrices : bool, optional
        U (..., m, m) and Vh (..., n, n); else (..., m, k) and (..., k, n), k = min(m, n).

    Returns
    -------
    SVDResult
        (U, S, Vh), S (..., k) real and descending; lazy, one factorisation per matrix.

    Examples
    --------
    >>> import b2lazy as bl
    >>> u, s, vh = bl.linalg.svd([[3.0, 0.0], [0.0, -4.0]])
    >>> s.to_numpy().tolist()
    [4.0, 3.0]
    """
    return SVDResult(*_ns().linalg_svd(x, full_matrices=full_matrices))


def svdvals(x, /):
    """Singular values, descending.

    Parameters
    ----------
    x : array_like
        (..., m, n).

    Returns
    -------
    Array
        (..., min(m, n)), real, lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> bl.linalg.svdvals([[3.0, 0.0], [0.0, -4.0]]).to_numpy().tolist()
    [4.0, 3.0]
    """
    return _ns().linalg_svdvals(x)


def svd_compressed(x, /, k, *, n_power_iter=0, n_oversamples=10, seed=0):
    """A rank-k SVD of a 2-d matrix by randomized range finding, out of core.

    As ``dask.array.linalg.svd_compressed`` (Halko, Martinsson and Tropp, 2011): ``Y = x @ Ω``
    for a standard normal ``Ω`` of ``k + n_oversamples`` columns drawn from `seed`,
    `n_power_iter` rounds of ``Y = x @ (x^H @ Q)`` with a QR between, ``Q`` the orthonormal
    basis of ``Y``, then the SVD of the small ``B = Q^H @ x``. `x` is only pulled by regions
    (products, and TSQR for each tall QR), so a matrix of any size is factored within
    ``max_memory``; each power iteration costs two more passes over it.

    Parameters
    ----------
    x : array_like
        (m, n).
    k : int
        The rank, 1 <= k <= min(m, n).
    n_power_iter : int, optional
        Power iterations: more when the singular values decay slowly (2 to 4 typically).
    n_oversamples : int, optional
        Extra columns of ``Ω`` beyond k (Dask's default, 10).
    seed : int, optional
        Draws ``Ω`` (b2lazy's counter-based generator: the same seed, the same result).

    Returns
    -------
    SVDResult
        (U (m, k), S (k,), Vh (k, n)), S real and descending; lazy.

    Examples
    --------
    >>> import numpy as np
    >>> import b2lazy as bl
    >>> a = np.outer(np.arange(1.0, 7.0), np.arange(1.0, 5.0))  # rank 1
    >>> u, s, vh = bl.linalg.svd_compressed(a, 1)
    >>> round(float(s.to_numpy()[0]), 9) == round(float(np.linalg.svd(a)[1][0]), 9)
    True
    """
    return SVDResult(
        *_ns().linalg_svd_compressed(x, k, n_power_iter=n_power_iter, n_oversamples=n_oversamples, seed=seed)
    )


def det(x, /):
    """The determinant of square matrices (LU with partial pivoting).

    Parameters
    ----------
    x : array_like
        (..., n, n).

    Returns
    -------
    Array
        (...), lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> round(float(bl.linalg.det([[1.0, 2.0], [3.0, 4.0]]).to_numpy()), 12)
    -2.0
    """
    return _ns().linalg_det(x)


def slogdet(x, /):
    """The sign and the natural log of the absolute value of the determinant.

    Parameters
    ----------
    x : array_like
        (..., n, n).

    Returns
    -------
    SlogdetResult
        (sign, logabsdet), each (...); a singular matrix gives sign 0 and logabsdet -inf.
        For complex matrices, sign has modulus 1. Lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> s, l = bl.linalg.slogdet([[0.0, 2.0], [1.0, 0.0]])
    >>> float(s.to_numpy()), round(float(l.to_numpy()), 6)
    (-1.0, 0.693147)
    """
    return SlogdetResult(*_ns().linalg_slogdet(x))


def inv(x, /):
    """The inverse of square matrices.

    Parameters
    ----------
    x : array_like
        (..., n, n).

    Returns
    -------
    Array
        (..., n, n), lazy. A singular matrix is a ``numpy.linalg.LinAlgError`` when
        evaluated. A 2-d matrix over ``max_memory``: by the tiled Cholesky of
        :func:`cholesky` when it is symmetric (Hermitian) positive definite, else a
        ValueError naming the budget that would hold it.

    Examples
    --------
    >>> import b2lazy as bl
    >>> bool((bl.linalg.inv([[2.0, 0.0], [0.0, 4.0]]).to_numpy() == [[0.5, 0.0], [0.0, 0.25]]).all())
    True
    """
    return _ns().linalg_inv(x)


def solve(x1, x2, /):
    """The solution x of x1 @ x = x2.

    Parameters
    ----------
    x1 : array_like
        (..., n, n).
    x2 : array_like
        (n,), a vector when 1-d; else (..., n, k). The batch axes broadcast with x1's.

    Returns
    -------
    Array
        x, lazy. A singular x1 is a ``numpy.linalg.LinAlgError`` when evaluated. A 2-d x1
        over ``max_memory``: as :func:`inv`, forward and back substitution by tiles.

    Examples
    --------
    >>> import b2lazy as bl
    >>> bl.linalg.solve([[2.0, 0.0], [0.0, 4.0]], [1.0, 1.0]).to_numpy().tolist()
    [0.5, 0.25]
    """
    return _ns().linalg_solve(x1, x2)


def eig(a, /):
    """Eigenvalues and right eigenvectors of general square matrices (NumPy's).

    Parameters
    ----------
    a : array_like
        (..., n, n).

    Returns
    -------
    EigResult
        (eigenvalues (..., n), eigenvectors (..., n, n), as columns of unit norm); complex
        always (NumPy returns real arrays when every eigenvalue of a real input is real:
        a lazy result's dtype cannot depend on its values). Lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> w, v = bl.linalg.eig([[2.0, 0.0], [0.0, 3.0]])
    >>> w.to_numpy().tolist()
    [(2+0j), (3+0j)]
    """
    return EigResult(*_ns().linalg_eig(a))


def eigvals(a, /):
    """Eigenvalues of general square matrices (NumPy's), complex always.

    Parameters
    ----------
    a : array_like
        (..., n, n).

    Returns
    -------
    Array
        (..., n), lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> bl.linalg.eigvals([[2.0, 0.0], [0.0, 3.0]]).to_numpy().real.tolist()
    [2.0, 3.0]
    """
    return _ns().linalg_eigvals(a)


# --- built from the factorisations -------------------------------------------------------


def _rtol_array(x, rtol, s):
    """The cut-off below which singular values `s` (..., k) count as zero: rtol (a float or
    an array broadcast to the batch) times the largest, as a lazy array (..., 1)."""
    bl = _ns()
    if rtol is None:
        rtol = _default_rtol(x)
    smax = bl.max(s, axis=-1, keepdims=True) if s.shape[-1] else bl.zeros(s.shape[:-1] + (1,), dtype=s.dtype)
    if isinstance(rtol, numbers.Real):
        return smax * float(rtol)
    r = bl.asarray(rtol)
    return smax * bl.expand_dims(r.astype(s.dtype), axis=-1)


def matrix_rank(x, /, *, rtol=None, tol=None):
    """The rank of matrices: how many singular values exceed the cut-off.

    Parameters
    ----------
    x : array_like
        (..., m, n).
    rtol : float or array_like, optional
        Relative cut-off, times the largest singular value (an array: one per batch
        element). Default: max(m, n) times the dtype's epsilon.
    tol : float or array_like, optional
        Absolute cut-off (NumPy's), instead of `rtol`.

    Returns
    -------
    Array
        (...), int64, lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> int(bl.linalg.matrix_rank([[1.0, 2.0], [2.0, 4.0]]).to_numpy())
    1
    """
    bl = _ns()
    x = _matrices(_floating(x), "matrix_rank")
    s = svdvals(x)
    if tol is not None:
        cut = bl.asarray(tol).astype(s.dtype)
        cut = bl.expand_dims(cut, axis=-1) if cut.ndim else cut
    else:
        cut = _rtol_array(x, rtol, s)
    return bl.sum((s > cut).astype(np.int64), axis=-1)


def pinv(x, /, *, rtol=None, rcond=None):
    """The Moore-Penrose pseudo-inverse, from the SVD: singular values at most the cut-off
    count as zero.

    Parameters
    ----------
    x : array_like
        (..., m, n).
    rtol : float or array_like, optional
        Relative cut-off, times the largest singular value. Default: max(m, n) times the
        dtype's epsilon. `rcond` (NumPy's name) is the same.

    Returns
    -------
    Array
        (..., n, m), lazy.

    Examples
    --------
    >>> import numpy as np
    >>> import b2lazy as bl
    >>> p = bl.linalg.pinv([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]]).to_numpy()
    >>> bool(np.allclose(p, [[1.0, 0.0, 0.0], [0.0, 0.5, 0.0]]))
    True
    """
    bl = _ns()
    x = _matrices(_floating(x), "pinv")
    if rtol is None:
        rtol = rcond
    u, s, vh = svd(x, full_matrices=False)
    cut = _rtol_array(x, rtol, s)
    keep = s > cut
    sinv = bl.where(keep, 1.0 / bl.where(keep, s, bl.ones_like(s)), bl.zeros_like(s))
    v = bl.matrix_transpose(bl.conj(vh) if x.dtype.kind == "c" else vh)
    uh = bl.matrix_transpose(bl.conj(u) if x.dtype.kind == "c" else u)
    return bl.matmul(v * bl.expand_dims(sinv, axis=-2).astype(x.dtype), uh)


def lstsq(a, b, rcond=None):
    """The least-squares solution of a @ x = b (NumPy's lstsq), from the SVD of `a`.

    Parameters
    ----------
    a : array_like
        (m, n).
    b : array_like
        (m,) or (m, k).
    rcond : float, optional
        Singular values at most rcond times the largest count as zero. Default: max(m, n)
        times the dtype's epsilon.

    Returns
    -------
    LstsqResult
        (x (n,) or (n, k); residuals: the squared 2-norms of b - a @ x per column, (1,) or
        (k,), when m > n (NumPy gives an empty array when a's rank is below n: a lazy
        result's shape cannot depend on its values), else (0,); rank (a 0-d int64 Array);
        s, a's singular values). All lazy.

    Examples
    --------
    >>> import numpy as np
    >>> import b2lazy as bl
    >>> a = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    >>> x, res, rank, s = bl.linalg.lstsq(a, np.array([1.0, 2.0, 3.0]))
    >>> bool(np.allclose(x.to_numpy(), [1.0, 1.0])), int(rank.to_numpy())
    (True, 2)
    """
    bl = _ns()
    a = _floating(a)
    b = bl.asarray(b)
    if a.ndim != 2 or b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise ValueError(f"lstsq: a must be (m, n) and b (m,) or (m, k) of the same m, got {a.shape} and {b.shape}")
    dt = np.result_type(a.dtype, b.dtype if b.dtype.kind in "fc" else np.float64)
    a, b = a.astype(dt), b.astype(dt)
    m, n = a.shape
    u, s, vh = svd(a, full_matrices=False)
    cut = _rtol_array(a, rcond, s)
    keep = s > cut
    sinv = bl.where(keep, 1.0 / bl.where(keep, s, bl.ones_like(s)), bl.zeros_like(s)).astype(dt)
    uh = bl.matrix_transpose(bl.conj(u) if dt.kind == "c" else u)
    v = bl.matrix_transpose(bl.conj(vh) if dt.kind == "c" else vh)
    bm = b if b.ndim == 2 else bl.expand_dims(b, axis=1)
    x = bl.matmul(v, bl.expand_dims(sinv, axis=-1) * bl.matmul(uh, bm))
    rank = bl.sum(keep.astype(np.int64))
    if m > n:
        r = bm - bl.matmul(a, x)
        ar = bl.abs(r)
        resid = bl.sum(ar * ar, axis=0)
    else:
        resid = bl.zeros((0,), dtype=_real_dtype(dt))
    if b.ndim == 1:
        x = bl.reshape(x, (n,))
    return LstsqResult(x, resid, rank, s)


def cond(x, p=None):
    """The condition number of matrices (NumPy's cond).

    Parameters
    ----------
    x : array_like
        (..., m, n) (square unless p is None, 2 or -2).
    p : {None, 1, -1, 2, -2, inf, -inf, 'fro', 'nuc'}, optional
        The norm: None and 2 give the ratio of the largest to the smallest singular
        value, -2 its inverse; the others norm(x, p) * norm(inv(x), p).

    Returns
    -------
    Array
        (...), lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> float(bl.linalg.cond([[2.0, 0.0], [0.0, 0.5]]).to_numpy())
    4.0
    """
    x = _matrices(_floating(x), "cond")
    if p is None or p == 2 or p == -2:
        s = svdvals(x)
        hi, lo = s[..., 0], s[..., -1]
        return lo / hi if p == -2 else hi / lo
    return norm(x, p, axis=(-2, -1)) * norm(inv(x), p, axis=(-2, -1))


# --- products, views and norms (the namespace's) -------------------------------------------


def matmul(x1, x2, /):
    """The matrix product (:func:`b2lazy.matmul`).

    Parameters
    ----------
    x1, x2 : array_like
        NumPy's semantics: 1-d operands promoted, batch axes broadcast.

    Returns
    -------
    Array
        Lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> bl.linalg.matmul([[1.0, 2.0]], [[3.0], [4.0]]).to_numpy().tolist()
    [[11.0]]
    """
    return _ns().matmul(x1, x2)


def tensordot(x1, x2, /, *, axes=2):
    """Tensor contraction (:func:`b2lazy.tensordot`).

    Parameters
    ----------
    x1, x2 : array_like
    axes : int or (sequence of ints, sequence of ints), optional
        The last `axes` axes of x1 with the first of x2, or the axes given.

    Returns
    -------
    Array
        Lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> float(bl.linalg.tensordot([1.0, 2.0], [3.0, 4.0], axes=1).to_numpy())
    11.0
    """
    return _ns().tensordot(x1, x2, axes=axes)


def vecdot(x1, x2, /, *, axis=-1):
    """Dot products of vectors along `axis` (:func:`b2lazy.vecdot`; x1 conjugated).

    Parameters
    ----------
    x1, x2 : array_like
    axis : int, optional

    Returns
    -------
    Array
        Lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> float(bl.linalg.vecdot([1.0, 2.0], [3.0, 4.0]).to_numpy())
    11.0
    """
    return _ns().vecdot(x1, x2, axis=axis)


def outer(x1, x2, /):
    """The outer product of two vectors (:func:`b2lazy.outer`).

    Parameters
    ----------
    x1, x2 : array_like
        1-d.

    Returns
    -------
    Array
        Lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> bl.linalg.outer([1.0, 2.0], [3.0, 4.0]).to_numpy().tolist()
    [[3.0, 4.0], [6.0, 8.0]]
    """
    return _ns().outer(x1, x2)


def matrix_transpose(x, /):
    """Swap the last two axes (:func:`b2lazy.matrix_transpose`).

    Parameters
    ----------
    x : array_like
        (..., m, n).

    Returns
    -------
    Array
        (..., n, m), lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> bl.linalg.matrix_transpose([[1.0, 2.0]]).shape
    (2, 1)
    """
    return _ns().matrix_transpose(x)


def diagonal(x, /, *, offset=0):
    """The diagonals of the matrices of x (the last two axes).

    Parameters
    ----------
    x : array_like
        (..., m, n).
    offset : int, optional
        Above (> 0) or below (< 0) the main diagonal.

    Returns
    -------
    Array
        Lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> bl.linalg.diagonal([[1.0, 2.0], [3.0, 4.0]]).to_numpy().tolist()
    [1.0, 4.0]
    """
    return _ns().diagonal(x, offset=offset)


def trace(x, /, *, offset=0, dtype=None):
    """The sums of the diagonals of the matrices of x (the last two axes).

    Parameters
    ----------
    x : array_like
        (..., m, n).
    offset : int, optional
    dtype : dtype, optional

    Returns
    -------
    Array
        Lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> float(bl.linalg.trace([[1.0, 2.0], [3.0, 4.0]]).to_numpy())
    5.0
    """
    return _ns().trace(x, offset=offset, dtype=dtype)


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-element vectors along `axis` (the other axes broadcast).

    Parameters
    ----------
    x1, x2 : array_like
        Of length 3 along `axis`.
    axis : int, optional

    Returns
    -------
    Array
        Lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> bl.linalg.cross([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]).to_numpy().tolist()
    [0.0, 0.0, 1.0]
    """
    bl = _ns()
    x1, x2 = bl.asarray(x1), bl.asarray(x2)
    if isinstance(axis, bool) or not isinstance(axis, (numbers.Integral, np.integer)):
        raise TypeError(f"cross: axis must be an int, got {axis!r}")
    axis = int(axis)
    for name, x in (("x1", x1), ("x2", x2)):
        if not -x.ndim <= axis < x.ndim:
            raise ValueError(f"cross: axis {axis} is out of bounds for {name} of shape {x.shape}")
        if x.shape[axis] != 3:
            raise ValueError(f"cross: {name} must have length 3 along axis {axis}, got shape {x.shape}")
    # (as NumPy: the axis taken from each operand, the others broadcast)
    b1 = bl.moveaxis(x1, axis, -1)
    b2 = bl.moveaxis(x2, axis, -1)
    a0, a1, a2 = b1[..., 0], b1[..., 1], b1[..., 2]
    c0, c1, c2 = b2[..., 0], b2[..., 1], b2[..., 2]
    out = bl.stack([a1 * c2 - a2 * c1, a2 * c0 - a0 * c2, a0 * c1 - a1 * c0], axis=-1)
    return bl.moveaxis(out, -1, axis)


def matrix_power(x, n, /):
    """x raised to the integer power n (by repeated squaring; n < 0: of the inverse).

    Parameters
    ----------
    x : array_like
        (..., m, m).
    n : int

    Returns
    -------
    Array
        Lazy; n = 0 gives identities of x's dtype.

    Examples
    --------
    >>> import b2lazy as bl
    >>> bl.linalg.matrix_power([[1.0, 1.0], [0.0, 1.0]], 3).to_numpy().tolist()
    [[1.0, 3.0], [0.0, 1.0]]
    """
    bl = _ns()
    x = _matrices(x, "matrix_power")
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"matrix_power: the matrices must be square, got shape {x.shape}")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power: n must be an int, got {n!r}") from None
    if n < 0:
        x, n = inv(x), -n
    if n == 0:
        eye = bl.eye(x.shape[-1], dtype=x.dtype)
        return bl.broadcast_to(eye, x.shape) if x.ndim > 2 else eye
    r, p = None, x
    while n:
        if n & 1:
            r = p if r is None else bl.matmul(r, p)
        n >>= 1
        if n:
            p = bl.matmul(p, p)
    return r


def multi_dot(arrays, *, out=None):
    """The product of a chain of matrices (NumPy's multi_dot; the first may be a row
    vector, the last a column vector), left to right.

    Parameters
    ----------
    arrays : sequence of array_like

    Returns
    -------
    Array
        Lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> bl.linalg.multi_dot([[[1.0, 2.0]], [[1.0], [1.0]], [[2.0]]]).to_numpy().tolist()
    [[6.0]]
    """
    if out is not None:
        raise TypeError("multi_dot: out= is not supported (the result is lazy)")
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("multi_dot: at least two arrays are needed")
    bl = _ns()
    r = bl.asarray(arrays[0])
    for a in arrays[1:]:
        r = bl.matmul(r, a)
    return r


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Vector norms over `axis` (all axes by default), lazily: reductions over x.

    Parameters
    ----------
    x : array_like
    axis : int or tuple of ints, optional
    keepdims : bool, optional
    ord : {int, float, inf, -inf}, optional
        2 (default): sqrt(sum(abs(x)**2)); 1: sum(abs(x)); inf / -inf: max / min of
        abs(x); 0: the count of nonzeros; p: sum(abs(x)**p)**(1/p).

    Returns
    -------
    Array
        Of x's real floating dtype (integers: float64), lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> float(bl.linalg.vector_norm([3.0, 4.0]).to_numpy())
    5.0
    """
    from ._numpy_linalg import _linalg_vector_norm

    return _linalg_vector_norm(None, _floating(x), axis=axis, keepdims=keepdims, ord=ord)


def _svd_norm(x, ord, keepdims):
    bl = _ns()
    s = svdvals(x)
    out = bl.sum(s, axis=-1) if ord == "nuc" else bl.max(s, axis=-1) if ord == 2 else bl.min(s, axis=-1)
    if keepdims:
        out = bl.expand_dims(bl.expand_dims(out, axis=-1), axis=-1)
    return out


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Matrix norms of the last two axes, lazily.

    Parameters
    ----------
    x : array_like
        (..., m, n).
    keepdims : bool, optional
    ord : {'fro', 'nuc', 1, -1, 2, -2, inf, -inf}, optional
        'fro' (default), 1 / -1 (largest / smallest column sum of abs(x)) and inf / -inf
        (rows) are reductions over x; 2 / -2 (largest / smallest singular value) and
        'nuc' (their sum) come from :func:`svdvals`.

    Returns
    -------
    Array
        (...) (keepdims: (..., 1, 1)), of x's real floating dtype; lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> float(bl.linalg.matrix_norm([[3.0, 0.0], [0.0, 4.0]]).to_numpy())
    5.0
    """
    from ._numpy_linalg import _matrix_norm

    x = _matrices(_floating(x), "matrix_norm")
    if ord in (2, -2, "nuc") and not isinstance(ord, bool):
        return _svd_norm(x, ord, keepdims)
    if ord not in ("fro", 1, -1, np.inf, -np.inf) or isinstance(ord, bool):
        raise ValueError(f"matrix_norm: invalid ord {ord!r}")
    return _matrix_norm(x, ord, (-2, -1), keepdims)


def norm(x, ord=None, axis=None, keepdims=False):
    """NumPy's norm: a vector norm over one axis, a matrix norm over two, or the 2-norm of
    x flattened (axis None and ord None), lazily.

    Parameters
    ----------
    x : array_like
    ord : optional
        As :func:`numpy.linalg.norm`.
    axis : int or pair of ints, optional
    keepdims : bool, optional

    Returns
    -------
    Array
        Lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> float(bl.linalg.norm([[1.0, 2.0], [2.0, 4.0]], 2).to_numpy())
    5.0
    """
    from ._numpy_linalg import _norm

    bl = _ns()
    x = _floating(x)
    if axis is None and ord is not None and x.ndim == 2:
        axis = (0, 1)
    axes = None if axis is None else (axis,) if isinstance(axis, (numbers.Integral, np.integer)) else tuple(axis)
    if axes is not None and len(axes) == 2 and ord in (2, -2, "nuc") and not isinstance(ord, bool):
        r, c = (int(a) % x.ndim for a in axes)
        if r == c:
            raise ValueError("norm: the two axes must differ")
        moved = bl.moveaxis(x, (r, c), (-2, -1))
        out = _svd_norm(moved, ord, False)
        if keepdims:
            for a in sorted((r, c)):
                out = bl.expand_dims(out, axis=a)
        return out
    return _norm(None, x, ord=ord, axis=axis, keepdims=keepdims)
