"""Workloads against NumPy and the codec in one process, interleaved: NumPy in memory, the
codec pass (decompress each source's chunks once, compress NumPy's result to a file with
the same cparams: what any out-of-core tool pays at least), then b2lazy from the files,
`--rounds` times; ratios of the medians. On a noisy host a fresh-process cell moves by
±15 % (and NumPy's own time by up to 40 % between processes); alternating in one process
exposes all three to the same stretch of contention. (The bench_layouts files.)

For products the columns also give a ceiling on 2 cores: the cores that run BLAS also
decompress the sources and compress the result, so b2lazy cannot beat NumPy / (NumPy +
io) against NumPy in memory, where io is b2lazy's own pass over the same sources into an
output of the same size with no flops (`a + b`; IO_PASS). "of ceiling" is how close the
product comes to it. (python-blosc2's codec pass is slower than b2lazy's io pass here, so
NumPy + codec would be a looser bound.)

    python bench/interleave_products.py [--n 4096] [--layouts default rows cols tiles]
                                        [--workloads ...] [--rounds 5] [--budget-mib 0]
                                        [--data-dir bench/data]
"""

import argparse
import os
import statistics
import time

import blosc2
import numpy as np
import b2lazy as bl

PRODUCTS = {
    "matmul(a, b)": (lambda a, b, a3: bl.matmul(a, b), lambda a, b, a3: a @ b),
    "matmul(a, b) + b": (lambda a, b, a3: bl.matmul(a, b) + b, lambda a, b, a3: a @ b + b),
    "matmul(sum(a3, axis=1), b)": (
        lambda a, b, a3: bl.matmul(bl.sum(a3, axis=1), b),
        lambda a, b, a3: np.sum(a3, axis=1) @ b,
    ),
    "a.T @ a": (lambda a, b, a3: a.T @ a, lambda a, b, a3: a.T @ a),
}
OTHERS = {
    "a - mean(a, axis=0)": (lambda a, b, a3: a - bl.mean(a, axis=0), lambda a, b, a3: a - np.mean(a, axis=0)),
    "sum(a) + a": (lambda a, b, a3: bl.sum(a) + a, lambda a, b, a3: np.sum(a) + a),
    "sin(a)**2 + cos(b)**2": (
        lambda a, b, a3: bl.sin(a) ** 2 + bl.cos(b) ** 2,
        lambda a, b, a3: np.sin(a) ** 2 + np.cos(b) ** 2,
    ),
}
WORKLOADS = {**PRODUCTS, **OTHERS}
# b2lazy's own pass over the same sources into an output of the same size, with no
# flops to speak of: its codec floor for the product (reads, writes, page faults).
IO_PASS = {
    "matmul(a, b)": lambda a, b, a3: a + b,
    "matmul(a, b) + b": lambda a, b, a3: a + b,
    "matmul(sum(a3, axis=1), b)": lambda a, b, a3: bl.sum(a3, axis=1) + b,
    "a.T @ a": lambda a, b, a3: a * 1.0,
}
SOURCES = {
    "matmul(sum(a3, axis=1), b)": ("a3", "b"),
    "a.T @ a": ("a",),
    "a - mean(a, axis=0)": ("a",),
    "sum(a) + a": ("a",),
}  # the others read a and b
CPARAMS = {"codec": "zstd", "clevel": 1, "filter": "shuffle"}  # b2lazy's and bench_layouts'
NTHREADS = 2


def codec_pass(paths, need, result, out):
    """Each source's chunks decompressed once, the result compressed once to `out`."""
    for x in need:
        s = blosc2.open(paths[x])
        buf = np.empty(s.schunk.chunksize, dtype=np.uint8)
        for k in range(s.schunk.nchunks):
            s.schunk.decompress_chunk(k, dst=buf)
    chunks = blosc2.open(paths["a"]).chunks if result.ndim == 2 else None
    cp = blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=1, filters=[blosc2.Filter.SHUFFLE], nthreads=NTHREADS)
    blosc2.asarray(result, chunks=chunks, urlpath=out, mode="w", cparams=cp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--layouts", nargs="*", default=["default", "rows", "cols", "tiles"])
    ap.add_argument("--workloads", nargs="*", default=list(PRODUCTS))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--budget-mib", type=int, default=0, help="max_memory (0: the default budget)")
    ap.add_argument("--data-dir", default=os.path.join(os.path.dirname(__file__), "data"))
    ap.add_argument("--out", default="/tmp/interleave_out.b2nd")
    o = ap.parse_args()
    blosc2.set_nthreads(NTHREADS)
    kw = {"max_memory": o.budget_mib << 20} if o.budget_mib else {}
    print(
        "| layout | workload | NumPy | codec pass | b2lazy "
        "| b2lazy io pass | b2lazy / NumPy speed | ceiling NumPy / (NumPy + io) "
        "| b2lazy of ceiling | b2lazy / codec time |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for lay in o.layouts:
        paths = {x: os.path.join(o.data_dir, f"layouts_{x}_{o.n}_{lay}.b2nd") for x in ("a", "b", "a3")}
        lz = {x: bl.open(p) for x, p in paths.items()}
        for name in o.workloads:
            lazy, eager = WORKLOADS[name]
            need = SOURCES.get(name, ("a", "b"))
            mem = {x: (bl.open(paths[x]).to_numpy() if x in need else None) for x in ("a", "b", "a3")}
            tn, tc, tb, ti = [], [], [], []
            for _ in range(o.rounds):
                t = time.perf_counter()
                r = eager(mem["a"], mem["b"], mem["a3"])
                tn.append(time.perf_counter() - t)
                t = time.perf_counter()
                codec_pass(paths, need, r, o.out)
                tc.append(time.perf_counter() - t)
                del r
                t = time.perf_counter()
                lazy(lz["a"], lz["b"], lz["a3"]).compute(urlpath=o.out, cparams=CPARAMS, nthreads=NTHREADS, **kw)
                tb.append(time.perf_counter() - t)
                if name in IO_PASS:
                    t = time.perf_counter()
                    IO_PASS[name](lz["a"], lz["b"], lz["a3"]).compute(
                        urlpath=o.out, cparams=CPARAMS, nthreads=NTHREADS, **kw
                    )
                    ti.append(time.perf_counter() - t)
            mn, mc, mb = statistics.median(tn), statistics.median(tc), statistics.median(tb)
            product = name in IO_PASS
            mi = statistics.median(ti) if product else 0.0
            ceiling = mn / (mn + mi)
            print(
                f"| {lay} | `{name}` | {mn:.2f} s ({min(tn):.2f}–{max(tn):.2f}) "
                f"| {mc:.2f} s ({min(tc):.2f}–{max(tc):.2f}) "
                f"| {mb:.2f} s ({min(tb):.2f}–{max(tb):.2f}) | {f'{mi:.2f} s' if product else '–'} | {mn / mb:.2f}× "
                f"| {f'{ceiling:.2f}×' if product else '–'} | {f'{(mn / mb) / ceiling:.2f}' if product else '–'} "
                f"| {'–' if product else f'{mb / mc:.2f}×'} |",
                flush=True,
            )
            del mem
    if os.path.exists(o.out):
        os.remove(o.out)


if __name__ == "__main__":
    main()
