"""The xarray chunk manager's ``store``: what ``Dataset.to_zarr`` and ``to_netcdf`` call
with the b2lazy variables (sources) and the arrays xarray created for them (targets:
zarr-python arrays with xarray's metadata and encoding, or netCDF variables).

A Zarr target in a local directory whose codecs b2lazy encodes (bytes, then zstd or
blosc, or nothing) is written by the engine itself: the part of the region made of whole
stored chunks is evaluated in the target's chunks, in parallel within the memory budget,
each chunk encoded with the target's codecs and fill value into a temporary file beside its
key and all renamed into place once every chunk is written (src/io/zarr/zarr_region_sink):
each chunk written once, and an evaluation that fails leaves the array as it was. Chunks
only partly inside the region (an append that starts inside a chunk, a region with
safe_chunks=False) are evaluated whole, the source laid over the array's old values.
Other targets are written by slabs of whole storage chunks."""

from __future__ import annotations

import concurrent.futures
import contextlib
import mmap
import os

import numpy as np

from . import _store

__all__ = []

# Options of xarray's chunkmanager_store_kwargs that b2lazy takes.
_OPTIONS = {"nthreads", "max_memory"}


def _b2():
    import b2lazy

    return b2lazy


def store(sources, targets, regions=None, lock=None, compute=True, flush=True, **kwargs):
    """Each source written into its target (the chunk manager's ``store``).

    compute=False (``to_zarr(..., compute=False)``) returns a ``dask.delayed`` object that
    writes when computed, which is what xarray's delayed close expects."""
    extra = set(kwargs) - _OPTIONS
    if extra:
        raise TypeError(
            f"store (to_zarr / to_netcdf) on b2lazy arrays: unsupported options {sorted(extra)} "
            f"(chunkmanager_store_kwargs takes {sorted(_OPTIONS)})"
        )
    regions = list(regions) if regions is not None else [None] * len(sources)
    if not (len(sources) == len(targets) == len(regions)):
        raise ValueError(f"store: {len(sources)} sources, {len(targets)} targets and {len(regions)} regions")

    def write():
        for src, tgt, region in zip(sources, targets, regions):
            _store_one(src, tgt, region, lock, kwargs.get("nthreads"), kwargs.get("max_memory"))

    if compute:
        write()
        return None
    try:
        import dask
    except ImportError as e:  # xarray's delayed close needs dask too
        raise NotImplementedError(
            "to_zarr(compute=False) on b2lazy arrays returns a dask.delayed object: "
            "install dask, or write with compute=True"
        ) from e
    return dask.delayed(write, pure=False)()


def _name(tgt):
    """The variable's name in messages: the Zarr array's path, or the netCDF variable's."""
    for attr in ("path", "variable_name", "name"):
        v = getattr(tgt, attr, None)
        if isinstance(v, str) and v:
            return v
    return type(tgt).__name__


@contextlib.contextmanager
def _naming(tgt):
    """Errors of one variable's write say which variable (the engine's name the chunk)."""
    try:
        yield
    except Exception as e:
        msg = f"writing variable {_name(tgt)!r}: {e}"
        try:
            err = type(e)(msg)
        except Exception:
            raise RuntimeError(msg) from e
        raise err from e


def _store_one(src, tgt, region, lock, nthreads, max_memory):
    b2 = _b2()
    with _naming(tgt):
        src = b2.asarray(src)
        # (in native byte order: the target's codecs or zarr-python store it as they say)
        dtype = np.dtype(getattr(tgt, "dtype", src.dtype)).newbyteorder("=")
        if src.dtype != dtype:
            src = src.astype(dtype)
        place = _store._region_offsets(region, tuple(tgt.shape), src.shape)
        if src.ndim == 0 or src.size == 0:
            with lock if lock else contextlib.nullcontext():
                tgt[place if place else ()] = src.to_numpy()
            return
        native = _native_zarr(tgt)
        if native is None:
            if src.plan().stages:
                _write_by_tasks(src, tgt, place, lock, nthreads, max_memory)
            else:
                _write_slabs(src, tgt, place, lock, nthreads, max_memory)
            return
        path, codec, empty = native
        chunks = tuple(int(c) for c in tgt.chunks)
        whole = _whole_chunks(place, chunks, tuple(tgt.shape))
        if whole != place:
            # Chunks the region covers in part keep the rest of their values: the source
            # laid over the array's own (read natively; a temporary file replaces a chunk only
            # at the end, so the reads see the old values), and every chunk written whole.
            old = b2.open("zarr:" + path)[whole]
            src = b2._assigned(old, _within(whole, place), src)
        offset = ",".join(str(b.start) for b in whole)
        src.compute(
            urlpath=f"zarr-region:{path}?offset={offset}&codec={codec}&empty={int(empty)}",
            chunks=chunks,
            nthreads=nthreads,
            max_memory=max_memory,
        )


