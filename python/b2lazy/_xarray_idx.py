"""xarray's vectorized indexing and idxmin / idxmax on b2lazy arrays.

Vectorized indexing (``isel`` with DataArray indexers that share a new dimension): xarray
wraps arrays with ``__array_namespace__`` in its ArrayApiIndexingAdapter, which refuses
vectorized keys. Wrapping its _vindex_get: a b2lazy array indexed by NumPy integer arrays
goes through b2lazy's own fancy indexing (lazy), with the axes moved as xarray's NumPy
adapter moves them; lazy (b2lazy) indexers stay refused, with what to do instead.

idxmin / idxmax: xarray computes argmin / argmax on the data
(lazy here) and indexes the coordinate with the result; for chunked data it makes the
coordinate a chunked array and indexes it vectorized, which b2lazy's indexing adapter
refuses (and a datetime coordinate, which b2lazy does not hold, stays NumPy and cannot be
indexed by a lazy array). Wrapping xarray's _calc_idxminmax (as _groupby wraps
GroupBy.reduce): a numeric coordinate is looked up lazily, block by block (a lazyudf over
the argmin / argmax); a datetime (or other) coordinate needs the argmin / argmax
evaluated (a reduced array, not the data), with an EagerEvaluationWarning."""

from __future__ import annotations

import warnings

import numpy as np

from . import Array

_installed = False


def _lookup(table, index, name):
    """table[index] for a small NumPy `table` and a lazy integer `index`: lazy."""
    import b2lazy as bl

    def block(inputs, out, offset):
        out[...] = table[inputs[0]]

    return bl.lazyudf(block, [index], table.dtype, shape=index.shape, name=name)


def _calc_idxminmax(original, *, array, func, dim=None, skipna=None, fill_value=None, keep_attrs=None, **kw):
    from xarray.core import dtypes

    if fill_value is None:
        fill_value = dtypes.NA
    if (
        not isinstance(array.data, Array)
        or not array.ndim
        or dim is None
        or dim not in array.dims
        or dim not in array.coords
    ):
        return original(
            array=array, func=func, dim=dim, skipna=skipna, fill_value=fill_value, keep_attrs=keep_attrs, **kw
        )  # xarray's own errors and paths
    import b2lazy as bl

    skip = skipna or (skipna is None and array.dtype.kind in "cfO")
    if skip:  # (as xarray: argmin / argmax cannot skip NaN, all-NaN lines are filled back)
        allna = array.isnull().all(dim)
        array = array.where(~allna, 0)
    index = func(array, dim=dim, axis=None, keep_attrs=keep_attrs, skipna=skipna)
    table = np.asarray(array[dim].values)
    names = getattr(getattr(func, "__code__", None), "co_names", ())  # (xarray passes a lambda)
    name = "idxmin" if "argmin" in names else "idxmax" if "argmax" in names else "idxmin/idxmax"
    if table.dtype.name in bl._SUPPORTED_DTYPES and isinstance(index.data, Array):
        res = index.copy(data=_lookup(table, index.data.astype("int64"), name)).rename(dim)
        if skip:
            res = res.where(~allna, fill_value)
    else:
        warnings.warn(
            f"{name} on b2lazy arrays: the coordinate {dim!r} has dtype {table.dtype}, which b2lazy "
            f"does not hold; the {name.replace('idx', 'arg')} (not the data) was evaluated to index it",
            bl.EagerEvaluationWarning,
            stacklevel=4,
        )
        idx = index.data.to_numpy() if isinstance(index.data, Array) else np.asarray(index.data)
        res = index.copy(data=table[idx]).rename(dim)
        if skip:
            mask = allna.data.to_numpy() if isinstance(allna.data, Array) else np.asarray(allna.data)
            res = res.where(~allna.copy(data=mask), fill_value)
    res.attrs = index.attrs
    return res


def _vindex_get(original, adapter, indexer):
    if not isinstance(adapter.array, Array):
        return original(adapter, indexer)
    key = indexer.tuple
    if any(isinstance(k, Array) for k in key):
        raise TypeError(
            "vectorized indexing of a b2lazy array by lazy (b2lazy) indexers is not supported: "
            "call .compute() on the indexers first"
        )
    from xarray.core.nputils import NumpyVIndexAdapter

    return NumpyVIndexAdapter(adapter.array)[key]


def _install_xarray_idxminmax():
    """xarray's idxmin / idxmax of b2lazy-backed objects go through _calc_idxminmax above,
    vectorized indexing of b2lazy arrays through _vindex_get; others reach xarray's
    untouched."""
    global _installed
    if _installed:
        return
    from xarray.computation import computation

    original = computation._calc_idxminmax

    def calc(**kwargs):
        return _calc_idxminmax(original, **kwargs)

    computation._calc_idxminmax = calc

    from xarray.core.indexing import ArrayApiIndexingAdapter

    vindex = ArrayApiIndexingAdapter._vindex_get

    def _vindex(self, indexer, _original=vindex):
        return _vindex_get(_original, self, indexer)

    ArrayApiIndexingAdapter._vindex_get = _vindex
    _installed = True
