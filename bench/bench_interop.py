#!/usr/bin/env python3
"""Interop benchmark (issue #37): b2lazy on the paths NumPy, Dask, zarr-python and h5py users
take, next to what they would otherwise run.

    python bench/bench_interop.py [--gib 2] [--reps 3] [--dir /tmp/b2lazy-bench-interop]
                                  [--out bench/RESULTS-interop.json] [--only NAME ...]

One float64 array of about `--gib` GiB (rows of sin(1234.5 * x) + x: smooth, compressible),
stored four ways: Zarr v3 (blosc zstd 1 shuffle, chunks 1024 x 1024, written by zarr-python),
HDF5 (h5py, chunks 1024 x 1024, uncompressed), b2nd with the same chunks, and b2nd with
python-blosc2's default chunks and blocks (blosc2.asarray). Every case runs in a fresh
process: its time includes opening (or wrapping) the data; its peak is the growth of VmHWM
over the process's RSS after imports. Median of `--reps` runs; 2 threads everywhere.

Cases (name: what is timed):
  wrap-zarr / wrap-h5      bl.asarray(zarr.Array) / bl.asarray(h5py.Dataset): wrapping only
  wrap-zarr-mean0          bl.asarray(zarr.Array).mean(axis=0) to NumPy
  wrap-h5-mean0            bl.asarray(h5py.Dataset).mean(axis=0) to NumPy
  region-zarr-mean0        bl.from_array(zarr.Array, native=False).mean(axis=0): zarr-python's
                           __getitem__ called for the regions the plan pulls (what remote or
                           in-memory stores get)
  region-h5-mean0          the same over h5py's __getitem__
  dask-h5-mean0            da.from_array(h5py.Dataset).mean(axis=0).compute()
  zarr-numpy-mean0         zarr-python reads it all, NumPy's mean(axis=0)
  h5-numpy-mean0           h5py reads it all, NumPy's mean(axis=0)
  np-mean0 / bl-mean0      np.mean(x, axis=0) through the protocol vs bl.mean(x, axis=0),
                           x = bl.open(b2nd); both evaluated to NumPy (np.asarray)
  np-mean0-bdef / bl-mean0-bdef   the same on python-blosc2's default layout
  dask-b2lazy-mean0        da.from_array(bl.open(b2nd)).mean(axis=0).compute(), to NumPy
  dask-zarr-mean0          da.from_zarr(zarr).mean(axis=0).compute()
  bl-zarr-mean0            bl.open(zarr).mean(axis=0) to NumPy
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

NTHREADS = 2
CHUNKS = (1024, 1024)


def shape_for(gib):
    cols = 8192
    return int(gib * 2**30 / 8 / cols), cols


def paths(d):
    return {k: os.path.join(d, f"a.{k}") for k in ("zarr", "h5", "b2nd", "bdef.b2nd")}


def gen(d, gib):
    import h5py
    import numpy as np
    import blosc2
    import zarr
    from zarr.codecs import BloscCodec

    shape = shape_for(gib)
    stamp = os.path.join(d, f"stamp-{shape[0]}x{shape[1]}")
    if os.path.exists(stamp):
        return
    os.makedirs(d, exist_ok=True)
    p = paths(d)
    x = np.linspace(0, 1, shape[1])
    a = np.empty(shape)
    for i in range(0, shape[0], 4096):
        rows = np.arange(i, min(i + 4096, shape[0]))[:, None] / shape[0]
        a[i : i + len(rows)] = np.sin(1234.5 * (x + rows)) + x
    z = zarr.create_array(
        p["zarr"],
        shape=shape,
        chunks=CHUNKS,
        dtype="f8",
        overwrite=True,
        compressors=BloscCodec(cname="zstd", clevel=1, shuffle="shuffle"),
    )
    z[...] = a
    with h5py.File(p["h5"], "w") as f:
        f.create_dataset("a", data=a, chunks=CHUNKS)
    cp = {"codec": blosc2.Codec.ZSTD, "clevel": 1}
    blosc2.asarray(a, urlpath=p["b2nd"], mode="w", chunks=CHUNKS, cparams=cp)
    blosc2.asarray(a, urlpath=p["bdef.b2nd"], mode="w", cparams=cp)
    open(stamp, "w").close()


# ------------------------------------------------------------------ one case, fresh process
CASES = {
    # name: (setup, timed body) — both see `p` (paths) and `r` (the result, checked after)
    "wrap-zarr": ("import zarr, b2lazy as bl", "r = bl.asarray(zarr.open_array(p['zarr'], mode='r')).shape"),
    "wrap-h5": ("import h5py, b2lazy as bl", "f = h5py.File(p['h5'], 'r'); r = bl.asarray(f['a']).shape"),
    "wrap-zarr-mean0": (
        "import zarr, numpy as np, b2lazy as bl",
        "r = bl.asarray(zarr.open_array(p['zarr'], mode='r')).mean(axis=0).to_numpy()",
    ),
    "wrap-h5-mean0": (
        "import h5py, numpy as np, b2lazy as bl",
        "f = h5py.File(p['h5'], 'r'); r = bl.asarray(f['a']).mean(axis=0).to_numpy()",
    ),
    "region-zarr-mean0": (
        "import zarr, numpy as np, b2lazy as bl",
        "r = bl.from_array(zarr.open_array(p['zarr'], mode='r'), native=False).mean(axis=0).to_numpy()",
    ),
    "region-h5-mean0": (
        "import h5py, numpy as np, b2lazy as bl",
        "f = h5py.File(p['h5'], 'r'); r = bl.from_array(f['a'], native=False).mean(axis=0).to_numpy()",
    ),
    "dask-h5-mean0": (
        "import h5py, numpy as np, dask, dask.array as da\ndask.config.set(scheduler='threads', num_workers=2)",
        "f = h5py.File(p['h5'], 'r'); r = np.asarray(da.from_array(f['a']).mean(axis=0).compute())",
    ),
    "zarr-numpy-mean0": ("import zarr, numpy as np", "r = np.mean(zarr.open_array(p['zarr'], mode='r')[...], axis=0)"),
    "h5-numpy-mean0": ("import h5py, numpy as np", "f = h5py.File(p['h5'], 'r'); r = np.mean(f['a'][...], axis=0)"),
    "np-mean0": ("import numpy as np, b2lazy as bl", "r = np.asarray(np.mean(bl.open(p['b2nd']), axis=0))"),
    "bl-mean0": ("import numpy as np, b2lazy as bl", "r = bl.mean(bl.open(p['b2nd']), axis=0).to_numpy()"),
    "np-mean0-bdef": ("import numpy as np, b2lazy as bl", "r = np.asarray(np.mean(bl.open(p['bdef.b2nd']), axis=0))"),
    "bl-mean0-bdef": ("import numpy as np, b2lazy as bl", "r = bl.mean(bl.open(p['bdef.b2nd']), axis=0).to_numpy()"),
    "dask-b2lazy-mean0": (
        "import numpy as np, dask, dask.array as da, b2lazy as bl\ndask.config.set(scheduler='threads', num_workers=2)",
        "r = np.asarray(da.from_array(bl.open(p['b2nd'])).mean(axis=0).compute())",
    ),
    "dask-zarr-mean0": (
        "import numpy as np, dask, dask.array as da\ndask.config.set(scheduler='threads', num_workers=2)",
        "r = np.asarray(da.from_zarr(p['zarr']).mean(axis=0).compute())",
    ),
    "bl-zarr-mean0": ("import numpy as np, b2lazy as bl", "r = bl.open(p['zarr']).mean(axis=0).to_numpy()"),
}

RUNNER = r"""
import json, os, sys, time, warnings
warnings.simplefilter("ignore")
os.environ.setdefault("OMP_NUM_THREADS", "2")
p = json.loads(sys.argv[1])
{setup}
def rss():
    for line in open("/proc/self/status"):
        if line.startswith(("VmRSS", "VmHWM")):
            yield int(line.split()[1]) * 1024
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # resets VmHWM to the RSS now: the peak below is this case's growth
base = dict(zip(("VmHWM", "VmRSS"), rss()))["VmRSS"]
t = time.perf_counter()
{body}
dt = time.perf_counter() - t
hwm = next(v for k, v in zip(("VmHWM", "VmRSS"), rss()) if k == "VmHWM")
import numpy as _np
check = float(_np.nansum(_np.asarray(r, dtype=float))) if not isinstance(r, tuple) else float(sum(r))
print(json.dumps({{"seconds": dt, "peak_bytes": max(0, hwm - base), "check": check}}))
"""


def run_case(name, p):
    setup, body = CASES[name]
    code = RUNNER.format(setup=setup, body=body)
    out = subprocess.run([sys.executable, "-c", code, json.dumps(p)], capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gib", type=float, default=2.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dir", default="/tmp/b2lazy-bench-interop")
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    d = os.path.join(args.dir, f"{args.gib:g}gib")
    gen(d, args.gib)
    p = paths(d)
    names = args.only or list(CASES)
    results = {}
    print(f"# load before: {os.getloadavg()}", flush=True)
    for name in names:
        runs = [run_case(name, p) for _ in range(args.reps)]
        ok = [r for r in runs if "error" not in r]
        if not ok:
            results[name] = runs[0]
            print(f"{name:22s} ERROR {runs[0]['error']}", flush=True)
            continue
        res = {
            "seconds": statistics.median(r["seconds"] for r in ok),
            "peak_mib": max(r["peak_bytes"] for r in ok) / 2**20,
            "check": ok[0]["check"],
        }
        results[name] = res
        print(f"{name:22s} {res['seconds']:8.3f} s {res['peak_mib']:9.1f} MiB  check {res['check']:.6g}", flush=True)
    print(f"# load after: {os.getloadavg()}")
    pairs = [
        ("np-mean0", "bl-mean0"),
        ("np-mean0-bdef", "bl-mean0-bdef"),
        ("dask-b2lazy-mean0", "dask-zarr-mean0"),
        ("wrap-zarr-mean0", "zarr-numpy-mean0"),
        ("wrap-h5-mean0", "h5-numpy-mean0"),
        ("bl-zarr-mean0", "dask-zarr-mean0"),
        ("region-zarr-mean0", "dask-zarr-mean0"),
        ("region-h5-mean0", "dask-h5-mean0"),
        ("wrap-h5-mean0", "dask-h5-mean0"),
    ]
    for a, b in pairs:
        if "seconds" in results.get(a, {}) and "seconds" in results.get(b, {}):
            print(
                f"{a} / {b}: time {results[a]['seconds'] / results[b]['seconds']:.2f}x, "
                f"peak {results[a]['peak_mib']:.0f} vs {results[b]['peak_mib']:.0f} MiB"
            )
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"gib": args.gib, "reps": args.reps, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
