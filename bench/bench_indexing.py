#!/usr/bin/env python3
"""Indexing benchmark: b2lazy vs NumPy (in memory), python-blosc2, zarr and Dask.

    python bench/bench_indexing.py [--rows 32768] [--reps 5] [--out bench/RESULTS-indexing.json]
    python bench/bench_indexing.py --rows 1024 --reps 2 --out /tmp/ix.json     # quick test

Issue #5: "A benchmark under bench/, side by side in one run with NumPy (in memory),
python-blosc2, zarr and Dask, over 2 GiB float64 arrays compressed on disk: a sorted and an
unsorted integer-array selection of 1 % of rows, a boolean mask keeping 10 %, a strided slice
of an expression, and writing a fancy selection to a compressed file. Targets: faster than
each peer on each; peak RSS growth under 256 MiB for the on-disk selections."

Data (generated once into bench/data by a separate process, re-used while DATA_VERSION and
the shape match; never more than one chunk band in memory): float64 a, b of shape
(rows, 8192) (2 GiB each at the default 32768 rows), values sin(k*917.3*x + k) + 1e-3*noise
(x = flat index / size, k = 1 for a, 2 for b), stored twice with the same values:
  - b2nd: chunks 1024 x 1024 (8 MiB), blocks 32 x 1024, zstd clevel 1 + shuffle;
  - zarr v3: chunks 1024 x 1024, BloscCodec(zstd, clevel 1, shuffle), no sharding.
Selections (fixed seed): idx = sorted random 1 % of the rows; idxu = the same rows shuffled
plus 5 % repeats; m = a boolean row mask keeping 10 % of the rows; idx10 = an unsorted 10 %
of the rows (no repeats); q = sin(0.4 pi), keeping about 10 % of the elements of a.

Operations and each contender's code (A, B = the arrays as that contender opens them):

  sorted_rows    a[idx]  -> in memory
  unsorted_rows  a[idxu] -> in memory
  mask_rows      a[m]    -> in memory
  mask_values    a[a > q] -> in memory (1-d, C order)
  strided_expr   (sin(a) + b)[::16, ::4] -> in memory
  write_fancy    a[idx10] -> compressed file on disk (chunks 1024 x 1024; b2nd blocks 32 x 1024)

  numpy      a, b loaded into RAM beforehand (NOT timed; their size IS in the RSS growth);
             a[idx]; a[idxu]; a[m]; a[a > q]; np.sin(a[::16, ::4]) + b[::16, ::4];
             blosc2.asarray(a[idx10], urlpath=out, chunks=..., blocks=..., cparams=zstd1+shuffle)
  b2lazy     A = b2lazy.open(path); e.compute(cparams=zstd1+shuffle, nthreads=2) -> compressed
             b2nd in memory, for e = A[idx]; A[idxu]; A[m]; A[A > q]; (b2lazy.sin(A) + B)[::16, ::4];
             A[idx10].compute(urlpath=out, chunks=..., blocks=..., cparams=..., nthreads=2)
  b2lazy_np  the same expressions, e.to_numpy(nthreads=2) -> NumPy (no write_fancy cell)
  blosc2     A = blosc2.open(path, dparams=nthreads 2): A[idx]; A[idxu]; A[m]; A[A > q][()];
             (blosc2.sin(A) + B)[::16, ::4]; blosc2.asarray(A[idx10], urlpath=out, ...)
             NOTE: A[A > q] returns the values in chunk order, not NumPy's C order (the check
             says so; the sorted values are the same).
  zarr       Z = zarr.open_array(path, mode="r") (zarr config threading.max_workers=2):
             Z.oindex[idx]; Z.oindex[idxu]; Z.oindex[m] (Z[m] with a 1-d row mask raises:
             zarr sends a lone boolean array to vindex, which wants a full-shape mask);
             mask_values: zarr has no expressions and Z.vindex[mask] needs a full-shape NumPy
             mask, so the out-of-core code is a loop over chunk-row bands:
             np.concatenate([z[z > q] for z in (Z[r:r + 1024] for r in range(0, rows, 1024))]);
             np.sin(Z[::16, ::4]) + W[::16, ::4];
             zarr.create_array(out, data=Z.oindex[idx10], chunks=(1024, 1024), compressors=Blosc zstd1)
  dask       A = da.from_array(blosc2.open(path, dparams=nthreads 1), chunks=(1024, 1024))
             (--dask-source blosc2, the default: faster than da.from_zarr in small runs,
             because Dask hands the index arrays to blosc2, which decompresses only the blocks
             they touch) or da.from_zarr(path) (--dask-source zarr);
             with dask.config.set(scheduler="threads", num_workers=2):
             A[idx].compute(); A[idxu].compute(); A[m].compute(); A[A > q].compute();
             (da.sin(A) + B)[::16, ::4].compute();
             da.to_zarr(A[idx10].rechunk((1024, 1024)), out, compressors=Blosc zstd1)
  codec      reference, not a peer: C-Blosc2 decompressing every chunk of the operands the
             operation reads (a; a and b for strided_expr), 2 threads — the cost of a full scan.

All contenders 2 threads (NumPy's indexing is single-threaded; its write_fancy compresses with
blosc2 at 2 threads). Each (contender, operation) runs in a fresh subprocess: open the
operands, one warm-up, then --reps timed runs (median reported; results of one run are freed
before the next; glibc's malloc_trim(0) before every run, else the heap pages of freed
results pile up in malloc's arenas — +20 MiB per run for b2lazy's 156 MiB compressed
mask_rows result). Peak RSS growth = ru_maxrss at the end of the timed runs minus RSS after
opening the operands (NumPy: minus RSS after imports, so it includes the arrays loaded into
RAM). For b2lazy the engine's work counters (.stats; .last_stats for to_numpy) are recorded.
Each result is checked after the timing against the source rows read from the b2nd file with
python-blosc2 (a few sampled output rows; for mask_values the sampled rows' segments and the
total length), so no process ever needs the whole reference. Output files are removed.
An error in one cell is recorded in that cell; the run goes on.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
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
COLS = 8192
CHUNKS = (1024, 1024)
BLOCKS = (32, 1024)
STEP = (16, 4)
RSS_TARGET = 256 * MiB
SEED = 20240605
CONTENDERS = ["numpy", "b2lazy", "b2lazy_np", "blosc2", "zarr", "dask", "codec"]
ON_DISK_PEERS = ["blosc2", "zarr", "dask"]
B2LAZY = ["b2lazy", "b2lazy_np"]
LABELS = {
    "numpy": "NumPy (in memory)",
    "b2lazy": "b2lazy .compute()",
    "b2lazy_np": "b2lazy .to_numpy()",
    "blosc2": "python-blosc2",
    "zarr": "zarr",
    "dask": "Dask",
    "codec": "codec: full decompression",
}
OPS = [
    ("sorted_rows", "a[idx], idx sorted 1 % of rows"),
    ("unsorted_rows", "a[idxu], same rows shuffled + 5 % repeats"),
    ("mask_rows", "a[m], m keeps 10 % of rows"),
    ("mask_values", "a[a > q], ~10 % of elements"),
    ("strided_expr", "(sin(a) + b)[::16, ::4]"),
    ("write_fancy", "a[idx10] -> compressed file, idx10 unsorted 10 % of rows"),
]
ATOL = 1e-12  # strided_expr: sin may differ by an ulp between libms; selections are exact


# ----------------------------------------------------------------------------- data
def data_path(ddir, name, rows, fmt):
    return os.path.join(ddir, f"indexing_{name}_{rows}x{COLS}_{DATA_VERSION}.{fmt}")


def meta_path(ddir, rows):
    return os.path.join(ddir, f"indexing_meta_{rows}x{COLS}_{DATA_VERSION}.json")


def q_value():
    return math.sin(0.4 * math.pi)  # P(sin(t) > q) = 10 % for t uniform over whole periods


def data_desc(name, rows):
    return (
        f"{DATA_VERSION} {name} ({rows}, {COLS}) float64 chunks={CHUNKS} blocks={BLOCKS} zstd1 shuffle "
        f"sin(k*917.3*x + k) + 1e-3*noise, k={ {'a': 1, 'b': 2}[name] }"
    )


def zarr_codec():
    import zarr

    return zarr.codecs.BloscCodec(cname="zstd", clevel=1, shuffle="shuffle", typesize=8)


def data_ok(ddir, name, rows):
    import blosc2
    import zarr

    desc = data_desc(name, rows)
    try:
        arr = blosc2.open(data_path(ddir, name, rows, "b2nd"))
        if arr.vlmeta["b2bench"] != desc:
            return False
        z = zarr.open_array(data_path(ddir, name, rows, "zarr"), mode="r")
        if z.attrs.get("b2bench") != desc:
            return False
        if name == "a":
            with open(meta_path(ddir, rows)) as f:
                if json.load(f).get("desc") != desc:
                    return False
    except Exception:  # noqa: BLE001
        return False
    return True


def gen_one(ddir, name, rows):
    """Writes the b2nd and the zarr copy of one operand band by band (one chunk row of
    1024 x 8192 float64 = 64 MiB at a time); for `a` also the count of a > q per row."""
    import blosc2
    import numpy as np
    import zarr

    if data_ok(ddir, name, rows):
        return False
    desc = data_desc(name, rows)
    shape = (rows, COLS)
    chunks = (min(rows, CHUNKS[0]), CHUNKS[1])
    blocks = (min(rows, BLOCKS[0]), BLOCKS[1])
    pb, pz = data_path(ddir, name, rows, "b2nd"), data_path(ddir, name, rows, "zarr")
    tb, tz = pb + ".tmp.b2nd", pz + ".tmp"
    for p in (tb, tz):
        be.rm(p)
    arr = blosc2.uninit(
        shape, dtype=np.float64, chunks=chunks, blocks=blocks, urlpath=tb, mode="w", cparams=be.b2_cparams()
    )
    z = zarr.create_array(tz, shape=shape, dtype=np.float64, chunks=chunks, compressors=[zarr_codec()], overwrite=True)
    k = {"a": 1, "b": 2}[name]
    total = rows * COLS
    counts = np.zeros(rows, dtype=np.int64)
    q = q_value()
    for i, r0 in enumerate(range(0, rows, chunks[0])):
        r1 = min(rows, r0 + chunks[0])
        x = np.arange(r0 * COLS, r1 * COLS, dtype=np.float64) / total
        v = np.sin(k * 917.3 * x + k)
        v += 1e-3 * np.random.default_rng([k, i]).standard_normal(x.size)
        v = v.reshape(r1 - r0, COLS)
        arr[r0:r1] = v
        z[r0:r1] = v
        if name == "a":
            counts[r0:r1] = (v > q).sum(axis=1)
    arr.vlmeta["b2bench"] = desc
    z.attrs["b2bench"] = desc
    cratio = arr.schunk.cratio
    del arr, z
    for p in (pb, pz):
        be.rm(p)
    os.replace(tb, pb)
    os.replace(tz, pz)
    if name == "a":
        with open(meta_path(ddir, rows), "w") as f:
            json.dump({"desc": desc, "q": q, "row_counts": counts.tolist(), "b2nd_cratio": cratio}, f)
    return True


def gen_main(ddir, rows):
    be.set_threads()
    os.makedirs(ddir, exist_ok=True)
    for name in ("a", "b"):
        t0 = time.perf_counter()
        made = gen_one(ddir, name, rows)
        print(
            f"  {'generated' if made else 're-used'} {os.path.basename(data_path(ddir, name, rows, 'b2nd'))} "
            f"+ .zarr ({time.perf_counter() - t0:.1f} s)",
            flush=True,
        )


# ----------------------------------------------------------------------------- selections
def trim_heap():
    """glibc's malloc_trim(0): return freed heap pages to the OS, so that the peak RSS of
    a run is not inflated by the freed results of earlier runs (any contender)."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass


