"""Reductions by group codes (issue #38): ``segment_reduce``, the engine's node for
xarray's groupby and resample reductions (src/ops/segment/segment_node.*), and the hook
that sends xarray's groupby reductions of b2lazy-backed objects to it
(:func:`_install_xarray_groupby`)."""

from __future__ import annotations

import numpy as np

from . import Array, _core, asarray
from ._registry import registered as _registered

__all__ = ["segment_reduce"]


def _codes_list(codes, fn="segment_reduce"):
    c = codes.to_numpy() if isinstance(codes, Array) else np.asarray(codes)
    if c.ndim != 1:
        raise ValueError(f"{fn}: codes must be 1-d (one group code per element of the axis), got shape {c.shape}")
    if c.size and (c.dtype.kind not in "iu" or c.dtype == np.bool_):
        raise TypeError(f"{fn}: codes must be integers (a group in [0, ngroups), -1: dropped), got {c.dtype}")
    return c.astype(np.int64, copy=False).tolist()


@_registered
def segment_reduce(x, codes, /, func, *, ngroups, axis, ddof):
    """Reduce an array along one axis by integer group codes, lazily (a "segment
    reduction": what xarray's ``groupby(...).mean()`` and ``resample(...).sum()`` compute,
    and flox's ``groupby_reduce``).

    The result has ``axis`` replaced by one of length ``ngroups``: group ``g`` holds
    ``func`` over the elements whose code is ``g``. An output region reads only the rows
    of its groups, each stored input chunk once, and folds them into per-group partials:
    a climatology (twelve groups, each touching every year) reads the input once.

    Parameters
    ----------
    x : array_like
        The array to reduce.
    codes : array_like of int
        One code per element of ``axis``: a group in ``[0, ngroups)``, or -1 to drop the
        element (xarray's and flox's factorized codes).
    func : str
        ``'sum'``, ``'prod'``, ``'mean'``, ``'min'``, ``'max'``, ``'var'``, ``'std'``,
        ``'any'``, ``'all'``, ``'count'`` (values that are not NaN), ``'first'``,
        ``'last'``, and the NaN-skipping ``'nansum'``, ``'nanprod'``, ``'nanmean'``,
        ``'nanmin'``, ``'nanmax'``, ``'nanvar'``, ``'nanstd'``, ``'nanfirst'``,
        ``'nanlast'``.
    ngroups : int, optional
        The number of groups; default ``max(codes) + 1``.
    axis : int, optional
        The axis the codes label; default the last.
    ddof : int or float, optional
        Delta degrees of freedom of ``var`` and ``std``; default 0.

    Returns
    -------
    Array
        NumPy's reduction's dtype. An empty group holds what the reduction gives an
        empty slice (sum 0, mean NaN); ``min``, ``max``, ``first`` and ``last`` of an
        empty group are NaN (integer and bool inputs then give float64).

    Examples
    --------
    >>> import numpy as np, b2lazy as bl
    >>> x = np.array([[1., 2., 3., 4., 5.], [6., 7., 8., 9., 10.]])
    >>> bl.segment_reduce(x, [0, 1, 0, 1, -1], "sum").to_numpy()
    array([[ 4.,  6.],
           [14., 16.]])
    >>> bl.segment_reduce(x, [2, 2, 0, 0, 0], "mean", ngroups=4).to_numpy()
    array([[4. , nan, 1.5, nan],
           [9. , nan, 6.5, nan]])
    >>> bl.segment_reduce(x, [0, 0, 1, 1, 1], "max", axis=1).to_numpy()
    array([[ 2.,  5.],
           [ 7., 10.]])
    """
    if not isinstance(func, str):
        raise TypeError(f"segment_reduce: func must be a reduction's name such as 'mean', got {func!r}")
    if ngroups is not None and (not isinstance(ngroups, (int, np.integer)) or isinstance(ngroups, bool)):
        raise TypeError(f"segment_reduce: ngroups must be an int or None, got {ngroups!r}")
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"segment_reduce: axis must be an int, got {axis!r}")
    a = asarray(x)
    return Array(_core.segment_reduce(a._a, _codes_list(codes), func, None if ngroups is None else int(ngroups),
                                      int(axis), float(ddof)))
