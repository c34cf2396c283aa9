"""Issue #11, items 5 and 7: planning + evaluation time of nested shared subexpressions
(`e = e - mean(e, axis=0)` and `e = e*0.5 + sum(e)*0` on a 40x50 array, repeated `depth`
times), memory of reductions over a huge lazy array (2**40 x 300 zeros) after
planning and during the first 2 s of work, and the time and peak memory of planning
products over stored n x n operands under a small budget (`--products`: the planner
replays the tasks' block reads to size windows; the operands are zeros, planning reads
only their layout). Each case runs in its own interpreter, under a timeout and (huge
cases) a 4 GiB address-space limit.

    python bench/bench_planning.py [--depths 10,20,30,60] [--timeout 120] [--out r.json]
                                   [--products rows,default,tiles,cols] [--n 8192] [--budget-mib 64]
"""

import argparse
import json
import subprocess
import sys
import time

DEEP = r"""
import json, sys, time, numpy as np, b2lazy as bl
kind, depth = sys.argv[1], int(sys.argv[2])
a = np.arange(2000, dtype=np.float64).reshape(40, 50) / 7.0
e, n = bl.asarray(a), a.copy()
for _ in range(depth):
    if kind == "mean":
        e = e - bl.mean(e, axis=0); n = n - n.mean(axis=0)
    else:
        e = e * 0.5 + bl.sum(e) * 0; n = n * 0.5 + n.sum() * 0
t = time.perf_counter(); text = e.explain(); t1 = time.perf_counter()
r = e.compute(); t2 = time.perf_counter()
assert np.allclose(r[:], n, rtol=1e-9, atol=1e-9)
print(json.dumps({"explain_s": t1 - t, "compute_s": t2 - t1, "cache_misses": r.stats["cache_misses"],
                  "cache_hits": r.stats["cache_hits"], "plan_visits": r.stats.get("plan_visits")}))
"""

HUGE = r"""
import json, os, resource, sys, threading, time, b2lazy as bl
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # a run-away plan fails, the machine stays up
def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key): return int(line.split()[1]) * 1024
what = sys.argv[1]
x = bl.zeros((2**40, 300))
expr = {"sum": lambda: bl.sum(x), "sum0": lambda: bl.sum(x, axis=0), "sum1": lambda: bl.sum(x, axis=1)[:10],
        "cumsum": lambda: bl.cumsum(x, axis=0)[:10]}[what]
base = status("VmRSS")
e = expr()
t = time.perf_counter(); e.explain(); t_explain = time.perf_counter() - t
after_explain = status("VmRSS") - base
# Evaluate for 2 s (the full sum is 2.6 PB of zeros) in a thread; sample RSS meanwhile.
worker = threading.Thread(target=e.to_numpy, daemon=True)
t = time.perf_counter(); worker.start()
peak = status("VmRSS")
while worker.is_alive() and time.perf_counter() - t < 2.0:
    peak = max(peak, status("VmRSS")); time.sleep(0.01)
done = "running" if worker.is_alive() else "done"
print(json.dumps({"explain_s": t_explain, "rss_after_plan_mib": after_explain / 2**20,
                  "rss_peak_first_2s_mib": (peak - base) / 2**20, "work": done}))
os._exit(0)
"""

PRODUCT = r"""
import json, os, shutil, sys, tempfile, time, blosc2, b2lazy as bl
layout, n, budget = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) << 20
def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key): return int(line.split()[1]) * 1024
# python-blosc2's own default chunks for the "default" layout, as bench_layouts writes them.
chunks = {"rows": (64, n), "cols": (n, 64), "tiles": (1024, 1024), "default": None}[layout]
d = tempfile.mkdtemp()
ops = [blosc2.zeros((n, n), dtype="f8", chunks=chunks, urlpath=os.path.join(d, f"{x}.b2nd"), mode="w")
       for x in "ab"]
a, b = (bl.open(o.urlpath) for o in ops)
out = {"chunks": list(ops[0].chunks), "blocks": list(ops[0].blocks)}
for name, e in [("matmul", bl.matmul(a, b)), ("matmul_plus_b", bl.matmul(a, b) + b)]:
    with open("/proc/self/clear_refs", "w") as f: f.write("5")
    base = status("VmRSS")
    t = time.perf_counter(); e.plan(max_memory=budget); t = time.perf_counter() - t
    out[name] = {"plan_s": t, "plan_growth_mib": (status("VmHWM") - base) / 2**20}
shutil.rmtree(d)
print(json.dumps(out))
"""


def run(code, *args, timeout):
    try:
        t = time.perf_counter()
        p = subprocess.run(
            [sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, timeout=timeout
        )
        if p.returncode:
            return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else p.returncode}
        return {**json.loads(p.stdout.splitlines()[-1]), "wall_s": time.perf_counter() - t}
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--depths", default="10,20,30,60")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--out")
    ap.add_argument("--kinds", default="mean,sum")
    ap.add_argument("--huge", default="sum,sum0,sum1,cumsum")
    ap.add_argument("--products", default="rows,default,tiles,cols")
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--budget-mib", type=int, default=64)
    o = ap.parse_args()
    res = {}
    for kind in o.kinds.split(","):
        for d in map(int, o.depths.split(",")):
            r = run(DEEP, kind, d, timeout=o.timeout)
            res[f"{kind} depth {d}"] = r
            print(kind, d, r, flush=True)
    for what in filter(None, o.huge.split(",")):
        r = run(HUGE, what, timeout=o.timeout)
        res[f"huge {what}"] = r
        print("huge", what, r, flush=True)
    for layout in filter(None, o.products.split(",")):
        r = run(PRODUCT, layout, o.n, o.budget_mib, timeout=o.timeout)
        res[f"product {layout} n={o.n} {o.budget_mib} MiB"] = r
        print("product", layout, o.n, o.budget_mib, r, flush=True)
    if o.out:
        with open(o.out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
