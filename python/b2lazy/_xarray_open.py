"""xarray's backend arrays as lazy b2lazy Arrays: what the chunk
manager's ``from_array`` gets from ``xr.open_dataset(..., chunked_array_type="b2lazy")``
is a stack of xarray wrappers over a backend array, e.g.

    MemoryCachedArray(CopyOnWriteArray(_ElementwiseFunctionArray(      # CF decoding
        LazilyIndexedArray(ZarrArrayWrapper(zarr.Array), key), func)))

Each layer becomes a b2lazy operation, reading nothing now: the backend array opens
through b2lazy's own Zarr / HDF5 driver when its store is one b2lazy reads (a local Zarr
directory; a netCDF-4 file, which is HDF5), else as a region source over it; the key of a
``LazilyIndexedArray`` as b2lazy indexing; the CF decoding functions xarray builds
(``_FillValue``/``missing_value`` masks, ``scale_factor``/``add_offset``, ``_Unsigned``,
endianness, booleans) as elementwise operations computed in the dtypes NumPy uses in
xarray's own functions. A layer not recognised here is read as a region source over
itself (its ``[BasicIndexer]``), so the layers beneath it are still read lazily."""

from __future__ import annotations

import functools
import os

import numpy as np

from . import _wrapping
from ._xarray_chunks import normalized

__all__ = []  # (used by _xarray.py only)


def _bl():
    import b2lazy

    return b2lazy


def _types():
    """xarray's classes, imported when used (xarray is optional for b2lazy)."""
    from xarray.coding import common, variables
    from xarray.core import indexing

    return indexing, common, variables


class Unsupported(TypeError):
    """b2lazy cannot hold this variable lazily (e.g. datetime64 or string values)."""


# --- entry point ---------------------------------------------------------------------------
def lazy_variable(data, chunks):
    """`data` (what NamedArray.chunk hands from_array: an ImplicitToExplicitIndexingAdapter
    over xarray's wrappers) as a lazy Array in `chunks`; None when `data` is not one of
    xarray's lazily indexed arrays, and Unsupported when b2lazy cannot hold its values."""
    indexing, _, _ = _types()
    obj = data.array if isinstance(data, indexing.ImplicitToExplicitIndexingAdapter) else data
    if not isinstance(obj, indexing.ExplicitlyIndexed) or isinstance(obj, indexing.NumpyIndexingAdapter):
        return None
    try:
        a = lazy(obj)
    except TypeError as err:  # (a dtype b2lazy does not hold, as region_source says)
        raise Unsupported(str(err)) from None
    return in_chunks(a, chunks)


def lazy(obj, depth=0):
    """The lazy Array over one of xarray's wrappers (recursively over what it wraps)."""
    indexing, common, variables = _types()
    bl = _bl()
    if depth > 64:  # (wrappers are a handful deep; a cycle must not recurse forever)
        return _region(obj)
    if isinstance(obj, (np.ndarray, np.generic)):
        return bl.asarray(np.asarray(obj))
    if isinstance(obj, indexing.NumpyIndexingAdapter):  # (a cached or copied variable)
        return bl.asarray(np.asarray(obj.array))
    if isinstance(obj, (indexing.MemoryCachedArray, indexing.CopyOnWriteArray)):
        return lazy(obj.array, depth + 1)
    if type(obj) is indexing.LazilyIndexedArray:
        return indexed(lazy(obj.array, depth + 1), obj.key, obj.array.shape)
    if isinstance(obj, common._ElementwiseFunctionArray):
        try:
            a = decoded(obj.func, np.dtype(obj.dtype), lambda: lazy(obj.array, depth + 1))
        except (OverflowError, ValueError):  # (a fill value or scale NumPy's arithmetic refuses here)
            a = None
        return a if a is not None else _region(obj)
    if isinstance(obj, (variables.NativeEndiannessArray, variables.BoolTypeArray)):
        a = lazy(obj.array, depth + 1)
        return a if a.dtype == obj.dtype else a.astype(obj.dtype)
    a = backend(obj)
    return a if a is not None else _region(obj)


def _region(obj):
    """A region source over `obj` (read by obj[BasicIndexer(slices)] when pulled; a
    backend's own BackendArray subclass is ExplicitlyIndexed too)."""
    indexing, _, _ = _types()
    getitem = _wrapping._xarray_getitem if isinstance(obj, indexing.ExplicitlyIndexed) else None
    return _wrapping.region_source(obj, None, f"xarray({type(obj).__name__})", None, getitem, "from_array")


