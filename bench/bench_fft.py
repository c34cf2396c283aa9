"""b2lazy.fft out of core beside NumPy (in memory) and Dask (da.fft, as a Dask user writes it).

Cases:
  fft0, fft1  fft along axis 0 / axis 1 of an R x C complex128 b2nd array (default 4096 x
              65536, 4 GiB) under max_memory=512 MiB; output written to a b2nd file
  rfftn       rfftn of an N^3 float32 volume (default 512^3, 512 MiB) under max_memory=512 MiB

Contenders, each in a fresh process (peak RSS: VmHWM after clear_refs, minus VmRSS after the
imports, so the growth includes opening and loading):
  b2lazy  bl.fft.fft(bl.open(src), axis=a).compute(urlpath=out, max_memory=...)
  numpy   the array read whole with python-blosc2 (timed apart: load_s), np.fft on it (time_s),
          the result written with python-blosc2's default compression (write_s)
  b2lazy-numpy  the transform as a NumPy array (to_numpy): nothing compressed or written
  dask    da.from_array(blosc2 array, its chunks), rechunked so that the transformed axis is
          one chunk (da.fft refuses a chunked axis), da.fft.fft, da.store into a b2nd file;
          rfftn as rfft along the last axis then fft along the others, each after a
          rechunk (da.fft.rfftn wants every axis whole: the volume in one chunk)
Data (smooth plus a little noise) is written by a separate process first, with
python-blosc2's default chunks for its shape. Times: median of --reps fresh runs.

    python bench/bench_fft.py [--rows 4096] [--cols 65536] [--vol 512] [--reps 1]
                              [--cases fft0,fft1,rfftn] [--contenders b2lazy,numpy,b2lazy-numpy,dask]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

NTHREADS = 2
BUDGET = 512 << 20


def rss(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) << 10
    return 0


def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def gen(d, rows, cols, vol):
    import blosc2
    import numpy as np

    a_path, v_path = os.path.join(d, f"a{rows}x{cols}.b2nd"), os.path.join(d, f"v{vol}.b2nd")
    if rows and not os.path.exists(a_path):
        a = blosc2.empty((rows, cols), dtype=np.complex128, urlpath=a_path + ".tmp", mode="w")
        rng = np.random.default_rng(0)
        step = max(1, (64 << 20) // (16 * cols))
        t = np.linspace(0, 1, cols, endpoint=False)
        for r0 in range(0, rows, step):
            r = np.arange(r0, min(rows, r0 + step))[:, None] / rows
            a[r0 : r0 + len(r)] = (
                np.sin(1234.5 * (t + r)) + 1j * np.cos(77.0 * t * (1 + r)) + 1e-3 * rng.standard_normal((len(r), cols))
            )
        del a
        os.rename(a_path + ".tmp", a_path)
    if vol and not os.path.exists(v_path):
        v = blosc2.empty((vol,) * 3, dtype=np.float32, urlpath=v_path + ".tmp", mode="w")
        g = np.linspace(0, 1, vol, dtype=np.float32)
        rng = np.random.default_rng(1)
        for i in range(vol):
            v[i] = (np.sin(40 * g[i] + 13 * g[:, None] * g[None, :]) + 1e-3 * rng.standard_normal((vol, vol))).astype(
                np.float32
            )
        del v
        os.rename(v_path + ".tmp", v_path)
    return a_path, v_path


def run_one(case, contender, src, out):
    """In a fresh process: time and peak RSS growth of one contender on one case."""
    import numpy as np
    import blosc2

    info = {}
    if contender in ("b2lazy", "b2lazy-numpy"):
        import b2lazy as bl

        base = rss("VmRSS")
        reset_peak()
        t0 = time.perf_counter()
        x = bl.open(src)
        r = bl.fft.rfftn(x) if case == "rfftn" else bl.fft.fft(x, axis=int(case[-1]))
        if contender == "b2lazy":
            r = r.compute(urlpath=out, max_memory=BUDGET, nthreads=NTHREADS)
        else:
            # the result as NumPy (nothing compressed or written): the transform beside
            # NumPy's in-memory one, the file decompressed by b2lazy on the way
            r = r.to_numpy(max_memory=BUDGET, nthreads=NTHREADS)
        info["time_s"] = time.perf_counter() - t0
        if contender == "b2lazy":
            info["stats"] = {k: r.stats[k] for k in ("projected_peak_bytes", "peak_scratch_bytes")}
        info["check"] = str(complex(np.asarray(r[3:4, 5:6]).ravel()[0]))
    elif contender == "numpy":
        base = rss("VmRSS")
        reset_peak()
        t0 = time.perf_counter()
        x = blosc2.open(src)[:]
        t1 = time.perf_counter()
        r = np.fft.rfftn(x) if case == "rfftn" else np.fft.fft(x, axis=int(case[-1]))
        t2 = time.perf_counter()
        info["time_s"] = t2 - t1
        info["load_s"] = t1 - t0
        info["check"] = str(complex(r[3, 5].ravel()[0] if case == "rfftn" else r[3, 5]))
        # the same file-to-file job as b2lazy's: the result written with python-blosc2's
        # default compression (b2lazy's too: zstd level 1, shuffle)
        del x
        blosc2.asarray(r, urlpath=out, mode="w")
        info["write_s"] = time.perf_counter() - t2
    else:  # dask
        import dask
        import dask.array as da

        dask.config.set(scheduler="threads", num_workers=NTHREADS)
        base = rss("VmRSS")
        reset_peak()
        t0 = time.perf_counter()
        b = blosc2.open(src)
        x = da.from_array(b, chunks=b.chunks)
        if case == "rfftn":
            y = da.fft.rfft(x.rechunk({2: -1, 0: "auto", 1: "auto"}), axis=2)
            y = da.fft.fft(y.rechunk({1: -1, 0: "auto", 2: "auto"}), axis=1)
            y = da.fft.fft(y.rechunk({0: -1, 1: "auto", 2: "auto"}), axis=0)
        else:
            a = int(case[-1])
            y = da.fft.fft(x.rechunk({a: -1, 1 - a: "auto"}), axis=a)
        o = blosc2.empty(y.shape, dtype=y.dtype, urlpath=out, mode="w")
        da.store(y, o, lock=False)
        info["time_s"] = time.perf_counter() - t0
        info["check"] = str(complex(blosc2.open(out)[3:4, 5:6].ravel()[0]))
    info["peak_growth_bytes"] = rss("VmHWM") - base
    return info


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=4096)
    p.add_argument("--cols", type=int, default=65536)
    p.add_argument("--vol", type=int, default=512)
    p.add_argument("--reps", type=int, default=1)
    p.add_argument("--cases", default="fft0,fft1,rfftn")
    p.add_argument("--contenders", default="b2lazy,numpy,b2lazy-numpy,dask")
    p.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "b2lazy-fftbench"))
    p.add_argument("--run", nargs=4, help=argparse.SUPPRESS)  # case contender src out
    args = p.parse_args()
    if args.run:
        print(json.dumps(run_one(*args.run)))
        return
    os.makedirs(args.dir, exist_ok=True)
    cases = args.cases.split(",")
    rows = args.rows if any(c.startswith("fft") for c in cases) else 0
    vol = args.vol if "rfftn" in cases else 0
    subprocess.run(
        [sys.executable, "-c", f"import bench_fft as b; b.gen({args.dir!r}, {rows}, {args.cols}, {vol})"],
        check=True,
        cwd=os.path.dirname(os.path.abspath(__file__)),
    )
    a_path, v_path = gen(args.dir, rows, args.cols, vol)
    with open("/proc/loadavg") as f:
        print("load before:", f.read().split()[:3])
    results = {}
    for case in cases:
        src = v_path if case == "rfftn" else a_path
        for contender in args.contenders.split(","):
            runs = []
            for _ in range(args.reps):
                out = os.path.join(args.dir, f"out-{contender}.b2nd")
                cp = subprocess.run(
                    [sys.executable, __file__, "--run", case, contender, src, out], capture_output=True, text=True
                )
                if os.path.exists(out):
                    os.remove(out)
                if cp.returncode != 0:
                    runs.append({"error": (cp.stderr.strip().splitlines() or ["?"])[-1]})
                    break
                runs.append(json.loads(cp.stdout.strip().splitlines()[-1]))
            ok = [r for r in runs if "error" not in r]
            res = {"runs": runs}
            if ok:
                res["time_s"] = statistics.median(r["time_s"] for r in ok)
                res["peak_growth_mib"] = max(r["peak_growth_bytes"] for r in ok) / 2**20
            results[f"{case} {contender}"] = res
            print(
                f"{case:6} {contender:7}",
                json.dumps({k: v for k, v in res.items() if k != "runs"}),
                json.dumps(runs[-1]),
                flush=True,
            )
        base = results.get(f"{case} b2lazy", {}).get("time_s")
        for contender in args.contenders.split(","):
            t = results.get(f"{case} {contender}", {}).get("time_s")
            if base and t and contender != "b2lazy":
                print(f"  {case}: {contender} / b2lazy time = {t / base:.2f}")
    with open("/proc/loadavg") as f:
        print("load after:", f.read().split()[:3])
    print(json.dumps(results))


if __name__ == "__main__":
    main()
