#!/usr/bin/env python3
"""xarray benchmark (issue #38): the climate scientist's workloads on xarray over Dask
(threads), over NumPy and over b2lazy (chunked_array_type="b2lazy"), side by side.

    python bench/bench_xarray.py [--dataset era-4y.zarr ...] [--data /work/data] [--reps 3]
                                 [--only WORKLOAD ...] [--engines dask numpy b2lazy]
                                 [--out bench/RESULTS-xarray.json] [--plot bench/xarray.png]
    python bench/bench_xarray.py --quick [--in-process]   # a small generated dataset: a smoke run

Datasets (bench/xarray_data.py writes them): era-4y.zarr (t, u, v float32 (1460, 181, 360),
chunks (24, 181, 360), zstd, 1.1 GiB), era-16y.zarr (4x the time length, 4.5 GiB) and
era-4y.nc (netCDF4, zlib 1, the same chunks; opened with xarray's default netCDF engine).

Every (workload, engine) runs in a fresh process: its time counts opening the dataset
(xr.open_dataset) plus computing the result to memory (or writing it, for `write`); its peak
is VmHWM at the end minus VmRSS after the imports (the high-water mark reset there through
/proc/self/clear_refs), so an open that reads the data shows in both. Median of --reps runs.
Engines: dask = chunks={} (the store's chunks) on dask's threaded scheduler with 2 workers;
numpy = no chunks (xarray's lazily indexed arrays, loaded when computed; skipped on datasets
larger than --numpy-max-gib); b2lazy = chunks={}, chunked_array_type="b2lazy".
Results are checked against xarray on NumPy (against Dask where NumPy is skipped): max|a - b|
within 1e-4 of max|ref| (float32 sums in other orders), NaN in the same places.
A run that raises is recorded as "fails: <error>".
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

NTHREADS = 2
HERE = os.path.dirname(os.path.abspath(__file__))

# name: (what the table says, the timed body). The body sees `ds` (opened inside the timing,
# see OPEN), `np`, `xr`, `scratch` (an empty directory) and leaves the computed result in `r`.
WORKLOADS = {
    "open": ("open the dataset", "r = None"),
    "anomaly-std": ("(t - t.mean('time')).std('time')", "t = ds.t; r = (t - t.mean('time')).std('time').compute()"),
    "std-anomaly": (
        "(t - t.mean('time')) / t.std('time')",
        "t = ds.t; r = ((t - t.mean('time')) / t.std('time')).compute()",
    ),
    "climatology": ("t.groupby('time.month').mean()", "r = ds.t.groupby('time.month').mean().compute()"),
    "clim-anomaly": (
        "t.groupby('time.month') - clim",
        "t = ds.t; clim = t.groupby('time.month').mean(); r = (t.groupby('time.month') - clim).compute()",
    ),
    "weighted-mean": (
        "t.weighted(cos(lat)).mean(('lat', 'lon'))",
        "t = ds.t; r = t.weighted(np.cos(np.deg2rad(t.lat))).mean(('lat', 'lon')).compute()",
    ),
    "resample": ("t.resample(time='1MS').mean()", "r = ds.t.resample(time='1MS').mean().compute()"),
    "rolling": ("t.rolling(time=8).mean()", "r = ds.t.rolling(time=8).mean().compute()"),
    "region-count": (
        "(t.sel(lat=slice(30, 60), lon=slice(0, 90)) > 270).sum(('lat', 'lon'))",
        "r = (ds.t.sel(lat=slice(30, 60), lon=slice(0, 90)) > 270).sum(('lat', 'lon')).compute()",
    ),
    "where-count": (
        "t.where(t > 290).count('time')  (notnull().sum)",
        "t = ds.t; r = t.where(t > 290).count('time').compute()",
    ),
    "where-mean": (
        "t.where(t > 290).mean('time')  (skipna: nanmean)",
        "t = ds.t; r = t.where(t > 290).mean('time').compute()",
    ),
    "coarsen": (
        "t.coarsen(time=4, lat=2, lon=2, boundary='trim').mean()",
        "r = ds.t.coarsen(time=4, lat=2, lon=2, boundary='trim').mean().compute()",
    ),
    "covariance": (
        "((u - u.mean('time')) * (v - v.mean('time'))).mean('time')",
        "u, v = ds.u, ds.v; r = ((u - u.mean('time')) * (v - v.mean('time'))).mean('time').compute()",
    ),
    "write": (
        "standardised anomaly .to_zarr()",
        "t = ds.t; a = ((t - t.mean('time')) / t.std('time')).rename('tstd')\n"
        "a.to_dataset().to_zarr(os.path.join(scratch, 'out.zarr'), mode='w', zarr_format=3)\n"
        "r = 'written'",
    ),
}
ENGINES = ("dask", "numpy", "b2lazy")
OPEN = {
    "dask": "ds = xr.open_dataset(path, engine=backend, chunks={})",
    "numpy": "ds = xr.open_dataset(path, engine=backend)",
    "b2lazy": "ds = xr.open_dataset(path, engine=backend, chunks={}, chunked_array_type='b2lazy')",
}


# ------------------------------------------------------------------ one run (a fresh process)
def _rss():
    got = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS", "VmHWM", "RssAnon")):
                key, value = line.split(":")
                got[key] = int(value.split()[0]) * 1024
    return got


def run_one(spec):
    """Runs one (workload, engine) on one dataset; returns {"seconds", "open_seconds",
    "peak_bytes", "cpu_seconds" (user + system, all threads: less sensitive to a busy
    machine than the wall time), "load" (1-minute load average at the start)}; saves the
    result's values to spec["save"] when given."""
    import numpy as np
    import xarray as xr
    import dask
    import dask.array  # noqa: F401  (imported by every engine: the same baseline)
    import zarr  # noqa: F401
    import b2lazy  # noqa: F401
    import b2lazy._xarray  # noqa: F401

    for mod in ("netCDF4", "h5netcdf"):
        try:
            __import__(mod)
        except ImportError:
            pass
    import warnings

    with warnings.catch_warnings(), dask.config.set(scheduler="threads", num_workers=NTHREADS):
        warnings.simplefilter("ignore")
        return _timed(spec, np, xr)


