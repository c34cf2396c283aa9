#!/usr/bin/env python3
"""Formats benchmark (issue #13): b2lazy reading Zarr v3 natively vs zarr-python + NumPy
and dask.array.from_zarr on the same stores, and b2lazy on a b2nd copy of the same data.

    python bench/bench_formats.py [--gib 1] [--reps 5] [--dir /tmp/b2lazy-bench-formats]
                                  [--out bench/RESULTS-formats.json]

A float64 array of about `--gib` GiB (smooth data plus a little noise, rows of
sin(1234.5 * x) + x), stored as Zarr v3 with blosc(zstd, clevel 1, shuffle) in two chunkings
(square 1024 x 1024 tiles and 256-row strips) by zarr-python, plus a b2nd copy written by
b2lazy with the same chunks. Three workloads, all at 2 threads:

  sum       sum(a)                         -> a float
  sum0      sum(a, axis=0)                 -> a NumPy vector
  center    a - mean(a, axis=0)            -> a Zarr v3 store (blosc zstd 1 shuffle, a's chunks)
  trig      sin(a)**2 + cos(a)**2          -> a Zarr v3 store (idem)
  median    median(a, axis=0)              -> a NumPy vector (Dask: da.median, which
                                              rechunks the reduced axis into one chunk)

Contenders: b2lazy on the Zarr store (b2lazy.open(url), compute(urlpath=out.zarr));
zarr-python + NumPy (the whole array read into memory with zarr's 2 worker threads, NumPy
on it, the result assigned to a new store); Dask (da.from_zarr, threads scheduler with
2 workers, to_zarr); and b2lazy on the b2nd copy (output b2nd), the "same workload from
b2nd" of the issue's target. Timings: median of `--reps` runs, contenders alternating
after a warm-up, in this process. Peak RSS growth: each contender and workload once more
in a fresh process (clear_refs after opening, VmHWM at the end). Data is generated in a
separate process first. The machine's load (uptime) is recorded before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

NTHREADS = 2
CHUNKINGS = {"tiles": (1024, 1024), "strips": (256, None)}  # None: whole rows
WORKLOADS = ["sum", "sum0", "center", "trig", "median"]
VECTORS = {"sum0", "median"}  # workloads whose result is a small NumPy vector
CONTENDERS = ["b2lazy", "zarr+numpy", "dask", "b2lazy-b2nd", "b2lazy-zarr2", "dask-zarr2", "b2lazy-h5", "dask-h5"]
DEFAULT_CONTENDERS = CONTENDERS[:4]


def shape_for(gib):
    cols = 8192
    rows = int(gib * 2**30 / 8 / cols)
    return rows, cols


def chunks_for(name, shape):
    r, c = CHUNKINGS[name]
    return (r, c or shape[1])


def paths(d, name):
    return os.path.join(d, f"a_{name}.zarr"), os.path.join(d, f"a_{name}.b2nd")


def other_paths(d, name):
    """The Zarr v2 (numcodecs Blosc zstd 1 shuffle) and HDF5 (hdf5plugin's Blosc2 zstd 1
    shuffle) copies, same chunks."""
    return os.path.join(d, f"a_{name}_v2.zarr"), os.path.join(d, f"a_{name}.h5")


def blosc_codec():
    from zarr.codecs import BloscCodec

    return BloscCodec(cname="zstd", clevel=1, shuffle="shuffle")


# ----------------------------------------------------------------------------- data
def gen(d, gib):
    import numpy as np
    import zarr
    import b2lazy

    shape = shape_for(gib)
    os.makedirs(d, exist_ok=True)
    stamp = os.path.join(d, f"stamp-{shape[0]}x{shape[1]}")
    if os.path.exists(stamp):
        return
    rng = np.random.default_rng(0)
    for name in CHUNKINGS:
        zp, bp = paths(d, name)
        chunks = chunks_for(name, shape)
        z = zarr.create_array(zp, shape=shape, chunks=chunks, dtype="f8", compressors=blosc_codec(), overwrite=True)
        step = 1024
        for r0 in range(0, shape[0], step):
            r1 = min(shape[0], r0 + step)
            x = np.linspace(r0 / shape[0], r1 / shape[0], (r1 - r0) * shape[1], endpoint=False).reshape(r1 - r0, -1)
            z[r0:r1] = np.sin(1234.5 * x) + x + 1e-4 * rng.standard_normal(x.shape)
        b2lazy.open(zp).compute(
            urlpath=bp, chunks=chunks, cparams={"codec": "zstd", "clevel": 1, "filter": "shuffle"}, nthreads=NTHREADS
        )
    open(stamp, "w").close()


def gen_others(d, gib):
    """The Zarr v2 and HDF5 copies (written when a contender reads them)."""
    import h5py
    import hdf5plugin
    import numcodecs
    import zarr

    shape = shape_for(gib)
    stamp = os.path.join(d, f"stamp-others-{shape[0]}x{shape[1]}")
    if os.path.exists(stamp):
        return
    for name in CHUNKINGS:
        zp, _ = paths(d, name)
        v2, h5 = other_paths(d, name)
        src = zarr.open_array(zp, mode="r")
        chunks = chunks_for(name, shape)
        z2 = zarr.create_array(
            v2,
            shape=shape,
            chunks=chunks,
            dtype="f8",
            zarr_format=2,
            overwrite=True,
            compressors=numcodecs.Blosc(cname="zstd", clevel=1, shuffle=numcodecs.Blosc.SHUFFLE),
        )
        with h5py.File(h5, "w") as f:
            ds = f.create_dataset(
                "a",
                shape=shape,
                dtype="f8",
                chunks=chunks,
                **hdf5plugin.Blosc2(cname="zstd", clevel=1, filters=hdf5plugin.Blosc2.SHUFFLE),
            )
            for r0 in range(0, shape[0], 1024):
                x = src[r0 : r0 + 1024]
                z2[r0 : r0 + 1024] = x
                ds[r0 : r0 + 1024] = x
    open(stamp, "w").close()


# ----------------------------------------------------------------------------- contenders
def run(contender, workload, src, out):
    """Runs one workload; returns a small value to check (a float, or the output's path)."""
    import numpy as np

    if os.path.exists(out):
        shutil.rmtree(out) if os.path.isdir(out) else os.remove(out)
    if contender.startswith("b2lazy"):
        import b2lazy

        a = b2lazy.open(src + "#/a" if src.endswith(".h5") else src)
        cp = {"codec": "zstd", "clevel": 1, "filter": "shuffle"}
        if workload == "sum":
            return float(b2lazy.sum(a).to_numpy(nthreads=NTHREADS))
        if workload in VECTORS:
            f = b2lazy.median if workload == "median" else b2lazy.sum
            return f(a, axis=0).to_numpy(nthreads=NTHREADS)
        e = a - b2lazy.mean(a, axis=0) if workload == "center" else b2lazy.sin(a) ** 2 + b2lazy.cos(a) ** 2
        e.compute(urlpath=out, cparams=cp, nthreads=NTHREADS)
        return out
    if contender == "zarr+numpy":
        import zarr

        z = zarr.open_array(src, mode="r")
        a = z[...]
        if workload == "sum":
            return float(np.sum(a))
        if workload in VECTORS:
            return (np.median if workload == "median" else np.sum)(a, axis=0)
        r = a - a.mean(axis=0) if workload == "center" else np.sin(a) ** 2 + np.cos(a) ** 2
        o = zarr.create_array(out, shape=r.shape, chunks=z.chunks, dtype=r.dtype, compressors=blosc_codec())
        o[...] = r
        return out
    if contender.startswith("dask"):
        import dask
        import dask.array as da

        with dask.config.set(scheduler="threads", num_workers=NTHREADS):
            if src.endswith(".h5"):  # as Dask reads HDF5: h5py's dataset, by its chunks
                import h5py
                import hdf5plugin  # noqa: F401

                ds = h5py.File(src, "r")["a"]
                a = da.from_array(ds, chunks=ds.chunks)
            else:
                a = da.from_zarr(src)
            if workload == "sum":
                return float(a.sum().compute())
            if workload in VECTORS:
                return (da.median(a, axis=0) if workload == "median" else a.sum(axis=0)).compute()
            r = a - a.mean(axis=0) if workload == "center" else da.sin(a) ** 2 + da.cos(a) ** 2
            r.to_zarr(out, overwrite=True, compressors=blosc_codec())
            return out
    raise ValueError(contender)


def source(contender, d, chunking):
    zp, bp = paths(d, chunking)
    v2, h5 = other_paths(d, chunking)
    return {"b2lazy-b2nd": bp, "b2lazy-zarr2": v2, "dask-zarr2": v2, "b2lazy-h5": h5, "dask-h5": h5}.get(contender, zp)


def output(contender, d):
    return os.path.join(d, "out_" + contender.replace("+", "_") + (".b2nd" if contender == "b2lazy-b2nd" else ".zarr"))


def setup_threads():
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import zarr

    zarr.config.set({"threading.max_workers": NTHREADS})


# ----------------------------------------------------------------------------- RSS child
def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def rss_child(contender, workload, d, chunking):
    setup_threads()
    import numpy  # noqa: F401  (imports before the baseline)
    import zarr  # noqa: F401
    import dask.array  # noqa: F401
    import b2lazy  # noqa: F401

    src, out = source(contender, d, chunking), output(contender, d)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    base = status("VmRSS")
    t = time.perf_counter()
    run(contender, workload, src, out)
    t = time.perf_counter() - t
    print(json.dumps({"growth": status("VmHWM") - base, "seconds": t}))


# ----------------------------------------------------------------------------- main
def uptime():
    return open("/proc/loadavg").read().split()[:3]


def check(contender, workload, got, ref, d):
    """Outputs equal (sampled rows) to the first contender's."""
    import numpy as np

    if workload == "sum":
        assert abs(got - ref) <= 1e-9 * abs(ref) + 1e-6, (contender, got, ref)
        return
    if workload in VECTORS:
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-9, err_msg=contender)
        return
    import b2lazy

    g, r = b2lazy.open(got), b2lazy.open(ref)
    rows = [0, g.shape[0] // 2, g.shape[0] - 1]
    for i in rows:
        np.testing.assert_allclose(g[i].to_numpy(), r[i].to_numpy(), rtol=1e-12, atol=1e-12)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gib", type=float, default=1.0)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--dir", default="/tmp/b2lazy-bench-formats")
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS-formats.json"))
    p.add_argument("--rss-child", nargs=4, metavar=("CONTENDER", "WORKLOAD", "DIR", "CHUNKING"))
    p.add_argument("--gen", action="store_true")
    p.add_argument("--gen-others", action="store_true")
    p.add_argument("--workloads", nargs="*", default=WORKLOADS, choices=WORKLOADS)
    p.add_argument("--contenders", nargs="*", default=DEFAULT_CONTENDERS, choices=CONTENDERS)
    args = p.parse_args()
    if args.rss_child:
        return rss_child(*args.rss_child)
    if args.gen:
        return gen(args.dir, args.gib)
    if args.gen_others:
        return gen_others(args.dir, args.gib)
    WORKLOADS[:] = args.workloads
    CONTENDERS[:] = args.contenders
    load_before = uptime()
    subprocess.run([sys.executable, __file__, "--gen", "--gib", str(args.gib), "--dir", args.dir], check=True)
    if set(CONTENDERS) & {"b2lazy-zarr2", "dask-zarr2", "b2lazy-h5", "dask-h5"}:
        subprocess.run(
            [sys.executable, __file__, "--gen-others", "--gib", str(args.gib), "--dir", args.dir], check=True
        )
    R = {
        "shape": shape_for(args.gib),
        "nthreads": NTHREADS,
        "workloads": list(WORKLOADS),
        "contenders": list(CONTENDERS),
        "load_before": load_before,
        "rss": {},
        "times": {},
    }
    # Peak RSS growth, one fresh process per cell (while this process is small).
    for chunking in CHUNKINGS:
        for w in WORKLOADS:
            for c in CONTENDERS:
                q = subprocess.run(
                    [sys.executable, __file__, "--rss-child", c, w, args.dir, chunking], capture_output=True, text=True
                )
                if q.returncode != 0:
                    raise SystemExit(q.stderr)
                R["rss"][f"{chunking}/{w}/{c}"] = json.loads(q.stdout.strip().splitlines()[-1])
                print("rss", chunking, w, c, R["rss"][f"{chunking}/{w}/{c}"], flush=True)
    # Timings: contenders alternating, after a warm-up.
    setup_threads()
    for chunking in CHUNKINGS:
        for w in WORKLOADS:
            times = {c: [] for c in CONTENDERS}
            for rep in range(args.reps + 1):
                results = {}
                for c in CONTENDERS:
                    t = time.perf_counter()
                    results[c] = run(c, w, source(c, args.dir, chunking), output(c, args.dir))
                    if rep:
                        times[c].append(time.perf_counter() - t)
                if rep == 0:
                    for c in CONTENDERS[1:]:
                        check(c, w, results[c], results[CONTENDERS[0]], args.dir)
            med = {c: sorted(v)[len(v) // 2] for c, v in times.items()}
            R["times"][f"{chunking}/{w}"] = {"median": med, "all": times}
            print("time", chunking, w, {c: round(v, 3) for c, v in med.items()}, flush=True)
    R["load_after"] = uptime()
    import b2lazy
    import dask
    import numpy
    import zarr
    import numcodecs
    import blosc2

    R["versions"] = {
        m.__name__: m.__version__ for m in (b2lazy, dask, numpy, zarr, numcodecs, blosc2) if hasattr(m, "__version__")
    }
    with open(args.out, "w") as f:
        json.dump(R, f, indent=1)
    print(markdown(R))


def markdown(R):
    cs = R.get("contenders", CONTENDERS)
    pairs = [(f"dask{x}", f"b2lazy{x}") for x in ("", "-zarr2", "-h5")]
    ratios = [(d, b) for d, b in pairs if d in cs and b in cs]
    own = [c for c in cs if c.startswith("b2lazy") and c != "b2lazy-b2nd"] if "b2lazy-b2nd" in cs else []
    head = ["chunks", "workload"] + cs + [f"{d} / {b}" for d, b in ratios] + [f"{c} / b2lazy-b2nd" for c in own]
    lines = [
        f"shape {tuple(R['shape'])} float64, {NTHREADS} threads; load average before {R['load_before']}, "
        f"after {R['load_after']}",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for key, v in R["times"].items():
        ch, w = key.split("/")
        m = v["median"]
        cells = (
            [ch, w]
            + [f"{m[c]:.2f} s" for c in cs]
            + [f"{m[d] / m[b]:.2f}x" for d, b in ratios]
            + [f"{m[c] / m['b2lazy-b2nd']:.2f}x" for c in own]
        )
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Peak RSS growth (MiB, fresh process per cell):",
        "",
        "| chunks | workload | " + " | ".join(cs) + " |",
        "|---|---|" + "---|" * len(cs),
    ]
    for ch in CHUNKINGS:
        for w in R["workloads"]:
            lines.append(
                f"| {ch} | {w} | " + " | ".join(f"{R['rss'][f'{ch}/{w}/{c}']['growth'] / 2**20:.0f}" for c in cs) + " |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
