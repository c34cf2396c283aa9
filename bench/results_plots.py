"""Plots of bench/RESULTS.md, drawn from the same bench/RESULTS-*.json the page's tables come from.

    plots = write_plots(load_json, outdir)   # {name: path of the PNG written}

Each benchmark is turned into records (panel, workload, contender, seconds, MiB) by a small
reader below; a reader returns [] when its JSON lacks what the plot needs, and that plot is
skipped (nothing is estimated or filled in). From the records come one figure per benchmark
(time and peak memory side by side per contender) and a summary figure: b2lazy's time and
peak memory as ratios to the best other contender of each workload.
"""

from __future__ import annotations

import io
import math
import os
from collections import namedtuple

import matplotlib

matplotlib.use("Agg")  # files only, no display; also keeps the output independent of the machine's backend
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import ticker  # noqa: E402
from PIL import Image  # noqa: E402  (matplotlib's own dependency)

MiB = 2**20
DPI = 100
# PNG metadata would otherwise carry matplotlib's version: re-running must not change the bytes.
PNG_META = {"Software": None}

Rec = namedtuple("Rec", "panel workload contender seconds mib")

# Contenders that are not competing libraries: the codec's decompress+compress floor, and
# b2lazy itself under another name (its NumPy output, or Dask/NumPy driving a b2lazy array).
NOT_OTHERS = {"codec", "b2lazy_np"}


def is_b2lazy(contender):
    return contender == "b2lazy"


def is_other(contender):
    return not contender.startswith("b2lazy") and contender not in NOT_OTHERS


def rec(panel, workload, contender, seconds, mib):
    """A record, or None when the run failed or a figure is missing."""
    if seconds is None or mib is None or seconds <= 0 or mib <= 0:
        return None
    return Rec(panel, workload, contender, float(seconds), float(mib))


def keep(records):
    return [r for r in records if r is not None]


# --- readers: one per JSON ------------------------------------------------------------------


def read_elementwise(R):
    # The RSS runs hold time and memory of one fresh process per contender (the timing tables
    # hold no memory). The operand size is the workload.
    out = []
    for x in R.get("rss") or []:
        if x.get("error"):
            continue
        wl = f"sin²+cos², {x['operand_GiB']:g} GiB"
        out.append(
            rec("on disk, float64", wl, x["contender"], x.get("median"), (x.get("hwm_growth_vs_open") or 0) / MiB)
        )
    return keep(out)


def read_reductions(R):
    # Time: the timed table's medians (3 runs); memory: the fresh-process RSS runs. NumPy's
    # memory is its footprint (the operand loaded plus its growth), as the page's table counts it.
    labels = {t["op"]: t.get("label", t["op"]) for t in R.get("timed") or []}
    mem = {}
    for x in R.get("rss") or []:
        if x.get("error"):
            continue
        key = "growth_vs_import" if x["contender"] == "numpy" else "hwm_growth_vs_open"
        if x.get(key) is not None:
            mem[x["op"], x["contender"]] = x[key] / MiB
    out = []
    for t in R.get("timed") or []:
        for c, v in t.get("contenders", {}).items():
            if not v.get("error"):
                out.append(rec("2 GiB float64", labels[t["op"]], c, v.get("median"), mem.get((t["op"], c))))
    return keep(out)


def read_rows(R, panel):
    """bench_linalg and bench_indexing: rows of contender, op, seconds, growth (bytes)."""
    out = []
    for x in R.get("rows") or []:
        if not x.get("error") and x.get("growth") is not None:
            out.append(rec(panel, x["op"], x["contender"], x.get("seconds"), x["growth"] / MiB))
    return keep(out)


