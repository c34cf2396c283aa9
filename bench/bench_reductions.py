#!/usr/bin/env python3
"""Reductions and scans benchmark: b2lazy vs NumPy (in memory), python-blosc2 and Dask.

    python bench/bench_reductions.py [--quick] [--size-gib 2] [--out bench/RESULTS-reductions.json]

Issue: "Every reduction and scan lazy, pulled by region, computed once when reused".
One float64 operand `a` on disk (b2nd, zstd clevel 1 + shuffle, smooth data plus a little
noise: the `a` operand of bench_elementwise.py, same files, same row-strip chunks), five
operations, every contender side by side in one run at 2 threads:

  1. sum(a) + a            full-size result   (b2lazy/blosc2/Dask: compressed b2nd on disk)
  2. a - mean(a, axis=0)   full-size result   (idem)
  3. cumsum(a), flattened  full-size 1-d result (idem; python-blosc2 cannot scan an N-d
                           array flattened, so it scans a 1-d copy of the same data with the
                           same chunk/block bytes, prepared beforehand)
  4. sum(a, axis=0)        small result, returned in memory (NumPy array)
  5. sum(a, axis=1)        small result, returned in memory

Contenders: NumPy (operand loaded into RAM beforehand, not timed; 1 thread), b2lazy
(nthreads=2), python-blosc2 (set_nthreads(2) + CParams/DParams nthreads=2), Dask
(from_array over blosc2.open, scheduler="threads", num_workers=2), and the codec limit
(C-Blosc2 decompression of the operand + compression of an output of the result's size).

Sections: data generation in a separate process (--gen); peak RSS, each contender and
operation in a fresh subprocess (--rss-child), spawned while this process is still small;
then the timed, interleaved runs with result verification.  See bench/RESULTS-reductions.md.
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

NTHREADS = be.NTHREADS  # 2
MiB = be.MiB
B2LAZY_CPARAMS = be.B2LAZY_CPARAMS  # zstd, clevel 1, shuffle
KIND, NAME, DTYPE = "smooth", "a", "float64"  # bench_elementwise's `a` operand
FLAT_VERSION = "v1"
CONTENDERS = ["numpy", "b2lazy", "blosc2", "dask"]
PEERS = ["numpy", "blosc2", "dask"]
TOL = 1e-10  # max |got - ref| / max |ref| (sampled); an off-by-one element would be ~1e-8

OPS = [
    # key, label, result kind ("full", "full1d", "small")
    ("sum_plus_a", "sum(a) + a", "full"),
    ("a_minus_mean0", "a - mean(a, axis=0)", "full"),
    ("cumsum_flat", "cumsum(a) (flattened)", "full1d"),
    ("sum_axis0", "sum(a, axis=0)", "small"),
    ("sum_axis1", "sum(a, axis=1)", "small"),
]
OP_LABEL = {k: lab for k, lab, _ in OPS}
OP_KIND = {k: kind for k, _, kind in OPS}


# ----------------------------------------------------------------------------- data
def layout(shape):
    """(chunks, blocks) of the 2-d operand and of the flattened 1-d copy / 1-d outputs."""
    chunks, blocks = be.partitions(shape, 8)
    cols = shape[1]
    return chunks, blocks, (chunks[0] * cols,), (blocks[0] * cols,)


def operand_path(ddir, shape):
    return be.data_path(ddir, KIND, NAME, DTYPE, shape)


def flat_path(ddir, shape):
    return operand_path(ddir, shape)[: -len(".b2nd")] + "_flat.b2nd"


def gen_flat(ddir, shape):
    """A 1-d copy of the operand, chunk i = chunk-row i of the 2-d array (same bytes,
    same chunk and block sizes), for python-blosc2's cumulative_sum (1-d only)."""
    import blosc2

    src_path = operand_path(ddir, shape)
    path = flat_path(ddir, shape)
    src = blosc2.open(src_path)
    desc = f"{FLAT_VERSION} flat copy of {os.path.basename(src_path)}: {src.vlmeta['b2bench']}"
    if os.path.exists(path):
        try:
            existing = blosc2.open(path)
            if existing.vlmeta["b2bench"] == desc:
                return path, False
        except Exception:  # noqa: BLE001
            pass
        be.rm(path)
    chunks, _, fchunks, fblocks = layout(shape)
    tmp = path + ".tmp.b2nd"
    be.rm(tmp)
    n = shape[0] * shape[1]
    out = blosc2.uninit(
        (n,), dtype=DTYPE, chunks=fchunks, blocks=fblocks, urlpath=tmp, mode="w", cparams=be.b2_cparams()
    )
    for r0 in range(0, shape[0], chunks[0]):
        r1 = min(r0 + chunks[0], shape[0])
        out[r0 * shape[1] : r1 * shape[1]] = src[r0:r1, :].ravel()
    out.vlmeta["b2bench"] = desc
    del out
    os.replace(tmp, path)
    return path, True


def gen_main(spec_json):
    """Child process: the 2-d operand (bench_elementwise's generator) and its 1-d copy."""
    be.set_threads()
    spec = json.loads(spec_json)
    os.makedirs(spec["ddir"], exist_ok=True)
    t0 = time.perf_counter()
    for shape in spec["shapes"]:
        shape = tuple(shape)
        p, new = be.gen_operand(spec["ddir"], KIND, NAME, DTYPE, shape)
        print(f"  {'generated' if new else 're-used'} {os.path.basename(p)}", flush=True)
        p, new = gen_flat(spec["ddir"], shape)
        print(f"  {'generated' if new else 're-used'} {os.path.basename(p)}", flush=True)
    print(f"  data ready in {time.perf_counter() - t0:.1f} s", flush=True)


