"""Array API sorting and set functions: sort and argsort along an axis, searchsorted, lazy;
unique_values / counts / inverse / all. A region of a sort pulls the whole lanes it crosses
and sorts them; a lane longer than two runs (b2lazy._core.sort_run_length() elements) is
sorted out of core: runs sorted once, then merged per output region. Always stable; NaNs
sort last, as NumPy's. The unique functions sort x now, into a temporary file."""

from __future__ import annotations

from collections import namedtuple

from . import Array, _context, _core, _serial, asarray
from ._registry import registered as _registered

__all__ = ["searchsorted", "unique_values", "unique_counts", "unique_inverse", "unique_all"]

# NumPy 2's result types (named fields, unpackable)
UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


@_registered
def searchsorted(x1, x2, /, *, side, sorter):
    """Where the values x2 would go in the 1-D ascending x1 (int64): the first such place
    (side="left") or the last ("right"); with `sorter` (argsort(x1)), x1 read in that order.
    Each output chunk searches all of x1 (kept once when several need it)."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    return Array(
        _core.searchsorted(
            asarray(x1)._a, asarray(x2)._a, side == "right", None if sorter is None else asarray(sorter)._a
        )
    )


def _unique(x, indices, inverse, counts, max_memory):
    if max_memory is None:  # (run deferred from a reopened saved expression: its compute's budget)
        max_memory = _serial.max_memory()
    got = _core.unique(asarray(x)._a, indices, inverse, counts, _context(None), max_memory)
    return [None if a is None else Array(a) for a in got]


def unique_values(x, /, *, max_memory=None):
    """The distinct values of `x`, sorted, as a 1-d array.

    Each NaN is distinct; -0.0 equals 0.0. Sorts `x` now (out of core when long) into a
    temporary file; the result reads it lazily.

    Parameters
    ----------
    x : array_like
        Input array.
    max_memory : int, optional
        Memory budget in bytes of that sort.

    Returns
    -------
    Array
        The distinct values.

    Examples
    --------
    >>> bl.unique_values(bl.asarray(np.array([3, 1, 3, 2]))).to_numpy()
    array([1, 2, 3])
    """
    return _unique(x, False, False, False, max_memory)[0]


def unique_counts(x, /, *, max_memory=None):
    """The distinct values of `x` and how often each occurs.

    Parameters
    ----------
    x : array_like
        Input array.
    max_memory : int, optional
        Memory budget in bytes of the sort (as unique_values).

    Returns
    -------
    UniqueCountsResult
        A named tuple (values, counts) of Arrays.

    Examples
    --------
    >>> values, counts = bl.unique_counts(bl.asarray(np.array([3, 1, 3, 2])))
    >>> counts.to_numpy()
    array([1, 1, 2])
    """
    v, _, _, c = _unique(x, False, False, True, max_memory)
    return UniqueCountsResult(v, c)


def unique_inverse(x, /, *, max_memory=None):
    """The distinct values of `x`, and for each element the position of its value among them.

    Sorts `x` twice now (values and positions).

    Parameters
    ----------
    x : array_like
        Input array.
    max_memory : int, optional
        Memory budget in bytes of the sorts (as unique_values).

    Returns
    -------
    UniqueInverseResult
        A named tuple (values, inverse_indices) of Arrays; inverse_indices has x's shape.

    Examples
    --------
    >>> r = bl.unique_inverse(bl.asarray(np.array([3, 1, 3, 2])))
    >>> r.inverse_indices.to_numpy()
    array([2, 0, 2, 1])
    """
    v, _, inv, _ = _unique(x, False, True, False, max_memory)
    return UniqueInverseResult(v, inv)


def unique_all(x, /, *, max_memory=None):
    """The distinct values of `x`, their first positions, the inverse indices and the counts.

    Parameters
    ----------
    x : array_like
        Input array.
    max_memory : int, optional
        Memory budget in bytes of the sorts (as unique_values).

    Returns
    -------
    UniqueAllResult
        A named tuple (values, indices, inverse_indices, counts) of Arrays; indices is each
        value's first position in `x` flattened.

    Examples
    --------
    >>> [a.to_numpy() for a in bl.unique_all(bl.asarray(np.array([3, 1, 3, 2])))]
    [array([1, 2, 3]), array([1, 3, 0]), array([2, 0, 2, 1]), array([1, 1, 2])]
    """
    return UniqueAllResult(*_unique(x, True, True, True, max_memory))
