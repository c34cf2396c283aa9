"""The factorisations and solvers of :mod:`b2lazy.linalg` by LAPACK, as namespace
functions under a ``linalg_`` prefix (the registry's rows; expression strings call them by
these names): each returns lazy arrays, a tuple of them for several outputs. A matrix is
factored whole, once per evaluation for all its outputs, and must fit ``max_memory`` with
LAPACK's workspace, except by TSQR (tall-and-skinny qr, svd, svdvals) and by tiles spilled
to temporary files (cholesky of a 2-d matrix, and solve/inv of a symmetric positive-definite
one). :mod:`b2lazy.linalg` gives them the Array API's names and result tuples."""

from __future__ import annotations

from . import Array, _core
from ._registry import registered as _registered
from ._serial import namespace as _ns

__all__ = [
    "linalg_cholesky",
    "linalg_qr",
    "linalg_eigh",
    "linalg_eigvalsh",
    "linalg_svd",
    "linalg_svdvals",
    "linalg_svd_compressed",
    "linalg_slogdet",
    "linalg_det",
    "linalg_inv",
    "linalg_solve",
    "linalg_eig",
    "linalg_eigvals",
]


def _a(x):
    return _ns().asarray(x)._a


def _flag(v, name, fn):
    if not isinstance(v, bool) and type(v).__name__ != "bool_":
        raise TypeError(f"{fn}(): {name} must be True or False, got {v!r}")
    return bool(v)


def _tuple(items):
    return tuple(Array(a) for a in items)


@_registered
def linalg_cholesky(x, /, *, upper):
    """Cholesky factor of Hermitian positive-definite matrices; :func:`b2lazy.linalg.cholesky`.

    Parameters
    ----------
    x : array_like
        (..., n, n); only its lower triangle is read.
    upper : bool, optional
        Return U = L^H (x = U^H U) instead of L (x = L L^H).

    Returns
    -------
    Array
        Lazy, of x's floating dtype. A matrix that is not positive definite is a
        ValueError when evaluated.

    Examples
    --------
    >>> import b2lazy as bl
    >>> bl.linalg_cholesky([[4.0, 2.0], [2.0, 5.0]]).to_numpy().tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    """
    return Array(_core.linalg_cholesky(_a(x), _flag(upper, "upper", "linalg_cholesky")))


@_registered
def linalg_qr(x, /, *, mode):
    """QR factorisation; :func:`b2lazy.linalg.qr`.

    Parameters
    ----------
    x : array_like
        (..., m, n).
    mode : {'reduced', 'complete', 'r'}, optional
        Q (..., m, k) and R (..., k, n) with k = min(m, n); Q (..., m, m) and R (..., m, n);
        or R alone.

    Returns
    -------
    tuple of Array
        (Q, R), or (R,) for mode 'r'; lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> q, r = bl.linalg_qr([[3.0, 1.0], [4.0, 2.0]])
    >>> r.shape
    (2, 2)
    """
    if not isinstance(mode, str):
        raise TypeError(f"linalg_qr(): mode must be a string, got {mode!r}")
    return _tuple(_core.linalg_qr(_a(x), mode))


