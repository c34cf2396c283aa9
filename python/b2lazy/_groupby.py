"""Reductions by group codes: ``segment_reduce``, the engine's node for
xarray's groupby and resample reductions (src/ops/segment/segment_node.*), and the hook
that sends xarray's groupby reductions of b2lazy-backed objects to it
(:func:`_install_xarray_groupby`)."""

from __future__ import annotations

import sys

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
    return Array(
        _core.segment_reduce(
            a._a, _codes_list(codes), func, None if ngroups is None else int(ngroups), int(axis), float(ddof)
        )
    )


# --- xarray: groupby / resample reductions of b2lazy-backed objects ----------------------
#
# xarray 2026.9 sends a chunked array's groupby reductions to flox when flox is installed
# (GroupBy._flox_reduce, flox.xarray.xarray_reduce); flox dispatches on Dask and Cubed
# arrays only. Without flox, GroupBy.reduce maps the reduction over the groups (an isel
# and a reduction per group, then a concat): lazy in b2lazy, but a graph of one take and
# one reduction per group, each reading the chunks of its group. The hook below sends
# GroupBy.reduce of an object whose data are b2lazy Arrays to one segment_reduce node
# instead; every other object (NumPy, Dask, ...) goes to xarray's own reduce unchanged.

# duck_array_ops function name -> (segment func, its NaN-skipping form)
_XR_FUNCS = {
    "sum": ("sum", "nansum"),
    "prod": ("prod", "nanprod"),
    "mean": ("mean", "nanmean"),
    "min": ("min", "nanmin"),
    "max": ("max", "nanmax"),
    "std": ("std", "nanstd"),
    "var": ("var", "nanvar"),
    "count": ("count", "count"),
    "array_any": ("any", "any"),
    "array_all": ("all", "all"),
    "first": ("first", "nanfirst"),
    "last": ("last", "nanlast"),
}
_installed = False


def _segment_func(func, dtype, skipna):
    """segment_reduce's name for xarray's duck_array_ops reduction `func`, skipping NaN as
    xarray would (skipna None: for float and complex data), or None."""
    from xarray.core import duck_array_ops

    for attr, (plain, nan) in _XR_FUNCS.items():
        if func is getattr(duck_array_ops, attr, None):
            if attr in ("first", "last"):
                return nan if (skipna or skipna is None) else plain
            return nan if (skipna or (skipna is None and np.dtype(dtype).kind in "fc")) else plain
    return None


def _grouped_dim(gb, dim, axis):
    """The one dimension a reduction of `gb` folds, when it is only the grouped one."""
    if axis is not None or len(gb.groupers) != 1 or getattr(gb, "_by_chunked", False):
        return None
    (grouper,) = gb.groupers
    codes = grouper.codes
    if codes.ndim != 1 or codes.dims != (gb._group_dim,):
        return None
    if dim is None or dim == gb._group_dim or (isinstance(dim, (list, tuple)) and list(dim) == [gb._group_dim]):
        return gb._group_dim
    return None


def _reduce_variable(var, codes, ngroups, axis, fname, kwargs):
    """A b2lazy Variable's data reduced by `codes` along `axis`, missing groups NaN (as
    xarray's reindex after its per-group map leaves them)."""
    opts = dict(kwargs)
    ddof = opts.pop("ddof", 0)
    min_count = opts.pop("min_count", None)
    if opts:
        return None
    data = segment_reduce(var.data, codes, fname, ngroups=ngroups, axis=axis, ddof=ddof)
    counts = np.bincount(codes[codes >= 0], minlength=ngroups)
    need = np.ones(ngroups, bool) if min_count is None or not fname.startswith("nan") else None
    if need is None:  # xarray's min_count: fewer values that are not NaN give NaN
        valid = segment_reduce(var.data, codes, "count", ngroups=ngroups, axis=axis)
        data = _where_along(valid >= int(min_count), data)
    if (counts == 0).any():
        if data.dtype == np.bool_:
            return None  # (xarray gives object arrays there)
        shape = [1] * data.ndim
        shape[axis] = ngroups
        data = _where_along(np.asarray(counts > 0).reshape(shape), data)
    return data


def _where_along(keep, data):
    from . import where

    nan = np.float32("nan") if data.dtype == np.float32 else np.nan
    if data.dtype.kind not in "fc":
        data = data.astype(np.float64)
    return where(keep, data, nan)