def _timed(spec, np, xr):
    path, backend, engine = spec["path"], spec["backend"], spec["engine"]
    scratch = tempfile.mkdtemp(dir=spec.get("scratch"))
    env = {"np": np, "xr": xr, "os": os, "path": path, "backend": backend, "scratch": scratch}
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # the high-water mark restarts at the RSS now
        at_start = _rss()
        base = at_start["VmRSS"]
        load = os.getloadavg()[0]
        c0 = os.times()
        t0 = time.perf_counter()
        exec(OPEN[engine], env)
        t1 = time.perf_counter()
        exec(WORKLOADS[spec["workload"]][1], env)
        t2 = time.perf_counter()
        c1 = os.times()
        at_end = _rss()
        peak = at_end["VmHWM"] - base
        # Anonymous memory held at the end (no high-water mark exists for it): for the open
        # row, what opening allocated, without the file-backed code pages of the libraries
        # first touched (the rest of the RSS growth).
        anon = at_end["RssAnon"] - at_start["RssAnon"]
        if spec.get("save"):
            r = env["r"]
            if spec["workload"] == "write":
                r = xr.open_zarr(os.path.join(scratch, "out.zarr")).tstd
            if r is not None:
                np.save(spec["save"], np.asarray(r.values if hasattr(r, "values") else r))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "seconds": t2 - t0,
        "open_seconds": t1 - t0,
        "peak_bytes": max(0, peak),
        "anon_bytes": anon,
        "cpu_seconds": (c1.user - c0.user) + (c1.system - c0.system),
        "load": load,
    }


