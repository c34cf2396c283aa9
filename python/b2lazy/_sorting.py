"""Array API sorting functions: sort and argsort along an axis, and searchsorted, lazy. A region of the
result pulls the whole lanes it crosses (the axis entire) and sorts them; a lane must fit a
worker's share of max_memory. Always stable; NaNs sort last, as NumPy's."""

from __future__ import annotations

from . import Array, _core, asarray
from ._manipulation import _axis_arg
from ._registry import registered as _registered

__all__ = ["sort", "argsort", "searchsorted"]


def _flag(v, name, fn):
    if not isinstance(v, bool):
        raise TypeError(f"{fn}: {name} must be True or False, got {v!r}")
    return v


@_registered
def sort(x, /, *, axis, descending, stable):
    """x sorted along `axis` (ascending unless `descending`; stable, NaNs last)."""
    return Array(_core.sort(asarray(x)._a, _axis_arg(axis, "sort"), _flag(descending, "descending", "sort"),
                            _flag(stable, "stable", "sort"), False))


@_registered
def argsort(x, /, *, axis, descending, stable):
    """The int64 positions that sort x along `axis` (stable: equal values keep their order)."""
    return Array(_core.sort(asarray(x)._a, _axis_arg(axis, "argsort"), _flag(descending, "descending", "argsort"),
                            _flag(stable, "stable", "argsort"), True))


@_registered
def searchsorted(x1, x2, /, *, side, sorter):
    """Where the values x2 would go in the 1-D ascending x1 (int64): the first such place
    (side="left") or the last ("right"); with `sorter` (argsort(x1)), x1 read in that order.
    Each output chunk searches all of x1 (kept once when several need it)."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    return Array(_core.searchsorted(asarray(x1)._a, asarray(x2)._a, side == "right",
                                    None if sorter is None else asarray(sorter)._a))