def _segment_groupby_reduce(gb, func, dim, axis, keep_attrs, kwargs):
    """gb.reduce(func, ...) as segment reductions, or None when this is not such a case
    (then xarray's own reduce runs)."""
    import xarray as xr
    from xarray.core.options import _get_keep_attrs
    from xarray.groupers import RESAMPLE_DIM

    group_dim = _grouped_dim(gb, dim, axis)
    if group_dim is None:
        return None
    obj = gb._obj
    kwargs = dict(kwargs)
    skipna = kwargs.pop("skipna", None)
    numeric_only = kwargs.pop("numeric_only", False)  # (Datasets: non-numeric variables dropped)
    (grouper,) = gb.groupers
    codes = np.asarray(grouper.codes.values, dtype=np.int64)
    full_index = grouper.full_index
    ngroups = len(full_index)
    name = grouper.name
    out_dim = gb._group_dim if name == RESAMPLE_DIM else name
    if keep_attrs is None:
        keep_attrs = _get_keep_attrs(default=True)

    def reduce_var(var):
        if not isinstance(var.data, Array) or group_dim not in var.dims:
            return None
        fname = _segment_func(func, var.dtype, skipna)
        if fname is None:
            return None
        data = _reduce_variable(var, codes, ngroups, var.get_axis_num(group_dim), fname, kwargs)
        if data is None:
            return None
        dims = tuple(out_dim if d == group_dim else d for d in var.dims)
        return xr.Variable(dims, data, attrs=var.attrs if keep_attrs else None)

    coords = {
        k: v.variable
        for k, v in obj.coords.items()
        if group_dim not in v.dims and name not in v.dims and k not in (name, out_dim)
    }
    coords[out_dim] = xr.IndexVariable(out_dim, full_index)
    if isinstance(obj, xr.DataArray):
        v = reduce_var(obj.variable)
        if v is None:
            return None
        return xr.DataArray(v, coords=coords, name=obj.name)
    out = {}
    for k, var in obj.data_vars.items():
        if numeric_only and var.dtype.kind not in "biufc":
            continue
        v = reduce_var(var.variable)
        if v is None:
            return None
        out[k] = v
    return xr.Dataset(out, coords=coords, attrs=obj.attrs if keep_attrs else None)


def _install_xarray_groupby():
    """Wraps xarray's GroupBy.reduce (DataArray and Dataset groupbys; resample's reduce
    calls it) so that an object backed by b2lazy Arrays is reduced by segment_reduce.
    Objects backed by anything else reach xarray's reduce untouched. Installed when
    xarray loads b2lazy's chunk manager, or b2lazy is imported after xarray."""
    global _installed
    if _installed:
        return
    from xarray.core import groupby as xg

    for cls in (xg.DataArrayGroupByBase, xg.DatasetGroupByBase):
        original = cls.reduce

        def reduce(self, func, dim=None, *, axis=None, keep_attrs=None, shortcut=True, _original=original, **kwargs):
            if _holds_b2lazy(self._obj):
                out = _segment_groupby_reduce(self, func, dim, axis, keep_attrs, kwargs)
                if out is not None:
                    return out
            return _original(self, func, dim, axis=axis, keep_attrs=keep_attrs, shortcut=shortcut, **kwargs)

        reduce.__doc__ = original.__doc__
        reduce.__wrapped__ = original
        cls.reduce = reduce
    # Groupby arithmetic (t.groupby("time.month") - clim): xarray chunks an in-memory
    # `other` with the default chunk manager (Dask) before indexing it by the codes, and
    # b2lazy - Dask fails. For a b2lazy-backed object it is made a b2lazy array instead, so
    # the result is one b2lazy graph (other[codes] a lazy take).
    original_binary_op = xg.GroupBy._binary_op

    def _binary_op(self, other, f, reflexive=False):
        import xarray as xr

        if _holds_b2lazy(self._original_obj) and isinstance(other, (xr.DataArray, xr.Dataset)) and not other.chunks:
            other = other.chunk(dict(other.sizes), chunked_array_type="b2lazy")
        return original_binary_op(self, other, f, reflexive)

    _binary_op.__doc__ = original_binary_op.__doc__
    _binary_op.__wrapped__ = original_binary_op
    xg.GroupBy._binary_op = _binary_op
    _installed = True


def _holds_b2lazy(obj):
    variables = obj.data_vars.values() if hasattr(obj, "data_vars") else [obj]
    return any(isinstance(v.variable._data, Array) for v in variables)


class _AfterXarrayGroupby:
    """A meta path finder that installs the hook right after xarray.core.groupby is
    imported (b2lazy imported first; xarray may never load the chunk manager when the
    user wraps b2lazy Arrays in DataArrays directly)."""

    name = "xarray.core.groupby"

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        import importlib.util

        sys.meta_path.remove(self)  # one use: find the real spec without this finder
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_install(module):
            exec_module(module)
            _install_xarray_groupby()

        spec.loader.exec_module = exec_then_install
        return spec


def _install_when_xarray_imports():
    if "xarray.core.groupby" in sys.modules:
        _install_xarray_groupby()
    elif not any(isinstance(f, _AfterXarrayGroupby) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterXarrayGroupby())
