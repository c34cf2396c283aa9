"""xarray's chunk manager for b2lazy (the ``xarray.chunkmanagers`` entry point, as
cubed-xarray does it): ``ds.chunk(chunked_array_type="b2lazy")`` and
``xr.open_dataset(..., chunked_array_type="b2lazy", chunks={})`` give variables that are
b2lazy Arrays, so arithmetic, reductions and ``apply_ufunc(..., dask="parallelized")`` build
one b2lazy graph, evaluated chunk by chunk by ``.compute()`` / ``.values`` / ``.to_zarr()``.

Opening reads nothing: the backend's arrays open through b2lazy's own drivers, lazily
decoded (_xarray_open.py). The chunks reported are those b2lazy evaluates in (a source's
storage chunks unless rechunked); ``rechunk`` changes them (b2lazy.rechunk)."""

from __future__ import annotations

import numpy as np
from xarray.namedarray.parallelcompat import ChunkManagerEntrypoint

import b2lazy

from . import Array
from . import _xarray_open
from . import _xarray_store
from ._xarray_chunks import sizes as _sizes


class B2lazyManager(ChunkManagerEntrypoint):
    available = True

    def __init__(self):
        self.array_cls = Array
        from ._groupby import _install_xarray_groupby

        _install_xarray_groupby()  # groupby / resample reductions of b2lazy objects: segment_reduce
        from ._xarray_fill import _install_xarray_fill

        _install_xarray_fill()  # ffill / bfill of b2lazy arrays: a lazy forward-fill scan
        from ._xarray_idx import _install_xarray_idxminmax

        _install_xarray_idxminmax()  # idxmin / idxmax (the coordinate looked up lazily), vectorized isel
        from ._xarray_weighted import _install_xarray_weighted

        _install_xarray_weighted()  # weighted(w): lazy weights checked for NaN when evaluated, as Dask's

    def is_chunked_array(self, data):
        return isinstance(data, Array)

    def chunks(self, data):
        return data.chunks

    def normalize_chunks(self, chunks, shape=None, limit=None, dtype=None, previous_chunks=None):
        if shape is None:
            return chunks
        return _xarray_open.normalize(chunks, shape, previous_chunks)

    def from_array(self, data, chunks, **kwargs):
        """`data` as a lazy b2lazy Array in `chunks`: xarray's lazily indexed backend
        arrays read nothing now (_xarray_open.py); NumPy arrays become an in-memory
        compressed array. Values b2lazy does not hold (datetimes, strings) are read now and
        stay NumPy arrays."""
        try:
            lazy = _xarray_open.lazy_variable(data, chunks)
        except _xarray_open.Unsupported:
            return np.asarray(data)
        if lazy is not None:
            return lazy
        values = np.asarray(data)
        if values.dtype.name not in b2lazy._SUPPORTED_DTYPES:
            return values
        if values.ndim == 0:
            return b2lazy.asarray(values)
        return b2lazy.asarray(values, chunks=_sizes(chunks, values.shape))

    def rechunk(self, data, chunks, **kwargs):
        """`data` in other chunks (b2lazy.rechunk; nothing is evaluated)."""
        return _xarray_open.in_chunks(data, chunks, "rechunk")

    def compute(self, *data, **kwargs):
        return tuple(d.to_numpy() if isinstance(d, Array) else np.asarray(d) for d in data)

    def persist(self, *data, **kwargs):
        return tuple(d.compute() if isinstance(d, Array) else d for d in data)

    @property
    def array_api(self):
        return b2lazy

    def apply_gufunc(
        self, func, signature, *args, axes=None, keepdims=False, output_dtypes=None, vectorize=None, **kwargs
    ):
        """Elementwise functions (signature "(),()->()"): a lazyudf calling `func` on each
        block of the broadcast inputs. Core dimensions are not supported here."""
        # (xarray binds func's own arguments; these are Dask's options: chunks are b2lazy's)
        extra = set(kwargs) - {"allow_rechunk", "output_sizes", "meta"}
        if extra:
            raise TypeError(f"apply_ufunc on b2lazy arrays: unsupported options {sorted(extra)}")
        ins, outs = signature.replace(" ", "").split("->")
        if any(part != "()" for part in ins.split(",") + outs.split(",")) or axes or keepdims:
            raise NotImplementedError(
                f"apply_ufunc on b2lazy arrays: only elementwise functions, not signature {signature!r}"
            )
        if output_dtypes is None or len(output_dtypes) != 1:
            raise ValueError("apply_ufunc on b2lazy arrays: give output_dtypes=[one dtype]")
        arrays = [a if isinstance(a, Array) else b2lazy.asarray(a) for a in args]
        shape = np.broadcast_shapes(*[a.shape for a in arrays])
        arrays = [b2lazy.broadcast_to(a, shape) if a.shape != shape else a for a in arrays]
        f = np.vectorize(func, otypes=[output_dtypes[0]]) if vectorize else func

        def block(inputs, out, offset):
            out[...] = f(*inputs)

        return b2lazy.lazyudf(
            block, arrays, output_dtypes[0], shape=shape, name=getattr(func, "__name__", "apply_ufunc")
        )

    def store(self, sources, targets, **kwargs):
        """Each source written into its target (to_zarr, to_netcdf): b2lazy/_xarray_store.py."""
        return _xarray_store.store(sources, targets, **kwargs)
