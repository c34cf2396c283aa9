#!/usr/bin/env python3
"""b2lazy.linalg (LAPACK factorisations, TSQR) beside NumPy and Dask (da.linalg).

    python bench/bench_linalg_ext.py [--quick] [--ooc] [--out bench/RESULTS-linalg-ext.json]

In memory (float64, operands made in the child before the measurement starts):
  cholesky / solve (64 right-hand sides) / qr / svd / inv of a 2048 x 2048 matrix,
  qr of a batch of 16 matrices 8192 x 64. b2lazy evaluates with to_numpy(); Dask runs
  da.linalg on one chunk (its cholesky and solve need square chunks; the batch has no
  da.linalg equivalent) and computes with 2 threads.
Out of core (--ooc): qr (R, then Q written to disk) and svdvals of a 2**22 x 64 float64 b2nd
  array (2 GiB, zstd level 1 + shuffle, chunks of 65536 rows) under max_memory 256 MiB,
  beside Dask's tsqr (da.linalg.qr / svd on the same file read through python-blosc2).

Every contender and case runs in a fresh process: the median of the timed runs (3 after a
warm-up in memory, 1 out of core), and the peak RSS growth (VmHWM after clearing the
high-water mark once the operands are made or opened). 2 threads everywhere: NumPy's
OpenBLAS with 2, Dask 2 worker threads, b2lazy 2 workers (one matrix alone: LAPACK on both).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

NTHREADS = 2
MiB = 1 << 20
DDIR = os.environ.get("B2BENCH_DIR", "/tmp/b2bench-linalg")

CASES_MEM = ["cholesky", "solve", "qr", "svd", "inv", "qr_batch"]
CASES_OOC = ["qr_tall", "svdvals_tall"]
TALL = (1 << 22, 64)


def rss(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    return 0


def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    return rss("VmRSS:")


def operands(case, np):
    rng = np.random.default_rng(0)
    if case == "qr_batch":
        return (rng.standard_normal((16, 8192, 64)),)
    a = rng.standard_normal((2048, 2048))
    if case in ("cholesky", "solve"):
        a = a @ a.T + 2048 * np.eye(2048)
    if case == "solve":
        return a, rng.standard_normal((2048, 64))
    return (a,)


def run_mem(contender, case):
    import numpy as np

    ops = operands(case, np)
    if contender == "numpy":
        f = {
            "cholesky": lambda a: np.linalg.cholesky(a),
            "solve": lambda a, b: np.linalg.solve(a, b),
            "qr": lambda a: np.linalg.qr(a),
            "svd": lambda a: np.linalg.svd(a, full_matrices=False),
            "inv": lambda a: np.linalg.inv(a),
            "qr_batch": lambda a: np.linalg.qr(a),
        }[case]
        run = lambda: f(*ops)  # noqa: E731
    elif contender == "b2lazy":
        import b2lazy as bl

        la = bl.linalg
        xs = [bl.asarray(o) for o in ops]

        def run():
            if case == "cholesky":
                return la.cholesky(xs[0]).to_numpy(nthreads=NTHREADS)
            if case == "solve":
                return la.solve(*xs).to_numpy(nthreads=NTHREADS)
            if case in ("qr", "qr_batch"):
                q, r = la.qr(xs[0])
                return (
                    bl.compute_many([q, r])
                    if hasattr(bl, "compute_many")
                    else (q.to_numpy(nthreads=NTHREADS), r.to_numpy(nthreads=NTHREADS))
                )
            if case == "svd":
                u, s, vh = la.svd(xs[0], full_matrices=False)
                return u.to_numpy(nthreads=NTHREADS), s.to_numpy(nthreads=NTHREADS), vh.to_numpy(nthreads=NTHREADS)
            return la.inv(xs[0]).to_numpy(nthreads=NTHREADS)
    else:
        import dask
        import dask.array as da

        dask.config.set(scheduler="threads", num_workers=NTHREADS)
        if case == "qr_batch":
            return None
        xs = [da.from_array(o, chunks=o.shape) for o in ops]
        f = {
            "cholesky": lambda a: da.linalg.cholesky(a, lower=True),
            "solve": lambda a, b: da.linalg.solve(a, b),
            "qr": lambda a: da.linalg.qr(a),
            "svd": lambda a: da.linalg.svd(a),
            "inv": lambda a: da.linalg.inv(a),
        }[case]
        run = lambda: dask.compute(f(*xs))  # noqa: E731
    base = reset_peak()
    run()  # warm-up
    times = []
    for _ in range(3):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return {"seconds": statistics.median(times), "peak_mib": (rss("VmHWM:") - base) / MiB}


def tall_path():
    return os.path.join(DDIR, "tall_%dx%d.b2nd" % TALL)


def gen_tall():
    import blosc2
    import numpy as np

    os.makedirs(DDIR, exist_ok=True)
    path = tall_path()
    if os.path.exists(path):
        return
    m, n = TALL
    arr = blosc2.empty(
        TALL,
        dtype=np.float64,
        chunks=(65536, n),
        blocks=(8192, n),
        urlpath=path + ".tmp",
        mode="w",
        cparams={"codec": blosc2.Codec.ZSTD, "clevel": 1},
    )
    rng = np.random.default_rng(1)
    t = np.linspace(0, 1, n)
    for i in range(0, m, 65536):
        rows = np.arange(i, i + 65536)[:, None] / m
        arr[i : i + 65536] = np.sin(7 * rows + 3 * t) + np.cos(40 * rows * t) + 0.01 * rng.standard_normal((65536, n))
    del arr
    os.replace(path + ".tmp", path)


def run_ooc(contender, case):
    budget = 256 * MiB
    if contender == "b2lazy":
        import b2lazy as bl

        x = bl.open(tall_path())
        base = reset_peak()
        t = time.perf_counter()
        if case == "qr_tall":
            q, r = bl.linalg.qr(x)
            r.to_numpy(nthreads=NTHREADS, max_memory=budget)
            out = os.path.join(DDIR, "q.b2nd")
            q.compute(urlpath=out, nthreads=NTHREADS, max_memory=budget)
        else:
            bl.linalg.svdvals(x).to_numpy(nthreads=NTHREADS, max_memory=budget)
        return {"seconds": time.perf_counter() - t, "peak_mib": (rss("VmHWM:") - base) / MiB}
    if contender == "dask":
        import blosc2
        import dask
        import dask.array as da

        dask.config.set(scheduler="threads", num_workers=NTHREADS)
        src = blosc2.open(tall_path())
        x = da.from_array(src, chunks=(65536, TALL[1]), asarray=True)
        base = reset_peak()
        t = time.perf_counter()
        if case == "qr_tall":
            q, r = da.linalg.qr(x)
            qn, rn = dask.compute(q, r)  # (Dask holds the panels' Qs: no out-of-core store of Q here)
            del qn
        else:
            da.linalg.svd(x)[1].compute()
        return {"seconds": time.perf_counter() - t, "peak_mib": (rss("VmHWM:") - base) / MiB}
    return None


def child(contender, case):
    os.environ.setdefault("OMP_NUM_THREADS", str(NTHREADS))
    res = run_ooc(contender, case) if case in CASES_OOC else run_mem(contender, case)
    print("RESULT " + json.dumps(res))


def spawn(contender, case):
    env = dict(os.environ)
    if contender == "dask":
        env["OPENBLAS_NUM_THREADS"] = "1"  # (Dask's threads are the parallelism)
    else:
        env["OPENBLAS_NUM_THREADS"] = str(NTHREADS)
    p = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", contender, case], capture_output=True, text=True, env=env
    )
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"error": (p.stderr or p.stdout).strip().splitlines()[-1:] or ["?"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", nargs=2)
    ap.add_argument("--ooc", action="store_true", help="the out-of-core rows too (2 GiB of data)")
    ap.add_argument(
        "--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS-linalg-ext.json")
    )
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    cases = list(CASES_MEM)
    if args.ooc:
        subprocess.run(
            [
                sys.executable,
                "-c",
                f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
                "import bench_linalg_ext as b; b.gen_tall()",
            ],
            check=True,
        )
        cases += CASES_OOC
    results = {}
    print(f"{'case':14} {'contender':8} {'seconds':>9} {'peak MiB':>9} {'NumPy/b2lazy':>13} {'Dask/b2lazy':>12}")
    for case in cases:
        row = {}
        for c in ["b2lazy", "dask"] if case in CASES_OOC else ["numpy", "b2lazy", "dask"]:
            row[c] = spawn(c, case)
        results[case] = row
        b = row.get("b2lazy") or {}
        for c, r in row.items():
            if r is None or "error" in r:
                print(f"{case:14} {c:8} {'n/a':>9} {str(r.get('error') if r else ''):>9}")
                continue

            def ratio(peer, row=row, b=b):
                ok = row.get(peer) and "seconds" in row[peer] and "seconds" in b
                return f"{row[peer]['seconds'] / b['seconds']:.2f}x" if ok else ""

            ours = c == "b2lazy"
            print(
                f"{case:14} {c:8} {r['seconds']:9.3f} {r['peak_mib']:9.0f} {ratio('numpy') if ours else '':>13} "
                f"{ratio('dask') if ours else '':>12}",
                flush=True,
            )
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
