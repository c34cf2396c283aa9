#!/usr/bin/env python3
"""Issue #15's new functions against their peers, side by side: user functions on blocks
(lazyudf), sort along an axis, and x[key] = value written to a file (mode="r+").

    python bench/bench_namespace.py [--n 4096] [--layouts default rows cols tiles]
                                    [--workloads udf sort1 sort0 setitem] [--reps 3]
                                    [--data-dir bench/data]

Operands: bench_layouts.py's float64 files (a, b of (n, n), zstd 1 + shuffle, four layouts;
generated there when missing). Each workload x layout x contender runs in a FRESH process:
operands opened (NumPy: loaded), `5` written to /proc/self/clear_refs, one untimed warm-up,
--reps timed runs (median), then VmHWM: growth = VmHWM - VmRSS after opening. 2 threads.

  udf      sin(a)**2 + cos(b)**2 computed by a Python function on blocks, to a b2nd file:
           numpy (the function once on the arrays in memory), blosc2 (blosc2.lazyudf),
           dask (map_blocks over the files), b2lazy (lazyudf), b2lazy_numba (lazyudf
           calling a numba nogil kernel: the workers run at once)
  sort1    sort(a, axis=1) (rows), to a b2nd file: numpy (np.sort in memory), dask
           (map_blocks(np.sort) over row bands whole along the axis: a user's sort, dask
           has none), b2lazy (b2lazy.sort)
  sort0    sort(a, axis=0) (columns): the same, with column bands for dask
  setitem  a copy of a's file (made untimed before each run) updated in place:
           x[n//4 : n//2] = a NumPy block: blosc2 (blosc2.open(mode="a")[...] = v),
           b2lazy (open(mode="r+")[...] = v); the chunks rewritten are counted
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_elementwise as be  # noqa: E402
import bench_layouts as bl_bench  # noqa: E402

MiB = be.MiB
CONTENDERS = {
    "udf": ["numpy", "blosc2", "dask", "b2lazy", "b2lazy_numba"],
    "sort1": ["numpy", "dask", "b2lazy"],
    "sort0": ["numpy", "dask", "b2lazy"],
    "setitem": ["blosc2", "b2lazy"],
}


def udf_block(inputs, output, offset):
    x, y = inputs
    output[...] = __import__("numpy").sin(x) ** 2 + __import__("numpy").cos(y) ** 2


def worker(args):
    import numpy as np

    be.set_threads()
    import blosc2

    n, lay, wl, c = args.n, args.layout, args.workload, args.contender
    pa, pb = (bl_bench.data_path(args.data_dir, x, n, lay) for x in "ab")
    out = os.path.join(args.tmp, f"ns_out_{os.getpid()}.b2nd")
    kw = dict(urlpath=out, mode="w", cparams=be.b2_cparams())
    if c == "numpy":
        a, b = blosc2.open(pa)[...], blosc2.open(pb)[...]
    if c == "dask":
        import dask
        import dask.array as da

        dask.config.set(scheduler="threads", num_workers=be.NTHREADS)
    if c == "b2lazy_numba":
        import numba

        @numba.njit(nogil=True)
        def kernel(x, y, o):
            fx, fy, fo = x.ravel(), y.ravel(), o.ravel()
            for i in range(fo.size):
                fo[i] = np.sin(fx[i]) ** 2 + np.cos(fy[i]) ** 2

        def numba_block(inputs, output, offset):
            kernel(inputs[0], inputs[1], output)

    import b2lazy

    src_chunks = blosc2.open(pa).chunks

    def run():
        extra = {}
        be.rm(out)
        if wl == "udf":
            if c == "numpy":
                o = np.empty_like(a)
                udf_block((a, b), o, (0, 0))
            elif c == "blosc2":
                blosc2.lazyudf(udf_block, (blosc2.open(pa), blosc2.open(pb)), np.float64).compute(**kw)
            elif c == "dask":
                x, y = (da.from_array(be.FileView(blosc2.open(p)), chunks=src_chunks) for p in (pa, pb))
                r = da.map_blocks(lambda u, v: np.sin(u) ** 2 + np.cos(v) ** 2, x, y, dtype=np.float64)
                tgt = blosc2.empty(r.shape, dtype=r.dtype, chunks=src_chunks, **kw)
                da.store(r, tgt, lock=True)
            else:
                f = udf_block if c == "b2lazy" else numba_block
                r = b2lazy.lazyudf(f, (b2lazy.open(pa), b2lazy.open(pb)), np.float64).compute(
                    urlpath=out, cparams=be.B2LAZY_CPARAMS, nthreads=be.NTHREADS
                )
                extra = {"bytes_decompressed": sum(r.stats["bytes_decompressed"].values())}
        elif wl in ("sort1", "sort0"):
            axis = 1 if wl == "sort1" else 0
            if c == "numpy":
                np.sort(a, axis=axis)
            elif c == "dask":
                band = tuple(n if d == axis else max(1, (16 * MiB // 8) // n) for d in range(2))
                x = da.from_array(be.FileView(blosc2.open(pa)), chunks=src_chunks).rechunk(band)
                r = x.map_blocks(np.sort, axis=axis, dtype=np.float64)
                tgt = blosc2.empty(r.shape, dtype=r.dtype, chunks=band, **kw)
                da.store(r, tgt, lock=True)
            else:
                r = b2lazy.sort(b2lazy.open(pa), axis=axis).compute(
                    urlpath=out, cparams=be.B2LAZY_CPARAMS, nthreads=be.NTHREADS
                )
                extra = {"bytes_decompressed": sum(r.stats["bytes_decompressed"].values())}
        else:  # setitem: on a fresh copy each run (copied before the clock starts)
            v = np.full((n // 2 - n // 4, n), 7.0)
            if c == "blosc2":
                x = blosc2.open(copy, mode="a")
                x[n // 4 : n // 2] = v
            else:
                x = b2lazy.open(copy, mode="r+")
                x[n // 4 : n // 2] = v
        return extra

    copy = os.path.join(args.tmp, f"ns_copy_{os.getpid()}.b2nd")
    times, extra = [], {}
    base = None
    for i in range(1 + args.reps):
        if wl == "setitem":
            be.rm(copy)
            shutil.copyfile(pa, copy)
        if i == 0:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            base = be.rss_bytes()
        t0 = time.perf_counter()
        extra = run()
        if i:
            times.append(time.perf_counter() - t0)
    res = {"time": statistics.median(times), "times": times, "growth": be.vmhwm_bytes() - base, **extra}
    if wl == "setitem":
        before, after = blosc2.open(pa), blosc2.open(copy)
        res["chunks_changed"] = sum(
            before.schunk.get_chunk(k) != after.schunk.get_chunk(k) for k in range(before.schunk.nchunks)
        )
        res["nchunks"] = before.schunk.nchunks
        be.rm(copy)
    be.rm(out)
    print("RESULT " + json.dumps(res))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--layouts", nargs="*", default=bl_bench.LAYOUTS)
    ap.add_argument("--workloads", nargs="*", default=list(CONTENDERS))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--data-dir", default=os.path.join(HERE, "data"))
    ap.add_argument("--tmp", default="/tmp")
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--layout"), ap.add_argument("--workload"), ap.add_argument("--contender")
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    missing = [
        lay
        for lay in args.layouts
        for x in "ab"
        if not os.path.exists(bl_bench.data_path(args.data_dir, x, args.n, lay))
    ]
    if missing:
        subprocess.run(
            [
                sys.executable,
                os.path.join(HERE, "bench_layouts.py"),
                "--gen",
                "--n",
                str(args.n),
                "--data-dir",
                args.data_dir,
                "--layouts",
                *sorted(set(missing)),
                "--workloads",
                "sincos",
            ],
            check=True,
        )
    print(
        f"n = {args.n}, float64, {be.NTHREADS} threads, median of {args.reps} runs after a warm-up, "
        f"fresh process per cell; time (ratio peer / b2lazy: > 1, b2lazy faster), peak growth"
    )
    for wl in args.workloads:
        print(f"\n#### `{wl}`\n\n| layout | " + " | ".join(CONTENDERS[wl]) + " |\n|---|" + "---|" * len(CONTENDERS[wl]))
        for lay in args.layouts:
            cells, res = [], {}
            for c in CONTENDERS[wl]:
                cmd = [
                    sys.executable,
                    __file__,
                    "--worker",
                    "--n",
                    str(args.n),
                    "--layout",
                    lay,
                    "--workload",
                    wl,
                    "--contender",
                    c,
                    "--reps",
                    str(args.reps),
                    "--data-dir",
                    args.data_dir,
                    "--tmp",
                    args.tmp,
                ]
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
                line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
                res[c] = json.loads(line[0][7:]) if line else {"error": (p.stderr.strip().splitlines() or ["?"])[-1]}
            ref = res.get("b2lazy", {}).get("time")
            for c in CONTENDERS[wl]:
                r = res[c]
                if "error" in r:
                    cells.append(f"error: {r['error'][:80]}")
                    continue
                cell = f"{r['time']:.2f} s"
                if ref and c != "b2lazy":
                    cell += f" ({r['time'] / ref:.2f}×)"
                cell += f", {r['growth'] / MiB:.0f} MiB"
                if "chunks_changed" in r:
                    cell += f", {r['chunks_changed']}/{r['nchunks']} chunks rewritten"
                cells.append(cell)
            print(f"| {lay} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
