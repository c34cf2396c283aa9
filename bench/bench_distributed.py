#!/usr/bin/env python3
"""b2lazy on dask.distributed (issue #14): the same workloads with b2lazy local, b2lazy on
a LocalCluster and dask.array on that same LocalCluster, reading the same files.

    python bench/bench_distributed.py [--n 16384] [--n-products 8192] [--data-dir D]
                                      [--workloads ...] [--md FILE] [--out x.json]

Operands: float64 Zarr v3 arrays on disk (zarr-python, blosc zstd clevel 1 + shuffle,
chunks (1024, 1024); a3: (256, 4, 1024)) — a format both b2lazy and dask.array read:
a and b of shape (n, n) (n = 16384: 2 GiB each) and, for the products, a, b of shape
(m, m) and a3 of (m, 4, m) with m = --n-products (8192: 512 MiB; 2 GiB for a3). At
n = 16384 one product is 8.8 TFLOP, ~3 minutes per contender on this machine, so the
products run at m.

Workloads (full-size results written to a Zarr v3 array on disk, blosc zstd 1 + shuffle,
chunks (1024, 1024)): sin(a)**2 + cos(b)**2, sum(a) + a, a - mean(a, axis=0), cumsum(a,
axis=0), matmul(a, b) + b, matmul(sum(a3, axis=1), b), a[idx] (1000 random rows),
a[a > q] (q: the 0.999 quantile; into a 1-d Zarr array).

Contenders:
  local    b2lazy on this process's 2 threads (Array.compute), in a fresh subprocess
  cluster  b2lazy on LocalCluster(n_workers=2, threads_per_worker=1, processes=True)
           (Array.compute(scheduler=client))
  dask     dask.array.from_zarr on the same cluster, .to_zarr (a[a > q]: compute_chunk_sizes
           first, as dask needs)
Peak memory: per process, VmHWM after writing 5 to /proc/PID/clear_refs, minus VmRSS at
that moment: the subprocess for local, each worker process (the larger) on the cluster.
--max-memory-mib M runs both b2lazy contenders with max_memory = M MiB (per worker on the
cluster) instead of b2lazy's default (1 GiB), e.g. the products under a budget below
dask's peak per worker.
Targets: cluster within 1.3x of local; faster than dask on every workload with lower peak
memory per worker.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for ln in f:
            if ln.startswith(key + ":"):
                return int(ln.split()[1]) * 1024
    return 0


def reset_peak(pid):
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")
    return status(pid, "VmRSS")


# --- data ------------------------------------------------------------------------------
def _write_zarr(path, shape, chunks, seed):
    import zarr
    from zarr.codecs import BloscCodec

    if os.path.exists(os.path.join(path, "zarr.json")):
        return
    tmp = path + ".partial"  # renamed when complete: an interrupted run leaves no short array
    z = zarr.create_array(
        tmp,
        shape=shape,
        chunks=chunks,
        dtype="float64",
        overwrite=True,
        compressors=[BloscCodec(cname="zstd", clevel=1, shuffle="shuffle")],
    )
    rng = np.random.default_rng(seed)
    step = chunks[0]
    for i in range(0, shape[0], step):  # smooth values plus a little noise, strip by strip
        rows = np.arange(i, min(shape[0], i + step), dtype=np.float64)
        base = np.sin(rows / 97.0).reshape((-1,) + (1,) * (len(shape) - 1))
        z[i : i + len(rows)] = base + 0.001 * rng.standard_normal((len(rows),) + tuple(shape[1:]))
    os.rename(tmp, path)


def make_data(d, n, m):
    os.makedirs(d, exist_ok=True)
    _write_zarr(f"{d}/a{n}.zarr", (n, n), (1024, 1024), 1)
    _write_zarr(f"{d}/b{n}.zarr", (n, n), (1024, 1024), 2)
    _write_zarr(f"{d}/a{m}.zarr", (m, m), (1024, 1024), 3)
    _write_zarr(f"{d}/b{m}.zarr", (m, m), (1024, 1024), 4)
    _write_zarr(f"{d}/a3_{m}.zarr", (m, 4, m), (256, 4, 1024), 5)


WORKLOADS = ["elementwise", "sum+a", "a-mean0", "cumsum0", "matmul+b", "matmul_sum_a3", "fancy", "mask"]


def paths(d, n, m, w):
    if w in ("matmul+b", "matmul_sum_a3"):
        return {"a": f"{d}/a{m}.zarr", "b": f"{d}/b{m}.zarr", "a3": f"{d}/a3_{m}.zarr"}
    return {"a": f"{d}/a{n}.zarr", "b": f"{d}/b{n}.zarr"}


def quantile_of(path):
    import zarr

    z = zarr.open_array(path, mode="r")
    return float(np.quantile(z[:256], 0.999))


def b2lazy_expr(w, ops, q, idx):
    import b2lazy as bl

    a, b = bl.open(ops["a"]), bl.open(ops["b"])
    if w == "elementwise":
        return bl.sin(a) ** 2 + bl.cos(b) ** 2
    if w == "sum+a":
        return bl.sum(a) + a
    if w == "a-mean0":
        return a - bl.mean(a, axis=0)
    if w == "cumsum0":
        return bl.cumsum(a, axis=0)
    if w == "matmul+b":
        return bl.matmul(a, b) + b
    if w == "matmul_sum_a3":
        return bl.matmul(bl.sum(bl.open(ops["a3"]), axis=1), b)
    if w == "fancy":
        return a[idx]
    if w == "mask":
        return a[a > q]
    raise ValueError(w)


def dask_expr(w, ops, q, idx):
    import dask.array as da

    a, b = da.from_zarr(ops["a"]), da.from_zarr(ops["b"])
    if w == "elementwise":
        return da.sin(a) ** 2 + da.cos(b) ** 2
    if w == "sum+a":
        return a.sum() + a
    if w == "a-mean0":
        return a - a.mean(axis=0)
    if w == "cumsum0":
        return da.cumsum(a, axis=0)
    if w == "matmul+b":
        return da.matmul(a, b) + b
    if w == "matmul_sum_a3":
        return da.matmul(da.from_zarr(ops["a3"]).sum(axis=1), b)
    if w == "fancy":
        return a[idx]
    if w == "mask":
        r = a[a > q]
        r.compute_chunk_sizes()
        return r
    raise ValueError(w)


def out_chunks(ndim):
    return (1024, 1024) if ndim == 2 else (1 << 20,)


def budget_kw(max_memory):
    return {} if max_memory is None else {"max_memory": max_memory}


def run_local(w, ops, q, idx, out, max_memory=None):
    """b2lazy on this process's threads (the subprocess entry point)."""
    base = reset_peak(os.getpid())
    x = b2lazy_expr(w, ops, q, idx)
    t = time.perf_counter()
    x.compute(urlpath=out, chunks=out_chunks(x.ndim), cparams={"codec": "zstd", "clevel": 1}, **budget_kw(max_memory))
    secs = time.perf_counter() - t
    return {"seconds": secs, "peak": status(os.getpid(), "VmHWM") - base}