# --- backend arrays --------------------------------------------------------------------------
def backend(obj):
    """The array of one of xarray's backends: through b2lazy's driver where it reads the
    store, else a region source over the backend's own array; None for other objects."""
    name = type(obj).__name__
    module = type(obj).__module__
    if name == "ZarrArrayWrapper" and module.startswith("xarray."):
        z = obj.get_array()
        if np.dtype(obj.dtype) != z.dtype:  # (xarray's vlen-string dtype)
            return None
        return _wrapping.wrap(z, "from_array", name=f"xarray({name})")
    if name == "H5NetCDFArrayWrapper" and module.startswith("xarray."):
        return _native_hdf5(obj, _h5netcdf_location(obj))
    if name == "NetCDF4ArrayWrapper" and module.startswith("xarray."):
        return _native_hdf5(obj, _netcdf4_location(obj))
    return None


def _native_hdf5(wrapper, location):
    """The dataset at `location` (file, HDF5 path) through b2lazy's HDF5 driver, if it
    opens with the wrapper's shape and dtype; else a region source over the wrapper (its
    reads hold the backend's lock)."""
    shape = tuple(int(s) for s in wrapper.shape)
    try:
        dtype = np.dtype(wrapper.dtype)
    except TypeError:
        dtype = None
    if location is not None and dtype is not None and dtype.kind in "biufc":
        try:
            a = _bl().open(f"hdf5:{location[0]}#{location[1]}")
        except (OSError, ValueError, TypeError):  # not HDF5, a filter or layout b2lazy lacks
            a = None
        if a is not None and a.shape == shape and a.dtype == dtype.newbyteorder("="):
            return a
    return _region(wrapper)


def _h5netcdf_location(wrapper):
    """(file, HDF5 path) of an h5netcdf variable b2lazy can read from disk, else None."""
    try:
        ds = wrapper.get_array()._h5ds
    except (AttributeError, KeyError, OSError):
        return None
    if not _wrapping._is_h5py_dataset(ds):
        return None
    return _wrapping._h5_path(ds)


def _netcdf4_location(wrapper):
    """(file, HDF5 path) of a netCDF4-python variable in a netCDF-4 (HDF5) file on disk."""
    try:
        var = wrapper.get_array()
        group = var.group()
        if wrapper.datastore.is_remote or not group.data_model.startswith("NETCDF4"):
            return None
        path = group.filepath()
    except (AttributeError, ValueError, OSError, RuntimeError):
        return None
    if not os.path.isfile(path):
        return None
    where = group.path.rstrip("/") + "/" + var.name
    return path, where


# --- LazilyIndexedArray's key --------------------------------------------------------------
def indexed(a, key, shape):
    """`a` indexed by xarray's BasicIndexer or OuterIndexer `key` (ints, slices and, for
    outer indexing, 1-D integer arrays applied along their axis independently)."""
    bl = _bl()
    parts = key.tuple
    basic = tuple(slice(None) if isinstance(k, np.ndarray) else k for k in parts)
    whole = all(isinstance(k, slice) and k.indices(n) == (0, n, 1) for k, n in zip(basic, shape))
    if not whole:
        a = a[tuple(int(k) if isinstance(k, (int, np.integer)) else k for k in basic)]
    axis = 0
    for k, n in zip(parts, shape):
        if isinstance(k, (int, np.integer)):
            continue
        if isinstance(k, np.ndarray):
            idx = k.astype(np.int64).ravel()
            idx = np.where(idx < 0, idx + n, idx)
            if idx.size and (idx.size == 1 or np.all(np.diff(idx) == 1)):
                a = a[(slice(None),) * axis + (slice(int(idx[0]), int(idx[-1]) + 1),)]
            elif idx.size:
                a = bl.take(a, idx, axis=axis)
            else:
                a = a[(slice(None),) * axis + (slice(0, 0),)]
        axis += 1
    return a


# --- CF decoding -------------------------------------------------------------------------------
def decoded(func, dtype, inner):
    """The decoding `func` (one of xarray.coding's partials) applied lazily to inner(), in
    `dtype`; None when `func` is not one recognised here."""
    _, _, variables = _types()
    if not isinstance(func, functools.partial) or func.args:
        return None
    kw = func.keywords
    if func.func is variables._apply_mask and set(kw) == {"encoded_fill_values", "decoded_fill_value", "dtype"}:
        if np.dtype(kw["dtype"]) != dtype:
            return None
        return masked(inner(), kw["encoded_fill_values"], kw["decoded_fill_value"], dtype)
    if func.func is variables._scale_offset_decoding and set(kw) == {"scale_factor", "add_offset", "dtype"}:
        if np.dtype(kw["dtype"]) != dtype:
            return None
        return scaled(inner(), kw["scale_factor"], kw["add_offset"], dtype)
    if func.func is np.asarray and set(kw) == {"dtype"} and np.dtype(kw["dtype"]) == dtype:
        return inner().astype(dtype)  # (_Unsigned: NumPy's wrap-around cast)
    return None


def _const(value, dtype):
    """A 0-d Array holding `value` in `dtype` (b2lazy takes NumPy scalars as weakly typed:
    the dtype is made explicit so the arithmetic is NumPy's)."""
    return _bl().asarray(np.asarray(value, dtype=dtype))


