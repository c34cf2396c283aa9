#!/usr/bin/env python3
"""Wrapping benchmark (issue #37, item 3): b2lazy.asarray on a zarr.Array and an
h5py.Dataset (no read), then mean(axis=0) through the wrapped array, side by side with
zarr-python/h5py + NumPy and Dask on the same data.

    python bench/bench_wrap.py [--mib 2048] [--dir /tmp/b2lazy-bench-wrap] [--h5-gzip]
                               [--out results.json]

Data (generated once under --dir, reused while its size matches): a float64 array of
about --mib MiB, rows of 8192 (smooth values plus a little noise), stored by zarr-python
as a local Zarr v3 array (1024 x 1024 chunks, blosc zstd clevel 1 shuffle) and by h5py as
a chunked HDF5 dataset (1024 x 1024 chunks, no compression unless --h5-gzip).

Contenders, per store, each in a fresh process (2 threads everywhere):
  b2lazy         bl.asarray(obj): the native Zarr / HDF5 driver; bl.mean(x, axis=0).to_numpy()
  b2lazy-region  bl.from_array(obj, native=False): obj[slices] per chunk on the workers
  numpy          the whole array read (z[...], ds[...]) and np.mean(axis=0)
  dask           da.from_zarr(path) / da.from_array(ds, chunks=ds.chunks); .mean(axis=0).compute()
For the wrap and for the mean: seconds, peak RSS growth (VmHWM after /proc/self/clear_refs
minus RSS before) and bytes read by the process (/proc/self/io rchar: read() calls, the
page cache included). Every contender's mean is checked against the numpy one.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

COLS = 8192
CHUNKS = (1024, 1024)
NTHREADS = 2
STORES = ["zarr", "h5"]
CONTENDERS = ["numpy", "b2lazy", "b2lazy-region", "dask"]  # numpy first: the reference mean


def shape_for(mib):
    return max(1, int(mib * 2**20 / 8 / COLS)), COLS


def data_paths(d):
    return os.path.join(d, "a.zarr"), os.path.join(d, "a.h5")


# ---------------------------------------------------------------------------------- data
def generate(d, mib, gzip):
    import numpy as np

    shape = shape_for(mib)
    stamp = os.path.join(d, f"stamp-{shape[0]}x{shape[1]}-{'gzip' if gzip else 'raw'}")
    if os.path.exists(stamp):
        return
    import h5py
    import zarr
    from zarr.codecs import BloscCodec

    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        if f.startswith("stamp-"):
            os.remove(os.path.join(d, f))
    zpath, hpath = data_paths(d)
    z = zarr.create_array(
        zpath,
        shape=shape,
        chunks=CHUNKS,
        dtype="f8",
        overwrite=True,
        compressors=BloscCodec(cname="zstd", clevel=1, shuffle="shuffle"),
    )
    with h5py.File(hpath, "w") as f:
        ds = f.create_dataset("a", shape=shape, dtype="f8", chunks=CHUNKS, compression="gzip" if gzip else None)
        rng = np.random.default_rng(0)
        x = np.linspace(0, 1, COLS)
        for r in range(0, shape[0], CHUNKS[0]):
            n = min(CHUNKS[0], shape[0] - r)
            rows = np.sin(1234.5 * x)[None, :] + np.arange(r, r + n)[:, None] * 1e-6
            rows = rows + rng.normal(0, 1e-3, rows.shape)
            z[r : r + n] = rows
            ds[r : r + n] = rows
    open(stamp, "w").close()


# ---------------------------------------------------------------------------------- one case
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def rchar():
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return 0


def measured(fn):
    """(result, seconds, peak RSS growth in bytes, bytes read) of fn()."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # VmHWM := the current RSS
    before, read0 = rss(), rchar()
    t = time.perf_counter()
    r = fn()
    dt = time.perf_counter() - t
    return r, dt, max(0, peak() - before), rchar() - read0


