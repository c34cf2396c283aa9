#!/usr/bin/env python3
"""Linear-algebra benchmark: b2lazy vs NumPy (in memory), python-blosc2 and Dask.

    python bench/bench_linalg.py [--n 8192] [--out bench/RESULTS-linalg.json]

Issue: "Lazy linear algebra: matrix products pulled tile by tile through any nesting".
float64 operands compressed on disk (b2nd, zstd clevel 1 + shuffle; smooth values plus a
little noise): a, b of shape (n, n) and a3 of shape (n, 4, n), square chunks of 1024 x 1024
(a3: 256 x 4 x 1024, 8 MiB like the others), 32-row blocks. Four operations, results on disk
(NumPy: in memory):

  1. matmul(a, b)
  2. matmul(a, b) + b
  3. matmul(sum(a3, axis=1), b)
  4. matmul(a.T, a)

Each contender and operation runs once in a fresh subprocess (a run is tens of seconds),
which reports its wall time, its peak RSS growth (ru_maxrss minus RSS after opening the
operands; for NumPy, minus RSS after imports, so it includes the operands loaded into RAM)
and, for b2lazy, the work counters. Results are checked against NumPy on sampled rows.

Threads: 2 cores. NumPy and python-blosc2 call NumPy's bundled OpenBLAS with 2 threads;
Dask runs 2 worker threads with 1 BLAS thread each (no oversubscription); b2lazy runs 2
workers, each calling (Debian's) OpenBLAS single-threaded on its own tiles (NumPy's
OpenBLAS, loaded but unused in that process, is set to 1 thread).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_elementwise as be  # noqa: E402  (stdlib-only at import time)

MiB = be.MiB
NTHREADS = be.NTHREADS
DATA_VERSION = "v1"
CONTENDERS = ["numpy", "b2lazy", "blosc2", "dask"]
OPS = [
    ("matmul", "matmul(a, b)"),
    ("matmul_plus_b", "matmul(a, b) + b"),
    ("matmul_sum", "matmul(sum(a3, axis=1), b)"),
    ("matmul_at_a", "matmul(a.T, a)"),
]
LABEL = dict(OPS)
DEPTH3 = 4  # a3 is (n, DEPTH3, n)
TOL = 1e-10  # max |got - ref| / max |ref| on the sampled rows


# ----------------------------------------------------------------------------- data
def layout(name, n):
    if name == "a3":
        return (n, DEPTH3, n), (min(n, 256), DEPTH3, min(n, 1024)), (min(n, 8), DEPTH3, min(n, 1024))
    return (n, n), (min(n, 1024), min(n, 1024)), (min(n, 32), min(n, 1024))


def data_path(ddir, name, n):
    return os.path.join(ddir, f"linalg_{name}_{n}.b2nd")


def gen_one(ddir, name, n):
    import blosc2
    import numpy as np

    shape, chunks, blocks = layout(name, n)
    path = data_path(ddir, name, n)
    desc = f"{DATA_VERSION} {name} {shape} chunks={chunks} blocks={blocks} zstd1 shuffle"
    if os.path.exists(path):
        try:
            old = blosc2.open(path)
            if old.vlmeta["b2bench"] == desc:
                return False
        except Exception:  # noqa: BLE001
            pass
        be.rm(path)
    tmp = path + ".tmp.b2nd"
    be.rm(tmp)
    arr = blosc2.uninit(
        shape, dtype=np.float64, chunks=chunks, blocks=blocks, urlpath=tmp, mode="w", cparams=be.b2_cparams()
    )
    seed = {"a": 1, "b": 2, "a3": 3}[name]
    per_row = int(np.prod(shape[1:]))
    for i, r0 in enumerate(range(0, n, chunks[0])):
        r1 = min(n, r0 + chunks[0])
        x = np.arange(r0 * per_row, r1 * per_row, dtype=np.float64) / (n * per_row)
        v = np.sin(seed * 917.3 * x + seed) + 1e-3 * np.random.default_rng([seed, i]).standard_normal(x.size)
        arr[r0:r1] = v.reshape((r1 - r0,) + shape[1:])
    arr.vlmeta["b2bench"] = desc
    del arr
    os.replace(tmp, path)
    return True


def gen_main(ddir, n):
    be.set_threads()
    os.makedirs(ddir, exist_ok=True)
    for name in ("a", "b", "a3"):
        t0 = time.perf_counter()
        made = gen_one(ddir, name, n)
        print(
            f"  {'generated' if made else 're-used'} {os.path.basename(data_path(ddir, name, n))} "
            f"({time.perf_counter() - t0:.1f} s)",
            flush=True,
        )


# ----------------------------------------------------------------------------- one run
def load_numpy(path):
    import blosc2
    import numpy as np

    src = blosc2.open(path)
    out = np.empty(src.shape, dtype=src.dtype)
    for r0 in range(0, src.shape[0], src.chunks[0]):
        out[r0 : r0 + src.chunks[0]] = src[r0 : r0 + src.chunks[0]]
    return out


def sample_rows(n):
    return sorted({0, n // 3, (2 * n) // 3 + 1, n - 1})


def run_child(c, op, ddir, n, outdir):
    """Runs one contender on one operation; prints one JSON line."""
    import numpy as np
    import blosc2
    import dask
    import dask.array as da
    import b2lazy as bl

    be.set_threads()
    rss_import = be.rss_bytes()
    paths = {k: data_path(ddir, k, n) for k in ("a", "b", "a3")}
    out = os.path.join(outdir, f"linalg_{c}_{op}_{os.getpid()}.b2nd")
    be.rm(out)
    res = {"contender": c, "op": op, "n": n, "error": None, "stats": None}
    try:
        if c == "numpy":
            ops = {k: load_numpy(p) for k, p in paths.items() if k != "a3" or op == "matmul_sum"}
        elif c == "b2lazy":
            ops = {k: bl.open(p) for k, p in paths.items()}
        elif c == "blosc2":
            ops = {k: blosc2.open(p, dparams=be.b2_dparams()) for k, p in paths.items()}
        else:
            ops = {}
            for k, p in paths.items():
                arr = blosc2.open(p)
                ops[k] = be.dask_from_b2nd(arr)
        rss_open = be.rss_bytes()
        a, b, a3 = ops.get("a"), ops.get("b"), ops.get("a3")
        t0 = time.perf_counter()
        if c == "numpy":
            r = {
                "matmul": lambda: a @ b,
                "matmul_plus_b": lambda: a @ b + b,
                "matmul_sum": lambda: a3.sum(axis=1) @ b,
                "matmul_at_a": lambda: a.T @ a,
            }[op]()
        elif c == "b2lazy":
            e = {
                "matmul": lambda: bl.matmul(a, b),
                "matmul_plus_b": lambda: bl.matmul(a, b) + b,
                "matmul_sum": lambda: bl.matmul(bl.sum(a3, axis=1), b),
                "matmul_at_a": lambda: a.T @ a,
            }[op]()
            r = e.compute(urlpath=out, cparams=be.B2LAZY_CPARAMS, nthreads=NTHREADS)
            res["stats"] = r.stats
        elif c == "blosc2":
            kw = dict(urlpath=out, mode="w", cparams=be.b2_cparams())
            if op == "matmul":
                r = blosc2.matmul(a, b, **kw)
            elif op == "matmul_plus_b":
                r = (blosc2.matmul(a, b) + b).compute(**kw)
            elif op == "matmul_sum":
                r = blosc2.matmul(blosc2.sum(a3, axis=1), b, **kw)
            else:
                r = blosc2.matmul(blosc2.permute_dims(a), a, **kw)
        else:
            x = {
                "matmul": lambda: a @ b,
                "matmul_plus_b": lambda: a @ b + b,
                "matmul_sum": lambda: da.sum(a3, axis=1) @ b,
                "matmul_at_a": lambda: a.T @ a,
            }[op]()
            tgt = blosc2.empty(x.shape, dtype=x.dtype, urlpath=out, mode="w", cparams=be.b2_cparams())
            with dask.config.set(scheduler="threads", num_workers=NTHREADS):
                da.store(x, tgt, lock=True)
            r = tgt
        res["seconds"] = time.perf_counter() - t0
        res["maxrss"] = be.maxrss_bytes()
        res["rss_open"] = rss_open
        res["rss_import"] = rss_import
        res["growth"] = res["maxrss"] - (rss_import if c == "numpy" else rss_open)
        if c != "numpy":
            o = blosc2.open(out)
            res["out_chunks"], res["out_blocks"] = list(o.chunks), list(o.blocks)
            rows = np.stack([o[i] for i in sample_rows(n)])
        else:
            rows = r[sample_rows(n)]
        np.save(os.path.join(outdir, f"linalg_rows_{c}_{op}_{n}.npy"), rows)
    except Exception as e:  # noqa: BLE001
        res["error"] = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
    be.rm(out)
    print("RUNJSON:" + json.dumps(res), flush=True)


def spawn(c, op, ddir, n, outdir):
    env = dict(os.environ)
    # Dask: 2 workers x 1 BLAS thread. b2lazy: its own OpenBLAS, single-threaded per
    # worker; NumPy's (loaded, unused) gets 1 thread so its idle pool does not spin.
    blas = "1" if c in ("dask", "b2lazy") else str(NTHREADS)
    env.update(OPENBLAS_NUM_THREADS=blas, OMP_NUM_THREADS=blas, MKL_NUM_THREADS=blas)
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--child",
        c,
        "--op",
        op,
        "--n",
        str(n),
        "--data-dir",
        ddir,
        "--outdir",
        outdir,
    ]
    s0 = be.cpu_snapshot()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    s1 = be.cpu_snapshot()
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("RUNJSON:")]
    if p.returncode != 0 or not line:
        return {"contender": c, "op": op, "n": n, "error": f"exit {p.returncode}: {p.stderr[-2000:]}"}
    d = json.loads(line[0][len("RUNJSON:") :])
    d["contention"] = be.contention(s0, s1)
    return d


# ----------------------------------------------------------------------------- report
def check(outdir, n, rows):
    import numpy as np

    ref_path = os.path.join(outdir, f"linalg_rows_numpy_{{op}}_{n}.npy")
    for d in rows:
        if d.get("error") or d["contender"] == "numpy":
            continue
        ref = np.load(ref_path.format(op=d["op"]))
        got = np.load(os.path.join(outdir, f"linalg_rows_{d['contender']}_{d['op']}_{n}.npy"))
        d["max_rel_err"] = float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))


find = be.find


def report(R):
    n, rows = R["n"], R["rows"]
    flops = 2.0 * n**3
    result_bytes = n * n * 8
    L = [
        f"n = {n}, float64, 2 threads; one run per cell in a fresh process. Result size {result_bytes / MiB:.0f} MiB.",
        "",
        "| operation | contender | time s | GFLOPS | vs NumPy time | peak RSS growth MiB | out chunks | rel err |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for op, label in OPS:
        ref = find(rows, "numpy", op).get("seconds")
        for c in CONTENDERS:
            d = find(rows, c, op)
            if not d:
                continue
            if d.get("error"):
                L.append(f"| `{label}` | {c} | failed: {d['error'].splitlines()[0][:120]} | | | | | |")
                continue
            t = d.get("seconds")
            L.append(
                f"| `{label}` | {c} | {t:.2f} | {flops / t / 1e9:.1f} | "
                f"{'—' if not ref else f'{t / ref:.2f}x'} | {d['growth'] / MiB:.0f} | "
                f"{d.get('out_chunks', '—')} | {d.get('max_rel_err', 0):.1e} |"
            )
    L += [
        "",
        "b2lazy work counters per source (chunk reads: total / distinct chunks / most reads of one "
        "chunk; a read of part of a chunk counts as one; bytes decompressed as a multiple of the "
        "source's size):",
        "",
    ]
    for op, label in OPS:
        st = find(rows, "b2lazy", op).get("stats") or {}
        cd = st.get("chunks_decompressed", {})
        size = {"a": n * n * 8, "b": n * n * 8, "a3": n * DEPTH3 * n * 8}

        def times(k):
            b = st.get("bytes_decompressed", {}).get(k)
            name = os.path.basename(k).split("_")[1]
            return "—" if b is None else f"{b / size[name]:.1f}x"

        parts = [
            f"{os.path.basename(k)}: {v} / {st.get('distinct_chunks_decompressed', {}).get(k)} / "
            f"{st.get('max_decompressions_per_chunk', {}).get(k)}, {times(k)} its size"
            for k, v in cd.items()
            if k != "total"
        ]
        L.append(
            f"- `{label}`: {'; '.join(parts)}; cache hits {st.get('cache_hits')}, "
            f"misses {st.get('cache_misses')}, peak scratch {st.get('peak_scratch_bytes', 0) / MiB:.0f} MiB"
        )
    return "\n".join(L)


def targets(R):
    n, rows = R["n"], R["rows"]
    out = []
    np_mm = find(rows, "numpy", "matmul").get("seconds")
    bl_mm = find(rows, "b2lazy", "matmul").get("seconds")
    if np_mm and bl_mm:
        out.append(("matmul(a, b) reaches 80% of NumPy's GFLOPS", f"{np_mm / bl_mm:.0%}", np_mm / bl_mm >= 0.8))
    g = find(rows, "b2lazy", "matmul_plus_b").get("growth")
    if g is not None:
        lim = 0.15 * n * n * 8
        out.append(
            (
                "matmul(a, b) + b peak RSS growth < 15% of the result",
                f"{g / MiB:.0f} MiB vs {lim / MiB:.0f} MiB",
                g < lim,
            )
        )
    for op, label in OPS:
        me = find(rows, "b2lazy", op)
        for peer in ("blosc2", "dask"):
            p = find(rows, peer, op)
            if me.get("error") or not me:
                continue
            if p.get("error") or not p:
                out.append((f"`{label}` faster than {peer}, less memory", f"{peer} failed", True))
                continue
            ok = me["seconds"] < p["seconds"] and me["growth"] < p["growth"]
            out.append(
                (
                    f"`{label}` faster than {peer}, less memory",
                    f"{p['seconds'] / me['seconds']:.2f}x faster, "
                    f"{me['growth'] / MiB:.0f} vs {p['growth'] / MiB:.0f} MiB",
                    ok,
                )
            )
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--data-dir", default=os.path.join(HERE, "data"))
    ap.add_argument("--outdir", default=os.path.join(HERE, "data", "out"))
    ap.add_argument("--out", default=None, help="JSON results file")
    ap.add_argument("--only", nargs="*", default=None, help="contenders to run")
    ap.add_argument("--ops", nargs="*", default=None, help="operations to run")
    ap.add_argument("--child", default=None)
    ap.add_argument("--op", default=None)
    ap.add_argument("--gen", action="store_true")
    args = ap.parse_args()
    if args.child:
        return run_child(args.child, args.op, args.data_dir, args.n, args.outdir)
    if args.gen:
        return gen_main(args.data_dir, args.n)
    os.makedirs(args.outdir, exist_ok=True)
    print(f"data (n={args.n}) ...", flush=True)
    subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--gen", "--n", str(args.n), "--data-dir", args.data_dir],
        check=True,
    )
    R = {"environment": be.environment(), "n": args.n, "rows": []}
    contenders = args.only or CONTENDERS
    for op, label in OPS:
        if args.ops and op not in args.ops:
            continue
        for c in (["numpy"] if "numpy" not in contenders else []) + contenders:  # NumPy is the reference
            d = spawn(c, op, args.data_dir, args.n, args.outdir)
            R["rows"].append(d)
            msg = (
                d["error"].splitlines()[0][:200]
                if d.get("error")
                else f"{d['seconds']:.2f} s, growth {d['growth'] / MiB:.0f} MiB"
            )
            print(f"  {label:28s} {c:7s} {msg}", flush=True)
    check(args.outdir, args.n, R["rows"])
    R["targets"] = [list(t) for t in targets(R)]
    text = (
        report(R)
        + "\n\nTargets:\n\n"
        + "\n".join(f"- {'MET' if ok else 'MISSED'}: {name} ({val})" for name, val, ok in R["targets"])
    )
    print("\n" + text)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(R, f, indent=1)
        with open(os.path.splitext(args.out)[0] + ".md", "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
