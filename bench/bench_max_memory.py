#!/usr/bin/env python3
"""max_memory as a limit (issue #12 items 3 and 5): peak RSS growth per workload and budget.

    python bench/bench_max_memory.py [--n 4096] [--dir /tmp/b2lazy-bench-mem] [--json out.json]
    python bench/bench_max_memory.py --table after.json [before.json]   # the RESULTS.md table

Operands: float64 n x n on disk (b2nd, zstd clevel 1 + shuffle, smooth data plus a little
noise), written by python-blosc2 in the four layouts of bench/bench_layouts.py: its default
chunks ((256, 4096) row strips for n = 4096), row strips (64, n), column strips (n, 64) and
square tiles (1024, 1024); blocks as python-blosc2 picks them. Data generation runs in its
own process first.

Each (layout, workload, budget) runs in a fresh subprocess: open the operands, write "5" to
/proc/self/clear_refs (resets VmHWM), read VmRSS, evaluate (full-size results are written to
a file on disk, small ones returned as NumPy), read VmHWM; the growth is VmHWM - VmRSS.
Beside it: b2lazy's projected peak (`stats["projected_peak_bytes"]`, the plan's own
projection that explain() prints), whether the growth stays within max_memory + 32 MiB, and
in the table a ‡ where projection and measurement are more than 1.5x apart.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

MiB = 1 << 20
LAYOUTS = {
    "default": lambda n: None,
    "rows": lambda n: (64, n),
    "cols": lambda n: (n, 64),
    "tiles": lambda n: (1024, 1024),
}
WORKLOADS = {
    "cumsum(a)": "cumsum(a)",
    "a - mean(a, 0)": "a - mean(a, axis=0)",
    "sum(a) + a": "sum(a) + a",
    "matmul(a, b) + b": "matmul(a, b) + b",
    "a.T @ a": "matmul(a.T, a)",
    "sin(a)**2 + cos(b)**2": "sin(a)**2 + cos(b)**2",
    "sum(a, axis=0)": "sum(a, axis=0)",
    "sum(a, axis=1)": "sum(a, axis=1)",
}
SMALL = {"sum(a, axis=0)", "sum(a, axis=1)"}
BUDGETS = [64, 256, None]  # MiB; None: the default (1 GiB)


def path(ddir, name, layout, n):
    return os.path.join(ddir, f"{name}_{layout}_{n}.b2nd")


def gen(ddir, n):
    import blosc2
    import numpy as np

    os.makedirs(ddir, exist_ok=True)
    rng = np.random.default_rng(12)
    x = np.linspace(0, 1, n)
    for name, f in (("a", 1234.5), ("b", 321.0)):
        data = np.sin(f * x)[:, None] + np.cos(f * x)[None, :] + 1e-3 * rng.standard_normal((n, n))
        for layout, chunks_of in LAYOUTS.items():
            p = path(ddir, name, layout, n)
            chunks = chunks_of(n)
            if os.path.exists(p):
                continue
            kw = {} if chunks is None else {"chunks": chunks}
            blosc2.asarray(data, urlpath=p, mode="w", cparams=blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=1), **kw)


def status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(field)


def child(ddir, n, layout, workload, budget):
    import b2lazy as bl

    a = bl.open(path(ddir, "a", layout, n))
    b = bl.open(path(ddir, "b", layout, n))
    out = os.path.join(ddir, f"out_{os.getpid()}.b2nd")
    kw = {} if budget is None else {"max_memory": budget * MiB}
    e = bl.evaluate(WORKLOADS[workload], a=a, b=b)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    base = status("VmRSS")
    try:
        if workload in SMALL:
            r = e.compute(**kw)
        else:
            r = e.compute(urlpath=out, **kw)
        stats = dict(r.stats)
        err = None
    except Exception as ex:  # a refused budget is a result too
        stats, err = {}, f"{type(ex).__name__}: {ex}"
    peak = status("VmHWM") - base
    if os.path.exists(out):
        os.remove(out)
    print(json.dumps({"peak": peak, "projected": stats.get("projected_peak_bytes"), "error": err}))


def table(after_path, before_path=None):
    """Markdown rows: peak RSS growth (projected) per cell, and the figure before if given."""

    def load(path):
        return {(r["layout"], r["workload"], r["budget_mib"]): r for r in json.load(open(path))}

    after = load(after_path)
    before = load(before_path) if before_path else {}
    budgets = list(dict.fromkeys(k[2] for k in after))
    label = "before / after (projected)" if before else "growth (projected)"
    head = " | ".join(f"{'default' if b is None else f'{b} MiB'}: {label}" for b in budgets)
    print(f"| layout | workload | {head} |")
    print("|---|---|" + "---|" * len(budgets))
    for layout, workload in dict.fromkeys((k[0], k[1]) for k in after):
        cells = []
        for b in budgets:
            new = after.get((layout, workload, b))
            limit = (1024 if b is None else b) + 32
            if new is None:
                n = "?"
            elif new["error"]:
                need = new["error"].split("works is ")[1].split(" ")[0] if "works is " in new["error"] else "?"
                n = f"refused (needs {need} MiB)"
            else:
                proj = f" ({new['projected'] / MiB:.0f})" if new["projected"] else ""
                n = f"{new['peak'] / MiB:.0f}{proj}" + ("" if new["peak"] / MiB <= limit else " **over**")
                if new["projected"] and not (
                    new["peak"] <= 1.5 * new["projected"] and new["projected"] <= 1.5 * new["peak"]
                ):
                    n += " ‡"
            if before:
                old = before.get((layout, workload, b))
                n = (f"{old['peak'] / MiB:.0f}" if old else "?") + " / " + n
            cells.append(n)
        print(f"| {layout} | `{workload}` | " + " | ".join(cells) + " |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", nargs="+", metavar="JSON", help="AFTER_JSON [BEFORE_JSON]")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--dir", default="/tmp/b2lazy-bench-mem")
    ap.add_argument("--json")
    ap.add_argument("--child", nargs=3)
    ap.add_argument("--layouts", default=",".join(LAYOUTS))
    ap.add_argument("--workloads", default="|".join(WORKLOADS))
    ap.add_argument("--budgets", default=",".join("default" if b is None else str(b) for b in BUDGETS))
    args = ap.parse_args()
    if args.table:
        table(*args.table)
        return
    if args.child:
        layout, workload, budget = args.child
        child(args.dir, args.n, layout, workload, None if budget == "default" else int(budget))
        return
    # Data in its own process, so the children start from a small parent.
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys; sys.path.insert(0, {here!r}); import bench_max_memory as m; m.gen({args.dir!r}, {args.n})",
        ],
        check=True,
    )
    budgets = [None if b == "default" else int(b) for b in args.budgets.split(",")]
    rows = []
    print(f"{'layout':8} {'workload':18} {'budget':>8} {'growth MiB':>11} {'proj MiB':>9} {'limit MiB':>9}  ok")
    for layout in args.layouts.split(","):
        for workload in args.workloads.split("|"):
            for budget in budgets:
                res = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--n",
                        str(args.n),
                        "--dir",
                        args.dir,
                        "--child",
                        layout,
                        workload,
                        "default" if budget is None else str(budget),
                    ],
                    capture_output=True,
                    text=True,
                )
                if res.returncode != 0:
                    print(res.stderr, file=sys.stderr)
                    continue
                r = json.loads(res.stdout.strip().splitlines()[-1])
                limit = (1024 if budget is None else budget) + 32
                peak = r["peak"] / MiB
                proj = r["projected"] / MiB if r["projected"] else float("nan")
                ok = "refused" if r["error"] else ("yes" if peak <= limit else "NO")
                print(
                    f"{layout:8} {workload:18} {('default' if budget is None else budget):>8} {peak:11.0f} {proj:9.0f} "
                    f"{limit:9}  {ok}" + (f"  ({r['error']})" if r["error"] else ""),
                    flush=True,
                )
                rows.append({"layout": layout, "workload": workload, "budget_mib": budget, **r})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