def run_case(d, store, contender):
    import numpy as np

    zpath, hpath = data_paths(d)
    if store == "zarr":
        import zarr

        zarr.config.set({"threading.max_workers": NTHREADS})
        obj = zarr.open_array(zpath, mode="r")
    else:
        import h5py

        obj = h5py.File(hpath, "r")["a"]
    if contender.startswith("b2lazy"):
        import b2lazy as bl

        bl.asarray(np.zeros(2)).to_numpy(nthreads=NTHREADS)  # engine started (not the wrap's cost)
        native = contender == "b2lazy"
        x, wrap_s, wrap_rss, wrap_read = measured(lambda: bl.from_array(obj, native=native))
        kind = x._a.kind
        mean = lambda: bl.mean(x, axis=0).to_numpy(nthreads=NTHREADS)  # noqa: E731
    elif contender == "numpy":
        x, wrap_s, wrap_rss, wrap_read, kind = obj, 0.0, 0, 0, "-"
        mean = lambda: np.mean(obj[...], axis=0)  # noqa: E731
    else:
        import dask
        import dask.array as da

        dask.config.set(scheduler="threads", num_workers=NTHREADS)
        wrap = (lambda: da.from_zarr(zpath)) if store == "zarr" else (lambda: da.from_array(obj, chunks=obj.chunks))
        x, wrap_s, wrap_rss, wrap_read = measured(wrap)
        kind = "dask"
        mean = lambda: x.mean(axis=0).compute()  # noqa: E731
    m, mean_s, mean_rss, mean_read = measured(mean)
    np.save(os.path.join(d, f"mean-{store}-{contender}.npy"), m)
    return {
        "store": store,
        "contender": contender,
        "kind": kind,
        "wrap_s": wrap_s,
        "wrap_rss": wrap_rss,
        "wrap_read": wrap_read,
        "mean_s": mean_s,
        "mean_rss": mean_rss,
        "mean_read": mean_read,
    }


# ---------------------------------------------------------------------------------- driver
def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mib", type=float, default=2048, help="array size in MiB (default 2048)")
    p.add_argument("--dir", default="/tmp/b2lazy-bench-wrap", help="where the data is generated (kept)")
    p.add_argument("--h5-gzip", action="store_true", help="gzip the HDF5 dataset (default: no compression)")
    p.add_argument("--out", help="write the results as JSON here")
    p.add_argument("--case", nargs=2, metavar=("STORE", "CONTENDER"), help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.case:
        print(json.dumps(run_case(a.dir, *a.case)))
        return
    import numpy as np

    generate(a.dir, a.mib, a.h5_gzip)
    shape = shape_for(a.mib)
    print(
        f"float64 {shape} = {np.prod(shape) * 8 / 2**20:.0f} MiB, chunks {CHUNKS}, {NTHREADS} threads; "
        f"load {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{'store':5} {'contender':14} {'kind':6} {'wrap s':>9} {'wrap RSS':>9} {'wrap read':>10} "
        f"{'mean s':>8} {'mean RSS':>9} {'mean read':>10}"
    )
    results = []
    for store in STORES:
        for contender in CONTENDERS:
            out = subprocess.run(
                [sys.executable, __file__, "--dir", a.dir, "--case", store, contender],
                capture_output=True,
                text=True,
                check=True,
            )
            r = json.loads(out.stdout.strip().splitlines()[-1])
            ref = np.load(os.path.join(a.dir, f"mean-{store}-numpy.npy")) if contender != "numpy" else None
            got = np.load(os.path.join(a.dir, f"mean-{store}-{contender}.npy"))
            r["equal"] = bool(ref is None or np.allclose(got, ref, rtol=1e-10, atol=1e-12))
            results.append(r)
            mib = 2**20
            print(
                f"{store:5} {contender:14} {r['kind']:6} {r['wrap_s'] * 1e3:7.2f}ms {r['wrap_rss'] / mib:7.1f}M "
                f"{r['wrap_read'] / mib:8.2f}M {r['mean_s']:7.2f}s {r['mean_rss'] / mib:7.0f}M "
                f"{r['mean_read'] / mib:8.0f}M{'' if r['equal'] else '  MISMATCH'}",
                flush=True,
            )
    print(f"load after {os.getloadavg()[0]:.2f}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"shape": shape, "chunks": CHUNKS, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
