#!/usr/bin/env python3
"""b2lazy.linalg (LAPACK factorisations, TSQR) beside NumPy and Dask (da.linalg).

    python bench/bench_linalg_ext.py [--quick] [--ooc] [--out bench/RESULTS-linalg-ext.json]

In memory (float64, operands made in the child before the measurement starts):
  cholesky / solve (64 right-hand sides) / qr / svd / inv of a 2048 x 2048 matrix,
  qr of a batch of 16 matrices 8192 x 64. b2lazy evaluates with to_numpy() (qr's and svd's
  outputs together, b2lazy.compute, then to NumPy); Dask runs da.linalg on one chunk (its
  cholesky and solve need square chunks; the batch has no da.linalg equivalent) and computes
  with 2 threads (dask.compute of all the outputs).
Out of core (--ooc): qr (R, then Q written to disk) and svdvals of a 2**22 x 64 float64 b2nd
  array (2 GiB, zstd level 1 + shuffle, chunks of 65536 rows) under max_memory 256 MiB,
  beside Dask's tsqr (da.linalg.qr / svd on the same file read through python-blosc2);
  svd_compressed (k=10, one power iteration) of the same array, U written to a b2nd file and
  S, Vh in memory (b2lazy.compute of the three), beside da.linalg.svd_compressed (U stored with da.store, one compute).
  cholesky of a 16384 x 16384 float64 SPD b2nd array (2 GiB, chunks 1024 x 1024) under
  max_memory 256 MiB, its factor written to a b2nd file (b2lazy: tiles spilled to
  temporary b2nd files), beside Dask's da.linalg.cholesky (square chunks of 2048, the
  factor stored into a b2nd array through da.store) and NumPy in memory (the whole matrix
  read first; its peak includes it). ``--only cholesky_square`` runs that row alone.

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
CASES_OOC = ["qr_tall", "svdvals_tall", "svd_compressed_tall", "cholesky_square"]
TALL = (1 << 22, 64)
SQUARE = 16384
SQ_CHUNK = 1024


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
                # together: one factorisation for Q and R (results as NumPy, like NumPy's)
                return [a.to_numpy() for a in bl.compute(*la.qr(xs[0]), nthreads=NTHREADS)]
            if case == "svd":
                return [a.to_numpy() for a in bl.compute(*la.svd(xs[0], full_matrices=False), nthreads=NTHREADS)]
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


def square_path():
    return os.path.join(DDIR, "spd_%d.b2nd" % SQUARE)


def gen_square():
    """A symmetric matrix with values in (-1, 1) off the diagonal and n on it: strictly
    diagonally dominant, so positive definite. Written by row bands, each block (i, j) of
    the upper triangle from its own seed (the lower one its transpose)."""
    import blosc2
    import numpy as np

    os.makedirs(DDIR, exist_ok=True)
    path = square_path()
    if os.path.exists(path):
        return
    n, c = SQUARE, SQ_CHUNK
    arr = blosc2.empty(
        (n, n),
        dtype=np.float64,
        chunks=(c, c),
        blocks=(128, c),
        urlpath=path + ".tmp",
        mode="w",
        cparams={"codec": blosc2.Codec.ZSTD, "clevel": 1},
    )

    def block(i, j):  # i <= j
        r = np.random.default_rng([i, j]).uniform(-1, 1, (c, c))
        return (r + r.T) / 2 + n * np.eye(c) if i == j else r

    for i in range(n // c):
        band = np.empty((c, n))
        for j in range(n // c):
            band[:, j * c : (j + 1) * c] = block(i, j) if i <= j else block(j, i).T
        arr[i * c : (i + 1) * c] = band
    del arr
    os.replace(path + ".tmp", path)


def run_square(contender):
    budget = 256 * MiB
    out = os.path.join(DDIR, "chol_%s.b2nd" % contender)
    if os.path.exists(out):
        os.remove(out)
    if contender == "b2lazy":
        import b2lazy as bl

        x = bl.open(square_path())
        base = reset_peak()
        t = time.perf_counter()
        runs = bl._core.linalg_tiled_factorisations()
        r = bl.linalg.cholesky(x).compute(urlpath=out, nthreads=NTHREADS, max_memory=budget)
        assert bl._core.linalg_tiled_factorisations() == runs + 1
        res = {"seconds": time.perf_counter() - t, "peak_mib": (rss("VmHWM:") - base) / MiB}
        res["peak_scratch_mib"] = r.stats["peak_scratch_bytes"] / MiB
    elif contender == "dask":
        import blosc2
        import dask
        import dask.array as da
        import numpy as np

        dask.config.set(scheduler="threads", num_workers=NTHREADS)
        src = blosc2.open(square_path())
        x = da.from_array(src, chunks=(2 * SQ_CHUNK, 2 * SQ_CHUNK), asarray=True)
        base = reset_peak()
        t = time.perf_counter()
        target = blosc2.empty((SQUARE, SQUARE), dtype=np.float64, chunks=(2 * SQ_CHUNK,) * 2, urlpath=out, mode="w")
        da.store(da.linalg.cholesky(x, lower=True), target, lock=True)
        res = {"seconds": time.perf_counter() - t, "peak_mib": (rss("VmHWM:") - base) / MiB}
    else:
        import blosc2
        import numpy as np

        base = reset_peak()
        t = time.perf_counter()
        a = blosc2.open(square_path())[:]
        low = np.linalg.cholesky(a)
        del a
        blosc2.asarray(low, urlpath=out, mode="w", chunks=(SQ_CHUNK, SQ_CHUNK))
        res = {"seconds": time.perf_counter() - t, "peak_mib": (rss("VmHWM:") - base) / MiB}
    check_square(out)
    os.remove(out)
    return res


def check_square(path):
    """A few rows of L L^T against the matrix (the factor checked, not only timed)."""
    import blosc2
    import numpy as np

    lf, af = blosc2.open(path), blosc2.open(square_path())
    for i in (0, SQUARE // 2 + 7, SQUARE - 1):
        li = lf[i, :]
        got = np.empty(SQUARE)
        for j0 in range(0, SQUARE, 2048):
            got[j0 : j0 + 2048] = lf[j0 : j0 + 2048, :] @ li
        err = float(np.max(np.abs(got - af[i, :])))
        assert err < 1e-6 * SQUARE, f"row {i} of L L^T: error {err}"


def run_ooc(contender, case):
    budget = 256 * MiB
    if case == "cholesky_square":
        return run_square(contender)
    if contender == "b2lazy":
        import b2lazy as bl

        x = bl.open(tall_path())
        base = reset_peak()
        t = time.perf_counter()
        if case == "qr_tall":
            q, r = bl.linalg.qr(x)  # together: r reads the R tree q's evaluation made
            out = os.path.join(DDIR, "q.b2nd")
            bl.compute(q, r, urlpath=[out, None], nthreads=NTHREADS, max_memory=budget)
        elif case == "svd_compressed_tall":
            u, s, vh = bl.linalg.svd_compressed(x, 10, n_power_iter=1, seed=0)
            # together: S and Vh read what U's evaluation computed (B = Q^H A and its SVD)
            out = os.path.join(DDIR, "u.b2nd")
            bl.compute(u, s, vh, urlpath=[out, None, None], nthreads=NTHREADS, max_memory=budget)
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
        elif case == "svd_compressed_tall":
            u, s, v = da.linalg.svd_compressed(x, 10, n_power_iter=1, seed=0)
            target = blosc2.empty(u.shape, dtype=u.dtype, urlpath=os.path.join(DDIR, "u-dask.b2nd"), mode="w")
            dask.compute(da.store(u, target, compute=False, lock=True), s, v)
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
    ap.add_argument("--only", choices=CASES_MEM + CASES_OOC, help="this case alone")
    ap.add_argument(
        "--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS-linalg-ext.json")
    )
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    cases = list(CASES_MEM)
    if args.only:
        cases = [args.only]
    elif args.ooc:
        cases += CASES_OOC
    for gen, case in (("gen_tall", "qr_tall"), ("gen_square", "cholesky_square")):
        if case in cases or (gen == "gen_tall" and {"svdvals_tall", "svd_compressed_tall"} & set(cases)):
            subprocess.run(
                [
                    sys.executable,
                    "-c",
                    f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
                    f"import bench_linalg_ext as b; b.{gen}()",
                ],
                check=True,
            )
    results = {}
    print(f"{'case':14} {'contender':8} {'seconds':>9} {'peak MiB':>9} {'NumPy/b2lazy':>13} {'Dask/b2lazy':>12}")
    for case in cases:
        row = {}
        peers = ["numpy", "b2lazy", "dask"] if case in CASES_MEM or case == "cholesky_square" else ["b2lazy", "dask"]
        for c in peers:
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
