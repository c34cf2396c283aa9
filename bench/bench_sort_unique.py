"""sort and unique of a float64 array on disk (issue #15): b2lazy out of core against NumPy
in memory and Dask as a user would write it (dask.array has no full sort: its
map_blocks(np.sort), which only sorts each chunk — the runs, a lower bound of the work —
and topk; da.unique). Each method runs in a fresh process, so its peak RSS (ru_maxrss) is
its own; times are wall clock of the operation (loading counted where the method loads).

    python bench/bench_sort_unique.py [GiB (default 2)] [repeats (default 1)] [--more]

--more runs argsort and unique_all instead (positions: a stable argsort's pairs).
"""

import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np  # (b2lazy imports it too; blosc2 only where a method reads with it)

DIR = tempfile.mkdtemp(prefix="b2lazy-sortbench-")
SRC = os.path.join(DIR, "x.b2nd")


def make(gib):
    n = int(gib * (1 << 30)) // 8
    # rounded normals: sorting as hard as random doubles, with repeats for unique
    import blosc2

    rng = np.random.default_rng(0)
    out = blosc2.empty((n,), dtype=np.float64, urlpath=SRC, mode="w")
    step = 1 << 24
    for s in range(0, n, step):
        e = min(n, s + step)
        out[s:e] = np.round(rng.standard_normal(e - s) * 1e4) / 1e4
    return n


# NumPy's operation on the loaded array, and a value from its result (a check across methods)
NUMPY = {
    "numpy sort": lambda x: float(np.sort(x)[len(x) // 2]),
    "numpy unique": lambda x: int(np.unique_values(x).size),
    "numpy argsort": lambda x: int(np.argsort(x, kind="stable")[len(x) // 2]),
    "numpy unique_all": lambda x: int(np.unique_all(x).counts.max()),
}


def dask_array():
    import blosc2
    import dask.array as da

    return da.from_array(blosc2.open(SRC), chunks=1 << 22)


def run(method):
    t0 = time.perf_counter()
    info = {}
    if method in NUMPY:  # loaded whole (timed apart), then the operation in memory
        import blosc2

        x = blosc2.open(SRC)[:]
        t1 = time.perf_counter()
        info["check"] = NUMPY[method](x)
        info["load_s"] = t1 - t0
        t0 = t1
    elif method in ("b2lazy sort", "b2lazy argsort"):
        import b2lazy

        f = b2lazy.sort if method == "b2lazy sort" else b2lazy.argsort
        r = f(b2lazy.open(SRC)).compute(urlpath=os.path.join(DIR, "s.b2nd"))
        info["check"] = r[len(r) // 2 : len(r) // 2 + 1].to_numpy()[0].item()
        info["stats"] = {k: r.stats[k] for k in ("projected_peak_bytes", "peak_scratch_bytes")}
        os.remove(os.path.join(DIR, "s.b2nd"))
    elif method == "b2lazy unique":
        import b2lazy

        u = b2lazy.unique_values(b2lazy.open(SRC))
        r = u.compute(urlpath=os.path.join(DIR, "u.b2nd"))
        info["check"] = int(r.shape[0])
        os.remove(os.path.join(DIR, "u.b2nd"))
    elif method == "b2lazy unique_all":
        import b2lazy

        u = b2lazy.unique_all(b2lazy.open(SRC))
        for name in ("values", "indices", "inverse_indices", "counts"):
            r = getattr(u, name).compute(urlpath=os.path.join(DIR, name + ".b2nd"))
            os.remove(os.path.join(DIR, name + ".b2nd"))
        info["check"] = int(b2lazy.max(u.counts).to_numpy())
    elif method == "dask sort chunks (runs only)":
        x = dask_array()
        x.map_blocks(np.sort).to_zarr(os.path.join(DIR, "d.zarr"), overwrite=True)
    elif method == "dask topk(1000)":
        x = dask_array()
        info["check"] = float(x.topk(1000).compute()[0])
    elif method == "dask unique":
        x = dask_array()
        import dask.array as da

        info["check"] = int(da.unique(x).compute().size)
    info["s"] = time.perf_counter() - t0
    info["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(info))


METHODS = [
    "numpy sort",
    "b2lazy sort",
    "dask sort chunks (runs only)",
    "dask topk(1000)",
    "numpy unique",
    "b2lazy unique",
    "dask unique",
]
MORE = ["numpy argsort", "b2lazy argsort", "numpy unique_all", "b2lazy unique_all"]  # --more

if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--run":
        SRC = sys.argv[3]
        DIR = os.path.dirname(SRC)
        run(sys.argv[2])
        sys.exit(0)
    more = "--more" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--more"]
    gib = float(args[0]) if args else 2.0
    repeats = int(args[1]) if len(args) > 1 else 1
    if more:  # positions too: argsort and unique_all (NumPy's take tens of seconds here)
        METHODS = MORE
    n = make(gib)
    print(
        f"{n} float64 ({gib} GiB) in {SRC}: {os.path.getsize(SRC) / 2**30:.2f} GiB on disk; "
        f"b2lazy max_memory 1 GiB (default)"
    )
    results = {}
    for rep in range(repeats):  # interleaved: each repeat runs every method once
        for m in METHODS:
            out = subprocess.run([sys.executable, __file__, "--run", m, SRC], capture_output=True, text=True)
            if out.returncode:
                print(m, "failed:", out.stderr[-500:])
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            results.setdefault(m, []).append(r)
            print(
                f"  {m:30s} {r['s']:7.2f} s  peak RSS {r['peak_rss_mib']:8.0f} MiB  "
                f"{'load %.2f s' % r['load_s'] if 'load_s' in r else ''} {r.get('check', '')} {r.get('stats', '')}",
                flush=True,
            )
    best = {m: min(x["s"] for x in v) for m, v in results.items()}
    for op in ("sort", "unique", "argsort", "unique_all"):
        ref = best.get(f"numpy {op}")
        if ref and f"b2lazy {op}" in best:
            print(f"b2lazy {op} / numpy {op} (in memory, load not counted): {best[f'b2lazy {op}'] / ref:.2f}x")