def _in(x, dtype):
    return x if x.dtype == dtype else x.astype(dtype)


def masked(x, fill_values, decoded_fill, dtype):
    """xarray's _apply_mask: x in `dtype`, where it equals one of `fill_values` (compared
    as NumPy compares an array with that value) `decoded_fill`."""
    bl = _bl()
    x = _in(x, dtype)
    hit = None
    for fv in fill_values:
        common = np.result_type(np.empty(0, dtype), fv)
        c = _in(x, common) == _const(fv, common)
        hit = c if hit is None else bl.logical_or(hit, c)
    if hit is None:
        return x
    return _in(bl.where(hit, _const(decoded_fill, dtype), x), dtype)


def scaled(x, scale_factor, add_offset, dtype):
    """xarray's _scale_offset_decoding: x in `dtype`, then ``*= scale_factor`` and
    ``+= add_offset`` as NumPy's in-place operators compute them (in the common dtype of
    the array and the value, cast back to `dtype`)."""
    x = _in(x, dtype)
    for value, op in ((scale_factor, "mul"), (add_offset, "add")):
        if value is None:
            continue
        common = np.result_type(np.empty(0, dtype), value)
        y, v = _in(x, common), _const(value, common)
        x = _in(y * v if op == "mul" else y + v, dtype)
    return x


# --- chunks ------------------------------------------------------------------------------------
def axis_chunk(c, current, n, what="chunks"):
    """One axis's chunk length from one of xarray's / Dask's forms: an int, -1 (whole
    axis), None or "auto" (`current`), or block lengths (their largest: b2lazy's chunks
    are regular)."""
    if c is None or (isinstance(c, str) and c == "auto"):
        return max(1, current)
    if isinstance(c, (tuple, list)):
        if not all(isinstance(b, (int, np.integer)) and not isinstance(b, bool) and b >= 0 for b in c):
            raise ValueError(f"{what}: block lengths must be ints >= 0, got {c!r}")
        if sum(c) != n:
            raise ValueError(f"{what}: block lengths {tuple(c)} do not sum to the axis length {n}")
        return max(1, max(c, default=1))
    if isinstance(c, (int, np.integer, float)) and not isinstance(c, bool):
        if c == -1 or (c == 0 and n == 0):  # (Dask's chunks of an empty axis are (0,))
            return max(1, n)
        if c >= 1 and int(c) == c:
            return min(int(c), max(1, n))
    raise ValueError(f"{what}: a chunk length must be an int >= 1, -1, None, 'auto' or block lengths, got {c!r}")


def chunk_sizes(chunks, shape, current, what="chunks"):
    """One chunk length per axis from `chunks` (a tuple per axis, a dict by axis number,
    or one value for all), taking `current` (one length per axis) where it says so."""
    ndim = len(shape)
    if isinstance(chunks, dict):
        bad = [
            k for k in chunks if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not -ndim <= k < ndim
        ]
        if bad:
            raise ValueError(f"{what}: {bad[0]!r} is not an axis of an array of shape {shape}")
        chunks = tuple(chunks.get(i, chunks.get(i - ndim)) for i in range(ndim))
    elif not isinstance(chunks, (tuple, list)):
        chunks = (chunks,) * ndim
    if len(chunks) != ndim:
        raise ValueError(f"{what}: {chunks!r} names {len(chunks)} axes; the array has shape {shape}")
    return tuple(axis_chunk(c, cur, n, what) for c, cur, n in zip(chunks, current, shape))


def current_chunks(a):
    """The chunk length per axis `a` evaluates in now (its plan's chunks, first block)."""
    return tuple(b[0] if len(b) else 1 for b in a.chunks)


def in_chunks(a, chunks, what="from_array"):
    """`a` rechunked to `chunks` (b2lazy.rechunk), or `a` itself when it already has them."""
    if a.ndim == 0:
        return a
    now = current_chunks(a)
    want = chunk_sizes(chunks, a.shape, now, what)
    if normalized(want, a.shape) == a.chunks:
        return a
    return _bl().rechunk(a, want)


def normalize(chunks, shape, previous_chunks=None):
    """The chunk manager's normalize_chunks: Dask's normalized form (block lengths per
    axis) of the regular chunks b2lazy will use. None and "auto" keep `previous_chunks`
    (the store's chunks xarray passes; None entries: the whole axis)."""
    shape = tuple(int(s) for s in shape)
    prev = [n for n in shape]
    if previous_chunks is not None:
        for i, (p, n) in enumerate(zip(previous_chunks, shape)):
            if p is not None:
                prev[i] = axis_chunk(p, n, n, "normalize_chunks")
    return normalized(chunk_sizes(chunks, shape, prev, "normalize_chunks"), shape)