@_registered
def linalg_eigh(x, /):
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices; :func:`b2lazy.linalg.eigh`.

    Parameters
    ----------
    x : array_like
        (..., n, n); only its lower triangle is read.

    Returns
    -------
    tuple of Array
        (eigenvalues (..., n), real; eigenvectors (..., n, n), columns); lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> w, v = bl.linalg_eigh([[2.0, 0.0], [0.0, 1.0]])
    >>> w.to_numpy().tolist()
    [1.0, 2.0]
    """
    return _tuple(_core.linalg_eigh(_a(x)))


@_registered
def linalg_eigvalsh(x, /):
    """Eigenvalues (ascending) of Hermitian matrices; :func:`b2lazy.linalg.eigvalsh`.

    Parameters
    ----------
    x : array_like
        (..., n, n); only its lower triangle is read.

    Returns
    -------
    Array
        (..., n), real; lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> bl.linalg_eigvalsh([[2.0, 0.0], [0.0, 1.0]]).to_numpy().tolist()
    [1.0, 2.0]
    """
    return Array(_core.linalg_eigvalsh(_a(x)))


@_registered
def linalg_svd(x, /, *, full_matrices):
    """Singular value decomposition; :func:`b2lazy.linalg.svd`.

    Parameters
    ----------
    x : array_like
        (..., m, n).
    full_matrices : bool, optional
        U (..., m, m) and Vh (..., n, n); else (..., m, k) and (..., k, n), k = min(m, n).

    Returns
    -------
    tuple of Array
        (U, S, Vh) with x = U diag(S) Vh, S (..., k) real and descending; lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> u, s, vh = bl.linalg_svd([[3.0, 0.0], [0.0, 4.0]])
    >>> s.to_numpy().tolist()
    [4.0, 3.0]
    """
    return _tuple(_core.linalg_svd(_a(x), _flag(full_matrices, "full_matrices", "linalg_svd")))


@_registered
def linalg_svdvals(x, /):
    """Singular values, descending; :func:`b2lazy.linalg.svdvals`.

    Parameters
    ----------
    x : array_like
        (..., m, n).

    Returns
    -------
    Array
        (..., min(m, n)), real; lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> bl.linalg_svdvals([[3.0, 0.0], [0.0, 4.0]]).to_numpy().tolist()
    [4.0, 3.0]
    """
    return Array(_core.linalg_svdvals(_a(x)))


@_registered
def linalg_svd_compressed(x, /, k, *, n_power_iter, n_oversamples, seed):
    """A rank-k SVD by randomized range finding; :func:`b2lazy.linalg.svd_compressed`.

    Parameters
    ----------
    x : array_like
        (m, n).
    k : int
        The rank, 1 <= k <= min(m, n).
    n_power_iter : int, optional
        Power iterations (each two more passes over x).
    n_oversamples : int, optional
        Columns of the random test matrix beyond k.
    seed : int, optional
        Draws the random test matrix.

    Returns
    -------
    tuple of Array
        (U (m, k), S (k,), Vh (k, n)), S real and descending; lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> u, s, vh = bl.linalg_svd_compressed([[3.0, 0.0], [0.0, 4.0]], 1)
    >>> print(f"{s.to_numpy()[0]:.9f}")
    4.000000000
    """
    kwargs = {"n_power_iter": n_power_iter, "n_oversamples": n_oversamples, "seed": seed}
    return _tuple(_core.call("linalg_svd_compressed", (_a(x), k), kwargs))


@_registered
def linalg_slogdet(x, /):
    """Sign and log of the absolute value of the determinant; :func:`b2lazy.linalg.slogdet`.

    Parameters
    ----------
    x : array_like
        (..., n, n).

    Returns
    -------
    tuple of Array
        (sign, logabsdet), each (...); a singular matrix gives (0, -inf); lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> s, l = bl.linalg_slogdet([[0.0, 2.0], [1.0, 0.0]])
    >>> print(float(s.to_numpy()), f"{float(l.to_numpy()):.6f}")
    -1.0 0.693147
    """
    return _tuple(_core.linalg_slogdet(_a(x)))


@_registered
def linalg_det(x, /):
    """Determinant (by LU with partial pivoting); :func:`b2lazy.linalg.det`.

    Parameters
    ----------
    x : array_like
        (..., n, n).

    Returns
    -------
    Array
        (...); lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> print(f"{float(bl.linalg_det([[1.0, 2.0], [3.0, 4.0]]).to_numpy()):.6f}")
    -2.000000
    """
    return Array(_core.linalg_det(_a(x)))


@_registered
def linalg_inv(x, /):
    """Inverse of square matrices; :func:`b2lazy.linalg.inv`.

    Parameters
    ----------
    x : array_like
        (..., n, n).

    Returns
    -------
    Array
        (..., n, n); lazy. A singular matrix is a ValueError when evaluated.

    Examples
    --------
    >>> import b2lazy as bl
    >>> bool((bl.linalg_inv([[2.0, 0.0], [0.0, 4.0]]).to_numpy() == [[0.5, 0.0], [0.0, 0.25]]).all())
    True
    """
    return Array(_core.linalg_inv(_a(x)))


@_registered
def linalg_solve(x1, x2, /):
    """Solve x1 @ x = x2; :func:`b2lazy.linalg.solve`.

    Parameters
    ----------
    x1 : array_like
        (..., n, n).
    x2 : array_like
        (n,) (a vector, when 1-d) or (..., n, k); batch axes broadcast with x1's.

    Returns
    -------
    Array
        x, lazy. A singular x1 is a ValueError when evaluated.

    Examples
    --------
    >>> import b2lazy as bl
    >>> bl.linalg_solve([[2.0, 0.0], [0.0, 4.0]], [1.0, 1.0]).to_numpy().tolist()
    [0.5, 0.25]
    """
    return Array(_core.linalg_solve(_a(x1), _a(x2)))


@_registered
def linalg_eig(x, /):
    """Eigenvalues and right eigenvectors of general square matrices; :func:`b2lazy.linalg.eig`.

    Parameters
    ----------
    x : array_like
        (..., n, n).

    Returns
    -------
    tuple of Array
        (eigenvalues (..., n), eigenvectors (..., n, n), columns of unit norm), complex
        always (NumPy gives real arrays when every eigenvalue is real); lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> w, v = bl.linalg_eig([[0.0, -1.0], [1.0, 0.0]])
    >>> sorted(w.to_numpy().imag.tolist())
    [-1.0, 1.0]
    """
    return _tuple(_core.linalg_eig(_a(x)))


@_registered
def linalg_eigvals(x, /):
    """Eigenvalues of general square matrices; :func:`b2lazy.linalg.eigvals`.

    Parameters
    ----------
    x : array_like
        (..., n, n).

    Returns
    -------
    Array
        (..., n), complex; lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> bl.linalg_eigvals([[2.0, 0.0], [0.0, 3.0]]).to_numpy().real.tolist()
    [2.0, 3.0]
    """
    return Array(_core.linalg_eigvals(_a(x)))
