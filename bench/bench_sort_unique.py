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

DIR = tempfile.mkdtemp(prefix="b2lazy-sortbench-")
SRC = os.path.join(DIR, "x.b2nd")


def make(gib):
    import numpy as np
    import b2lazy
    n = int(gib * (1 << 30)) // 8
    # rounded normals: sorting as hard as random doubles, with repeats for unique
    x = b2lazy.evaluate("round(x * 1e4) / 1e4", x=b2lazy.asarray(np.zeros(0))) if False else None
    rng = np.random.default_rng(0)
    import blosc2
    out = blosc2.empty((n,), dtype=np.float64, urlpath=SRC, mode="w")
    step = 1 << 24
    for s in range(0, n, step):
        e = min(n, s + step)
        out[s:e] = np.round(rng.standard_normal(e - s) * 1e4) / 1e4
    return n


def run(method):
    import numpy as np
    t0 = time.perf_counter()
    info = {}
    if method == "numpy sort":
        import blosc2
        x = blosc2.open(SRC)[:]
        t1 = time.perf_counter()
        y = np.sort(x)
        info["load_s"] = t1 - t0
        t0 = t1
        info["check"] = float(y[len(y) // 2])
    elif method == "numpy unique":
        import blosc2
        x = blosc2.open(SRC)[:]
        t1 = time.perf_counter()
        u = np.unique_values(x)
        info["load_s"] = t1 - t0
        t0 = t1
        info["check"] = int(u.size)
    elif method == "b2lazy sort":
        import b2lazy
        r = b2lazy.sort(b2lazy.open(SRC)).compute(urlpath=os.path.join(DIR, "s.b2nd"))
        info["check"] = float(r[len(r) // 2:len(r) // 2 + 1].to_numpy()[0])
        info["stats"] = {k: r.stats[k] for k in ("projected_peak_bytes", "peak_scratch_bytes")}
        os.remove(os.path.join(DIR, "s.b2nd"))
    elif method == "b2lazy unique":
        import b2lazy
        u = b2lazy.unique_values(b2lazy.open(SRC))
        r = u.compute(urlpath=os.path.join(DIR, "u.b2nd"))
        info["check"] = int(r.shape[0])
        os.remove(os.path.join(DIR, "u.b2nd"))
    elif method == "numpy argsort":
        import blosc2
        x = blosc2.open(SRC)[:]
        t1 = time.perf_counter()
        y = np.argsort(x, kind="stable")
        info["load_s"] = t1 - t0
        t0 = t1
        info["check"] = int(y[len(y) // 2])
    elif method == "numpy unique_all":
        import blosc2
        x = blosc2.open(SRC)[:]
        t1 = time.perf_counter()
        u = np.unique_all(x)
        info["load_s"] = t1 - t0
        t0 = t1
        info["check"] = int(u.counts.max())
    elif method == "b2lazy argsort":
        import b2lazy
        r = b2lazy.argsort(b2lazy.open(SRC)).compute(urlpath=os.path.join(DIR, "s.b2nd"))
        info["check"] = int(r[len(r) // 2:len(r) // 2 + 1].to_numpy()[0])
        os.remove(os.path.join(DIR, "s.b2nd"))
    elif method == "b2lazy unique_all":
        import b2lazy
        u = b2lazy.unique_all(b2lazy.open(SRC))
        for name in ("values", "indices", "inverse_indices", "counts"):
            r = getattr(u, name).compute(urlpath=os.path.join(DIR, name + ".b2nd"))
            os.remove(os.path.join(DIR, name + ".b2nd"))
        info["check"] = int(b2lazy.max(u.counts).to_numpy())
    elif method == "dask sort chunks (runs only)":
        import blosc2
        import dask.array as da
        x = da.from_array(blosc2.open(SRC), chunks=1 << 22)
        da.map_blocks(np.sort, x).to_zarr(os.path.join(DIR, "d.zarr"), overwrite=True)
    elif method == "dask topk(1000)":
        import blosc2
        import dask.array as da
        x = da.from_array(blosc2.open(SRC), chunks=1 << 22)
        info["check"] = float(da.topk(x, 1000).compute()[0])
    elif method == "dask unique":
        import blosc2
        import dask.array as da
        x = da.from_array(blosc2.open(SRC), chunks=1 << 22)
        info["check"] = int(da.unique(x).compute().size)
    info["s"] = time.perf_counter() - t0
    info["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(info))


METHODS = ["numpy sort", "b2lazy sort", "dask sort chunks (runs only)", "dask topk(1000)",
           "numpy unique", "b2lazy unique", "dask unique"]
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
    print(f"{n} float64 ({gib} GiB) in {SRC}: {os.path.getsize(SRC) / 2**30:.2f} GiB on disk; b2lazy max_memory 1 GiB (default)")
    results = {}
    for rep in range(repeats):  # interleaved: each repeat runs every method once
        for m in METHODS:
            out = subprocess.run([sys.executable, __file__, "--run", m, SRC], capture_output=True, text=True)
            if out.returncode:
                print(m, "failed:", out.stderr[-500:])
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            results.setdefault(m, []).append(r)
            print(f"  {m:30s} {r['s']:7.2f} s  peak RSS {r['peak_rss_mib']:8.0f} MiB  "
                  f"{'load %.2f s' % r['load_s'] if 'load_s' in r else ''} {r.get('check', '')} {r.get('stats', '')}", flush=True)
    best = {m: min(x["s"] for x in v) for m, v in results.items()}
    for op in ("sort", "unique", "argsort", "unique_all"):
        ref = best.get(f"numpy {op}")
        if ref and f"b2lazy {op}" in best:
            print(f"b2lazy {op} / numpy {op} (in memory, load not counted): {best[f'b2lazy {op}'] / ref:.2f}x")
