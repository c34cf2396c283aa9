"""xarray's chunk manager for b2lazy (the ``xarray.chunkmanagers`` entry point, as
cubed-xarray does it): ``ds.chunk(chunked_array_type="b2lazy")`` and
``xr.open_dataset(..., chunked_array_type="b2lazy", chunks={})`` give variables that are
b2lazy Arrays, so arithmetic, reductions and ``apply_ufunc(..., dask="parallelized")`` build
one b2lazy graph, evaluated chunk by chunk by ``.compute()`` / ``.values`` / ``.to_zarr()``.

b2lazy chooses its output chunks when it evaluates; the chunks reported here are a
source's storage chunks (one chunk along axes it does not split) and ``rechunk`` keeps the
graph as it is."""

from __future__ import annotations

import numpy as np
from xarray.namedarray.parallelcompat import ChunkManagerEntrypoint

import b2lazy

from . import Array
from ._xarray_chunks import normalized as _normalized, sizes as _sizes


class B2lazyManager(ChunkManagerEntrypoint):
    available = True

    def __init__(self):
        self.array_cls = Array
        from ._groupby import _install_xarray_groupby

        _install_xarray_groupby()  # groupby / resample reductions of b2lazy objects: segment_reduce

    def is_chunked_array(self, data):
        return isinstance(data, Array)

    def chunks(self, data):
        return data.chunks

    def normalize_chunks(self, chunks, shape=None, limit=None, dtype=None, previous_chunks=None):
        if shape is None:
            return chunks
        if previous_chunks is not None and (chunks is None or chunks == {} or chunks == "auto"):
            return tuple(tuple(c) for c in previous_chunks)
        return _normalized(_sizes(chunks, shape), shape)

    def from_array(self, data, chunks, **kwargs):
        """`data` (a NumPy array, or xarray's lazily indexed backend array: read now) as an
        in-memory compressed b2lazy array in `chunks`."""
        values = np.asarray(data)
        if values.ndim == 0:
            return b2lazy.asarray(values)
        return b2lazy.asarray(values, chunks=_sizes(chunks, values.shape))

    def rechunk(self, data, chunks, **kwargs):
        return data  # the evaluation chooses its chunks

    def compute(self, *data, **kwargs):
        return tuple(d.to_numpy() if isinstance(d, Array) else np.asarray(d) for d in data)

    def persist(self, *data, **kwargs):
        return tuple(d.compute() if isinstance(d, Array) else d for d in data)

    @property
    def array_api(self):
        return b2lazy

    def apply_gufunc(self, func, signature, *args, axes=None, keepdims=False, output_dtypes=None,
                     vectorize=None, **kwargs):
        """Elementwise functions (signature "(),()->()"): a lazyudf calling `func` on each
        block of the broadcast inputs. Core dimensions are not supported here."""
        # (xarray binds func's own arguments; these are Dask's options: chunks are b2lazy's)
        extra = set(kwargs) - {"allow_rechunk", "output_sizes", "meta"}
        if extra:
            raise TypeError(f"apply_ufunc on b2lazy arrays: unsupported options {sorted(extra)}")
        ins, outs = signature.replace(" ", "").split("->")
        if any(part != "()" for part in ins.split(",") + outs.split(",")) or axes or keepdims:
            raise NotImplementedError(f"apply_ufunc on b2lazy arrays: only elementwise functions, not "
                                      f"signature {signature!r}")
        if output_dtypes is None or len(output_dtypes) != 1:
            raise ValueError("apply_ufunc on b2lazy arrays: give output_dtypes=[one dtype]")
        arrays = [a if isinstance(a, Array) else b2lazy.asarray(a) for a in args]
        shape = np.broadcast_shapes(*[a.shape for a in arrays])
        arrays = [b2lazy.broadcast_to(a, shape) if a.shape != shape else a for a in arrays]
        f = np.vectorize(func, otypes=[output_dtypes[0]]) if vectorize else func

        def block(inputs, out, offset):
            out[...] = f(*inputs)
        return b2lazy.lazyudf(block, arrays, output_dtypes[0], shape=shape,
                              name=getattr(func, "__name__", "apply_ufunc"))

    def store(self, sources, targets, **kwargs):
        """Each source written into its target (to_zarr) slab by slab along the first axis,
        a slab of about 64 MiB evaluated at a time."""
        regions = kwargs.get("regions") or [None] * len(sources)
        for src, tgt, region in zip(sources, targets, regions):
            if src.ndim == 0:
                tgt[...] = src.to_numpy()
                continue
            row = max(1, src.size // max(1, src.shape[0]) * src.dtype.itemsize)
            step = max(1, (64 << 20) // row)
            for i in range(0, src.shape[0], step):
                sl = slice(i, min(src.shape[0], i + step))
                where = (sl,) if region is None else _within(region, sl)
                tgt[where] = src[sl].to_numpy()


def _within(region, sl):
    """`sl` (along the first axis of a source) inside the target's `region`."""
    first = region[0]
    start = (first.start or 0) + sl.start
    return (slice(start, start + sl.stop - sl.start),) + tuple(region[1:])