def on_cluster(client, fn):
    pids = list(client.run(os.getpid).values())
    base = {p: reset_peak(p) for p in pids}
    t = time.perf_counter()
    fn()
    secs = time.perf_counter() - t
    peak = max(status(p, "VmHWM") - base[p] for p in pids)
    return {"seconds": secs, "peak": peak}


def run_cluster(client, w, ops, q, idx, out, max_memory=None):
    x = b2lazy_expr(w, ops, q, idx)
    return on_cluster(
        client,
        lambda: x.compute(
            urlpath=out,
            chunks=out_chunks(x.ndim),
            scheduler=client,
            cparams={"codec": "zstd", "clevel": 1},
            **budget_kw(max_memory),
        ),
    )


def run_dask(client, w, ops, q, idx, out):
    from zarr.codecs import BloscCodec

    def go():
        x = dask_expr(w, ops, q, idx)
        x = x.rechunk(out_chunks(x.ndim))
        x.to_zarr(
            out, overwrite=True, compute=True, compressors=[BloscCodec(cname="zstd", clevel=1, shuffle="shuffle")]
        )

    return on_cluster(client, go)


def check(out, ref_out):
    import b2lazy as bl

    g, r = bl.open(out), bl.open(ref_out)
    if g.shape != r.shape:
        return f"shape {g.shape} vs {r.shape}"
    n = g.shape[0]
    rows = sorted({0, n // 3, n - 1}) if n else []
    for i in rows:
        gi, ri = g[i].to_numpy(), r[i].to_numpy()
        err = float(np.max(np.abs(gi - ri)) / max(1e-300, float(np.max(np.abs(ri)))))
        if err > 1e-8:
            return f"row {i}: rel err {err:.2e}"
    return "ok"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=16384)
    ap.add_argument("--n-products", type=int, default=8192)
    ap.add_argument("--data-dir", default="/work/data/distributed")
    ap.add_argument("--workloads", nargs="*", default=WORKLOADS)
    ap.add_argument("--contenders", nargs="*", default=["local", "cluster", "dask"])
    ap.add_argument(
        "--max-memory-mib",
        type=int,
        default=None,
        help="b2lazy's max_memory (local; per worker on the cluster); default: b2lazy's own",
    )
    ap.add_argument("--out", default=None)
    ap.add_argument("--md", default=None)
    ap.add_argument("--local-one", nargs=4, help=argparse.SUPPRESS)  # subprocess entry: w ops.json q out
    args = ap.parse_args()
    mm = None if args.max_memory_mib is None else args.max_memory_mib << 20
    if args.local_one:
        w, opsj, q, out = args.local_one
        ops = json.loads(opsj)
        idx = np.random.default_rng(0).choice(args.n, 1000, replace=False)
        print(json.dumps(run_local(w, ops, float(q), idx, out, mm)))
        return
    make_data(args.data_dir, args.n, args.n_products)
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, memory_limit="10GiB"
    )
    client = Client(cluster)
    results = []
    outdir = os.path.join(args.data_dir, "out")
    os.makedirs(outdir, exist_ok=True)
    idx = np.random.default_rng(0).choice(args.n, 1000, replace=False)
    for w in args.workloads:
        ops = paths(args.data_dir, args.n, args.n_products, w)
        q = quantile_of(ops["a"])
        row = {"workload": w}
        for c in args.contenders:
            out = os.path.join(outdir, f"{w}-{c}.zarr")
            if c == "local":
                budget = [] if mm is None else ["--max-memory-mib", str(args.max_memory_mib)]
                r = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--n",
                        str(args.n),
                        *budget,
                        "--local-one",
                        w,
                        json.dumps(ops),
                        repr(q),
                        out,
                    ],
                    capture_output=True,
                    text=True,
                )
                if r.returncode != 0:
                    row[c] = {"error": r.stderr[-400:]}
                    continue
                row[c] = json.loads(r.stdout.strip().splitlines()[-1])
            elif c == "cluster":
                try:
                    row[c] = run_cluster(client, w, ops, q, idx, out, mm)
                except Exception as e:  # noqa: BLE001 - recorded in the table, the other workloads still run
                    row[c] = {"error": f"{type(e).__name__}: {e}"[:300]}
                    continue
            else:
                try:
                    row[c] = run_dask(client, w, ops, q, idx, out)
                except Exception as e:  # noqa: BLE001
                    row[c] = {"error": f"{type(e).__name__}: {e}"[:300]}
                    continue
            if c != "local" and "local" in row and "seconds" in row["local"]:
                row[c]["check"] = check(out, os.path.join(outdir, f"{w}-local.zarr"))
            print(w, c, row[c], flush=True)
        results.append(row)
    client.close()
    cluster.close()
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    lines = [
        "| workload | local s | cluster s | dask s | cluster / local | dask / cluster | "
        "peak MiB local | peak MiB/worker cluster | peak MiB/worker dask | check |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    mib = 1 << 20
    for row in results:
        g = {c: row.get(c, {}) for c in ("local", "cluster", "dask")}
        s = {c: g[c].get("seconds") for c in g}
        fmt = lambda v: f"{v:.2f}" if v is not None else "err"  # noqa: E731
        ratio = lambda x, y: f"{x / y:.2f}x" if x and y else "-"  # noqa: E731
        pk = lambda c: f"{g[c]['peak'] / mib:.0f}" if "peak" in g[c] else "-"  # noqa: E731
        chk = ", ".join(f"{c}: {g[c]['check']}" for c in ("cluster", "dask") if "check" in g[c])
        lines.append(
            f"| {row['workload']} | {fmt(s['local'])} | {fmt(s['cluster'])} | {fmt(s['dask'])} | "
            f"{ratio(s['cluster'], s['local'])} | {ratio(s['dask'], s['cluster'])} | {pk('local')} | "
            f"{pk('cluster')} | {pk('dask')} | {chk} |"
        )
    table = "\n".join(lines)
    print(table)
    if args.md:
        with open(args.md, "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
