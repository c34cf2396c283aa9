"""Moving-window (rolling) reductions along one axis, lazy like every b2lazy
function: one node (src/ops/rolling/moving_node.*) that pulls each output region plus a
halo of ``window - 1`` rows once and slides over it — running sums with NaN and inf
counted apart (float data accumulates in float64), van Herk / Gil-Werman extremes for min
and max — never ``window`` shifted copies.

xarray's ``DataArray.rolling(...).sum() / .mean() / .max() / .std() / .count()`` on
b2lazy-backed data reach the same node with nothing to hook: xarray pads, takes a
``sliding_window_view`` and reduces its window axis through the array namespace, and the
engine builds that reduction as a moving one (src/graph/rolling_builder.cpp)."""

from __future__ import annotations

import numpy as np

from . import Array, _core, asarray
from ._registry import registered as _registered

__all__ = ["moving_reduce"]

_FUNCS = ("sum", "mean", "min", "max", "var", "std", "count")


def _int(v, what):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"moving_reduce: {what} must be an int, got {v!r}")
    v = int(v)
    if not -(2**63) <= v < 2**63:
        raise ValueError(f"moving_reduce: {what} {v} is out of range")
    return v


@_registered
def moving_reduce(x, /, window, func, *, axis, center, min_periods, ddof, skipna):
    """Moving-window reduction along one axis (xarray's and pandas' ``rolling``), lazily.

    ``out[i]`` reduces the window of ``window`` values ending at ``i`` along `axis`
    (``center=True``: the window starting ``window // 2`` before ``i``, as xarray's).
    Positions beyond the ends of the axis are missing, NaNs are skipped, and a window
    with fewer than `min_periods` valid values gives NaN — xarray's
    ``x.rolling(dim=window, center=..., min_periods=...).<func>()``.

    Each output region reads its own rows plus ``window - 1`` more once: sums, means,
    counts and variances slide (float data in float64, restarted every few hundred
    rows so rounding does not grow along the axis), min and max use block prefix and
    suffix extremes. The window may be longer than the axis or than a chunk.

    Parameters
    ----------
    x : array_like
        The data (real dtypes; at least one dimension).
    window : int
        The window length, at least 1.
    func : str, optional
        ``'mean'`` (the default), ``'sum'``, ``'min'``, ``'max'``, ``'var'``, ``'std'``
        or ``'count'`` (valid values in the window).
    axis : int, optional
        The axis the window moves along (default -1).
    center : bool, optional
        Centre the window on each position (default False: trailing windows).
    min_periods : int, optional
        Valid values a window needs for a result (default: the window), at least 1.
    ddof : float, optional
        Delta degrees of freedom of var and std (default 0, as xarray's).
    skipna : bool, optional
        True (the default): NaNs are missing values. False: a NaN in the window gives NaN.

    Returns
    -------
    Array
        The same shape as x: float64 for integer or boolean input and for count,
        otherwise x's floating dtype.

    Examples
    --------
    >>> import numpy as np, b2lazy as bl
    >>> x = np.array([1., 2., np.nan, 4., 5.])
    >>> bl.moving_reduce(x, 2, 'sum').to_numpy()
    array([nan,  3., nan, nan,  9.])
    >>> bl.moving_reduce(x, 3, 'mean', min_periods=1).to_numpy()
    array([1. , 1.5, 1.5, 3. , 4.5])
    >>> bl.moving_reduce(x, 3, 'max', center=True, min_periods=2).to_numpy()
    array([2., 2., 4., 5., 5.])
    """
    if not isinstance(func, str) or func not in _FUNCS:
        raise ValueError(f"moving_reduce: func {func!r} is not one of {', '.join(_FUNCS)}")
    if not isinstance(center, (bool, np.bool_)) or not isinstance(skipna, (bool, np.bool_)):
        raise TypeError("moving_reduce: center and skipna must be True or False")
    if isinstance(ddof, (bool, np.bool_)) or not isinstance(ddof, (int, float, np.integer, np.floating)):
        raise TypeError(f"moving_reduce: ddof must be a number, got {ddof!r}")
    mp = None if min_periods is None else _int(min_periods, "min_periods")
    return Array(
        _core.moving_reduce(
            asarray(x)._a, _int(window, "window"), func, _int(axis, "axis"), bool(center), mp, float(ddof), bool(skipna)
        )
    )
