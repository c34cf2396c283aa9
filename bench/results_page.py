#!/usr/bin/env python3
"""Writes bench/RESULTS.md, the current figures of every benchmark, from the results the
benchmark scripts save (bench/RESULTS-*.json) and, for the benchmarks that save none, the
latest table kept in bench/current/*.md.

    python bench/results_page.py [--out bench/RESULTS.md]

The tables of a JSON are rendered by the functions of the script that wrote it
(bench_elementwise.md_*, bench_reductions.md_*, bench_indexing.report, bench_linalg.report,
bench_formats.markdown) or taken from its "markdown" field (bench_remote, bench_xarray), so
re-running a benchmark and then this script brings the page up to date. The history of the
figures is in git.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import sys

import results_plots

HERE = os.path.dirname(os.path.abspath(__file__))

HEADER = """# b2lazy benchmark results

The current figures of each benchmark: the machine, the versions, when it was measured and
its tables. Unless a section says otherwise, every contender runs with 2 threads on a
2-core machine (AMD EPYC, 23 GiB of RAM, Firecracker guests), operands are generated data
on local disk, time is the median of the runs named, and memory is the peak RSS growth of
a fresh process. The scripts are in `bench/`; each writes `bench/RESULTS-NAME.json`, and
`python bench/results_page.py` writes this page from them (and from `bench/current/*.md`
for benchmarks that keep no JSON). Earlier figures are in git's history of this file.
"""

SUMMARY = """
![b2lazy's time and peak memory as ratios to the best other contender](plots/summary.png)

b2lazy's time and peak memory as ratios to the best other contender of each workload (below
1: b2lazy faster or smaller), one dot per workload, the bar the geometric mean, the number of
workloads in brackets. The other contenders are the libraries each benchmark sets against
b2lazy (NumPy, Dask, python-blosc2, zarr-python, h5py), on the same stored format where a
benchmark has several; codec floors and b2lazy under another interface are left out, and so
are the sections kept by hand. NumPy's memory includes its operands in RAM.
Each section's own figure shows the times and peaks behind these ratios.
"""


def load_module(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, HERE)
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(HERE)
    return mod


def load_json(name):
    with open(os.path.join(HERE, f"RESULTS-{name}.json")) as f:
        return json.load(f)


def env_line(env):
    """Machine, versions and date of a run, from the JSON's environment record."""
    if not env:
        return ""
    date = env.get("date", "?")
    keys = [k for k in ("python", "numpy", "numexpr", "blosc2", "c_blosc2", "dask", "zarr", "xarray") if k in env]
    versions = dict(env.get("versions", {}))
    versions.update({k: env[k] for k in keys})
    vs = ", ".join(f"{k} {v}" for k, v in versions.items() if not isinstance(v, dict))
    return f"Measured {date} on {env.get('cpu', '?')}, {env.get('cores', '?')} cores; {vs}.\n"


