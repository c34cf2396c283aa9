"""Array API creation functions beyond the package's sources: empty, the *_like
functions, eye, tril/triu, meshgrid and from_dlpack. All lazy: constants and eye are
computed for whatever region is asked, tril/triu zero what they drop as it is read."""

from __future__ import annotations

import numpy as np

from . import Array, _core, asarray, full, zeros
from ._dtypes import as_dtype
from ._registry import registered as _registered
from ._info import check_device

__all__ = [
    "empty",
    "empty_like",
    "zeros_like",
    "ones_like",
    "full_like",
    "eye",
    "meshgrid",
    "from_dlpack",
]


@_registered
def empty(shape, dtype, *, device, chunks):
    """An array whose values are unspecified: zeros here (a constant, never stored)."""
    return zeros(shape, dtype, device=device, chunks=chunks)


def _like(x, dtype, device, fn):
    x = asarray(x)
    check_device(device, fn)
    return x, x.dtype if dtype is None else as_dtype(dtype, fn)


@_registered
def empty_like(x, /, *, dtype, device):
    x, dtype = _like(x, dtype, device, "empty_like")
    return full(x.shape, 0, dtype)


@_registered
def zeros_like(x, /, *, dtype, device):
    x, dtype = _like(x, dtype, device, "zeros_like")
    return full(x.shape, 0, dtype)


@_registered
def ones_like(x, /, *, dtype, device):
    x, dtype = _like(x, dtype, device, "ones_like")
    return full(x.shape, 1, dtype)


@_registered
def full_like(x, /, fill_value, *, dtype, device):
    """`fill_value` in x's shape and (by default) x's dtype, as NumPy's full_like."""
    x, dtype = _like(x, dtype, device, "full_like")
    return full(x.shape, fill_value, dtype)


def _int_arg(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{what} must be an integer, got {v!r}")
    return int(v)


def _diagonal_index(k, what):
    """A diagonal number as an int64: one beyond int64 lies beyond any matrix, the same as
    int64's limit (the engine clamps to the matrix)."""
    return min(max(_int_arg(k, what), -(2**63)), 2**63 - 1)


@_registered
def eye(n_rows, n_cols, /, *, k, dtype, device):
    """Ones on diagonal `k` (0: the main one, > 0 above, < 0 below), zeros elsewhere;
    float64 by default. Lazy: any region is computed from its coordinates."""
    check_device(device, "eye")
    n_rows = _int_arg(n_rows, "eye: n_rows")
    n_cols = n_rows if n_cols is None else _int_arg(n_cols, "eye: n_cols")
    dtype = np.float64 if dtype is None else as_dtype(dtype, "eye")
    return Array(_core.eye(n_rows, n_cols, _diagonal_index(k, "eye: k"), dtype))


@_registered
def meshgrid(*arrays, indexing):
    """Coordinate arrays from 1-d coordinate vectors, as broadcasts (nothing is copied).
    indexing="xy" swaps the first two output axes (Cartesian), "ij" keeps them (matrix)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    return [Array(a) for a in _core.meshgrid([asarray(a)._a for a in arrays], indexing == "xy")]


def from_dlpack(x, /, *, device=None, copy=None):
    """An array over the data of any object with ``__dlpack__`` (on the CPU).

    NumPy reads it (without a copy unless `copy` is True) and b2lazy wraps that without
    copying.

    Parameters
    ----------
    x : object
        An object with ``__dlpack__`` and ``__dlpack_device__``.
    device : str, optional
        b2lazy's one device, ``'cpu'``, or None.
    copy : bool, optional
        True copies the data; False refuses to.

    Returns
    -------
    Array
        The lazy array over that data.

    Examples
    --------
    >>> bl.from_dlpack(np.arange(3.0)).to_numpy()
    array([0., 1., 2.])
    """
    check_device(device, "from_dlpack")
    if isinstance(x, Array):
        return Array(x._a, x.stats) if copy else x
    kwargs = {} if copy is None else {"copy": copy}
    return asarray(np.from_dlpack(x, **kwargs))