def selections(rows):
    import numpy as np

    rng = np.random.default_rng(SEED)
    idx = np.sort(rng.choice(rows, max(1, rows // 100), replace=False))
    rep = rng.choice(idx, max(1, len(idx) // 20))
    idxu = rng.permutation(np.concatenate([idx, rep]))
    m = np.zeros(rows, dtype=bool)
    m[rng.choice(rows, max(1, rows // 10), replace=False)] = True
    idx10 = rng.permutation(rows)[: max(1, rows // 10)]
    return {"idx": idx, "idxu": idxu, "m": m, "idx10": idx10}


def source_rows(op, sel, rows):
    """Output row j of a row-selecting op is source row source_rows(...)[j]."""
    import numpy as np

    return {
        "sorted_rows": sel["idx"],
        "unsorted_rows": sel["idxu"],
        "mask_rows": np.flatnonzero(sel["m"]),
        "write_fancy": sel["idx10"],
        "strided_expr": np.arange(0, rows, STEP[0]),
    }.get(op)


def expected_shape(op, sel, rows, meta):
    if op == "mask_values":
        return (int(sum(meta["row_counts"])),)
    if op == "strided_expr":
        return (-(-rows // STEP[0]), -(-COLS // STEP[1]))
    return (len(source_rows(op, sel, rows)), COLS)


def sample_positions(nout, k=8):
    import numpy as np

    if nout == 0:
        return []
    fixed = {0, nout // 3, (2 * nout) // 3, nout - 1}
    rnd = set(np.random.default_rng(SEED + 1).integers(0, nout, k).tolist())
    return sorted(fixed | rnd)


# ----------------------------------------------------------------------------- one run
def import_b2lazy(tries=3, wait=60):
    """The package may be re-installed while we run: retry a failed import a few times."""
    import importlib

    for k in range(tries):
        try:
            return importlib.import_module("b2lazy")
        except Exception:  # noqa: BLE001
            if k == tries - 1:
                raise
            for mod in [m for m in sys.modules if m == "b2lazy" or m.startswith("b2lazy.")]:
                del sys.modules[mod]
            time.sleep(wait)


class Result:
    """What a timed call produced, in the form needed for the check."""

    def __init__(self, kind, obj, path=None):
        self.kind, self.obj, self.path = kind, obj, path  # kind: numpy, b2lazy, blosc2, b2nd_file, zarr_file


def make_fn(c, op, paths, sel, q, out, args, holder):
    """(opener, fn): opener() opens the operands and returns a dict; fn(ops) runs the op once."""
    import numpy as np
    import blosc2

    need_b = op == "strided_expr"
    s0, s1 = STEP
    kw_b2 = dict(chunks=CHUNKS, blocks=BLOCKS, cparams=be.b2_cparams())
    idx, idxu, m, idx10 = sel["idx"], sel["idxu"], sel["m"], sel["idx10"]

    if c == "numpy":
        import bench_linalg as bla

        def opener():
            return {"a": bla.load_numpy(paths["a"]), "b": bla.load_numpy(paths["b"]) if need_b else None}

        def fn(o):
            a, b = o["a"], o["b"]
            if op == "sorted_rows":
                return Result("numpy", a[idx])
            if op == "unsorted_rows":
                return Result("numpy", a[idxu])
            if op == "mask_rows":
                return Result("numpy", a[m])
            if op == "mask_values":
                return Result("numpy", a[a > q])
            if op == "strided_expr":
                return Result("numpy", np.sin(a[::s0, ::s1]) + b[::s0, ::s1])
            blosc2.asarray(a[idx10], urlpath=out, mode="w", **kw_b2)  # the handle is dropped at once
            return Result("b2nd_file", None, out)

        return opener, fn

    if c in B2LAZY:
        bl = import_b2lazy()

        def opener():
            return {"a": bl.open(paths["a"]), "b": bl.open(paths["b"]) if need_b else None}

        def expr(o):
            A, B = o["a"], o["b"]
            return {
                "sorted_rows": lambda: A[idx],
                "unsorted_rows": lambda: A[idxu],
                "mask_rows": lambda: A[m],
                "mask_values": lambda: A[A > q],
                "strided_expr": lambda: (bl.sin(A) + B)[::s0, ::s1],
                "write_fancy": lambda: A[idx10],
            }[op]()

        def fn(o):
            e = expr(o)
            if op == "write_fancy":
                if c == "b2lazy_np":
                    raise NotImplementedError("no to_numpy variant of a write to disk")
                r = e.compute(urlpath=out, chunks=CHUNKS, blocks=BLOCKS, cparams=be.B2LAZY_CPARAMS, nthreads=NTHREADS)
                holder["stats"] = r.stats
                del r
                return Result("b2nd_file", None, out)
            if c == "b2lazy":
                r = e.compute(cparams=be.B2LAZY_CPARAMS, nthreads=NTHREADS)
                holder["stats"] = r.stats
                return Result("b2lazy", r)
            r = e.to_numpy(nthreads=NTHREADS)
            holder["stats"] = getattr(e, "last_stats", None)
            return Result("numpy", r)

        return opener, fn

    if c == "blosc2":

        def opener():
            dp = be.b2_dparams()
            return {
                "a": blosc2.open(paths["a"], dparams=dp),
                "b": blosc2.open(paths["b"], dparams=dp) if need_b else None,
            }

        def fn(o):
            A, B = o["a"], o["b"]
            if op == "sorted_rows":
                return Result("numpy", A[idx])
            if op == "unsorted_rows":
                return Result("numpy", A[idxu])
            if op == "mask_rows":
                return Result("numpy", A[m])
            if op == "mask_values":
                return Result("numpy", A[A > q][()])
            if op == "strided_expr":
                return Result("numpy", (blosc2.sin(A) + B)[::s0, ::s1])
            blosc2.asarray(A[idx10], urlpath=out, mode="w", **kw_b2)  # the handle is dropped at once
            return Result("b2nd_file", None, out)

        return opener, fn

    if c == "zarr":
        import zarr

        zarr.config.set({"threading.max_workers": NTHREADS})

        def opener():
            return {
                "a": zarr.open_array(paths["za"], mode="r"),
                "b": zarr.open_array(paths["zb"], mode="r") if need_b else None,
            }

        def fn(o):
            Z, W = o["a"], o["b"]
            if op == "sorted_rows":
                return Result("numpy", Z.oindex[idx])
            if op == "unsorted_rows":
                return Result("numpy", Z.oindex[idxu])
            if op == "mask_rows":
                return Result("numpy", Z.oindex[m])
            if op == "mask_values":
                step = Z.chunks[0]
                parts = []
                for r0 in range(0, Z.shape[0], step):
                    z = Z[r0 : r0 + step]
                    parts.append(z[z > q])
                    del z
                return Result("numpy", np.concatenate(parts))
            if op == "strided_expr":
                return Result("numpy", np.sin(Z[::s0, ::s1]) + W[::s0, ::s1])
            zarr.create_array(out, data=Z.oindex[idx10], chunks=CHUNKS, compressors=[zarr_codec()], overwrite=True)
            return Result("zarr_file", None, out)

        return opener, fn

    if c == "dask":
        import dask
        import dask.array as da
        import zarr

        zarr.config.set({"threading.max_workers": NTHREADS})

        def opener():
            def one(k):
                if args.dask_source == "zarr":
                    return da.from_zarr(paths["z" + k])
                arr = blosc2.open(paths[k], dparams=blosc2.DParams(nthreads=1))  # 2 workers x 1 thread
                return be.dask_from_b2nd(arr)

            return {"a": one("a"), "b": one("b") if need_b else None}

        def fn(o):
            A, B = o["a"], o["b"]
            with dask.config.set(scheduler="threads", num_workers=NTHREADS):
                if op == "sorted_rows":
                    return Result("numpy", A[idx].compute())
                if op == "unsorted_rows":
                    return Result("numpy", A[idxu].compute())
                if op == "mask_rows":
                    return Result("numpy", A[m].compute())
                if op == "mask_values":
                    return Result("numpy", A[A > q].compute())
                if op == "strided_expr":
                    return Result("numpy", (da.sin(A) + B)[::s0, ::s1].compute())
                da.to_zarr(A[idx10].rechunk(CHUNKS), out, compressors=[zarr_codec()])
                return Result("zarr_file", None, out)

        return opener, fn

    if c == "codec":

        def opener():
            return {k: blosc2.open(paths[k], dparams=be.b2_dparams()) for k in (("a", "b") if need_b else ("a",))}

        def fn(o):
            for arr in o.values():
                buf = np.empty(arr.chunks, dtype=arr.dtype)
                for i in range(arr.schunk.nchunks):
                    arr.schunk.decompress_chunk(i, dst=buf)
            return None

        return opener, fn
    raise ValueError(f"unknown contender {c}")


def get_rows(res, js):
    """Rows js (output positions) of a result, as one NumPy array."""
    import numpy as np
    import blosc2

    if res.kind == "numpy":
        return res.obj[js]
    if res.kind == "b2lazy":
        return np.stack([np.asarray(res.obj[j].to_numpy()) for j in js])
    if res.kind == "b2nd_file":
        o = blosc2.open(res.path)
        return np.stack([o[j] for j in js])
    if res.kind == "zarr_file":
        import zarr

        return zarr.open_array(res.path, mode="r").oindex[js]
    raise ValueError(res.kind)


def get_range(res, s, e):
    import numpy as np

    if res.kind == "numpy":
        return res.obj[s:e]
    if res.kind == "b2lazy":
        return np.asarray(res.obj[s:e].to_numpy())
    raise ValueError(res.kind)


def res_shape(res):
    import blosc2

    if res.kind in ("numpy", "b2lazy"):
        return tuple(res.obj.shape)
    if res.kind == "b2nd_file":
        return tuple(blosc2.open(res.path).shape)
    import zarr

    return tuple(zarr.open_array(res.path, mode="r").shape)


def check(op, res, paths, sel, rows, meta):
    """Compares a few sampled output rows with the source rows read with python-blosc2."""
    import numpy as np
    import blosc2

    A = blosc2.open(paths["a"])
    q = meta["q"]
    out = {"ok": False, "max_abs_err": None, "note": ""}
    shp, want = res_shape(res), expected_shape(op, sel, rows, meta)
    if shp != want:
        out["note"] = f"shape {shp} != {want}"
        return out
    if op == "mask_values":
        counts = np.asarray(meta["row_counts"])
        starts = np.concatenate([[0], np.cumsum(counts)])
        err, ok = 0.0, True
        for r in sample_positions(rows):
            got = get_range(res, int(starts[r]), int(starts[r + 1]))
            v = A[r]
            ref = v[v > q]
            ok &= got.shape == ref.shape and bool(np.array_equal(got, ref))
            if got.shape == ref.shape and ref.size:
                err = max(err, float(np.max(np.abs(got - ref))))
        out.update(ok=ok, max_abs_err=err)
        if not ok:  # python-blosc2 returns the values chunk by chunk: say so if that is it
            c0 = A[: CHUNKS[0], : CHUNKS[1]]
            ref0 = c0[c0 > q]
            if ref0.size and np.array_equal(get_range(res, 0, ref0.size), ref0):
                out["note"] = "values in chunk order, not NumPy's C order"
        return out
    src = source_rows(op, sel, rows)
    js = sample_positions(len(src))
    got = get_rows(res, js)
    if op == "strided_expr":
        B = blosc2.open(paths["b"])
        ref = np.stack([np.sin(A[src[j], :: STEP[1]]) + B[src[j], :: STEP[1]] for j in js])
        err = float(np.max(np.abs(got - ref)))
        out.update(ok=bool(np.allclose(got, ref, rtol=ATOL, atol=ATOL)), max_abs_err=err)
    else:
        ref = np.stack([A[int(src[j])] for j in js])
        out.update(ok=bool(np.array_equal(got, ref)), max_abs_err=float(np.max(np.abs(got - ref))))
    return out


def run_child(c, op, args):
    """Runs one contender on one operation (warm-up + reps); prints one JSON line."""
    res = {"contender": c, "op": op, "rows": args.rows, "error": None, "stats": None}
    out = os.path.join(
        args.outdir, f"indexing_{c}_{op}_{os.getpid()}" + (".zarr" if c in ("zarr", "dask") else ".b2nd")
    )
    try:
        be.set_threads()
        ddir = args.data_dir
        paths = {
            "a": data_path(ddir, "a", args.rows, "b2nd"),
            "b": data_path(ddir, "b", args.rows, "b2nd"),
            "za": data_path(ddir, "a", args.rows, "zarr"),
            "zb": data_path(ddir, "b", args.rows, "zarr"),
        }
        with open(meta_path(ddir, args.rows)) as f:
            meta = json.load(f)
        sel = selections(args.rows)
        holder = {}
        opener, fn = make_fn(c, op, paths, sel, meta["q"], out, args, holder)
        rss_import = be.rss_bytes()
        ops = opener()
        rss_open = be.rss_bytes()
        times = []
        r = None
        for k in range(args.warmup + args.reps):
            be.rm(out)
            r = None  # the previous result is freed before the next run, and glibc gives
            trim_heap()  # its pages back (else freed results pile up in the malloc arenas)
            t0 = time.perf_counter()
            r = fn(ops)
            dt = time.perf_counter() - t0
            if k >= args.warmup:
                times.append(dt)
        maxrss = be.maxrss_bytes()
        res.update(
            times=times,
            seconds=statistics.median(times),
            min_seconds=min(times),
            maxrss=maxrss,
            vmhwm=be.vmhwm_bytes(),
            rss_open=rss_open,
            rss_import=rss_import,
            growth=maxrss - (rss_import if c == "numpy" else rss_open),
        )
        if holder.get("stats") is not None:
            res["stats"] = dict(holder["stats"])
        del ops
        if r is not None:
            try:
                res["check"] = check(op, r, paths, sel, args.rows, meta)
            except Exception as e:  # noqa: BLE001
                res["check"] = {"ok": False, "max_abs_err": None, "note": f"check failed: {type(e).__name__}: {e}"}
            if r.kind == "b2nd_file":
                import blosc2

                o = blosc2.open(r.path)
                res["out_cratio"] = o.schunk.cratio
                res["out_chunks"], res["out_blocks"] = list(o.chunks), list(o.blocks)
    except Exception as e:  # noqa: BLE001
        res["error"] = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
    be.rm(out)
    print("RUNJSON:" + json.dumps(res, default=str), flush=True)


def spawn(c, op, args):
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--child",
        c,
        "--op",
        op,
        "--rows",
        str(args.rows),
        "--data-dir",
        args.data_dir,
        "--outdir",
        args.outdir,
        "--reps",
        str(args.reps),
        "--warmup",
        str(args.warmup),
        "--dask-source",
        args.dask_source,
    ]
    s0 = be.cpu_snapshot()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"contender": c, "op": op, "rows": args.rows, "error": f"timeout after {args.timeout} s"}
    s1 = be.cpu_snapshot()
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("RUNJSON:")]
    if p.returncode != 0 or not line:
        return {"contender": c, "op": op, "rows": args.rows, "error": f"exit {p.returncode}: {p.stderr[-2000:]}"}
    d = json.loads(line[0][len("RUNJSON:") :])
    d["contention"] = be.contention(s0, s1)
    d["wall_with_startup"] = s1[0] - s0[0]
    return d


# ----------------------------------------------------------------------------- report
find = be.find


def ok_cell(d):
    if d.get("error"):
        return False
    return bool(d.get("seconds") is not None)


def chk_text(d):
    ch = d.get("check")
    if not ch:
        return "—"
    if ch["ok"]:
        return "ok"
    return f"WRONG ({ch.get('note') or format(ch.get('max_abs_err') or float('nan'), '.1e')})"


def report(R):
    rows_n, rows = R["rows_n"], R["rows"]
    gib = rows_n * COLS * 8 / 2**30
    meta = R.get("meta", {})
    L = [
        f"a, b: ({rows_n}, {COLS}) float64 = {gib:.3g} GiB each on disk (b2nd cratio "
        f"{meta.get('b2nd_cratio', float('nan')):.2f}; zarr v3 copy), chunks {CHUNKS}, blocks {BLOCKS}, "
        f"zstd clevel 1 + shuffle; {NTHREADS} threads; Dask reads {R['dask_source']}. "
        f"Each cell: fresh process, {R['warmup']} warm-up + {R['reps']} timed runs, median "
        "(min in brackets). Ratio = b2lazy .compute() time / contender time (< 1: b2lazy faster). "
        "RSS growth: peak minus RSS after opening the operands (NumPy: after imports, i.e. including "
        "the arrays loaded into RAM, whose loading is not timed); glibc's malloc_trim(0) before each run, so "
        "freed results of earlier runs do not count. Results other than write_fancy's are held in memory and "
        "count: for the 10 % selections that is 205 MiB as NumPy, ~156 MiB compressed. "
        "Other processes' CPU: share of the "
        "machine used by other processes during the cell (0 % = quiet).",
        "",
    ]
    for op, label in OPS:
        if not any(find(rows, c, op) for c in CONTENDERS):
            continue
        L += [
            f"### `{op}`: {label}",
            "",
            "| contender | time s | b2lazy / this | peak RSS growth MiB | check | other processes' CPU |",
            "|---|---|---|---|---|---|",
        ]
        me = find(rows, "b2lazy", op)
        for c in CONTENDERS:
            d = find(rows, c, op)
            if not d:
                continue
            if d.get("error"):
                L.append(f"| {LABELS[c]} | failed: {d['error'].splitlines()[0][:150]} | | | | |")
                continue
            ratio = "—"
            if c != "b2lazy" and ok_cell(me) and d.get("seconds"):
                ratio = f"{me['seconds'] / d['seconds']:.2f}"
            L.append(
                f"| {LABELS[c]} | {d['seconds']:.3f} ({d['min_seconds']:.3f}) | {ratio} | "
                f"{d['growth'] / MiB:.0f} | {chk_text(d) if c != 'codec' else '—'} | "
                f"{'?' if d.get('contention') is None else format(d['contention'], '.0%')} |"
            )
        L.append("")
    L += [
        "b2lazy work counters (.compute() / .to_numpy()): chunk reads total / distinct / most reads of "
        "one chunk, bytes decompressed as a multiple of the operands' size, peak scratch, engine seconds:",
        "",
    ]
    nbytes = rows_n * COLS * 8
    for op, _ in OPS:
        parts = []
        for c in B2LAZY:
            st = find(rows, c, op).get("stats") or {}
            if not st:
                continue
            cd = st.get("chunks_decompressed", {})
            dist = st.get("distinct_chunks_decompressed", {})
            mx = st.get("max_decompressions_per_chunk", {})
            bd = st.get("bytes_decompressed", {})
            src = "; ".join(
                f"{os.path.basename(k).split('_')[1]}: {v} / {dist.get(k)} / {mx.get(k)}, "
                f"{(bd.get(k) or 0) / nbytes:.2f}x"
                for k, v in cd.items()
                if k != "total"
            )
            parts.append(
                f"{'compute' if c == 'b2lazy' else 'to_numpy'}: {src}; peak scratch "
                f"{st.get('peak_scratch_bytes', 0) / MiB:.0f} MiB; {st.get('seconds', float('nan')):.3f} s"
            )
        if parts:
            L.append(f"- `{op}`: " + " | ".join(parts))
    return "\n".join(L)


def targets(R):
    """(op, variant, ratios per contender, growth, faster-than-on-disk-peers, rss-ok, correct) rows.
    The speed target is against the on-disk peers (python-blosc2, zarr, Dask); NumPy's
    in-memory indexing (no decompression) is shown for information only."""
    rows = R["rows"]
    out = []
    for op, _ in OPS:
        for c in B2LAZY:
            me = find(rows, c, op)
            if not me:
                continue
            t = {
                "op": op,
                "variant": c,
                "ratios": {},
                "growth_MiB": None,
                "faster": None,
                "rss_ok": None,
                "correct": None,
                "error": None,
            }
            if not ok_cell(me):
                t["error"] = (me.get("error") or "no time").splitlines()[0][:150]
                t["faster"] = t["rss_ok"] = t["correct"] = False
                out.append(t)
                continue
            faster = True
            for p in ["numpy"] + ON_DISK_PEERS:
                d = find(rows, p, op)
                if not d:
                    continue
                if not ok_cell(d):
                    t["ratios"][p] = "failed"
                    continue
                r = me["seconds"] / d["seconds"]
                t["ratios"][p] = r
                if p != "numpy":
                    faster &= r < 1.0
            t["faster"] = faster
            t["growth_MiB"] = me["growth"] / MiB
            t["rss_ok"] = me["growth"] < RSS_TARGET
            t["correct"] = bool(me.get("check", {}).get("ok"))
            out.append(t)
    return out


def md_targets(ts):
    L = [
        f"Speed target: faster than each on-disk peer ({', '.join(LABELS[p] for p in ON_DISK_PEERS)}); "
        "the NumPy column (arrays already in RAM, no decompression) is for information. "
        "Ratios are b2lazy time / peer time (< 1: b2lazy faster). Memory target: peak RSS growth "
        "< 256 MiB.",
        "",
        "| op | b2lazy | / NumPy (info) | "
        + " | ".join(f"/ {LABELS[p]}" for p in ON_DISK_PEERS)
        + " | RSS growth MiB | faster than each peer | RSS < 256 MiB | result |",
        "|---|---|---|" + "---|" * len(ON_DISK_PEERS) + "---|---|---|---|",
    ]
    for t in ts:
        name = ".compute()" if t["variant"] == "b2lazy" else ".to_numpy()"
        if t["error"]:
            L.append(f"| `{t['op']}` | {name} | failed: {t['error']} |" + " |" * (len(ON_DISK_PEERS) + 4))
            continue

        def r(p):
            v = t["ratios"].get(p)
            return "—" if v is None else v if isinstance(v, str) else f"{v:.2f}"

        L.append(
            f"| `{t['op']}` | {name} | {r('numpy')} | "
            + " | ".join(r(p) for p in ON_DISK_PEERS)
            + f" | {t['growth_MiB']:.0f} | {'MET' if t['faster'] else 'MISSED'} | "
            f"{'MET' if t['rss_ok'] else 'MISSED'} | {'ok' if t['correct'] else 'WRONG'} |"
        )
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=32768, help="rows of a and b (8192 columns); 32768 = 2 GiB each")
    ap.add_argument("--reps", type=int, default=5, help="timed runs per cell (after the warm-up)")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--data-dir", default=os.path.join(HERE, "data"))
    ap.add_argument("--outdir", default=os.path.join(HERE, "data", "out"))
    ap.add_argument(
        "--out",
        default=os.path.join(HERE, "RESULTS-indexing.json"),
        help="JSON results file (the Markdown goes next to it, .md)",
    )
    ap.add_argument("--only", nargs="*", default=None, help="contenders to run")
    ap.add_argument("--ops", nargs="*", default=None, help="operations to run")
    ap.add_argument(
        "--dask-source",
        choices=["blosc2", "zarr"],
        default="blosc2",
        help="what Dask reads: the b2nd files via da.from_array(blosc2.open(...)) or the zarr copies",
    )
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per cell")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--op", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--gen", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.data_dir, args.outdir = os.path.abspath(args.data_dir), os.path.abspath(args.outdir)
    if args.child:
        return run_child(args.child, args.op, args)
    if args.gen:
        return gen_main(args.data_dir, args.rows)
    t_start = time.perf_counter()
    os.makedirs(args.outdir, exist_ok=True)
    print(f"data ({args.rows} x {COLS}, separate process) ...", flush=True)
    subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--gen", "--rows", str(args.rows), "--data-dir", args.data_dir],
        check=True,
    )
    t_gen = time.perf_counter() - t_start
    with open(meta_path(args.data_dir, args.rows)) as f:
        meta = json.load(f)
    # Keep this process small while it spawns children (ru_maxrss of a child starts at the
    # RSS of the process it was forked from): no NumPy/blosc2 imports here until the end.
    R = {
        "argv": sys.argv,
        "rows_n": args.rows,
        "cols": COLS,
        "reps": args.reps,
        "warmup": args.warmup,
        "dask_source": args.dask_source,
        "t_gen": t_gen,
        "meta": {
            "q": meta["q"],
            "kept_fraction": sum(meta["row_counts"]) / (args.rows * COLS),
            "b2nd_cratio": meta.get("b2nd_cratio"),
        },
        "rows": [],
    }
    contenders = [c for c in CONTENDERS if args.only is None or c in args.only]
    for op, label in OPS:
        if args.ops and op not in args.ops:
            continue
        for c in contenders:
            if c == "b2lazy_np" and op == "write_fancy":
                continue
            d = spawn(c, op, args)
            R["rows"].append(d)
            if d.get("error"):
                msg = "ERROR " + d["error"].splitlines()[0][:200]
            else:
                msg = (
                    f"{d['seconds']:.3f} s (min {d['min_seconds']:.3f}), growth {d['growth'] / MiB:.0f} MiB, "
                    f"check {chk_text(d)}"
                )
            print(f"  {op:14s} {c:9s} {msg}", flush=True)
    R["total_seconds"] = time.perf_counter() - t_start
    try:
        import zarr
        import numcodecs

        R["environment"] = dict(be.environment(), zarr=zarr.__version__, numcodecs=numcodecs.__version__)
    except Exception as e:  # noqa: BLE001
        R["environment"] = {"error": f"{type(e).__name__}: {e}"}
    R["targets"] = targets(R)
    env = R["environment"]
    head = [
        f"# Indexing benchmark ({env.get('date', '?')})",
        "",
        f"`python bench/bench_indexing.py {' '.join(sys.argv[1:])}`".replace("  ", " "),
        "",
        f"Machine: {env.get('cpu')}, {env.get('cores')} cores, {env.get('ram_GiB', 0):.0f} GiB RAM",
        "",
        "Versions: "
        + ", ".join(
            f"{k} {env.get(k)}"
            for k in ("python", "numpy", "blosc2", "c_blosc2", "dask", "zarr", "numcodecs", "b2lazy_commit")
            if k in env
        ),
        "",
        f"q = {meta['q']:.6f} keeps {100 * R['meta']['kept_fraction']:.2f} % of a's elements. "
        f"Total run {R['total_seconds']:.0f} s (data {t_gen:.0f} s).",
        "",
        "",
    ]
    text = "\n".join(head) + report(R) + "\n\n## Targets\n\n" + md_targets(R["targets"])
    print("\n" + text)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(R, f, indent=1, default=str)
        with open(os.path.splitext(args.out)[0] + ".md", "w") as f:
            f.write(text + "\n")
    if os.path.isdir(args.outdir) and not os.listdir(args.outdir):
        os.rmdir(args.outdir)  # shared with the other benchmarks: removed only when empty


if __name__ == "__main__":
    sys.exit(main())