def captured(fn, *args):
    """What fn prints (the report functions print their tables), or returns."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        ret = fn(*args)
    return (ret if isinstance(ret, str) else "") + buf.getvalue()


def section_elementwise():
    R = load_json("elementwise")
    E = load_module("bench_elementwise")
    cfg = R["config"]
    out = ["## Elementwise expressions (`bench/bench_elementwise.py`)\n", env_line(R.get("env"))]
    out.append(f"### In memory: NumPy operands, NumPy result, shape {tuple(cfg['mem_shape']['float64'])}\n")
    for dt in ("float64", "float32"):
        out.append(E.md_memory(R["memory"], dt) + "\n")
    out.append(
        f"### On disk: b2nd operands and result (zstd level 1 + shuffle), shape {tuple(cfg['disk_shape']['float64'])}\n"
    )
    for dt in ("float64", "float32"):
        out.append(E.md_disk(R["disk"], dt) + "\n")
    out.append(f"### Peak RSS growth, `{E.RSS_EXPR}` on disk, float64\n")
    out.append(E.md_rss(R["rss"]) + "\n")
    return "\n".join(out)


def section_reductions():
    R = load_json("reductions")
    M = load_module("bench_reductions")
    out = ["## Reductions and scans (`bench/bench_reductions.py`)\n", env_line(R.get("env"))]
    out += ["### Time\n", M.md_timed(R) + "\n", "### Peak RSS growth\n", M.md_rss(R) + "\n"]
    return "\n".join(out)


def section_report(name, title, script):
    R = load_json(name)
    M = load_module(script)
    env = R.get("environment") or R.get("env")
    text = captured(M.report, R).strip()
    # the report's own headings sit one level below this page's sections
    return f"## {title}\n\n{env_line(env)}\n{text}\n"


def section_formats():
    R = load_json("formats")
    M = load_module("bench_formats")
    env = {"versions": R.get("versions", {})}
    text = captured(M.markdown, R).strip()
    return f"## Formats: b2nd, Zarr v2 and HDF5 read natively (`bench/bench_formats.py`)\n\n{env_line(env)}\n{text}\n"


def section_markdown(name, title):
    R = load_json(name)
    m = R.get("machine", {})
    text = R["markdown"].strip() if isinstance(R["markdown"], str) else "\n\n".join(R["markdown"])
    return f"## {title}\n\n{env_line(m)}\n{text}\n"


def section_interop():
    R = load_json("interop")
    rows = ["| case | seconds | peak MiB |", "|---|---:|---:|"]
    for k, v in R["results"].items():
        rows.append(f"| {k} | {v['seconds']:.3f} | {v['peak_mib']:.0f} |")
    return (
        "## Interop: wrapping zarr-python and h5py arrays, Dask over b2lazy (`bench/bench_interop.py`)\n\n"
        f"{R['gib']} GiB float64 operands, best of {R['reps']} runs, each case in a fresh process. "
        "`wrap-*`: `b2lazy.asarray` of a zarr/h5py array; `*-mean0`: `mean(axis=0)` through it; "
        "`region-*`: through a region source; `dask-*`: Dask's; `np-*`/`bl-*`: NumPy and b2lazy "
        "over the same data.\n\n" + "\n".join(rows) + "\n"
    )


def headings_below(text, top=3):
    """Re-levels the headings of a section's body so they start at `top` and never skip a
    level (a table's heading under a section's)."""
    out, stack = [], []  # stack: the source levels of the open headings
    for line in text.splitlines():
        stripped = line.lstrip("#")
        level = len(line) - len(stripped)
        if level and stripped.startswith(" ") and not line.startswith("#!"):
            while stack and stack[-1] >= level:
                stack.pop()
            stack.append(level)
            line = "#" * (top - 1 + len(stack)) + stripped
        out.append(line)
    return "\n".join(out)


def current(name):
    with open(os.path.join(HERE, "current", f"{name}.md")) as f:
        return f.read()


# (the section's plot in bench/plots/, or None; the function writing its Markdown)
SECTIONS = [
    ("elementwise", section_elementwise),
    ("reductions", section_reductions),
    ("linalg", lambda: section_report("linalg", "Matrix products (`bench/bench_linalg.py`)", "bench_linalg")),
    (
        "indexing",
        lambda: section_report("indexing", "Indexing and selections (`bench/bench_indexing.py`)", "bench_indexing"),
    ),
    (None, lambda: current("layouts")),
    (None, lambda: current("runtime_layer")),
    (None, lambda: current("max_memory")),
    ("formats", section_formats),
    ("interop", section_interop),
    ("xarray", lambda: section_markdown("xarray", "xarray over Zarr and netCDF (`bench/bench_xarray.py`)")),
    ("remote-2g", lambda: section_markdown("remote-2g", "Remote data at 2 GiB over HTTP (`bench/bench_remote.py`)")),
    (
        "remote-2g-shards",
        lambda: section_markdown("remote-2g-shards", "Remote data: sharded Zarr read whole (`bench/bench_remote.py`)"),
    ),
    ("remote-s3", lambda: section_markdown("remote-s3", "Remote data over S3 (`bench/bench_remote.py`)")),
    (None, lambda: current("distributed")),
    (None, lambda: current("executors")),
    (None, lambda: current("fft")),
    (None, lambda: current("linalg_ext")),
    (None, lambda: current("reliability")),
    (None, lambda: current("array_api")),
]


def with_plot(body, name, title):
    """The section's body with its figure before the first table or heading (after the
    'Measured ...' line and the description above them)."""
    image = f"![{title}: time and peak memory per contender](plots/{name}.png)\n"
    lines = body.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith(("#", "|"))), len(lines))
    return "\n".join(lines[:at] + [image] + lines[at:])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=os.path.join(HERE, "RESULTS.md"))
    p.add_argument("--plots", default=os.path.join(HERE, "plots"), help="folder of the PNGs (beside --out)")
    args = p.parse_args()
    plots = results_plots.write_plots(load_json, args.plots)
    parts = [HEADER + (SUMMARY if "summary" in plots else "")]
    for plot, make in SECTIONS:
        title, _, body = make().strip().partition("\n")
        body = headings_below(body).rstrip()
        if plot in plots:
            body = with_plot(body, plot, title.removeprefix("## ").split(" (`")[0])
        parts.append(title + "\n" + body + "\n")
    with open(args.out, "w") as f:
        f.write("\n".join(parts))
    print(f"wrote {args.out} and {len(plots)} plots in {args.plots}")


if __name__ == "__main__":
    main()
