#!/usr/bin/env python3
"""The executors side by side on one machine: threads, "processes:2" and dask "local:2",
on a 200 MB operand (float64 (5000, 5000), chunks (500, 5000), on disk), interleaved.

    python bench/bench_executors.py [--reps 3] [--data-dir D]

Workloads: sum(a, axis=0) to NumPy (a reduction: one output task per row range, folded);
a - mean(a, axis=0) into a b2nd file (stages: a kept, its mean in pieces merged, then the
output tasks and the commit). Contenders: b2lazy's threads (nthreads=2); processes:2 with
a pool per call (as scheduler="processes:2" does) and with one pool kept for the run;
dask local:2 (a LocalCluster per call) and a Client kept (2 workers x 1 thread). The
per-call contenders include starting their workers.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

import b2lazy as bl
from b2lazy import _cluster, _processes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--data-dir", default=os.path.join(tempfile.gettempdir(), "b2lazy-bench-executors"))
    args = ap.parse_args()
    os.makedirs(args.data_dir, exist_ok=True)
    path = os.path.join(args.data_dir, "a.b2nd")
    if not os.path.exists(path):
        x = np.random.default_rng(0).random((5000, 5000))
        bl.asarray(x).compute(urlpath=path, chunks=(500, 5000), blocks=(50, 5000))
    a = bl.open(path)
    out = os.path.join(args.data_dir, "o.b2nd")

    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    runner = _processes._ProcessRunner(2, 1)
    contenders = {
        "threads (nthreads=2)": dict(nthreads=2),
        "processes:2 (pool per call)": dict(scheduler="processes:2"),
        "processes:2 (pool kept)": "runner",
        "dask local:2 (cluster per call)": dict(scheduler="local:2"),
        "dask Client kept (2x1)": dict(scheduler=client),
    }

    def run(workload, how):
        e = bl.sum(a, axis=0) if workload == "sum" else a - bl.mean(a, axis=0)
        urlpath = None if workload == "sum" else out
        if how == "runner":
            r = _cluster.compute(e, urlpath, runner)
        else:
            r = e.compute(urlpath, **how)
        return r.to_numpy() if workload == "sum" else r

    times = {}
    ref = None
    for rep in range(args.reps):
        for workload in ("sum", "anomaly"):
            for name, how in contenders.items():
                t = time.perf_counter()
                v = run(workload, how)
                dt = time.perf_counter() - t
                if workload == "sum":
                    ref = v if ref is None else ref
                    np.testing.assert_allclose(v, ref, rtol=1e-12)
                times.setdefault((workload, name), []).append(dt)
                print(f"rep {rep} {workload:8s} {name:32s} {dt:6.2f} s", flush=True)
    print(f"\nmedian (min) of {args.reps} interleaved runs; load average {os.getloadavg()}")
    label = {"sum": "sum(a, axis=0) -> NumPy", "anomaly": "a - mean(a, axis=0) -> b2nd"}
    for (workload, name), ts in times.items():
        print(f"| {label[workload]} | {name} | {np.median(ts):.2f} s ({min(ts):.2f}) |")
    runner.close()
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