def load_numpy(path):
    """The whole operand in RAM, filled chunk-row by chunk-row (no transient copy)."""
    import blosc2
    import numpy as np

    src = blosc2.open(path, dparams=be.b2_dparams())
    a = np.empty(src.shape, dtype=src.dtype)
    step = src.chunks[0]
    for r0 in range(0, src.shape[0], step):
        a[r0 : r0 + step] = src[r0 : r0 + step]
    return a


# ----------------------------------------------------------------------------- contenders
class Setup:
    """Everything opened before timing: operands, output paths, layouts."""

    def __init__(self, ddir, shape, outdir, tag="", load_np=True, which=None):
        import blosc2
        import b2lazy

        self.shape = tuple(shape)
        self.path = operand_path(ddir, shape)
        self.fpath = flat_path(ddir, shape)
        self.chunks, self.blocks, self.fchunks, self.fblocks = layout(shape)
        which = set(which or CONTENDERS + ["codec"])
        self.A = load_numpy(self.path) if (load_np and "numpy" in which) else None
        self.ba = blosc2.open(self.path, dparams=be.b2_dparams())
        self.ba1 = blosc2.open(self.fpath, dparams=be.b2_dparams())
        self.la = b2lazy.open(self.path) if "b2lazy" in which else None
        self.X = be.dask_from_b2nd(self.ba, self.chunks) if "dask" in which else None
        self.nchunks = self.ba.schunk.nchunks
        self.outp = {n: os.path.join(outdir, f"red_{n}{tag}.b2nd") for n in CONTENDERS + ["codec"]}
        self.stats = {}  # last b2lazy stats per op
        self.stats_all = {}  # every b2lazy run's stats per op
        self.kept = {}  # (op, contender) -> first in-memory result
        self.refvals = {}  # reduction values the codec loop needs to build real outputs

    def out_layout(self, op):
        if OP_KIND[op] == "full1d":
            return (self.shape[0] * self.shape[1],), self.fchunks, self.fblocks
        return self.shape, self.chunks, self.blocks

    def keep(self, op, n, v):
        if (op, n) not in self.kept:
            self.kept[(op, n)] = v

    # --- NumPy: operand in RAM, result in RAM
    def numpy_fn(self, op):
        import numpy as np

        A = self.A
        f = {
            "sum_plus_a": lambda: np.sum(A) + A,
            "a_minus_mean0": lambda: A - np.mean(A, axis=0),
            "cumsum_flat": lambda: np.cumsum(A),
            "sum_axis0": lambda: np.sum(A, axis=0),
            "sum_axis1": lambda: np.sum(A, axis=1),
        }[op]

        def run(keep=True):
            r = f()
            if keep:
                self.keep(op, "numpy", r)

        return run

    # --- b2lazy: full-size -> compressed b2nd on disk; small -> NumPy in memory
    def b2lazy_fn(self, op):
        import b2lazy

        la = self.la
        build = {
            "sum_plus_a": lambda: b2lazy.sum(la) + la,
            "a_minus_mean0": lambda: la - b2lazy.mean(la, axis=0),
            "cumsum_flat": lambda: b2lazy.cumsum(la),
            "sum_axis0": lambda: b2lazy.sum(la, axis=0),
            "sum_axis1": lambda: b2lazy.sum(la, axis=1),
        }[op]
        _, ch, bl = self.out_layout(op)
        out = self.outp["b2lazy"]

        def run(keep=True):
            e = build()
            if OP_KIND[op] == "small":
                v = e.to_numpy(nthreads=NTHREADS)
                st = dict(e.last_stats)
                if keep:
                    self.keep(op, "b2lazy", v)
            else:
                r = e.compute(urlpath=out, chunks=ch, blocks=bl, cparams=B2LAZY_CPARAMS, nthreads=NTHREADS)
                st = dict(r.stats)
                del r
            self.stats[op] = st
            self.stats_all.setdefault(op, []).append(st)

        return run

    # --- python-blosc2
    def blosc2_fn(self, op):
        import blosc2

        ba, ba1 = self.ba, self.ba1
        shp, ch, bl = self.out_layout(op)
        out = self.outp["blosc2"]
        expr = {"sum_plus_a": "sum(a) + a", "a_minus_mean0": "a - mean(a, axis=0)"}.get(op)

        def run(keep=True):
            if expr is not None:
                r = blosc2.lazyexpr(expr, operands={"a": ba}).compute(
                    urlpath=out, mode="w", chunks=ch, blocks=bl, cparams=be.b2_cparams(), dparams=be.b2_dparams()
                )
                del r
            elif op == "cumsum_flat":
                # 1-d copy: cumulative_sum(axis=None) raises for N-d operands
                o = blosc2.empty(
                    shp,
                    dtype=ba1.dtype,
                    chunks=ch,
                    blocks=bl,
                    urlpath=out,
                    mode="w",
                    cparams=be.b2_cparams(),
                    dparams=be.b2_dparams(),
                )
                r = blosc2.cumulative_sum(ba1, axis=0, out=o)
                del r, o
            else:
                v = blosc2.sum(ba, axis=0 if op == "sum_axis0" else 1)
                if keep:
                    self.keep(op, "blosc2", v)

        return run

    # --- Dask over the same b2nd file; full-size results stored into a b2nd file
    def dask_fn(self, op):
        import blosc2
        import dask
        import dask.array as da

        X = self.X
        shp, ch, bl = self.out_layout(op)
        out = self.outp["dask"]
        build = {
            "sum_plus_a": lambda: da.sum(X) + X,
            "a_minus_mean0": lambda: X - da.mean(X, axis=0),
            "cumsum_flat": lambda: da.cumsum(X.ravel(), axis=None),
            "sum_axis0": lambda: da.sum(X, axis=0),
            "sum_axis1": lambda: da.sum(X, axis=1),
        }[op]

        def run(keep=True):
            with dask.config.set(scheduler="threads", num_workers=NTHREADS):
                x = build()
                if OP_KIND[op] == "small":
                    v = x.compute(scheduler="threads", num_workers=NTHREADS)
                    if keep:
                        self.keep(op, "dask", v)
                else:
                    if x.chunks != tuple((c,) * (s // c) + ((s % c,) if s % c else ()) for s, c in zip(shp, ch)):
                        x = x.rechunk(ch)
                    tgt = blosc2.empty(
                        shp,
                        dtype=x.dtype,
                        chunks=ch,
                        blocks=bl,
                        urlpath=out,
                        mode="w",
                        cparams=be.b2_cparams(),
                        dparams=be.b2_dparams(),
                    )
                    da.store(x, tgt, lock=True, scheduler="threads", num_workers=NTHREADS)
                    del tgt

        return run

    # --- codec limit: decompress the operand once + compress an output of the result's size
    def codec_fn(self, op):
        """Per chunk: `schunk.decompress_chunk(i, dst=buf)` (C-Blosc2, 2 threads) and, for
        full-size results, `out.schunk.update_data(i, result_chunk)` into a b2nd file with the
        same cparams.  The result chunk holds the real values (NumPy, NOT timed; sum/mean are
        precomputed).  Small results: decompression only.  Returns the timed seconds."""
        import blosc2
        import numpy as np

        ba = self.ba
        shp, ch, bl = self.out_layout(op)
        out_path = self.outp["codec"]
        buf = np.empty(self.chunks, dtype=ba.dtype)
        nch = self.nchunks
        kind = OP_KIND[op]

        def run(keep=True):
            S = self.refvals.get("sum")
            M = self.refvals.get("mean0")
            t = 0.0
            out = None
            if kind != "small":
                t0 = time.perf_counter()
                out = blosc2.uninit(
                    shp, dtype=ba.dtype, chunks=ch, blocks=bl, urlpath=out_path, mode="w", cparams=be.b2_cparams()
                )
                t += time.perf_counter() - t0
            carry = 0.0
            for i in range(nch):
                t0 = time.perf_counter()
                ba.schunk.decompress_chunk(i, dst=buf)
                t += time.perf_counter() - t0
                if out is None:
                    continue
                if op == "sum_plus_a":  # not timed
                    ob = buf + S
                elif op == "a_minus_mean0":
                    ob = buf - M
                else:
                    ob = np.cumsum(buf.ravel())
                    ob += carry
                    carry = ob[-1]
                t0 = time.perf_counter()
                out.schunk.update_data(i, ob, copy=True)
                t += time.perf_counter() - t0
            del out
            return t

        return run

    def fns(self, op, which=None):
        make = {
            "numpy": self.numpy_fn,
            "b2lazy": self.b2lazy_fn,
            "blosc2": self.blosc2_fn,
            "dask": self.dask_fn,
            "codec": self.codec_fn,
        }
        return {n: make[n](op) for n in (which or list(make))}


# ----------------------------------------------------------------------------- checks
def sample_rows(shape, chunks, k=3, seed=12345):
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = {0, shape[0] - 1, chunks[0], shape[0] // 2 - 1}
    rows |= set(int(r) for r in rng.integers(0, shape[0], k))
    return sorted(r for r in rows if 0 <= r < shape[0])


def check_output(su, op, n, ref):
    """Compare contender n's result of op against NumPy's (ref: full NumPy result).
    Full-size: read a few rows (2-d) or row-sized slices (1-d) back from the b2nd file."""
    import blosc2
    import numpy as np

    try:
        if OP_KIND[op] == "small":
            got = np.asarray(su.kept[(op, n)])
            pairs = [(ref, got)]
            info = {}
        else:
            o = blosc2.open(su.outp[n])
            shp, ch, bl = su.out_layout(op)
            info = {
                "out_shape": list(o.shape),
                "out_chunks": list(o.chunks),
                "out_blocks": list(o.blocks),
                "out_cratio": o.schunk.cratio,
                "out_codec": str(o.schunk.cparams.codec),
                "out_clevel": o.schunk.cparams.clevel,
            }
            if tuple(o.shape) != tuple(shp):
                return {"ok": False, "note": f"shape {o.shape} != {shp}", **info}
            pairs = []
            cols = su.shape[1]
            rows = sample_rows(su.shape, su.chunks)
            for r in rows:
                if OP_KIND[op] == "full":
                    pairs.append((ref[r], o[r]))
                else:  # flattened: row r of the C-order ravel, plus the last element
                    pairs.append((ref.reshape(-1)[r * cols : (r + 1) * cols], o[r * cols : (r + 1) * cols]))
            if OP_KIND[op] == "full1d":
                pairs.append((ref.reshape(-1)[-1:], o[shp[0] - 1 : shp[0]]))
            info["rows_checked"] = rows
        err = max(float(np.max(np.abs(np.asarray(g, dtype=np.float64) - r))) for r, g in pairs)
        scale = max(float(np.max(np.abs(r))) for r, _ in pairs) or 1.0
        shape_ok = all(np.shape(g) == np.shape(r) for r, g in pairs)
        if not shape_ok:
            info["note"] = "sample shapes differ: " + str([(np.shape(r), np.shape(g)) for r, g in pairs])
        ok = shape_ok and err / scale <= TOL
        return {"ok": bool(ok), "max_abs_err": err, "rel_err": err / scale, "scale": scale, **info}
    except Exception as e:  # noqa: BLE001
        return {"ok": False, "note": f"check failed: {type(e).__name__}: {e}", "traceback": traceback.format_exc()}


# ----------------------------------------------------------------------------- timing
def run_rotating(fns, reps, before):
    """Warm each once, then `reps` rounds with the order rotated each round.  A callable
    may return its own timed seconds (codec loop); otherwise wall time is used."""
    names = list(fns)
    res = {n: {"times": [], "error": None} for n in names}
    for n in names:
        try:
            before(n)
            fns[n](keep=True)
        except Exception as e:  # noqa: BLE001
            res[n]["error"] = f"{type(e).__name__}: {e}"
            res[n]["traceback"] = traceback.format_exc()
            print(f"    {n} FAILED: {res[n]['error'][:300]}", flush=True)
    live = [n for n in names if res[n]["error"] is None]
    for r in range(reps):
        k = r % len(live) if live else 0
        for n in live[k:] + live[:k]:
            if res[n]["error"]:
                continue
            before(n)
            try:
                t0 = time.perf_counter()
                own = fns[n](keep=False)
                dt = time.perf_counter() - t0
            except Exception as e:  # noqa: BLE001
                res[n]["error"] = f"{type(e).__name__}: {e}"
                res[n]["traceback"] = traceback.format_exc()
                continue
            res[n]["times"].append(own if own is not None else dt)
    for n in names:
        res[n]["median"] = be.median(res[n]["times"])
    return res


def op_bytes(shape, op):
    """Logical bytes: the operand once (uncompressed) + the result."""
    n = shape[0] * shape[1] * 8
    out = {"full": n, "full1d": n, "small": (shape[1] if op == "sum_axis0" else shape[0]) * 8}
    return n + out[OP_KIND[op]]


def bench_timed(ddir, shape, reps, outdir):
    import numpy as np

    su = Setup(ddir, shape, outdir)
    su.refvals = {"sum": float(np.sum(su.A)), "mean0": np.mean(su.A, axis=0)}
    rows = []
    for op, label, kind in OPS:
        fns = su.fns(op)
        c0 = be.cpu_snapshot()

        def before(n):
            be.rm(su.outp[n])

        res = run_rotating(fns, reps, before)
        busy = be.contention(c0, be.cpu_snapshot())
        ref = su.kept.get((op, "numpy"))
        checks = {}
        for n in ("b2lazy", "blosc2", "dask"):
            if res[n]["error"] is None and ref is not None:
                checks[n] = check_output(su, op, n, ref)
        cin = su.ba.schunk.cratio
        nb = op_bytes(shape, op)
        row = {
            "op": op,
            "label": label,
            "kind": kind,
            "shape": list(shape),
            "chunks": list(su.chunks),
            "blocks": list(su.blocks),
            "nchunks": su.nchunks,
            "in_cratio": cin,
            "bytes": nb,
            "reps": reps,
            "other_cpu_share": busy,
            "b2lazy_stats": su.stats.get(op),
            "b2lazy_stats_all": su.stats_all.get(op),
            "contenders": {},
        }
        if op == "cumsum_flat":
            row["blosc2_note"] = f"1-d copy {os.path.basename(su.fpath)}, chunks {su.fchunks}, blocks {su.fblocks}"
        for n, r in res.items():
            d = dict(r)
            if d.get("median"):
                d["GBps"] = nb / d["median"] / 1e9
            if n in checks:
                d["check"] = checks[n]
            row["contenders"][n] = d
        rows.append(row)
        for n in list(su.kept):
            if n[0] == op:
                del su.kept[n]
        del ref
        for n in su.outp:
            be.rm(su.outp[n])
        st = row["b2lazy_stats"] or {}
        print(
            f"  {label:24s} "
            + "  ".join(
                f"{n}={be.fmt_s(v.get('median'))}"
                + (" ERR" if v.get("error") else "")
                + ("" if "check" not in v else (" ok" if v["check"]["ok"] else " WRONG"))
                for n, v in row["contenders"].items()
            )
            + f"  | b2lazy chunks {(st.get('chunks_decompressed') or {}).get('total')}/{su.nchunks}"
            f" hits {st.get('cache_hits')} misses {st.get('cache_misses')}"
            f"  | other CPU {'?' if busy is None else f'{100 * busy:.0f}%'}",
            flush=True,
        )
    return rows


# ----------------------------------------------------------------------------- RSS child
def rss_child_main(args):
    import numpy as np  # noqa: F401
    import numexpr  # noqa: F401
    import blosc2  # noqa: F401
    import b2lazy  # noqa: F401
    import dask  # noqa: F401
    import dask.array  # noqa: F401
    import psutil  # noqa: F401

    be.set_threads()
    rss_import = be.rss_bytes()
    c, op = args.rss_child, args.op
    shape = tuple(args.shape)
    os.makedirs(args.outdir, exist_ok=True)
    su = Setup(args.data_dir, shape, args.outdir, tag=f"_rss_{os.getpid()}", which=[c])
    fn = su.fns(op, [c])[c]
    rss_open = be.rss_bytes()
    times = []
    err = None
    try:
        for i in range(args.warm + args.runs):
            be.rm(su.outp[c])
            t0 = time.perf_counter()
            fn(keep=False)
            if i >= args.warm:
                times.append(time.perf_counter() - t0)
    except Exception as e:  # noqa: BLE001
        err = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
    maxrss = be.maxrss_bytes()
    hwm = be.vmhwm_bytes()
    rss_end = be.rss_bytes()
    be.rm(su.outp[c])
    print(
        "RSSJSON:"
        + json.dumps(
            {
                "contender": c,
                "op": op,
                "shape": list(shape),
                "times": times,
                "median": be.median(times),
                "rss_after_import": rss_import,
                "rss_after_open": rss_open,
                "maxrss_end": maxrss,
                "vmhwm_end": hwm,
                "rss_end": rss_end,
                "growth_vs_open": maxrss - rss_open,
                "hwm_growth_vs_open": None if hwm is None else hwm - rss_open,
                "growth_vs_import": maxrss - rss_import,
                "b2lazy_stats": su.stats.get(op),
                "error": err,
            }
        ),
        flush=True,
    )


def bench_rss(ddir, shape, outdir, runs, warm):
    rows = []
    for op, label, _ in OPS:
        for c in CONTENDERS:
            cmd = [
                sys.executable,
                os.path.abspath(__file__),
                "--rss-child",
                c,
                "--op",
                op,
                "--shape",
                str(shape[0]),
                str(shape[1]),
                "--runs",
                str(runs),
                "--warm",
                str(warm),
                "--data-dir",
                ddir,
                "--outdir",
                outdir,
            ]
            parent_hwm = be.vmhwm_bytes()
            t0 = time.perf_counter()
            p = subprocess.run(cmd, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            line = [ln for ln in p.stdout.splitlines() if ln.startswith("RSSJSON:")]
            if p.returncode != 0 or not line:
                d = {
                    "contender": c,
                    "op": op,
                    "shape": list(shape),
                    "times": [],
                    "median": None,
                    "error": f"child exit {p.returncode}: {p.stderr[-2000:]}",
                }
            else:
                d = json.loads(line[0][len("RSSJSON:") :])
            d.update(wall=wall, parent_vmhwm_at_spawn=parent_hwm, cmd=" ".join(cmd))
            rows.append(d)
            g = d.get("growth_vs_open")
            gi = d.get("growth_vs_import")
            print(
                f"  rss {label:24s} {c:7s} run={be.fmt_s(d.get('median'))} s "
                f"growth vs open={'—' if g is None else f'{g / MiB:.1f} MiB'} "
                f"vs imports={'—' if gi is None else f'{gi / MiB:.1f} MiB'}"
                + (f" ERROR {d['error'][:300]}" if d.get("error") else ""),
                flush=True,
            )
    return rows


# ----------------------------------------------------------------------------- report
def rss_of(R, op, c):
    for d in R.get("rss") or []:
        if d["op"] == op and d["contender"] == c and "growth_vs_open" in d and not d.get("error"):
            return d
    return None


def targets(R):
    """Per operation: b2lazy faster than python-blosc2 and Dask; within 1.5x NumPy;
    peak RSS growth < 10% of NumPy's footprint (NumPy: operand load + result + temporaries,
    i.e. ru_maxrss - RSS after imports; b2lazy: ru_maxrss - RSS after opening)."""
    out = []
    for row in R.get("timed") or []:
        c = row["contenders"]
        b = c["b2lazy"].get("median")
        b_ok = not c["b2lazy"].get("error") and c["b2lazy"].get("check", {}).get("ok", False)
        lab = row["label"]
        if not b_ok:
            out.append(
                (
                    lab,
                    "b2lazy result correct",
                    "MISSED",
                    c["b2lazy"].get("error") or str(c["b2lazy"].get("check"))[:200],
                )
            )
        for peer, name in (("blosc2", "python-blosc2"), ("dask", "Dask")):
            p = c[peer].get("median")
            if c[peer].get("error"):
                out.append(
                    (
                        lab,
                        f"b2lazy faster than {name}",
                        "MET" if b and b_ok else "MISSED",
                        f"{name} failed ({c[peer]['error'][:60]}); b2lazy {be.fmt_s(b)} s",
                    )
                )
            elif b and p:
                out.append(
                    (
                        lab,
                        f"b2lazy faster than {name}",
                        "MET" if p > b and b_ok else "MISSED",
                        f"{be.fmt_s(p)} s vs {be.fmt_s(b)} s = {p / b:.2f}x",
                    )
                )
            else:
                out.append((lab, f"b2lazy faster than {name}", "MISSED", "no timing"))
        p = c["numpy"].get("median")
        if b and p:
            out.append(
                (
                    lab,
                    "b2lazy within 1.5x of NumPy in memory",
                    "MET" if b <= 1.5 * p and b_ok else "MISSED",
                    f"{be.fmt_s(b)} s vs {be.fmt_s(p)} s = {b / p:.2f}x NumPy's time"
                    + (f" (codec limit alone: {c['codec']['median'] / p:.2f}x)" if c["codec"].get("median") else ""),
                )
            )
        lz, npd = rss_of(R, row["op"], "b2lazy"), rss_of(R, row["op"], "numpy")
        if lz and npd:
            g, f = lz["growth_vs_open"], npd["growth_vs_import"]
            out.append(
                (
                    lab,
                    "b2lazy peak RSS growth < 10% of NumPy's",
                    "MET" if g < 0.10 * f else "MISSED",
                    f"{g / MiB:.1f} MiB vs {f / MiB:.0f} MiB = {100 * g / f:.1f}% "
                    f"(NumPy excluding its operand: {npd['growth_vs_open'] / MiB:.0f} MiB)",
                )
            )
    return out


def md_timed(R):
    rows = R["timed"]
    lines = [
        "| operation | result | NumPy s | b2lazy s | python-blosc2 s | Dask s | codec limit s | "
        "NumPy/b2lazy | blosc2/b2lazy | Dask/b2lazy | codec/b2lazy | GB/s NumPy / b2lazy / blosc2 / Dask / codec | "
        "check b2lazy / blosc2 / Dask | other CPU |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|",
    ]
    for row in rows:
        c = row["contenders"]
        b = c["b2lazy"].get("median")

        def cell(n):
            d = c[n]
            if d.get("error"):
                return "FAIL"
            return be.fmt_s(d.get("median"))

        def ratio(n):
            t = c[n].get("median")
            return "—" if (not t or not b or c[n].get("error")) else f"{t / b:.2f}"

        def gb(n):
            return "—" if not c[n].get("GBps") or c[n].get("error") else f"{c[n]['GBps']:.2f}"

        def chk(n):
            d = c[n]
            if d.get("error"):
                return "error"
            k = d.get("check")
            if not k:
                return "—"
            if k["ok"]:
                return "ok"
            return "WRONG " + (f"rel {k['rel_err']:.1e}" if "rel_err" in k else k.get("note", "")[:60])

        res = {"full": "b2nd on disk", "full1d": "1-d b2nd on disk", "small": "NumPy in memory"}[row["kind"]]
        bl = cell("blosc2") + ("†" if row["op"] == "cumsum_flat" else "")
        busy = row.get("other_cpu_share")
        lines.append(
            f"| `{row['label']}` | {res} | {cell('numpy')} | {cell('b2lazy')} | {bl} | {cell('dask')} | "
            f"{cell('codec')} | {ratio('numpy')} | {ratio('blosc2')} | {ratio('dask')} | {ratio('codec')} | "
            f"{' / '.join(gb(n) for n in ('numpy', 'b2lazy', 'blosc2', 'dask', 'codec'))} | "
            f"{chk('b2lazy')} / {chk('blosc2')} / {chk('dask')} | "
            f"{'?' if busy is None else format(100 * busy, '.0f') + '%'} |"
        )
    return "\n".join(lines)


def md_stats(R):
    lines = [
        "| operation | chunks decompressed (total) | operand chunks | passes | cache hits | "
        "cache misses | output chunks | peak scratch MiB | same counts every run | out cratio b2lazy / blosc2 / Dask |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for row in R["timed"]:
        st = row.get("b2lazy_stats") or {}
        tot = (st.get("chunks_decompressed") or {}).get("total")
        allst = row.get("b2lazy_stats_all") or []
        keys = ("chunks_decompressed", "cache_hits", "cache_misses", "output_chunks")
        same = len({json.dumps([s.get(k) for k in keys]) for s in allst}) == 1 if allst else None
        cr = []
        for n in ("b2lazy", "blosc2", "dask"):
            k = row["contenders"][n].get("check") or {}
            cr.append("—" if k.get("out_cratio") is None else f"{k['out_cratio']:.2f}")
        lines.append(
            f"| `{row['label']}` | {tot if tot is not None else '—'} | {row['nchunks']} | "
            f"{'—' if tot is None else format(tot / row['nchunks'], '.2f')} | {st.get('cache_hits', '—')} | "
            f"{st.get('cache_misses', '—')} | {st.get('output_chunks', '—')} | "
            f"{'—' if st.get('peak_scratch_bytes') is None else format(st['peak_scratch_bytes'] / MiB, '.1f')} | "
            f"{'—' if same is None else ('yes' if same else 'NO')} ({len(allst)} runs) | {' / '.join(cr)} |"
        )
    return "\n".join(lines)


def md_rss(R):
    lines = [
        "| operation | NumPy footprint MiB (growth after load) | b2lazy growth MiB | python-blosc2 growth MiB | "
        "Dask growth MiB | b2lazy / NumPy footprint | RSS after imports MiB | NumPy RSS after load MiB | "
        "run s NumPy / b2lazy / blosc2 / Dask (1 cold run) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for op, label, _ in OPS:
        d = {c: None for c in CONTENDERS}
        err = {}
        for x in R.get("rss") or []:
            if x["op"] == op:
                d[x["contender"]] = x
                if x.get("error"):
                    err[x["contender"]] = x["error"].splitlines()[0][:60]

        def g(c):
            x = d[c]
            if c in err:
                return "FAIL"
            return "—" if not x or "growth_vs_open" not in x else f"{x['growth_vs_open'] / MiB:.1f}"

        npd = d["numpy"]
        foot = (
            f"{npd['growth_vs_import'] / MiB:.0f} ({npd['growth_vs_open'] / MiB:.0f})"
            if npd and "growth_vs_import" in npd and "numpy" not in err
            else "—"
        )
        frac = "—"
        if npd and d["b2lazy"] and "growth_vs_open" in d["b2lazy"] and "growth_vs_import" in npd:
            frac = f"{100 * d['b2lazy']['growth_vs_open'] / npd['growth_vs_import']:.1f}%"
        imp = "/".join(
            f"{d[c]['rss_after_import'] / MiB:.0f}" for c in CONTENDERS if d[c] and "rss_after_import" in d[c]
        )
        nload = f"{npd['rss_after_open'] / MiB:.0f}" if npd and "rss_after_open" in npd else "—"
        runs = " / ".join(be.fmt_s(d[c].get("median")) if d[c] else "—" for c in CONTENDERS)
        lines.append(
            f"| `{label}` | {foot} | {g('b2lazy')} | {g('blosc2')}{'†' if op == 'cumsum_flat' else ''} | "
            f"{g('dask')} | {frac} | {imp} | {nload} | {runs} |"
        )
    if any(x.get("error") for x in R.get("rss") or []):
        lines.append("")
        for x in R["rss"]:
            if x.get("error"):
                lines.append(f"- FAIL {x['contender']} `{OP_LABEL[x['op']]}`: {x['error'].splitlines()[0][:200]}")
    return "\n".join(lines)


def md_targets(ts):
    lines = ["| operation | target | status | figure |", "|---|---|---|---|"]
    for op, t, s, f in ts:
        lines.append(f"| `{op}` | {t} | **{s}** | {f} |")
    met = sum(1 for t in ts if t[2] == "MET")
    lines.append("")
    lines.append(f"{met} of {len(ts)} targets met.")
    return "\n".join(lines)


def report(R, args):
    shape = tuple(R["config"]["shape"])
    chunks, blocks, fchunks, fblocks = layout(shape)
    env = R["env"]
    busy = R.get("section_other_cpu_share", {})
    quick = R["quick"]
    cmd = "python bench/bench_reductions.py " + " ".join(sys.argv[1:])
    out = []
    title = "## Reductions and scans (`bench/bench_reductions.py`)"
    if quick:
        title += " — QUICK SMOKE TEST, not for quoting"
    out += [title, ""]
    contended = any(v is not None and v > 0.10 for v in busy.values())
    if contended:
        out += [
            "**Contended run:** other processes used "
            + ", ".join(f"{k} {100 * v:.0f}%" for k, v in busy.items() if v is not None)
            + " of the whole machine during the sections (2 cores). Ratios hold better than "
            "absolute times; re-run on a quiet machine before quoting.",
            "",
        ]
    out += [
        f"- Date: {env['date']}",
        f"- Machine: {env['cores']} cores, {env['cpu']}, {env['ram_GiB']:.1f} GiB RAM",
        f"- Versions: Python {env['python']}, NumPy {env['numpy']}, numexpr {env['numexpr']}, "
        f"python-blosc2 {env['blosc2']} (C-Blosc2 {env['c_blosc2']}), dask {env['dask']}; "
        f"b2lazy commit {env['b2lazy_commit']}, {env['b2lazy_core']}",
        f"- Command: `{cmd}` (total {R['total_seconds']:.0f} s, data generation {R['t_gen']:.0f} s; "
        + ", ".join(f"{k} {v:.0f} s" for k, v in R["section_seconds"].items())
        + ")",
        f"- Operand: `a` of bench_elementwise (`sin(1234.5x) + x + 1e-3·N(0,1)`, x = flat index/(n-1)), "
        f"float64 {shape} = {shape[0] * shape[1] * 8 / 2**30:g} GiB uncompressed, "
        f"{R['config']['operand_file_bytes'] / 2**30:.2f} GiB on disk (cratio {R['config']['in_cratio']:.2f}), "
        f"zstd clevel 1 + shuffle; chunks {chunks} ({chunks[0] * chunks[1] * 8 / MiB:g} MiB row strips), "
        f"blocks {blocks}; {R['config']['nchunks']} chunks. Every on-disk output uses the same codec, "
        f"chunks and blocks (1-d outputs: chunks {fchunks}, blocks {fblocks}, same bytes per chunk).",
        f"- Threads: {NTHREADS} for b2lazy (`nthreads=2`), python-blosc2 (`set_nthreads(2)`, "
        f'CParams/DParams nthreads=2), Dask (`scheduler="threads", num_workers=2`; blosc2 underneath '
        f"also at 2); NumPy single-threaded.",
        f"- Timing: each contender warmed up once, then {R['config']['reps']} timed rounds, contenders "
        f"interleaved and rotated each round; median. Output files removed before every run (not timed); "
        f"no fsync (files in the page cache). GB/s = (operand bytes once + result bytes, uncompressed) / median.",
        "- NumPy: operand loaded into RAM beforehand (not timed), result in RAM. b2lazy: `b2lazy.open(path)`; "
        "full-size results `.compute(urlpath=..., chunks, blocks, cparams=zstd/1/shuffle, nthreads=2)`, small "
        'ones `.to_numpy(nthreads=2)`. python-blosc2: `blosc2.lazyexpr("sum(a) + a" / "a - mean(a, axis=0)", '
        'operands={"a": blosc2.open(path)}).compute(urlpath=..., mode="w", chunks, blocks, cparams, dparams)`, '
        "`blosc2.sum(a, axis=0|1)`, and † `blosc2.cumulative_sum(a1, axis=0, out=blosc2.empty(..., urlpath=...))` on "
        "a **1-d copy** `a1` of the same data (python-blosc2 raises for axis=None on N-d arrays; the copy has the "
        "same chunk/block bytes, prepared beforehand). Dask: `da.from_array(blosc2.open(path), chunks=<b2nd chunks>)`, "
        "`da.sum(X) + X`, `X - da.mean(X, axis=0)`, "
        "`da.cumsum(X.ravel(), axis=None)`, `da.sum(X, axis=0|1).compute()`; "
        "full-size results `da.store(x, blosc2.empty(shape, chunks, blocks, cparams, urlpath=...), lock=True)`.",
        "- Codec limit: per chunk, C-Blosc2 `schunk.decompress_chunk(i, dst=buf)` of the operand (**one** pass) plus, "
        "for full-size results, `out.schunk.update_data(i, result_chunk)` (compression + write) into a b2nd file "
        "with the same cparams; the result chunk holds the real values, computed untimed. Small results: "
        "decompression only. Ops 1 and 2 need two passes over the operand in bounded memory, cumsum two passes "
        "minus one chunk in b2lazy (see the passes column), so their codec figure is a loose floor.",
        f"- Checks: every b2lazy, python-blosc2 and Dask result vs NumPy's: full-size outputs read back "
        f"from disk at rows {R['config']['rows_checked']} (1-d: the same rows of the C-order ravel) and the last "
        f"element; small outputs whole. Pass: max|got − NumPy| / max|NumPy| ≤ {TOL:g}.",
        f"- Peak RSS: each contender × operation in a fresh subprocess (`--rss-child`), spawned before this "
        f"process loads anything: RSS after imports and after opening the operand (NumPy: after loading it into "
        f"RAM), then {R['config']['rss_runs']} run(s), then `ru_maxrss`. Growth = ru_maxrss − RSS after open; "
        f"NumPy footprint = ru_maxrss − RSS after imports (operand + result + temporaries: what NumPy needs to do "
        f"the operation at all) — the 10% target compares b2lazy's growth to that.",
        "",
    ]
    out += [
        "### Time (median), ratios (>1: b2lazy faster), throughput, checks",
        "",
        md_timed(R),
        "",
        "† python-blosc2 on the 1-d copy (see above).",
        "",
        "### b2lazy work counters (last timed run)",
        "",
        md_stats(R),
        "",
    ]
    if R.get("rss"):
        out += [
            f"### Peak RSS growth, fresh subprocess per contender and operation "
            f"({shape[0] * shape[1] * 8 / 2**30:g} GiB operand)",
            "",
            md_rss(R),
            "",
        ]
    out += ["### Targets", "", md_targets(R["targets"]), ""]
    return "\n".join(out)


# ----------------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="64 MiB operand, smoke test (~1-2 min)")
    ap.add_argument(
        "--size-gib",
        type=float,
        default=None,
        help="uncompressed size of the float64 operand (default 2; --quick 1/16)",
    )
    ap.add_argument("--out", default=None, help="write all raw results as JSON here")
    ap.add_argument(
        "--md", default=os.path.join(HERE, "RESULTS-reductions.md"), help="write the Markdown section here ('' to skip)"
    )
    ap.add_argument("--data-dir", default=os.path.join(HERE, "data"))
    ap.add_argument("--sections", default="rss,timed")
    ap.add_argument("--reps", type=int, default=None, help="timed repetitions (default 3 at >= 1 GiB, else 5)")
    # internal
    ap.add_argument("--gen", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--rss-child", default=None, choices=CONTENDERS, help=argparse.SUPPRESS)
    ap.add_argument("--op", default=None, choices=[k for k, _, _ in OPS], help=argparse.SUPPRESS)
    ap.add_argument("--shape", type=int, nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--runs", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--warm", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--outdir", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.gen:
        return gen_main(args.gen)
    if args.rss_child:
        return rss_child_main(args)

    t_start = time.perf_counter()
    sections = set(args.sections.split(","))
    ddir = os.path.abspath(args.data_dir)
    outdir = os.path.join(ddir, "out_reductions")
    os.makedirs(outdir, exist_ok=True)
    size_gib = args.size_gib or (1 / 16 if args.quick else 2)
    shape = be.fix_shape(be.shape_for(int(size_gib * 2**30 / 8)), 8)
    reps = args.reps or (3 if shape[0] * shape[1] * 8 >= 2**30 else 5)
    chunks, blocks, fchunks, fblocks = layout(shape)

    print(
        f"# b2lazy reductions benchmark ({'quick' if args.quick else 'full'}): float64 {shape}, "
        f"chunks {chunks}, blocks {blocks}\n",
        flush=True,
    )
    print(f"generating/re-using the operand and its 1-d copy under {ddir} (separate process) ...", flush=True)
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--gen", json.dumps({"ddir": ddir, "shapes": [list(shape)]})],
        check=True,
    )
    t_gen = time.perf_counter() - t0

    sect_times, sect_busy = {}, {}
    R = {"argv": sys.argv, "quick": args.quick, "t_gen": t_gen}
    # RSS children first, while this process is small (only stdlib imported so far):
    # a child's ru_maxrss starts at the high-water mark of the address space it forked from.
    if "rss" in sections:
        print("\npeak RSS (fresh subprocess per contender and operation) ...", flush=True)
        t0 = time.perf_counter()
        c0 = be.cpu_snapshot()
        R["rss"] = bench_rss(ddir, shape, outdir, runs=1, warm=0)
        sect_busy["rss"] = be.contention(c0, be.cpu_snapshot())
        sect_times["rss"] = time.perf_counter() - t0

    be.set_threads()
    import blosc2

    R["env"] = be.environment()
    opf = operand_path(ddir, shape)
    src = blosc2.open(opf)
    R["config"] = {
        "shape": list(shape),
        "chunks": list(chunks),
        "blocks": list(blocks),
        "flat_chunks": list(fchunks),
        "flat_blocks": list(fblocks),
        "reps": reps,
        "nchunks": src.schunk.nchunks,
        "in_cratio": src.schunk.cratio,
        "operand_file": opf,
        "operand_file_bytes": os.path.getsize(opf),
        "flat_file": flat_path(ddir, shape),
        "rss_runs": 1,
        "tolerance": TOL,
        "rows_checked": sample_rows(shape, chunks),
        "formula": be.FORMULAS[(KIND, NAME)],
        "data_desc": src.vlmeta["b2bench"],
    }
    del src
    if "timed" in sections:
        print(f"\ntimed runs (1 warm-up + {reps}, interleaved) ...", flush=True)
        t0 = time.perf_counter()
        c0 = be.cpu_snapshot()
        R["timed"] = bench_timed(ddir, shape, reps, outdir)
        sect_busy["timed"] = be.contention(c0, be.cpu_snapshot())
        sect_times["timed"] = time.perf_counter() - t0
    R["section_seconds"] = sect_times
    R["section_other_cpu_share"] = sect_busy
    R["total_seconds"] = time.perf_counter() - t_start
    R["targets"] = targets(R) if R.get("timed") else []

    md = report(R, args) if R.get("timed") else ""
    print("\n" + md)
    print(
        "CPU used by other processes during each section (share of the whole machine; 0% = quiet): "
        + ", ".join(f"{k} {'?' if v is None else format(100 * v, '.0f') + '%'}" for k, v in sect_busy.items())
    )
    if args.out:
        with open(args.out, "w") as f:
            json.dump(R, f, indent=1, default=str)
        print(f"raw results: {args.out}")
    if args.md and md:
        with open(args.md, "w") as f:
            f.write(md + "\n")
        print(f"markdown section: {args.md}")
    import shutil

    shutil.rmtree(outdir, ignore_errors=True)


if __name__ == "__main__":
    main()
