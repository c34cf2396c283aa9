"""Writing lazy arrays into other arrays, as Dask does: store (chunk by chunk into any
array that takes ``target[region] = values``), to_zarr / from_zarr, and several arrays
computed together (compute, persist)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import threading

import numpy as np

__all__ = ["store", "to_zarr", "from_zarr", "persist", "compute"]

# How many bytes of a source store() evaluates at once: a slab of whole target chunks
# this large (at least one chunk row) is computed by the engine's workers, then written.
SLAB_BYTES = 64 << 20


def _b2():
    import b2lazy

    return b2lazy


def persist(*args, nthreads=None, max_memory=None):
    """Evaluate lazy arrays now into in-memory compressed b2nd arrays.

    Parameters
    ----------
    *args : Array
        The arrays to evaluate (anything ``asarray`` takes).
    nthreads : int, optional
        The engine's threads (all cores by default).
    max_memory : int, optional
        The evaluation's memory budget in bytes.

    Returns
    -------
    Array or tuple of Array
        An Array over the compressed values for each argument (one Array for one
        argument, as ``dask.persist`` returns a tuple for several).

    Examples
    --------
    >>> import b2lazy as bl
    >>> x = bl.persist(bl.arange(6) * 2)
    >>> x.urlpath is None, x.to_numpy()
    (True, array([ 0,  2,  4,  6,  8, 10]))
    """
    if not args:
        raise TypeError("persist() needs at least one array")
    out = compute(*args, nthreads=nthreads, max_memory=max_memory)
    return out[0] if len(out) == 1 else out


def compute(*args, urlpath=None, cparams=None, nthreads=None, max_memory=None, contiguous=None, storage_options=None):
    """Evaluate several lazy arrays together, each into a compressed array.

    Each is evaluated as its own ``compute()`` would, one after another, but what their
    graphs have in common is computed once: the first computed node a later array reaches
    that an earlier one also pulls (a factorisation, a reduction, a product) is kept by the
    earlier evaluation, over the part it computes, and read by the later ones instead of
    computed again. ``q, r = compute(*linalg.qr(x))`` factors once, and
    ``compute(*linalg.svd_compressed(x, k))`` makes its passes over ``x`` once for U, S and
    Vh. Results are kept between the evaluations only while a later one reads them, in
    memory only while they fit beside it within `max_memory`. Every evaluation's plan is
    checked against the budget before any runs.

    Parameters
    ----------
    *args : Array
        The arrays to evaluate (anything ``asarray`` takes).
    urlpath : sequence of (str or None), optional
        Where to write each result (one entry per array; None: in memory), as
        ``Array.compute``'s `urlpath`.
    cparams : dict, optional
        Compression of every result, as ``Array.compute``'s.
    nthreads : int, optional
        Worker threads (default: the CPU count).
    max_memory : int, optional
        Memory budget in bytes of each evaluation.
    contiguous : bool, optional
        Write contiguous b2nd files rather than sparse directories.
    storage_options : dict, optional
        How to reach remote `urlpath` entries (fsspec's names).

    Returns
    -------
    tuple of Array
        The stored results, in the order given (a tuple even for one, as ``dask.compute``).

    Examples
    --------
    >>> import b2lazy as bl
    >>> x = bl.asarray(np.arange(12.0).reshape(4, 3))
    >>> total = bl.sum(x)
    >>> a, b = bl.compute(x - total, x / total)
    >>> float(a.to_numpy()[0, 0]), float(b.to_numpy()[3, 2])
    (-66.0, 0.16666666666666666)
    """
    b2 = _b2()
    if not args:
        raise TypeError("compute() needs at least one array")
    arrays = [b2.asarray(x) for x in args]
    if urlpath is None or isinstance(urlpath, (str, os.PathLike)):
        if urlpath is not None and len(arrays) > 1:
            raise ValueError(f"compute: give one urlpath per array ({len(arrays)} arrays), not one path for all")
        urlpaths = [urlpath] * len(arrays)
    else:
        urlpaths = list(urlpath)
        if len(urlpaths) != len(arrays):
            raise ValueError(f"compute: {len(urlpaths)} urlpaths for {len(arrays)} arrays")
    urlpaths = [None if u is None else b2._path_text(os.fspath(u), "compute: urlpath") for u in urlpaths]
    cparams, compressor = b2._zarr_compressor(cparams)
    codec, clevel, filt = b2._cparams_args(cparams)
    rs = b2._core.compute_all(
        [a._a for a in arrays],
        urlpaths,
        codec,
        clevel,
        filt,
        b2._context(nthreads),
        max_memory,
        contiguous,
        compressor,
        storage_options,
    )
    out = tuple(b2.Array(r, r.stats()) for r in rs)
    for u in urlpaths:
        if u is not None and b2._serial.is_remote(u):
            b2._serial.remember_storage(u, storage_options)
    return out


def _target_chunks(target, shape):
    """The target's chunk shape when it declares one (zarr, h5py, b2lazy), else None."""
    c = getattr(target, "chunks", None)
    if isinstance(c, tuple) and len(c) == len(shape):
        if all(isinstance(v, (int, np.integer)) for v in c):
            return tuple(max(1, int(v)) for v in c)
        if all(isinstance(v, tuple) and v for v in c):  # Dask's form: the first block's lengths
            return tuple(max(1, int(v[0])) for v in c)
    return None


def _slabs(shape, chunks, itemsize, limit):
    """Boxes (tuples of slices) covering `shape`, each whole chunks along every axis: along
    the first axes as many chunks as stay under `limit` bytes (at least one chunk)."""
    if not shape:
        yield ()
        return
    if 0 in shape:
        return  # nothing to write
    ext = list(chunks)
    # Grow the box from the last axis to the first while it stays under the limit.
    for d in reversed(range(len(shape))):
        per = int(np.prod(ext[:d] + ext[d + 1 :], dtype=np.int64)) * itemsize
        fit = max(1, limit // max(1, per * chunks[d])) * chunks[d]
        ext[d] = min(shape[d], max(chunks[d], fit))
        if ext[d] < shape[d]:
            break
    for idx in np.ndindex(*[-(-s // e) for s, e in zip(shape, ext)]):
        yield tuple(slice(i * e, min(s, (i + 1) * e)) for i, e, s in zip(idx, ext, shape))


def _region_offsets(region, target_shape, shape):
    """The target slices a source of `shape` is written to: `region` (slices or None,
    per target axis) or the whole target."""
    if region is None:
        if tuple(target_shape) != tuple(shape):
            raise ValueError(
                f"store: a source of shape {tuple(shape)} does not fit a target of shape "
                f"{tuple(target_shape)} (give regions=)"
            )
        return tuple(slice(0, s) for s in shape)
    region = region if isinstance(region, tuple) else (region,)
    if len(region) > len(target_shape):
        raise ValueError(f"store: region {region} has more axes than the target's shape {tuple(target_shape)}")
    region = region + (slice(None),) * (len(target_shape) - len(region))
    out = []
    for r, n in zip(region, target_shape):
        if not isinstance(r, slice):
            raise TypeError(f"store: regions are tuples of slices, got {r!r}")
        start, stop, step = r.indices(n)
        if step != 1:
            raise ValueError(f"store: region slices must have step 1, got {r!r}")
        out.append(slice(start, stop))
    got = tuple(s.stop - s.start for s in out)
    if got != tuple(shape):
        raise ValueError(f"store: region {tuple(out)} has shape {got}; the source has shape {tuple(shape)}")
    return tuple(out)


@contextlib.contextmanager
def _staged(x):
    """x itself when its plan computes nothing once for all (elementwise expressions of
    sources: any slab is pulled by itself); else x evaluated once into a temporary b2nd
    file, so that slabs do not compute its stages (reductions, sorts) again each time."""
    if not x.plan().stages:
        yield x
        return
    d = tempfile.mkdtemp(prefix="b2lazy-store-")
    try:
        yield x.compute(urlpath=os.path.join(d, "staged.b2nd"))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _check_target(t, i):
    b2 = _b2()
    if isinstance(t, b2.Array) and t._writable is None:
        raise ValueError(
            f"store: target {i} is a read-only b2lazy array; open its file with "
            f"b2lazy.open(path, mode='r+') to write into it"
        )
    if not hasattr(t, "__setitem__") or not hasattr(t, "shape"):
        raise TypeError(f"store: target {i} ({type(t).__name__}) takes no target[region] = values")


def store(
    sources, targets, regions=None, lock=True, compute=True, return_stored=False, *, nthreads=None, max_memory=None
):
    """Write lazy arrays into existing arrays, chunk by chunk (``dask.array.store``).

    Each source is evaluated by slabs of whole target chunks (about 64 MiB each) and
    written with ``target[region] = values``, so a source larger than memory is never
    held whole. Targets: a zarr.Array, an h5py.Dataset, a NumPy array, a b2lazy array
    opened with ``mode="r+"``, or anything with ``shape`` and ``__setitem__``.

    Parameters
    ----------
    sources : Array or list of Array
        The arrays to write (anything ``asarray`` takes).
    targets : array-like or list of array-like
        One target per source, of the source's shape (or holding `regions`).
    regions : tuple of slice or list of them, optional
        Where in each target its source goes (default: the whole target).
    lock : bool or lock, optional
        True (default) or a lock object held around each write, as Dask does; False: none.
    compute : bool, optional
        Must be True: b2lazy writes now (Dask's delayed form has no counterpart).
    return_stored : bool, optional
        Return the targets as b2lazy arrays (lazy over them) instead of None.
    nthreads, max_memory : optional
        The engine's threads and memory budget for the evaluation.

    Returns
    -------
    None or tuple of Array
        None, or with `return_stored` one Array per target.

    Examples
    --------
    >>> import numpy as np, b2lazy as bl
    >>> out = np.zeros((4, 3))
    >>> bl.store(bl.ones((4, 3)) * 2, out)
    >>> out[0]
    array([2., 2., 2.])
    """
    b2 = _b2()
    if compute is not True:
        raise ValueError("store: compute must be True (b2lazy writes now; there is no delayed store)")
    single = not isinstance(sources, (list, tuple))
    srcs = [sources] if single else list(sources)
    tgts = [targets] if single or not isinstance(targets, (list, tuple)) else list(targets)
    if len(srcs) != len(tgts):
        raise ValueError(f"store: {len(srcs)} sources but {len(tgts)} targets")
    if regions is None or (isinstance(regions, tuple) and (not regions or isinstance(regions[0], slice))):
        regs = [regions] * len(srcs)
    else:
        regs = list(regions)
        if len(regs) != len(srcs):
            raise ValueError(f"store: {len(srcs)} sources but {len(regs)} regions")
    if lock is True:
        lock = threading.Lock()
    guard = lock if lock else contextlib.nullcontext()
    srcs = [b2.asarray(s) for s in srcs]
    places = []
    for i, (s, t, r) in enumerate(zip(srcs, tgts, regs)):
        _check_target(t, i)
        places.append(_region_offsets(r, tuple(t.shape), s.shape))
    for s, t, place in zip(srcs, tgts, places):
        chunks = _target_chunks(t, s.shape) or tuple(max(1, int(c)) for c in b2._face.plan_chunks(s))
        with _staged(s) as x:
            for box in _slabs(s.shape, chunks, s.dtype.itemsize, SLAB_BYTES):
                values = x[box].to_numpy(nthreads=nthreads, max_memory=max_memory) if box else x.to_numpy()
                dest = tuple(slice(p.start + b.start, p.start + b.stop) for p, b in zip(place, box))
                with guard:
                    t[dest if dest else ()] = values
    if return_stored:
        out = tuple(t if isinstance(t, b2.Array) else b2.asarray(t) for t in tgts)
        for r in out:  # saved by their values, never as a call of store (b2lazy/_serial.py)
            if r._call is None:
                r._call = b2._serial.LEAF
        return out
    return None


def _writes_remote_zarr(arr, url, storage_options):
    """Does b2lazy write Zarr at remote `url` itself (a byte store takes the URL, its path
    ends in .zarr, and the Zarr driver writes into stores)? Else zarr-python writes it."""
    b2 = _b2()
    if not b2._serial.is_remote(url) or not url.rstrip("/").lower().endswith(".zarr"):
        return False
    try:
        arr.plan(urlpath=url, storage_options=storage_options)
    except OSError as e:
        if "from local paths only" in str(e):
            return False
        raise
    return True


def _is_local(url):
    return "://" not in url or url.startswith("file://")


def _local_path(url):
    return url[len("file://") :] if url.startswith("file://") else url


def _write_group(path):
    """A Zarr v3 group's metadata at `path` unless one (or an array) is there."""
    os.makedirs(path, exist_ok=True)
    meta = os.path.join(path, "zarr.json")
    if not os.path.exists(meta) and not os.path.exists(os.path.join(path, ".zgroup")):
        with open(meta, "w") as f:
            json.dump({"zarr_format": 3, "node_type": "group", "attributes": {}}, f)


def to_zarr(
    arr,
    url,
    component=None,
    storage_options=None,
    overwrite=False,
    region=None,
    compute=True,
    return_stored=False,
    *,
    chunks=None,
    shards=None,
    cparams=None,
    nthreads=None,
    max_memory=None,
    **kwargs,
):
    """Write a lazy array into a Zarr array (``dask.array.to_zarr``).

    A local path (or ``file://`` URL) is written by the engine's own Zarr v3 writer
    (``compute(urlpath="zarr:...")``), in parallel; so is a remote URL ending in .zarr
    ("s3://bucket/x.zarr", "memory://x.zarr", reached with `storage_options`) when the
    Zarr driver writes into byte stores. A zarr.Array, or another URL (opened with
    zarr-python), is written chunk by chunk through ``store``.

    Parameters
    ----------
    arr : Array
        The array to write.
    url : str, os.PathLike or zarr.Array
        Where: a directory (the Zarr store), a URL, or an existing zarr.Array.
    component : str, optional
        The array's path inside the store (its parent groups are created).
    storage_options : dict, optional
        For a remote URL: fsspec's names (b2lazy's stores take them; else zarr-python's).
    overwrite : bool, optional
        Replace an array already there (else FileExistsError).
    region : tuple of slice, optional
        Only with an existing zarr.Array: where `arr` goes in it.
    compute : bool, optional
        Must be True.
    return_stored : bool, optional
        Return the written array, opened lazily.
    chunks, shards : tuple of int, optional
        The Zarr array's chunks (default: the plan's) and shards.
    cparams : dict, optional
        Compression, as ``Array.compute``'s.
    nthreads, max_memory : optional
        The engine's threads and memory budget.
    **kwargs
        Refused (a TypeError naming them): b2lazy has no other option.

    Returns
    -------
    None or Array
        None, or with `return_stored` the written array.

    Examples
    --------
    >>> import os, tempfile, b2lazy as bl
    >>> d = os.path.join(tempfile.mkdtemp(), "x.zarr")
    >>> bl.to_zarr(bl.arange(6) + 1, d, chunks=(4,))
    >>> bl.from_zarr(d).to_numpy()
    array([1, 2, 3, 4, 5, 6])
    """
    b2 = _b2()
    if kwargs:
        raise TypeError(f"to_zarr() got unexpected keyword arguments {sorted(kwargs)}")
    if compute is not True:
        raise ValueError("to_zarr: compute must be True (b2lazy writes now)")
    arr = b2.asarray(arr)
    if not isinstance(url, (str, os.PathLike)):  # a zarr.Array
        store(arr, url, regions=region, nthreads=nthreads, max_memory=max_memory)
        return b2.asarray(url) if return_stored else None
    if region is not None:
        raise ValueError("to_zarr: region= writes into an existing zarr.Array; pass that array as url")
    url = os.fspath(url)
    if not _is_local(url) and component is None and _writes_remote_zarr(arr, url, storage_options):
        # b2lazy's own writer into the URL's byte store (metadata last: a reader never sees
        # a half-written array)
        store_ = b2._core.open_store(url, storage_options)
        existing = store_.list("")
        if existing and not overwrite:
            raise FileExistsError(f"to_zarr: '{url}' holds objects (overwrite=True replaces them)")
        for o in existing:
            store_.remove(o["key"])
        r = arr.compute(
            urlpath=url,
            chunks=chunks,
            shards=shards,
            cparams=cparams,
            nthreads=nthreads,
            max_memory=max_memory,
            storage_options=storage_options,
        )
        return r if return_stored else None
    if not _is_local(url):
        import zarr

        z = zarr.open_array(
            url,
            mode="w" if overwrite else "w-",
            shape=arr.shape,
            dtype=arr.dtype,
            chunks=chunks or tuple(int(c) for c in b2._face.plan_chunks(arr)),
            path=component,
            storage_options=storage_options,
        )
        store(arr, z, nthreads=nthreads, max_memory=max_memory)
        return b2.asarray(z) if return_stored else None
    root = _local_path(url)
    path = root if not component else os.path.join(root, *component.strip("/").split("/"))
    if os.path.exists(path):
        if not overwrite:
            raise FileExistsError(f"to_zarr: '{path}' exists (overwrite=True replaces it)")
        shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    if component:
        parts = component.strip("/").split("/")
        for i in range(len(parts)):
            _write_group(os.path.join(root, *parts[:i]))
    arr.compute(
        urlpath="zarr:" + path, chunks=chunks, shards=shards, cparams=cparams, nthreads=nthreads, max_memory=max_memory
    )
    return b2.open("zarr:" + path) if return_stored else None


def from_zarr(url, component=None, storage_options=None, chunks=None, name=None, inline_array=False, **kwargs):
    """A lazy Array over a Zarr array (``dask.array.from_zarr``); nothing is read.

    Parameters
    ----------
    url : str, os.PathLike or zarr.Array
        A directory holding a Zarr v2/v3 array (or its group, with `component`), a URL
        zarr-python opens, or a zarr.Array.
    component : str, optional
        The array's path inside the store.
    storage_options : dict, optional
        For a remote URL: passed to zarr-python.
    chunks : tuple of int, optional
        The chunks to evaluate on (``rechunk``); default: the stored chunks.
    name, inline_array : optional
        Accepted for Dask's signature; unused.
    **kwargs
        Refused (a TypeError naming them).

    Returns
    -------
    Array
        The lazy array.

    Examples
    --------
    >>> import os, tempfile, b2lazy as bl
    >>> d = os.path.join(tempfile.mkdtemp(), "g.zarr")
    >>> bl.to_zarr(bl.ones((2, 3)), d, component="a/b")
    >>> bl.from_zarr(d, component="a/b").shape
    (2, 3)
    """
    b2 = _b2()
    if kwargs:
        raise TypeError(f"from_zarr() got unexpected keyword arguments {sorted(kwargs)}")
    if isinstance(url, (str, os.PathLike)):
        url = os.fspath(url)
        if _is_local(url):
            path = _local_path(url)
            if component:
                path = os.path.join(path, *component.strip("/").split("/"))
            x = b2.open(path if path.startswith("zarr:") else "zarr:" + path)
        else:
            import zarr

            x = b2.asarray(zarr.open_array(url, mode="r", path=component, storage_options=storage_options))
    else:
        if component is not None:
            raise ValueError("from_zarr: component= names an array inside a store; url is already an array")
        x = b2.asarray(url)
    if chunks is not None:
        rechunk = getattr(b2, "rechunk", None)
        if rechunk is None:
            raise ValueError("from_zarr: chunks= needs b2lazy.rechunk, which this build lacks")
        x = rechunk(x, chunks)
    return x
