"""Products against NumPy in one process, interleaved: NumPy in memory, then b2lazy from
the files, `--rounds` times; the ratio of the medians. On a noisy host a fresh-process cell
moves by ±15 % (and NumPy's own time by up to 40 % between processes); alternating in one
process exposes both to the same stretch of contention. (The bench_layouts files.)

    python bench/interleave_products.py [--n 4096] [--layouts default rows cols tiles]
                                        [--rounds 5] [--budget-mib 0] [--data-dir bench/data]
"""
import argparse, os, statistics, time

import numpy as np
import b2lazy as bl

WORKLOADS = {
    "matmul(a, b)": (lambda a, b, a3: bl.matmul(a, b), lambda a, b, a3: a @ b),
    "matmul(a, b) + b": (lambda a, b, a3: bl.matmul(a, b) + b, lambda a, b, a3: a @ b + b),
    "matmul(sum(a3, axis=1), b)": (lambda a, b, a3: bl.matmul(bl.sum(a3, axis=1), b),
                                   lambda a, b, a3: np.sum(a3, axis=1) @ b),
    "a.T @ a": (lambda a, b, a3: a.T @ a, lambda a, b, a3: a.T @ a),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--layouts", nargs="*", default=["default", "rows", "cols", "tiles"])
    ap.add_argument("--workloads", nargs="*", default=list(WORKLOADS))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--budget-mib", type=int, default=0, help="max_memory (0: the default budget)")
    ap.add_argument("--data-dir", default=os.path.join(os.path.dirname(__file__), "data"))
    ap.add_argument("--out", default="/tmp/interleave_out.b2nd")
    o = ap.parse_args()
    kw = {"max_memory": o.budget_mib << 20} if o.budget_mib else {}
    print(f"| layout | workload | NumPy median (min–max) | b2lazy median (min–max) | b2lazy / NumPy speed |")
    print("|---|---|---|---|---|")
    for lay in o.layouts:
        paths = {x: os.path.join(o.data_dir, f"layouts_{x}_{o.n}_{lay}.b2nd") for x in ("a", "b", "a3")}
        lz = {x: bl.open(p) for x, p in paths.items()}
        for name in o.workloads:
            lazy, eager = WORKLOADS[name]
            need = ("a", "b", "a3") if "a3" in name else ("a", "b")
            mem = {x: (bl.open(paths[x]).to_numpy() if x in need else None) for x in ("a", "b", "a3")}
            tn, tb = [], []
            for _ in range(o.rounds):
                t = time.perf_counter(); eager(mem["a"], mem["b"], mem["a3"]); tn.append(time.perf_counter() - t)
                t = time.perf_counter(); lazy(lz["a"], lz["b"], lz["a3"]).compute(urlpath=o.out, **kw)
                tb.append(time.perf_counter() - t)
            mn, mb = statistics.median(tn), statistics.median(tb)
            print(f"| {lay} | `{name}` | {mn:.2f} s ({min(tn):.2f}–{max(tn):.2f}) | {mb:.2f} s ({min(tb):.2f}–{max(tb):.2f}) "
                  f"| {mn / mb:.2f}× |", flush=True)
            del mem
    if os.path.exists(o.out):
        os.remove(o.out)


if __name__ == "__main__":
    main()