def read_formats(R):
    # Contenders are "<library>[-<format>]"; the bare names read Zarr v3. The workload is
    # paired with the format so b2lazy meets Dask on the same store.
    out = []
    for key, m in (R.get("rss") or {}).items():
        layout, wl, contender = key.split("/")
        lib, _, fmt = contender.partition("-")
        seconds = R.get("times", {}).get(f"{layout}/{wl}", {}).get("median", {}).get(contender)
        out.append(rec(f"{layout} chunks", f"{wl} {fmt or 'zarr3'}", lib, seconds, m.get("growth", 0) / MiB))
    return keep(out)


# bench_interop's cases as (panel, workload, contender); the b2nd panel's contenders all run on
# b2lazy underneath, so the summary leaves that panel out (see SUMMARY_SKIP).
INTEROP = {
    "wrap-zarr-mean0": ("mean(axis=0), 2 GiB", "zarr", "b2lazy"),
    "bl-zarr-mean0": ("mean(axis=0), 2 GiB", "zarr", "b2lazy.open"),
    "region-zarr-mean0": ("mean(axis=0), 2 GiB", "zarr", "b2lazy region"),
    "dask-zarr-mean0": ("mean(axis=0), 2 GiB", "zarr", "dask"),
    "zarr-numpy-mean0": ("mean(axis=0), 2 GiB", "zarr", "numpy (reads all)"),
    "wrap-h5-mean0": ("mean(axis=0), 2 GiB", "hdf5", "b2lazy"),
    "region-h5-mean0": ("mean(axis=0), 2 GiB", "hdf5", "b2lazy region"),
    "dask-h5-mean0": ("mean(axis=0), 2 GiB", "hdf5", "dask"),
    "h5-numpy-mean0": ("mean(axis=0), 2 GiB", "hdf5", "numpy (reads all)"),
    "bl-mean0": ("b2nd, b2lazy underneath", "b2nd", "b2lazy"),
    "np-mean0": ("b2nd, b2lazy underneath", "b2nd", "np.mean protocol"),
    "dask-b2lazy-mean0": ("b2nd, b2lazy underneath", "b2nd", "dask over b2lazy"),
    "bl-mean0-bdef": ("b2nd, b2lazy underneath", "b2nd default layout", "b2lazy"),
    "np-mean0-bdef": ("b2nd, b2lazy underneath", "b2nd default layout", "np.mean protocol"),
}
SUMMARY_SKIP = {("interop", "b2nd, b2lazy underneath")}


def read_interop(R):
    out = []
    for case, v in (R.get("results") or {}).items():
        if case in INTEROP:
            out.append(rec(*INTEROP[case], v.get("seconds"), v.get("peak_mib")))
    return keep(out)


def read_xarray(R):
    # "open" is left out: it times opening only, and sets no workload against another.
    out = []
    for ds, workloads in (R.get("results") or {}).items():
        for wl, by in workloads.items():
            if wl == "open":
                continue
            for c, v in by.items():
                out.append(rec(ds, wl, c, v.get("seconds"), v.get("peak_mib")))
    return keep(out)


def latency_panel(key):
    # bench_remote's result keys: "<ms>" over HTTP, "s3 <ms>" over S3
    proto, _, ms = key.rpartition(" ")
    return f"{'S3' if proto == 's3' else 'HTTP'}, {ms} ms per request"


def read_remote(R):
    # Contenders are "<library> <format>": pair the workload with the format, as for formats.
    rows = R.get("rows") or {}
    out = []
    for key, by_row in (R.get("results") or {}).items():
        for row, by in by_row.items():
            for name, v in by.items():
                lib, _, fmt = name.partition(" ")
                short = rows.get(row, row).replace(" to local Zarr", "")
                out.append(rec(latency_panel(key), f"{short} {fmt}", lib, v.get("seconds"), v.get("peak_mib")))
    return keep(out)