def run_fresh(spec, timeout):
    """run_one in a new interpreter (this file with --child)."""
    try:
        out = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout} s"}
    if out.returncode != 0:
        lines = [ln for ln in out.stderr.strip().splitlines() if ln.strip()]
        return {"error": (lines[-1] if lines else f"exit {out.returncode}")[:300]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_in_process(spec):
    try:
        return run_one(spec)
    except Exception as e:  # noqa: BLE001  (recorded in the table)
        return {"error": f"{type(e).__name__}: {e}".splitlines()[0][:300]}


# ------------------------------------------------------------------ checking results
def compare(got_path, ref_path, rel=1e-4):
    """ "ok" or what differs: shapes, NaN positions, max|a - b| against rel * max|ref|
    (compared slab by slab, memory-mapped, so full-size results need little memory)."""
    import numpy as np

    a = np.load(got_path, mmap_mode="r")
    b = np.load(ref_path, mmap_mode="r")
    if a.shape != b.shape:
        return f"mismatch: shape {a.shape} vs {b.shape}"
    if a.ndim == 0:
        a, b = a.reshape(1), b.reshape(1)
    worst = scale = 0.0
    step = max(1, (16 << 20) // max(1, b[0].nbytes if b.ndim else 1))
    for i in range(0, max(1, b.shape[0]), step):
        x = np.asarray(a[i : i + step], dtype="f8")
        y = np.asarray(b[i : i + step], dtype="f8")
        nx, ny = np.isnan(x), np.isnan(y)
        if (nx != ny).any():
            return f"mismatch: NaN at {int((nx != ny).sum())} places"
        if (~ny).any():
            worst = max(worst, float(np.max(np.abs(x[~ny] - y[~ny]))))
            scale = max(scale, float(np.max(np.abs(y[~ny]))))
    if worst > rel * max(scale, 1e-30):
        return f"mismatch: max|diff| {worst:.3g} (max|ref| {scale:.3g})"
    return "ok"


# ------------------------------------------------------------------ datasets
def make_small(d, ntime=120, nlat=19, nlon=36, chunk=24):
    """A tiny dataset shaped like era (daily t, u, v on a coarser grid, chunks of `chunk` days)
    in Zarr v3 and netCDF4, for --quick; returns the two paths."""
    import numpy as np
    import pandas as pd
    import xarray as xr

    rng = np.random.default_rng(0)
    lat = np.linspace(-90, 90, nlat)
    lon = np.linspace(0, 350, nlon)
    day = np.arange(ntime)[:, None, None]
    season = np.cos(2 * np.pi * day / 365.25)
    s = np.sin(np.radians(lat))[None, :, None]
    base = {
        "t": 288 - 40 * np.abs(s) + 10 * season * s,
        "u": 10 * np.cos(np.radians(2 * lat))[None, :, None] + 3 * season,
        "v": 2 * np.sin(np.radians(lon))[None, None, :] * np.cos(np.radians(lat))[None, :, None],
    }
    ds = xr.Dataset(
        {
            v: (("time", "lat", "lon"), (base[v] + rng.standard_normal((ntime, nlat, nlon)) * 3).astype("f4"))
            for v in "tuv"
        },
        coords={"time": pd.date_range("2000-01-01", periods=ntime, freq="D"), "lat": lat, "lon": lon},
    )
    os.makedirs(d, exist_ok=True)
    zpath, npath = os.path.join(d, "small.zarr"), os.path.join(d, "small.nc")
    enc = {v: {"chunks": (chunk, nlat, nlon)} for v in "tuv"}
    if not os.path.exists(zpath):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # consolidated metadata in v3, as era-*.zarr has it
            ds.to_zarr(zpath, zarr_format=3, encoding=enc, consolidated=True)
    if not os.path.exists(npath):
        ds.to_netcdf(
            npath, encoding={v: {"chunksizes": (chunk, nlat, nlon), "zlib": True, "complevel": 1} for v in "tuv"}
        )
    return zpath, npath


def dataset_bytes(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    total = 0
    for root, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def uncompressed_gib(path):
    import xarray as xr

    with xr.open_dataset(path, engine=backend_for(path)) as ds:
        return sum(v.size * v.dtype.itemsize for v in ds.data_vars.values()) / 2**30


def backend_for(path):
    return "zarr" if path.rstrip("/").endswith(".zarr") else None  # None: xarray's default (netCDF4)


# ------------------------------------------------------------------ the report
def cell(res):
    if res is None:
        return "—"
    if "error" in res:
        return "fails: " + res["error"].replace("|", "\\|")[:120]
    text = f"{res['seconds']:.2f} s / {res['peak_mib']:.0f} MiB"
    if "cpu_seconds" in res:
        text += f" (cpu {res['cpu_seconds']:.1f} s)"
    if res.get("workload") == "open" and "anon_mib" in res:
        text += f" (anon {res['anon_mib']:.1f} MiB)"
    if res.get("check", "ok") not in ("ok", "reference"):
        text += f" ({res['check']})"
    return text


def ratio(a, b):
    """Dask over b2lazy: above 1 is b2lazy ahead."""
    if not a or not b or "seconds" not in a or "seconds" not in b:
        return "—"
    return f"{a['seconds'] / b['seconds']:.2f}x time, {a['peak_mib'] / max(b['peak_mib'], 1):.2f}x peak"


def table(name, rows, engines):
    out = [
        f"### {name}",
        "",
        "| workload | " + " | ".join(engines) + " | Dask / b2lazy |",
        "|---|" + "---|" * len(engines) + "---|",
    ]
    for w, res in rows.items():
        out.append(
            f"| {WORKLOADS[w][0].replace('|', chr(92) + '|')} | "
            + " | ".join(cell(res.get(e)) for e in engines)
            + f" | {ratio(res.get('dask'), res.get('b2lazy'))} |"
        )
    return "\n".join(out)


def plot(results, png):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = list(results)
    fig, axes = plt.subplots(len(names), 2, figsize=(12, 0.45 * len(WORKLOADS) * len(names) + 1.5), squeeze=False)
    for row, name in enumerate(names):
        rows = results[name]
        ws = list(rows)
        y = np.arange(len(ws))
        for col, (key, label) in enumerate((("seconds", "time (s)"), ("peak_mib", "peak RSS growth (MiB)"))):
            ax = axes[row][col]
            for k, (eng, color) in enumerate((("dask", "tab:orange"), ("b2lazy", "tab:blue"))):
                vals = [rows[w].get(eng, {}).get(key, 0.0) if rows[w].get(eng) else 0.0 for w in ws]
                ax.barh(y + (k - 0.5) * 0.4, vals, height=0.4, color=color, label=eng)
                for i, w in enumerate(ws):
                    if rows[w].get(eng) and "error" in rows[w][eng]:
                        ax.text(0, y[i] + (k - 0.5) * 0.4, " fails", va="center", fontsize=7, color=color)
            ax.set_yticks(y, ws)
            ax.invert_yaxis()
            ax.set_xlabel(label)
            ax.set_title(f"{name}: {label.split(' (')[0]}")
            if row == 0 and col == 0:
                ax.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    plt.close(fig)


def machine():
    import importlib.metadata as md

    versions = {}
    for p in ("numpy", "xarray", "dask", "zarr", "netCDF4", "h5netcdf", "b2lazy"):
        try:
            versions[p] = md.version(p)
        except md.PackageNotFoundError:
            pass
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    mem = next((ln.split(":", 1)[1].strip() for ln in open("/proc/meminfo") if ln.startswith("MemTotal")), "?")
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": mem,
        "python": platform.python_version(),
        "versions": versions,
    }


# ------------------------------------------------------------------ main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--data", default="/work/data")
    ap.add_argument(
        "--dataset",
        nargs="*",
        default=None,
        help="names under --data or paths (default: era-4y.zarr era-16y.zarr era-4y.nc, those present)",
    )
    ap.add_argument("--only", nargs="*", default=None, choices=list(WORKLOADS), metavar="WORKLOAD")
    ap.add_argument("--engines", nargs="*", default=list(ENGINES), choices=ENGINES)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument(
        "--numpy-max-gib",
        type=float,
        default=2.0,
        help="skip the NumPy engine on datasets larger than this uncompressed",
    )
    ap.add_argument("--timeout", type=float, default=1200)
    ap.add_argument("--quick", action="store_true", help="a small generated dataset, one run each: a smoke run")
    ap.add_argument(
        "--in-process",
        action="store_true",
        help="run every case in this process (no fresh processes: the peaks mean nothing)",
    )
    ap.add_argument("--scratch", default=None, help="where results and written stores go (default: a temp dir)")
    ap.add_argument("--out", default=None, help="JSON results (e.g. bench/RESULTS-xarray.json)")
    ap.add_argument("--plot", default=None, help="PNG of time and peak per workload (e.g. bench/xarray.png)")
    ap.add_argument("--md", default=None, help="write the markdown tables here too")
    ap.add_argument(
        "--merge",
        nargs="*",
        default=None,
        metavar="JSON",
        help="no runs: join earlier --out files (datasets run with different --reps; "
        "a later file's rows replace an earlier one's) into --out/--plot/--md",
    )
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(run_one(json.loads(args.child))))
        return 0
    scratch = tempfile.mkdtemp(prefix="bench-xarray-", dir=args.scratch)
    try:
        return _main(args, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _report(args, results, notes, info, reps, workloads):
    md = "\n\n".join(
        table(n, rows, [e for e in ENGINES if any(e in r for r in rows.values())]) for n, rows in results.items()
    )
    loads = [r["load"] for rows in results.values() for res in rows.values() for r in res.values() if "load" in r]
    md += (
        "\n\nCells: median time / peak RSS growth (from after the imports, opening included)"
        " (CPU seconds of the process, all threads); the open row adds the anonymous memory"
        " growth (what opening allocated; the rest is library code paged in on first use)."
        + (
            f" Load average during the runs: {min(loads):.1f} to {max(loads):.1f} on {os.cpu_count()} cores."
            if loads
            else ""
        )
        + "".join(f"\n{n}." for n in notes)
    )
    print(md)
    if args.md:
        with open(args.md, "w") as f:
            f.write(md + "\n")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(
                {
                    "machine": info,
                    "reps": reps,
                    "nthreads": NTHREADS,
                    "notes": notes,
                    "workloads": {w: WORKLOADS[w][0] for w in workloads},
                    "results": results,
                    "markdown": md,
                },
                f,
                indent=1,
            )
    if args.plot:
        plot(results, args.plot)
    return 0


def _merge(args):
    results, notes, reps, info = {}, [], {}, None
    for path in args.merge:
        with open(path) as f:
            got = json.load(f)
        info = info or got["machine"]
        for name, rows in got["results"].items():  # later files replace earlier rows
            results.setdefault(name, {}).update(rows)
        notes += got.get("notes", [])
        for name in got["results"]:
            reps[name] = got["reps"] if not isinstance(got["reps"], dict) else got["reps"].get(name)
    workloads = [w for w in WORKLOADS if any(w in rows for rows in results.values())]
    return _report(args, results, notes, info, reps, workloads)


def _main(args, scratch):
    if args.merge:
        return _merge(args)
    if args.quick:
        datasets = list(make_small(os.path.join(scratch, "data")))
        reps = 1
    else:
        names = args.dataset or [
            n for n in ("era-4y.zarr", "era-16y.zarr", "era-4y.nc") if os.path.exists(os.path.join(args.data, n))
        ]
        datasets = [n if os.path.exists(n) else os.path.join(args.data, n) for n in names]
        reps = args.reps
    workloads = args.only or list(WORKLOADS)
    info = machine()
    print(f"# {info['date']}, {info['cores']} cores, {info['cpu']}, load {os.getloadavg()}", flush=True)
    results, notes = {}, []
    for path in datasets:
        name = os.path.basename(path.rstrip("/"))
        engines = list(args.engines)
        gib = uncompressed_gib(path)
        if "numpy" in engines and gib > args.numpy_max_gib:
            engines.remove("numpy")
            notes.append(f"{name}: NumPy skipped ({gib:.1f} GiB uncompressed > --numpy-max-gib {args.numpy_max_gib:g})")
        ref_engine = "numpy" if "numpy" in engines else "dask"
        print(
            f"## {name} ({dataset_bytes(path) / 2**30:.2f} GiB on disk, {gib:.2f} GiB of data), reference {ref_engine}",
            flush=True,
        )
        rows = results.setdefault(name, {})
        for w in workloads:
            rows[w] = {}
            saved = {}
            for e in engines:
                runs = []
                for rep in range(reps):
                    spec = {"path": path, "backend": backend_for(path), "engine": e, "workload": w, "scratch": scratch}
                    if rep == 0 and w != "open":
                        spec["save"] = saved[e] = os.path.join(scratch, f"{w}-{e}.npy")
                    runs.append(run_in_process(spec) if args.in_process else run_fresh(spec, args.timeout))
                    if "error" in runs[-1]:
                        saved.pop(e, None)
                        break  # a failure fails every time: do not repeat it
                ok = [r for r in runs if "error" not in r]
                if not ok:
                    res = {"error": runs[-1]["error"]}
                else:
                    res = {
                        "seconds": statistics.median(r["seconds"] for r in ok),
                        "open_seconds": statistics.median(r["open_seconds"] for r in ok),
                        "peak_mib": max(r["peak_bytes"] for r in ok) / 2**20,
                        "cpu_seconds": statistics.median(r["cpu_seconds"] for r in ok),
                        "load": max(r["load"] for r in ok),
                        "anon_mib": statistics.median(r["anon_bytes"] for r in ok) / 2**20,
                        "runs": [round(r["seconds"], 3) for r in ok],
                    }
                if w == "open" and "error" not in res:
                    res["workload"] = "open"
                rows[w][e] = res
            ref = saved.get(ref_engine)
            for e in engines:
                res = rows[w][e]
                if "error" in res or w == "open":
                    continue
                if e == ref_engine:
                    res["check"] = "reference"
                elif ref is None or e not in saved:
                    res["check"] = "unchecked"
                else:
                    res["check"] = compare(saved[e], ref)
            for f in saved.values():
                if os.path.exists(f):
                    os.remove(f)
            print(f"{w:14s} " + "  ".join(f"{e}: {cell(rows[w][e])}" for e in engines), flush=True)
    print(f"# load after: {os.getloadavg()}\n")
    return _report(args, results, notes, info, reps, workloads)


if __name__ == "__main__":
    sys.exit(main())