def _whole_chunks(place, chunks, shape):
    """The smallest box of whole target chunks (the last one ending at the array's end)
    holding `place`."""
    return tuple(slice(p.start // c * c, min(n, -(-p.stop // c) * c)) for p, c, n in zip(place, chunks, shape))


def _within(place, box):
    """`box` (target slices inside `place`) as slices of the source written at `place`."""
    return tuple(slice(b.start - p.start, b.stop - p.start) for b, p in zip(box, place))


def _codec_v3(codecs, itemsize):
    """The zarr-region codec text for a v3 array's codecs, or None when b2lazy does not
    write them (sharding, transpose, filters, checksummed zstd, gzip...)."""
    ds = [c.to_dict() for c in codecs]
    if not ds or ds[0].get("name") != "bytes":
        return None
    rest = ds[1:]
    if not rest:
        return "none"
    if len(rest) != 1:
        return None
    return _compressor(rest[0].get("name"), rest[0].get("configuration") or {}, itemsize)


def _compressor(name, conf, itemsize):
    """The codec text for a compressor's configuration (Blosc: C-Blosc's automatic blocks
    and the items' own size, as b2lazy writes them), or None."""
    if name == "zstd" and not conf.get("checksum", False):
        return f"zstd:{int(conf.get('level', 0))}"
    if name == "blosc":
        cname = str(conf.get("cname", "lz4"))
        shuffle = conf.get("shuffle", 1)
        shuffle = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}.get(shuffle, shuffle)
        if (
            cname in ("lz4", "lz4hc", "zlib", "zstd")
            and shuffle in (0, 1)
            and not conf.get("blocksize")
            and conf.get("typesize") in (None, itemsize)
        ):
            return f"blosc:{cname}:{int(conf.get('clevel', 5))}:{int(shuffle)}"
    return None


def _native_zarr(tgt):
    """(array directory, codec text, write empty chunks) when b2lazy writes into `tgt`'s
    chunk files itself: a zarr-python array in a local directory store, C order, with
    codecs b2lazy encodes as zarr-python does. None otherwise."""
    try:
        import zarr
        from zarr.storage import LocalStore
    except ImportError:
        return None
    if not isinstance(tgt, zarr.Array) or not isinstance(getattr(tgt, "store", None), LocalStore):
        return None
    meta = tgt.metadata
    if meta.zarr_format == 3:
        codec = _codec_v3(meta.codecs, np.dtype(tgt.dtype).itemsize)
        if getattr(meta, "storage_transformers", ()):
            return None
    else:
        if meta.filters or getattr(meta, "order", "C") != "C":
            return None
        comp = meta.compressor
        codec = "none" if comp is None else _compressor(comp.codec_id, comp.get_config(), np.dtype(tgt.dtype).itemsize)
    if codec is None:
        return None
    path = os.path.join(os.fspath(tgt.store.root), *[p for p in tgt.path.split("/") if p])
    # (zarr-python compares chunks with the fill value, 0 when the metadata has none)
    empty = bool(getattr(getattr(tgt, "config", None), "write_empty_chunks", False))
    return os.path.abspath(path), codec, empty


def _write_slabs(x, tgt, place, lock, nthreads, max_memory):
    """`x` (its stages computed) written at `place` of `tgt` with ``tgt[...] = values`` by
    slabs of whole target chunks (about _store.SLAB_BYTES each), the next slab evaluated by
    the engine while this one is written (netCDF compresses under its lock, on one
    thread): at most two slabs in memory."""
    chunks = _store._target_chunks(_Chunks(tgt), x.shape)
    chunks = chunks or tuple(max(1, int(c)) for c in _b2()._face.plan_chunks(x))
    boxes = list(_store._slabs(x.shape, chunks, x.dtype.itemsize, _store.SLAB_BYTES))
    guard = lock if lock else contextlib.nullcontext()

    def values(box):
        return x[box].to_numpy(nthreads=nthreads, max_memory=max_memory)

    with concurrent.futures.ThreadPoolExecutor(1) as ahead:
        pending = ahead.submit(values, boxes[0]) if boxes else None
        for k, box in enumerate(boxes):
            v = pending.result()
            pending = ahead.submit(values, boxes[k + 1]) if k + 1 < len(boxes) else None
            dest = tuple(slice(p.start + b.start, p.start + b.stop) for p, b in zip(place, box))
            with guard:
                tgt[dest] = v
            del v


def _write_by_tasks(x, tgt, place, lock, nthreads, max_memory):
    """`x`, whose plan computes stages (reductions), written by slabs of whole rows: one
    plan, its stages computed once and kept by it, its tasks run a slab at a time into an
    anonymous mapping of x's size whose pages are given back once the slab is written (the
    next slab computed meanwhile), so memory stays about two slabs."""
    b2 = _b2()
    chunks = _store._target_chunks(_Chunks(tgt), x.shape)
    row_bytes = int(np.prod(x.shape[1:], dtype=np.int64)) * x.dtype.itemsize
    rows = chunks[0] if chunks else max(1, int(b2._face.plan_chunks(x)[0]))
    if rows * row_bytes > _store.SLAB_BYTES:  # (storage chunks this tall: merged by the library)
        rows = max(1, _store.SLAB_BYTES // max(1, row_bytes))
    plan = x.plan(chunks=(rows,) + tuple(x.shape[1:]), nthreads=nthreads, max_memory=max_memory)
    per_task = max(1, rows * row_bytes)
    # Tasks run output chunks [first, last) in order: chunk i is rows i * rows onwards.
    tasks = [t["chunks"] for t in plan.tasks]
    ends = [b for _, b in tasks]
    slabs, first = [], 0  # (first task, last task + 1), about SLAB_BYTES each
    for i in range(len(ends)):
        if i + 1 == len(ends) or (ends[i] - tasks[first][0]) * per_task >= _store.SLAB_BYTES:
            slabs.append((first, i + 1))
            first = i + 1
    mem = mmap.mmap(-1, max(1, x.size * x.dtype.itemsize))
    out = np.frombuffer(mem, dtype=x.dtype, count=x.size).reshape(x.shape)
    guard = lock if lock else contextlib.nullcontext()

    def run(slab):
        plan.execute(out, first_task=slab[0], last_task=slab[1])  # noqa: F821  (out: deleted after the pool)
        return tasks[slab[0]][0] * rows, min(x.shape[0], ends[slab[1] - 1] * rows)

    page = mmap.PAGESIZE
    try:
        with concurrent.futures.ThreadPoolExecutor(1) as ahead:
            pending = ahead.submit(run, slabs[0]) if slabs else None
            for k in range(len(slabs)):
                r0, r1 = pending.result()
                pending = ahead.submit(run, slabs[k + 1]) if k + 1 < len(slabs) else None
                dest = (slice(place[0].start + r0, place[0].start + r1),) + tuple(place[1:])
                with guard:
                    tgt[dest] = out[r0:r1]
                lo, hi = -(-r0 * row_bytes // page) * page, r1 * row_bytes // page * page
                if hi > lo:  # (pages shared with the next slab stay)
                    mem.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
    finally:
        del out
        with contextlib.suppress(BufferError):  # (a view still held: freed with it)
            mem.close()


class _Chunks:
    """What _store._target_chunks looks at: the target's storage chunks (xarray's netCDF
    wrappers do not show their variable's)."""

    def __init__(self, tgt):
        self.chunks = _target_chunks(tgt)


def _target_chunks(tgt):
    c = getattr(tgt, "chunks", None)
    if c is not None:
        return c
    try:
        var = tgt.get_array()  # xarray's netCDF4 / h5netcdf array wrappers
    except Exception:
        return None
    c = var.chunking() if hasattr(var, "chunking") else getattr(var, "chunks", None)  # netCDF4 / h5netcdf
    return tuple(c) if isinstance(c, (list, tuple)) else None
