"""The main job: generate operands on disk, evaluate expressions (elementwise, then
reductions and scans, then matrix products) chunk by chunk, and
report time, peak memory and a check against NumPy on a sample.

    python examples/demo.py [--gib 1.0] [--n 4096] [--dir /tmp/b2lazy-demo] [--threads N]
"""

import argparse
import os
import resource
import shutil
import time

import numpy as np

import b2lazy as bl


def rss_peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_now_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def reset_peak_rss_mib():
    """Reset this process's peak-RSS mark (Linux VmHWM); return the RSS now. Free heap
    memory goes back to the system first, so the growth counts what is newly used."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return rss_now_mib()


def peak_rss_since_reset_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return rss_now_mib()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gib", type=float, default=1.0, help="size of each float64 operand on disk")
    p.add_argument("--dir", default="/tmp/b2lazy-demo")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--n", type=int, default=4096, help="side of the square matrices")
    args = p.parse_args()

    os.makedirs(args.dir, exist_ok=True)
    n = int(args.gib * 2**30 / 8)
    cols = 4096
    rows = max(1, n // cols)
    shape, chunks, blocks = (rows, cols), (256, cols), (16, cols)
    print(
        f"operands: 3 x float64 {shape} ({rows * cols * 8 / 2**30:.2f} GiB each), "
        f"chunks {chunks}, blocks {blocks}, zstd clevel 1 + shuffle"
    )

    # Operands: smooth functions plus a little pseudo-noise, generated lazily and
    # written chunk by chunk (never a full uncompressed array in memory).
    paths = {}
    t0 = time.perf_counter()
    x = bl.linspace(0, 1, rows * cols, shape=shape, chunks=chunks)
    for name, expr in [
        ("a", bl.sin(1234.5 * x) + x + 1e-3 * bl.sin(98765.4321 * x * x)),
        ("b", bl.cos(777.7 * x) - x + 1e-3 * bl.cos(45678.9 * x * x)),
        ("c", x * x - 0.5 + 1e-3 * bl.sin(31415.9 * x * x)),
    ]:
        paths[name] = os.path.join(args.dir, f"{name}.b2nd")
        expr.compute(urlpath=paths[name], chunks=chunks, blocks=blocks, nthreads=args.threads)
    print(f"generated in {time.perf_counter() - t0:.1f} s\n")

    a, b, c = (bl.open(paths[k]) for k in "abc")
    exprs = {
        "a + b": lambda a, b, c, m: a + b,
        "sin(a)**2 + cos(b)**2": lambda a, b, c, m: m.sin(a) ** 2 + m.cos(b) ** 2,
        "exp(-a*a/2)*b + sqrt(abs(c))": lambda a, b, c, m: m.exp(-a * a / 2) * b + m.sqrt(m.abs(c)),
        "where(a > b, a - b, 0.5*c)": lambda a, b, c, m: m.where(a > b, a - b, 0.5 * c),
        "(a + b)[10:20, ::3]": lambda a, b, c, m: (a + b)[10:20, ::3],
    }
    print(
        f"{'expression':30s} {'time s':>7s} {'GB/s':>6s} {'peak RSS growth MiB':>20s} "
        f"{'NumPy needs MiB':>16s} {'max abs err':>12s}"
    )
    rng = np.random.default_rng(0)
    sample = [int(i) for i in np.sort(rng.choice(rows, size=min(rows, 8), replace=False))]
    out_path = os.path.join(args.dir, "out.b2nd")
    # References for the reductions below, from python-blosc2 (an independent engine),
    # computed now so their memory is not counted against b2lazy.
    import blosc2

    A = blosc2.open(paths["a"])
    total = float(blosc2.sum(A))
    colmean = np.asarray(blosc2.mean(A, axis=0))
    tail = A[rows - 1, cols - 10 :]
    base = rss_peak_mib()  # after opening the operands
    for label, make in exprs.items():
        used = [k for k in "abc" if k in label.split("[")[0]]
        t0 = time.perf_counter()
        r = make(a, b, c, bl).compute(urlpath=out_path, nthreads=args.threads)
        dt = time.perf_counter() - t0
        growth = max(0.0, rss_peak_mib() - base)
        in_bytes = len(used) * a.size * 8
        # Bytes the evaluation had to touch: for a slice, only what it covers.
        moved = (len(used) + 1) * r.size * r.dtype.itemsize if r.shape != a.shape else in_bytes + r.size * 8
        # NumPy holds the operands, the result and at least one full-size temporary.
        numpy_mib = (in_bytes + 2 * a.size * 8) / 2**20
        # Check against NumPy on a sample of rows (read lazily: only their chunks).
        if r.shape == a.shape:
            ops = [np.stack([v[i].to_numpy() for i in sample]) for v in (a, b, c)]
            want, got = make(*ops, np), np.stack([r[i].to_numpy() for i in sample])
        else:
            ops = [v[:20].to_numpy() for v in (a, b, c)]
            want, got = make(*ops, np), r.to_numpy()
        err = float(np.max(np.abs(got - want))) if got.size else 0.0
        print(f"{label:30s} {dt:7.2f} {moved / dt / 1e9:6.2f} {growth:20.0f} {numpy_mib:16.0f} {err:12.2e}")
        if err > 1e-12:
            raise SystemExit(f"mismatch against NumPy for {label}: {err}")
    print("\nall results match NumPy on the sampled rows")

    # Reductions and scans stay lazy too: a reduction many output chunks need is computed
    # once, a region of a reduction or scan costs only what it needs. Checked against
    # python-blosc2 (an independent engine) and NumPy on sampled rows.
    cases = {
        "sum(a) + a": (lambda: bl.sum(a) + a, lambda r: np.stack([r[i].to_numpy() - (A[i] + total) for i in sample])),
        "a - mean(a, axis=0)": (
            lambda: a - bl.mean(a, axis=0),
            lambda r: np.stack([r[i].to_numpy() - (A[i] - colmean) for i in sample]),
        ),
        "cumsum(a)[-10:]": (
            lambda: bl.cumsum(a)[-10:],
            lambda r: r.to_numpy() - (total - np.concatenate([np.cumsum(tail[::-1])[::-1][1:], [0]])),
        ),
        "sum(a, axis=1)[100:200]": (
            lambda: bl.sum(a, axis=1)[100:200],
            lambda r: r.to_numpy() - A[100:200].sum(axis=1),
        ),
    }
    nchunks = -(-rows // chunks[0])
    print(
        f"\n{'reduction / scan':30s} {'time s':>7s} {'chunks read / chunks of a':>26s} {'cache hits':>11s} "
        f"{'peak RSS growth MiB':>20s} {'max rel err':>12s}"
    )
    for label, (make, diff) in cases.items():
        t0 = time.perf_counter()
        r = make().compute(urlpath=out_path, nthreads=args.threads)
        dt = time.perf_counter() - t0
        growth = max(0.0, rss_peak_mib() - base)
        st = r.stats
        err = float(np.max(np.abs(diff(r)))) / max(abs(total), 1.0)
        print(
            f"{label:30s} {dt:7.2f} {st['chunks_decompressed'].get(paths['a'], 0):>14d} / {nchunks:<9d} "
            f"{st['cache_hits']:11d} {growth:20.0f} {err:12.2e}"
        )
        if err > 1e-9:
            raise SystemExit(f"mismatch for {label}: {err}")
    print("\nreductions and scans match python-blosc2 / NumPy")
    matrix_products(args)
    shutil.rmtree(args.dir, ignore_errors=True)


def matrix_products(args):
    """Matrix products pulled tile by tile: the product is never held whole, and a lazy
    operand (here a reduction) is computed only for the rows each band of tiles needs."""
    n = args.n
    mchunks, mblocks = (min(n, 1024), min(n, 1024)), (min(n, 32), min(n, 1024))
    x = bl.linspace(0, 1, n * n, shape=(n, n), chunks=mchunks)
    x3 = bl.linspace(0, 1, n * 4 * n, shape=(n, 4, n), chunks=(min(n, 256), 4, min(n, 1024)))
    paths = {}
    for name, expr, ch, bk in [
        ("ma", bl.sin(917.3 * x) + 1e-3 * bl.cos(31415.9 * x * x), mchunks, mblocks),
        ("mb", bl.cos(123.4 * x) - x, mchunks, mblocks),
        ("ma3", bl.sin(77.7 * x3) + x3, (min(n, 256), 4, min(n, 1024)), (8, 4, min(n, 1024))),
    ]:
        paths[name] = os.path.join(args.dir, f"{name}.b2nd")
        expr.compute(urlpath=paths[name], chunks=ch, blocks=bk, nthreads=args.threads)
    a, b, a3 = (bl.open(paths[k]) for k in ("ma", "mb", "ma3"))
    rng = np.random.default_rng(1)
    rows = [int(i) for i in np.sort(rng.choice(n, size=4, replace=False))]
    # NumPy references for one sampled row, computed before measuring.
    r0 = rows[0]
    B, A = b.to_numpy(), a.to_numpy()
    cases = {
        "matmul(a, b) + b": (lambda: bl.matmul(a, b) + b, A[r0 : r0 + 1] @ B + B[r0 : r0 + 1]),
        "matmul(sum(a3, axis=1), b)": (
            lambda: bl.matmul(bl.sum(a3, axis=1), b),
            a3[r0 : r0 + 1].to_numpy().sum(axis=1) @ B,
        ),
        "a.T @ a": (lambda: a.T @ a, A[:, r0 : r0 + 1].T @ A),
    }
    del A, B
    out_path = os.path.join(args.dir, "mout.b2nd")
    print(f"\nmatrices: float64 ({n}, {n}) and a3 ({n}, 4, {n}) on disk, chunks {mchunks}")
    print(
        f"{'matrix product':30s} {'time s':>7s} {'GFLOPS':>7s} {'peak RSS growth MiB':>20s} "
        f"{'result MiB':>11s} {'GiB decompressed':>17s} {'max rel err':>12s}"
    )
    for label, (make, want) in cases.items():
        start = reset_peak_rss_mib()
        t0 = time.perf_counter()
        r = make().compute(urlpath=out_path, nthreads=args.threads)
        dt = time.perf_counter() - t0
        growth = max(0.0, peak_rss_since_reset_mib() - start)
        got = r[r0 : r0 + 1].to_numpy()
        err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
        read = sum(r.stats["bytes_decompressed"].values()) / 2**30
        print(
            f"{label:30s} {dt:7.2f} {2 * n**3 / dt / 1e9:7.1f} {growth:20.0f} {n * n * 8 / 2**20:11.0f} "
            f"{read:17.1f} {err:12.2e}"
        )
        if err > 1e-10:
            raise SystemExit(f"mismatch against NumPy for {label}: {err}")
    print("\nmatrix products match NumPy on the sampled rows")


if __name__ == "__main__":
    main()