# (name, title, JSON name, reader); the name is the PNG's and the summary's label.
BENCHES = [
    ("elementwise", "Elementwise on disk", "elementwise", read_elementwise),
    ("reductions", "Reductions and scans", "reductions", read_reductions),
    ("linalg", "Matrix products, n = 8192", "linalg", lambda R: read_rows(R, "n = 8192, float64")),
    ("indexing", "Indexing and selections", "indexing", lambda R: read_rows(R, "(32768, 8192) float64")),
    ("formats", "Formats: Zarr v3, Zarr v2, HDF5, b2nd", "formats", read_formats),
    ("interop", "Interop: zarr-python and h5py arrays", "interop", read_interop),
    ("xarray", "xarray over Zarr and netCDF", "xarray", read_xarray),
    ("remote-2g", "Remote, 2 GiB over HTTP", "remote-2g", read_remote),
    ("remote-2g-shards", "Remote, sharded Zarr", "remote-2g-shards", read_remote),
    ("remote-s3", "Remote, 0.25 GiB over HTTP and S3", "remote-s3", read_remote),
]


# --- figures --------------------------------------------------------------------------------


def ordered(values):
    """Unique values in first-seen order (the JSON's order is the benchmark's)."""
    return list(dict.fromkeys(values))


def colours(contenders):
    # b2lazy is always the same colour, so the eye finds it across figures
    cmap = plt.get_cmap("tab10")
    others = [c for c in contenders if c != "b2lazy"]
    col = {c: cmap((i + 1) % 10) for i, c in enumerate(others)}
    col["b2lazy"] = cmap(0)
    return col


def minor_label(ax, v):
    """Labels for the minor ticks of a log axis: all on a range under a decade (else it may
    show no number at all), 2 and 5 on a range under 2.5 decades, none on longer ones."""
    lo, hi = ax.get_ylim()
    decades = math.log10(hi / lo)
    lead = round(v / 10 ** math.floor(math.log10(v) + 1e-9))
    if decades < 1 or (decades < 2.5 and lead in (2, 5)):
        return f"{float(f'{v:.2g}'):g}"
    return ""


def bars(ax, records, contenders, col, field):
    workloads = ordered(r.workload for r in records)
    val = {(r.workload, r.contender): getattr(r, field) for r in records}
    width = 0.8 / len(contenders)
    for j, c in enumerate(contenders):
        xs = [i + (j - (len(contenders) - 1) / 2) * width for i, w in enumerate(workloads) if (w, c) in val]
        ys = [val[w, c] for w in workloads if (w, c) in val]
        ax.bar(xs, ys, width, color=col[c], label=c)
    ax.set_yscale("log")  # the contenders differ by orders of magnitude in memory
    # plain numbers (0.5, 2, 100) rather than 5x10^-1
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(ticker.FuncFormatter(lambda v, _: minor_label(ax, v)))
    ax.set_xticks(range(len(workloads)), workloads, rotation=30, ha="right", fontsize=7)
    ax.tick_params(axis="y", which="both", labelsize=7)
    ax.grid(axis="y", which="major", alpha=0.3)


def bench_figure(path, title, records):
    """Time and peak memory side by side, one row of axes per panel, bars per contender."""
    panels = ordered(r.panel for r in records)
    contenders = ordered(r.contender for r in records)
    col = colours(contenders)
    nwork = max(len(ordered(r.workload for r in records if r.panel == p)) for p in panels)
    width = max(7, min(12, 4 + 0.35 * nwork * max(1, len(contenders) / 3)))
    # constrained layout keeps the title and the legend above the axes clear of each other
    fig, axes = plt.subplots(
        len(panels), 2, figsize=(width, 0.9 + 2.9 * len(panels)), squeeze=False, layout="constrained"
    )
    for row, p in zip(axes, panels):
        sub = [r for r in records if r.panel == p]
        bars(row[0], sub, contenders, col, "seconds")
        bars(row[1], sub, contenders, col, "mib")
        row[0].set_ylabel(f"{p}\nseconds", fontsize=8)
        row[1].set_ylabel("peak memory MiB", fontsize=8)
    axes[0][0].set_title("time (log)", fontsize=9)
    axes[0][1].set_title("peak memory growth (log)", fontsize=9)
    handles = [plt.Rectangle((0, 0), 1, 1, color=col[c]) for c in contenders]
    # the title heads the legend: a separate suptitle would collide with it
    fig.legend(
        handles,
        contenders,
        loc="outside upper center",
        ncol=min(len(contenders), 7 if width > 9 else 4),
        fontsize=8,
        frameon=False,
        title=title,
        title_fontsize=10,
    )
    save(fig, path)


