#!/usr/bin/env python3
"""Plans and layouts: b2lazy vs NumPy (in memory), python-blosc2 and Dask on the storage
layouts users have (issue #12, "How it is checked").

    python bench/bench_layouts.py [--n 4096 8192] [--layouts default rows cols tiles]
                                  [--workloads matmul ...] [--contenders numpy b2lazy ...]
                                  [--reps 1] [--md bench/RESULTS-layouts.md] [--out x.json]

float64 operands compressed on disk (b2nd, zstd clevel 1 + shuffle; smooth values plus a
little deterministic noise, the same values in every layout): a, b of shape (n, n) and a3
of shape (n, 4, n), each written in four layouts (chunk shapes; blocks as python-blosc2
picks them for those chunks):

  default  python-blosc2's default chunks, what blosc2.asarray / blosc2.empty pick
           (4096²: (256, 4096); a3: (64, 4, 4096))
  rows     row strips (64, n)          (a3: (16, 4, n), the same bytes per chunk)
  cols     column strips (n, 64)       (a3: (n, 4, 16))
  tiles    square tiles (1024, 1024)   (a3: (256, 4, 1024))

Workloads (full-size results go to a b2nd file on disk, zstd 1 + shuffle; the two sums
return a NumPy array; NumPy: everything in memory):

  matmul(a, b), matmul(a, b) + b, matmul(sum(a3, axis=1), b), a.T @ a,
  sum(a, axis=0), sum(a, axis=1), a - mean(a, axis=0), cumsum(a) (flattened),
  sin(a)**2 + cos(b)**2

Contenders, each workload x layout in a FRESH subprocess (operands opened -- NumPy: loaded
into RAM -- then `5` written to /proc/self/clear_refs, VmRSS read, the workload run
--reps times, VmHWM read: "growth" is VmHWM minus that VmRSS):

  numpy       NumPy in memory (2 BLAS threads)
  blosc2      python-blosc2: blosc2.matmul, lazy expressions (.compute), blosc2.sum;
              cumsum: blosc2.cumulative_sum(a, axis=0) (it refuses a flattened N-d scan;
              marked † and not checked)
  dask        dask.array.from_array over blosc2.open(path) read from the file (a view without
              .copy(): from_array copies array-likes that have one, see be.FileView),
              chunks=<storage chunks>, threaded scheduler, 2 workers x 1 BLAS thread,
              da.store into a b2nd file
  b2lazy      b2lazy at its default budget (max_memory 1 GiB), 2 workers x 1 BLAS thread
  b2lazy_64   the same with max_memory = 64 MiB   (target: growth <= 64 + 32 MiB)
  b2lazy_256  the same with max_memory = 256 MiB  (target: growth <= 256 + 32 MiB)
  codec       the codec limit: C-Blosc2 decompression of every chunk of each operand once
              (schunk.decompress_chunk) plus, for full-size results, compression of the
              result (computed by NumPy, untimed) into a b2nd file with the operand's chunks
              (blosc2.asarray); for products the limit is BLAS, not the codec (shown anyway)

Reported: time, ratio to NumPy and to the codec limit, products as GFLOPS (2n³/t; for
`a.T @ a` NumPy itself uses syrk, n³ real flops) and as a fraction of NumPy's, peak RSS
growth, and per source b2lazy's bytes_decompressed / the source's size. Results are checked
against NumPy on sampled rows (max |err| / max |ref| <= 1e-8).

Run time on this 2-core machine: the quick run (--n 4096, all layouts and workloads,
--reps 1) takes about 25-40 minutes, dominated by the products of python-blosc2 and Dask
on column strips; n = 8192 takes roughly 8x longer for the products (several hours) and
needs ~12 GiB of RAM for NumPy's `a3`. Data are generated once (separate process) under
--data-dir and re-used.
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
DEPTH3 = 4
TOL = 1e-8
LAYOUTS = ["default", "rows", "cols", "tiles"]
CONTENDERS = ["numpy", "codec", "blosc2", "dask", "b2lazy", "b2lazy_64", "b2lazy_256"]
BUDGETS = {"b2lazy": None, "b2lazy_64": 64 * MiB, "b2lazy_256": 256 * MiB}
# key, label, operands, kind (product / full / flat / small)
WORKLOADS = [
    ("matmul", "matmul(a, b)", "ab", "product"),
    ("matmul_plus_b", "matmul(a, b) + b", "ab", "product"),
    ("matmul_sum", "matmul(sum(a3, axis=1), b)", ("a3", "b"), "product"),
    ("at_a", "a.T @ a", "a", "product"),
    ("sum0", "sum(a, axis=0)", "a", "small"),
    ("sum1", "sum(a, axis=1)", "a", "small"),
    ("minus_mean", "a - mean(a, axis=0)", "a", "full"),
    ("cumsum", "cumsum(a)", "a", "flat"),
    ("sincos", "sin(a)**2 + cos(b)**2", "ab", "full"),
]
WL = {k: (label, tuple(ops), kind) for k, label, ops, kind in WORKLOADS}


# ----------------------------------------------------------------------------- data
def chunks_for(layout, name, n):
    """Storage chunks of operand `name` in `layout` (None: python-blosc2's default)."""
    if layout == "default":
        return None
    if name == "a3":
        return {"rows": (16, DEPTH3, n), "cols": (n, DEPTH3, 16), "tiles": (min(n, 256), DEPTH3, min(n, 1024))}[layout]
    return {"rows": (64, n), "cols": (n, 64), "tiles": (min(n, 1024), min(n, 1024))}[layout]


def shape_of(name, n):
    return (n, DEPTH3, n) if name == "a3" else (n, n)


def data_path(ddir, name, n, layout):
    return os.path.join(ddir, f"layouts_{name}_{n}_{layout}.b2nd")


def values(name, n):
    """The operand's values: smooth functions of the flat index plus deterministic noise
    (a hash of the index, so every layout holds exactly the same numbers)."""
    import numpy as np

    seed = {"a": 1, "b": 2, "a3": 3}[name]
    shape = shape_of(name, n)
    i = np.arange(int(np.prod(shape)), dtype=np.float64)
    x = i / i.size
    noise = np.sin(i * 12.9898 + seed * 78.233) * 43758.5453
    noise -= np.floor(noise)
    v = np.sin(seed * 917.3 * x + seed) + x + 1e-3 * (noise - 0.5)
    return v.reshape(shape)


def gen_main(ddir, n, layouts, names):
    import blosc2

    be.set_threads()
    os.makedirs(ddir, exist_ok=True)
    for name in names:
        v = None
        for lay in layouts:
            path = data_path(ddir, name, n, lay)
            chunks = chunks_for(lay, name, n)
            desc = f"{DATA_VERSION} {name} {shape_of(name, n)} chunks={chunks} zstd1 shuffle"
            if os.path.exists(path):
                try:
                    old = blosc2.open(path)
                    if old.vlmeta["b2bench"] == desc:
                        continue
                except Exception:  # noqa: BLE001
                    pass
                be.rm(path)
            t0 = time.perf_counter()
            if v is None:
                v = values(name, n)
            tmp = path + ".tmp.b2nd"
            be.rm(tmp)
            arr = blosc2.asarray(v, chunks=chunks, urlpath=tmp, mode="w", cparams=be.b2_cparams())
            arr.vlmeta["b2bench"] = desc
            info = (arr.chunks, arr.blocks, arr.schunk.cratio)
            del arr
            os.replace(tmp, path)
            print(
                f"  generated {os.path.basename(path)} chunks {info[0]} blocks {info[1]} "
                f"cratio {info[2]:.2f} ({time.perf_counter() - t0:.1f} s)",
                flush=True,
            )


# ----------------------------------------------------------------------------- one run
def load_numpy(path):
    import blosc2
    import numpy as np

    src = blosc2.open(path, dparams=be.b2_dparams())
    out = np.empty(src.shape, dtype=src.dtype)
    step = max(1, (64 * MiB) // (out[0].nbytes or 1))
    for r0 in range(0, src.shape[0], step):
        out[r0 : r0 + step] = src[r0 : r0 + step]
    return out


def sample(res, kind, n):
    """A few rows of a result (NumPy, blosc2 or b2lazy array) as one NumPy array."""
    import numpy as np

    if kind == "small":
        return np.asarray(res)
    rows = sorted({0, n // 3, (2 * n) // 3 + 1, n - 1})
    if kind == "flat":
        return np.concatenate([np.asarray(res[r * n : (r + 1) * n]) for r in rows])
    return np.stack([np.asarray(res[r]) for r in rows])


def hwm_reset():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    with open("/proc/self/status") as f:
        for ln in f:
            if ln.startswith("VmRSS:"):
                return int(ln.split()[1]) * 1024
    return None


def run_child(args):
    import numpy as np
    import blosc2
    import dask
    import dask.array as da
    import b2lazy as bl

    be.set_threads()
    c, wl, lay, n = args.child, args.workload, args.layout, args.n
    label, names, kind = WL[wl]
    paths = {k: data_path(args.data_dir, k, n, lay) for k in names}
    out = os.path.join(args.outdir, f"lay_{c}_{wl}_{lay}_{os.getpid()}.b2nd")
    be.rm(out)
    res = {"contender": c, "workload": wl, "layout": lay, "n": n, "error": None, "stats": None}
    try:
        if c in ("numpy", "codec"):
            ops = {k: load_numpy(p) for k, p in paths.items()}
        elif c.startswith("b2lazy"):
            ops = {k: bl.open(p) for k, p in paths.items()}
        elif c == "blosc2":
            ops = {k: blosc2.open(p, dparams=be.b2_dparams()) for k, p in paths.items()}
        else:
            ops = {}
            for k, p in paths.items():
                arr = blosc2.open(p, dparams=be.b2_dparams())
                ops[k] = be.dask_from_b2nd(arr)
        src0 = blosc2.open(paths["b" if "b" in paths else "a"])  # an (n, n) operand: the output's layout
        res["chunks"] = {k: list(blosc2.open(p).chunks) for k, p in paths.items()}
        a, b, a3 = ops.get("a"), ops.get("b"), ops.get("a3")
        if c == "codec":  # the result, untimed; then only codec work is timed
            ref = {
                "matmul": lambda: a @ b,
                "matmul_plus_b": lambda: a @ b + b,
                "matmul_sum": lambda: a3.sum(axis=1) @ b,
                "at_a": lambda: a.T @ a,
                "sum0": lambda: a.sum(axis=0),
                "sum1": lambda: a.sum(axis=1),
                "minus_mean": lambda: a - a.mean(axis=0),
                "cumsum": lambda: np.cumsum(a),
                "sincos": lambda: np.sin(a) ** 2 + np.cos(b) ** 2,
            }[wl]()
            srcs = {k: blosc2.open(p, dparams=be.b2_dparams()) for k, p in paths.items()}
            del ops, a, b, a3
        base = hwm_reset()
        times = []
        for i in range(args.warmup + args.reps):  # warm-up runs are untimed (counted in growth)
            be.rm(out)
            t0 = time.perf_counter()
            if c == "numpy":
                r = {
                    "matmul": lambda: a @ b,
                    "matmul_plus_b": lambda: a @ b + b,
                    "matmul_sum": lambda: a3.sum(axis=1) @ b,
                    "at_a": lambda: a.T @ a,
                    "sum0": lambda: np.sum(a, axis=0),
                    "sum1": lambda: np.sum(a, axis=1),
                    "minus_mean": lambda: a - np.mean(a, axis=0),
                    "cumsum": lambda: np.cumsum(a),
                    "sincos": lambda: np.sin(a) ** 2 + np.cos(b) ** 2,
                }[wl]()
            elif c == "codec":
                for s in srcs.values():
                    buf = np.empty(s.schunk.chunksize, dtype=np.uint8)
                    for k in range(s.schunk.nchunks):  # (not `i`: the run's counter)
                        s.schunk.decompress_chunk(k, dst=buf)
                if kind != "small":
                    ch = src0.chunks if kind != "flat" else (int(np.prod(src0.chunks)),)
                    blosc2.asarray(ref, chunks=ch, urlpath=out, mode="w", cparams=be.b2_cparams())
                r = ref
            elif c.startswith("b2lazy"):
                e = {
                    "matmul": lambda: bl.matmul(a, b),
                    "matmul_plus_b": lambda: bl.matmul(a, b) + b,
                    "matmul_sum": lambda: bl.matmul(bl.sum(a3, axis=1), b),
                    "at_a": lambda: a.T @ a,
                    "sum0": lambda: bl.sum(a, axis=0),
                    "sum1": lambda: bl.sum(a, axis=1),
                    "minus_mean": lambda: a - bl.mean(a, axis=0),
                    "cumsum": lambda: bl.cumsum(a),
                    "sincos": lambda: bl.sin(a) ** 2 + bl.cos(b) ** 2,
                }[wl]()
                if kind == "small":
                    r = e.to_numpy(nthreads=NTHREADS, max_memory=BUDGETS[c])
                    res["stats"] = dict(e.last_stats)
                else:
                    r = e.compute(urlpath=out, cparams=be.B2LAZY_CPARAMS, nthreads=NTHREADS, max_memory=BUDGETS[c])
                    res["stats"] = dict(r.stats)
            elif c == "blosc2":
                kw = dict(urlpath=out, mode="w", cparams=be.b2_cparams())
                if wl == "matmul":
                    r = blosc2.matmul(a, b, **kw)
                elif wl == "matmul_plus_b":
                    r = (blosc2.matmul(a, b) + b).compute(**kw)
                elif wl == "matmul_sum":
                    r = blosc2.matmul(blosc2.sum(a3, axis=1), b, **kw)
                elif wl == "at_a":
                    r = blosc2.matmul(blosc2.permute_dims(a), a, **kw)
                elif wl in ("sum0", "sum1"):
                    r = blosc2.sum(a, axis=0 if wl == "sum0" else 1)
                elif wl == "minus_mean":
                    r = blosc2.lazyexpr("a - mean(a, axis=0)", operands={"a": a}).compute(**kw)
                elif wl == "cumsum":  # † not the flattened scan: python-blosc2 refuses axis=None on N-d
                    r = blosc2.cumulative_sum(a, axis=0, out=blosc2.empty(a.shape, dtype=a.dtype, **kw))
                else:
                    r = blosc2.lazyexpr("sin(a)**2 + cos(b)**2", operands={"a": a, "b": b}).compute(**kw)
            else:
                x = {
                    "matmul": lambda: a @ b,
                    "matmul_plus_b": lambda: a @ b + b,
                    "matmul_sum": lambda: da.sum(a3, axis=1) @ b,
                    "at_a": lambda: a.T @ a,
                    "sum0": lambda: da.sum(a, axis=0),
                    "sum1": lambda: da.sum(a, axis=1),
                    "minus_mean": lambda: a - da.mean(a, axis=0),
                    "cumsum": lambda: da.cumsum(a.ravel()),
                    "sincos": lambda: da.sin(a) ** 2 + da.cos(b) ** 2,
                }[wl]()
                with dask.config.set(scheduler="threads", num_workers=NTHREADS):
                    if kind == "small":
                        r = x.compute()
                    else:
                        ch = src0.chunks if kind != "flat" else (int(np.prod(src0.chunks)),)
                        tgt = blosc2.empty(
                            x.shape, dtype=x.dtype, chunks=ch, urlpath=out, mode="w", cparams=be.b2_cparams()
                        )
                        if x.chunks != tuple(
                            (cc,) * (s // cc) + ((s % cc,) if s % cc else ()) for s, cc in zip(x.shape, ch)
                        ):
                            x = x.rechunk(ch)
                        da.store(x, tgt, lock=True)
                        r = tgt
            if i >= args.warmup:
                times.append(time.perf_counter() - t0)
        res["hwm"] = be.vmhwm_bytes()
        res["rss_base"] = base
        res["growth"] = res["hwm"] - base
        res["seconds"] = be.median(times)
        res["times"] = times
        if c not in ("codec",) and not (c == "blosc2" and wl == "cumsum"):
            if kind != "small" and c != "numpy":
                r = blosc2.open(out)
            np.save(os.path.join(args.outdir, f"lay_rows_{c}_{wl}_{lay}_{n}.npy"), sample(r, kind, n))
        res["sizes"] = {k: int(np.prod(shape_of(k, n))) * 8 for k in names}
        res["paths"] = paths
    except Exception as e:  # noqa: BLE001
        res["error"] = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
    be.rm(out)
    print("RUNJSON:" + json.dumps(res), flush=True)


def merge_rounds(ds):
    """One cell from its rounds (fresh processes): the median of every run's time, the
    largest growth, the last round's stats; an error in any round is the cell's error."""
    bad = [d for d in ds if d.get("error")]
    if bad:
        return bad[0]
    d = dict(ds[-1])
    d["times"] = [t for x in ds for t in x["times"]]
    d["seconds"] = be.median(d["times"])
    d["growth"] = max(x["growth"] for x in ds)
    d["rounds"] = len(ds)
    return d


def spawn(c, wl, lay, args):
    env = dict(os.environ)
    blas = "1" if c in ("dask",) or c.startswith("b2lazy") else str(NTHREADS)
    env.update(OPENBLAS_NUM_THREADS=blas, OMP_NUM_THREADS=blas, MKL_NUM_THREADS=blas)
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--child",
        c,
        "--workload",
        wl,
        "--layout",
        lay,
        "--n",
        str(args.cur_n),
        "--reps",
        str(args.reps),
        "--warmup",
        str(args.warmup),
        "--data-dir",
        args.data_dir,
        "--outdir",
        args.outdir,
    ]
    s0 = be.cpu_snapshot()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {
            "contender": c,
            "workload": wl,
            "layout": lay,
            "n": args.cur_n,
            "error": f"timeout: killed after {args.timeout} s",
        }
    s1 = be.cpu_snapshot()
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("RUNJSON:")]
    if p.returncode != 0 or not line:
        return {
            "contender": c,
            "workload": wl,
            "layout": lay,
            "n": args.cur_n,
            "error": f"exit {p.returncode}: {p.stderr[-2000:]}",
        }
    d = json.loads(line[0][len("RUNJSON:") :])
    d["contention"] = be.contention(s0, s1)
    return d


# ----------------------------------------------------------------------------- report
def check(rows, outdir, n):
    import numpy as np

    for d in rows:
        if d.get("error") or d["contender"] in ("numpy", "codec") or d["n"] != n:
            continue
        f = os.path.join(outdir, f"lay_rows_{d['contender']}_{d['workload']}_{d['layout']}_{n}.npy")
        ref = os.path.join(outdir, f"lay_rows_numpy_{d['workload']}_{d['layout']}_{n}.npy")
        if not (os.path.exists(f) and os.path.exists(ref)):
            continue
        got, want = np.load(f), np.load(ref)
        d["rel_err"] = (
            float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-300))
            if got.shape == want.shape
            else float("inf")
        )


def find(rows, c, wl, lay, n):
    for d in rows:
        if d["contender"] == c and d["workload"] == wl and d["layout"] == lay and d["n"] == n:
            return d
    return {}


def cell(d, ref_t, codec_t, kind, n, budget):
    if not d:
        return "—"
    if d.get("error"):
        return "fail: " + d["error"].splitlines()[0][:40]
    t, g = d["seconds"], d["growth"] / MiB
    s = f"{t:.2f} s"
    if kind == "product":
        s += f", {2 * n**3 / t / 1e9:.1f} GF"
    if ref_t and d["contender"] != "codec":
        s += f", {ref_t / t:.2f}× NP"
    if codec_t and kind != "product" and d["contender"] != "codec":
        s += f", {t / codec_t:.2f}× codec"
    s += f", {g:.0f} MiB"
    if budget is not None and g > budget / MiB + 32:
        s += " **OVER**"
    if d.get("rel_err") is not None and d["rel_err"] > TOL:
        s += f" **WRONG** ({d['rel_err']:.1e})"
    return s


def targets(rows, n, wls, lays, cons):
    """Issue #12's targets counted over this table (b2lazy at each budget run)."""
    L = ["Targets met (cells that ran; misses listed):", ""]
    for c in [c for c in cons if c.startswith("b2lazy")]:
        speed, mem, nbytes, peers = [[0, 0, []] for _ in range(4)]

        def tally(t, ok, what):
            t[1] += 1
            t[0] += bool(ok)
            if not ok:
                t[2].append(what)

        for lay in lays:
            for wl in wls:
                d = find(rows, c, wl, lay, n)
                if not d or d.get("error"):
                    continue
                kind = WL[wl][2]
                where = f"`{WL[wl][0]}` {lay}"
                ref = find(rows, "numpy", wl, lay, n).get("seconds")
                cod = find(rows, "codec", wl, lay, n).get("seconds")
                if kind == "product" and ref:
                    tally(speed, ref / d["seconds"] >= 0.8, f"{where} {ref / d['seconds']:.2f}× NP")
                elif kind != "product" and cod:
                    tally(speed, d["seconds"] / cod <= 1.3, f"{where} {d['seconds'] / cod:.2f}× codec")
                budget = BUDGETS.get(c)
                if budget is not None:
                    tally(mem, d["growth"] <= budget + 32 * MiB, f"{where} {d['growth'] / MiB:.0f} MiB")
                bd = (d.get("stats") or {}).get("bytes_decompressed") or {}
                for k, p in (d.get("paths") or {}).items():
                    v = bd.get(p)
                    if v is not None:
                        tally(nbytes, v <= 2 * d["sizes"][k], f"{where} {k} {v / d['sizes'][k]:.1f}×")
                for peer in ("dask", "blosc2"):
                    q = find(rows, peer, wl, lay, n)
                    if q and not q.get("error"):
                        tally(
                            peers,
                            d["seconds"] < q["seconds"],
                            f"{where} vs {peer} {d['seconds']:.2f} / {q['seconds']:.2f} s",
                        )
        for name, t in (
            ("products ≥ 0.8× NumPy, others ≤ 1.3× codec", speed),
            ("growth ≤ max_memory + 32 MiB", mem),
            ("bytes decompressed ≤ 2× each source", nbytes),
            ("faster than Dask / python-blosc2", peers),
        ):
            if t[1]:
                miss = f" (misses: {'; '.join(t[2])})" if t[2] else ""
                L.append(f"- {c}: {name}: {t[0]} of {t[1]}{miss}")
    return "\n".join(L)


def report(R, n):
    rows = R["rows"]
    wls = [w for w in WL if any(d["workload"] == w and d["n"] == n for d in rows)]
    lays = [x for x in LAYOUTS if any(d["layout"] == x and d["n"] == n for d in rows)]
    cons = [c for c in CONTENDERS if any(d["contender"] == c and d["n"] == n for d in rows)]
    rounds = R.get("rounds", 1)
    per = (
        f"{rounds} fresh processes per cell, contenders alternating, {R['reps']} run(s) each"
        if rounds > 1
        else f"{R['reps']} run(s) in one fresh process per cell"
    )
    if R.get("warmup"):
        per += f", after {R['warmup']} untimed warm-up run(s) in the same process"
    L = [
        f"n = {n}, float64, {NTHREADS} threads, median of {per}. "
        "Cell: time, GFLOPS (products, 2n³/t), speed vs NumPy in memory (>1: faster than NumPy), "
        "time vs the codec limit (non-products), peak RSS growth (VmHWM after clear_refs). "
        "**OVER**: growth above max_memory + 32 MiB.",
        "",
    ]
    for lay in lays:
        ch = next((d.get("chunks") for d in rows if d["layout"] == lay and d["n"] == n and d.get("chunks")), {})
        L += [
            f"#### layout `{lay}` (chunks: " + ", ".join(f"{k} {tuple(v)}" for k, v in ch.items()) + ")",
            "",
            "| workload | " + " | ".join(cons) + " |",
            "|---|" + "---|" * len(cons),
        ]
        for wl in wls:
            label, _, kind = WL[wl]
            ref = find(rows, "numpy", wl, lay, n).get("seconds")
            cod = find(rows, "codec", wl, lay, n).get("seconds")
            cells = [
                cell(find(rows, c, wl, lay, n), None if c == "numpy" else ref, cod, kind, n, BUDGETS.get(c))
                for c in cons
            ]
            L.append(f"| `{label}`{' †' if wl == 'cumsum' else ''} | " + " | ".join(cells) + " |")
        L.append("")
    L += [
        "b2lazy (default budget) bytes decompressed per source / the source's size, and peak scratch:",
        "",
        "| workload | " + " | ".join(lays) + " |",
        "|---|" + "---|" * len(lays),
    ]
    for wl in wls:
        cells = []
        for lay in lays:
            d = find(rows, "b2lazy", wl, lay, n)
            st = d.get("stats") or {}
            bd = st.get("bytes_decompressed") or {}
            parts = []
            for k, p in (d.get("paths") or {}).items():
                v = bd.get(p)
                if v is None:
                    v = next((x for q, x in bd.items() if os.path.basename(q) == os.path.basename(p)), None)
                ratio = "—" if v is None else f"{v / d['sizes'][k]:.1f}×"
                parts.append(f"{k} {ratio}")
            if st.get("peak_scratch_bytes") is not None:
                parts.append(f"scratch {st['peak_scratch_bytes'] / MiB:.0f} MiB")
            cells.append(", ".join(parts) or "—")
        L.append(f"| `{WL[wl][0]}` | " + " | ".join(cells) + " |")
    L += [
        "",
        "† python-blosc2 cannot scan an N-d array flattened: its cell is `cumulative_sum(a, axis=0)` (not checked).",
    ]
    L += ["", targets(rows, n, wls, lays, cons)]
    bad = [d for d in rows if d["n"] == n and d.get("error")]
    if bad:
        L += ["", "Failures:", ""] + [
            f"- {d['contender']} `{WL[d['workload']][0]}` {d['layout']}: {d['error'].splitlines()[0][:200]}"
            for d in bad
        ]
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="*", default=[4096, 8192])
    ap.add_argument("--layouts", nargs="*", default=LAYOUTS, choices=LAYOUTS)
    ap.add_argument("--workloads", nargs="*", default=list(WL), choices=list(WL))
    ap.add_argument("--contenders", nargs="*", default=CONTENDERS, choices=CONTENDERS)
    ap.add_argument("--reps", type=int, default=1, help="runs per process, back to back (median)")
    ap.add_argument("--warmup", type=int, default=0, help="untimed runs first in each process")
    ap.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="fresh processes per cell, contenders alternating (the cell: median of every run)",
    )
    ap.add_argument("--timeout", type=float, default=1200, help="seconds before a cell is killed")
    ap.add_argument("--data-dir", default=os.path.join(HERE, "data"))
    ap.add_argument("--outdir", default=None)
    ap.add_argument("--out", default=None, help="JSON results file")
    ap.add_argument("--md", default=None, help="write the Markdown tables here")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--workload", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--layout", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--gen", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.outdir = args.outdir or os.path.join(args.data_dir, "out_layouts")
    if args.child:
        args.n = args.n[0]
        return run_child(args)
    if args.gen:
        names = sorted({k for w in args.workloads for k in WL[w][1]})
        return gen_main(args.data_dir, args.n[0], args.layouts, names)
    os.makedirs(args.outdir, exist_ok=True)
    t_start = time.perf_counter()
    R = {"argv": sys.argv, "reps": args.reps, "rounds": args.rounds, "warmup": args.warmup, "rows": []}
    texts = []
    for n in args.n:
        args.cur_n = n
        print(f"data (n={n}) ...", flush=True)
        subprocess.run(
            [
                sys.executable,
                os.path.abspath(__file__),
                "--gen",
                "--n",
                str(n),
                "--data-dir",
                args.data_dir,
                "--layouts",
                *args.layouts,
                "--workloads",
                *args.workloads,
            ],
            check=True,
        )
        cons = ["numpy"] + [c for c in args.contenders if c != "numpy"]  # NumPy is the reference
        for lay in args.layouts:
            for wl in args.workloads:
                runs = {c: [] for c in cons}
                for rnd in range(args.rounds):  # contenders alternate: each round runs every one once
                    for c in cons:
                        d = spawn(c, wl, lay, args)
                        runs[c].append(d)
                        msg = (
                            d["error"].splitlines()[0][:160]
                            if d.get("error")
                            else f"{d['seconds']:.2f} s, growth {d['growth'] / MiB:.0f} MiB"
                        )
                        print(f"  n={n} {lay:7s} {WL[wl][0]:28s} {c:10s} round {rnd + 1}: {msg}", flush=True)
                R["rows"] += [merge_rounds(runs[c]) for c in cons]
        check(R["rows"], args.outdir, n)
        texts.append(report(R, n))
    R["environment"] = be.environment()
    R["seconds"] = time.perf_counter() - t_start
    env = R["environment"]
    head = (
        f"- Date: {env['date']}; machine: {env['cores']} cores, {env['cpu']}, {env['ram_GiB']:.1f} GiB RAM\n"
        f"- Versions: Python {env['python']}, NumPy {env['numpy']}, python-blosc2 {env['blosc2']} "
        f"(C-Blosc2 {env['c_blosc2']}), dask {env['dask']}; b2lazy commit {env['b2lazy_commit']}\n"
        f"- Command: `python bench/bench_layouts.py {' '.join(sys.argv[1:])}` ({R['seconds'] / 60:.0f} min)\n"
    )
    text = head + "\n" + "\n\n".join(texts)
    print("\n" + text)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(R, f, indent=1)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