def ratios(records):
    """b2lazy / best other contender, per workload: [(time ratio, memory ratio)]. The best is
    taken for each measure separately; workloads without both sides are left out."""
    out = []
    for p in ordered(r.panel for r in records):
        for w in ordered(r.workload for r in records if r.panel == p):
            here = [r for r in records if r.panel == p and r.workload == w]
            mine = [r for r in here if is_b2lazy(r.contender)]
            others = [r for r in here if is_other(r.contender)]
            if mine and others:
                b = mine[0]
                out.append((b.seconds / min(r.seconds for r in others), b.mib / min(r.mib for r in others)))
    return out


def summary_figure(path, by_bench):
    """One row per benchmark, a dot per workload, for time and for memory (log x, 1x marked)."""
    names = [n for n in by_bench if by_bench[n]]
    fig, axes = plt.subplots(1, 2, figsize=(10, 0.8 + 0.42 * len(names)), sharey=True, layout="constrained")
    for ax, k, what in zip(axes, (0, 1), ("time", "peak memory")):
        for i, n in enumerate(names):
            xs = [r[k] for r in by_bench[n]]
            # spread the dots of a row a little so equal ratios stay visible
            ys = [i + 0.25 * ((j % 5) - 2) / 2 for j in range(len(xs))]
            ax.scatter(xs, ys, s=14, alpha=0.75, color="C0", edgecolors="none")
            gm = math.exp(sum(math.log(x) for x in xs) / len(xs))
            ax.plot([gm, gm], [i - 0.35, i + 0.35], color="k", lw=1.5)
        ax.axvline(1, color="C3", lw=1)
        ax.set_xscale("log")
        ax.set_title(f"b2lazy {what} / best other contender's", fontsize=9)
        ax.grid(axis="x", which="both", alpha=0.25)
        ax.tick_params(labelsize=8)
        ax.text(0.01, 0.005, "< 1: b2lazy better", transform=ax.transAxes, fontsize=7, color="C3")
    axes[0].set_yticks(range(len(names)), [f"{n} ({len(by_bench[n])})" for n in names])
    axes[0].set_ylim(len(names) - 0.5, -0.5)
    save(fig, path)


def save(fig, path):
    # A 256-colour palette keeps the PNGs small (a third of the RGBA size) and looks the same:
    # the figures hold a dozen flat colours plus anti-aliased text.
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata=PNG_META)
    plt.close(fig)
    buf.seek(0)
    with Image.open(buf) as im:
        im.convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
            path, optimize=True
        )


def write_plots(load_json, outdir):
    """Writes outdir/summary.png and outdir/<bench>.png for each benchmark whose JSON has
    the figures; returns {name: path}. load_json(name) reads bench/RESULTS-<name>.json."""
    os.makedirs(outdir, exist_ok=True)
    plt.rcParams["svg.hashsalt"] = "b2lazy"  # fixed ids, were an SVG ever written
    written, by_bench = {}, {}
    for name, title, json_name, reader in BENCHES:
        try:
            records = reader(load_json(json_name))
        except FileNotFoundError:
            continue
        if not records:
            continue
        path = os.path.join(outdir, f"{name}.png")
        bench_figure(path, title, records)
        written[name] = path
        by_bench[name] = ratios([r for r in records if (name, r.panel) not in SUMMARY_SKIP])
    if any(by_bench.values()):
        path = os.path.join(outdir, "summary.png")
        summary_figure(path, by_bench)
        written["summary"] = path
    return written
