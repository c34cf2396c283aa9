#!/usr/bin/env python3
"""The distributed plan at internet scale, on paper (issue #14, docs/user-guide/distributed.md): the
task lists b2lazy's planner makes for 1 TB operands, run against a simple cost model on
W workers.

    python bench/simulate_distributed.py [--n 362000] [--chunk 4096] [--workers 1 10 100]

The operands are real b2nd arrays of shape (n, n) float64 (n = 362000: 1.05 TB) made
with python-blosc2's `uninit` (a frame of special chunks: a few hundred KB on disk), so
the plans — stages, output tasks, their projected memory and source bytes — are the
planner's own, built as every worker would build them (one thread per worker, the
default budget). The model, per core: decompression at DEC bytes/s, compression at COMP
bytes/s (C-Blosc2 zstd 1 + shuffle on float64 here: ~1 GB/s and ~0.5 GB/s), BLAS at
FLOPS; a task's time is the sum of its parts plus LAT scheduling latency. Each stage runs
as the distributed executor hands it out (split_stage, the same call it makes): its
pieces list-scheduled on W workers, a reduction's partial states merged in a tree of
fan-in MERGE_FANIN (LAT per level), then one task finishing it, writing a stage kept
dense or spilled to the shared store at STORE_BW; the output tasks are list-scheduled on
W workers. The commit: Zarr — workers write their chunk files in parallel to a shared
store of STORE_BW aggregate bandwidth; b2nd — every compressed chunk goes through the
one committer's link at LINK_BW.
"""

from __future__ import annotations

import argparse
import heapq
import os
import sys
import tempfile
import time

DEC, COMP, FLOPS, LAT = 1.0e9, 0.5e9, 50e9, 2e-3
STORE_BW, LINK_BW = 20e9, 1.25e9  # a parallel file system; one 10 GbE link


def operands(d, n, chunk):
    import blosc2

    out = {}
    for name in ("a", "b"):
        p = os.path.join(d, f"{name}.b2nd")
        blosc2.uninit(
            (n, n), dtype="float64", chunks=(chunk, chunk), blocks=(256, chunk // 8 or 1), urlpath=p, mode="w"
        )
        out[name] = p
    return out


def workloads(bl, ops):
    a, b = bl.open(ops["a"]), bl.open(ops["b"])
    return {
        "sum(a) + a": bl.sum(a) + a,
        "a - mean(a, axis=0)": a - bl.mean(a, axis=0),
        "cumsum(a, axis=0)": bl.cumsum(a, axis=0),
        "matmul(a, b) + b": bl.matmul(a, b) + b,
    }


def stage_read(plan):
    """Bytes the stages decompress: the plan's estimate per source, less the tasks' own."""
    return max(0, sum(plan.source_bytes.values()) - sum(t["source_bytes"] for t in plan.tasks))


def list_schedule(costs, workers):
    heap = [0.0] * workers
    for c in costs:
        heapq.heappush(heap, heapq.heappop(heap) + c)
    return max(heap)


def stages_of(plan, workers):
    """[(pieces, folds, merge tasks)] per stage, as distributed.py submits them."""
    from b2lazy import _core
    from b2lazy.distributed import MERGE_FANIN

    out = []
    for i in range(len(plan.stages)):
        pieces, folds = _core.split_stage(plan._p, i, workers)
        merges, level = 0, pieces
        while folds and level > MERGE_FANIN:
            level = -(-level // MERGE_FANIN)
            merges += level
        out.append((pieces, folds, merges))
    return out


def simulate(plan, workers, out_bytes, flops_total):
    """(stage seconds, output seconds on `workers`, commit-limited seconds for zarr, b2nd)."""
    from b2lazy.distributed import MERGE_FANIN

    read = stage_read(plan)
    stage = 0.0
    for st, (pieces, folds, merges) in zip(plan.stages, stages_of(plan, workers)):
        share = read / max(1, len(plan.stages)) / pieces  # (one stage per workload here)
        stage += list_schedule([share / DEC + LAT] * pieces, workers)
        levels, n = 0, pieces
        while folds and n > MERGE_FANIN:
            n, levels = -(-n // MERGE_FANIN), levels + 1
        stage += LAT * (levels + 1) + st["bytes"] / STORE_BW  # the merge tree, the finish writing it
    tasks = plan.tasks
    ntasks = len(tasks)
    per_flops = flops_total / max(1, ntasks)
    per_out = out_bytes / max(1, ntasks)
    out = list_schedule([t["source_bytes"] / DEC + per_out / COMP + per_flops / FLOPS + LAT for t in tasks], workers)
    compressed = out_bytes  # smooth-plus-noise float64 hardly compresses: ~1x
    return stage, out, max(out, compressed / STORE_BW), max(out, compressed / LINK_BW)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=362000)
    ap.add_argument("--chunk", type=int, default=4096)
    ap.add_argument("--workers", type=int, nargs="*", default=[1, 10, 100])
    args = ap.parse_args()
    import b2lazy as bl

    n = args.n
    with tempfile.TemporaryDirectory() as d:
        ops = operands(d, n, args.chunk)
        print(
            f"operands: ({n}, {n}) float64 = {n * n * 8 / 1e12:.2f} TB each, chunks ({args.chunk}, {args.chunk}) "
            f"= {args.chunk**2 * 8 / 2**20:.0f} MiB"
        )
        print(
            "| workload | stages | stage bytes read | kept | stage tasks at W="
            + str(max(args.workers))
            + " (pieces + merges + finish) | bytes between stages at W="
            + str(max(args.workers))
            + " | output tasks | per-task memory | per-task source bytes | "
            + " | ".join(f"W={w}: stage + output s, Zarr / b2nd commit s" for w in args.workers)
            + " |"
        )
        print("|---" * (9 + len(args.workers)) + "|")
        for name, x in workloads(bl, ops).items():
            p = x.plan(nthreads=1, urlpath=os.path.join(d, "out.zarr"), chunks=(args.chunk,) * x.ndim)
            out_bytes = x.size * 8
            flops = 2.0 * n**3 if "matmul" in name else 0.0
            t0 = time.perf_counter()
            kept = ", ".join(f"{s['kind']} {s['where']} {s['bytes'] / 2**20:.0f} MiB" for s in p.stages) or "-"
            tasks = p.tasks
            mem = max((t["projected_bytes"] for t in tasks), default=0)
            src = max((t["source_bytes"] for t in tasks), default=0)
            cells = []
            for w in args.workers:
                st, out, z, b2 = simulate(p, w, out_bytes, flops)
                cells.append(f"{st:.0f} + {out:.0f}, {st + z:.0f} / {st + b2:.0f}")
            wmax = max(args.workers)
            split = stages_of(p, wmax)
            stage_tasks = ", ".join(f"{n} {'folds' if f else 'chunk ranges'} + {m} + 1" for n, f, m in split) or "-"
            # pieces to the finishing task (a partial state per piece, or the stage's chunks), then the
            # finished stage to every worker process (an upper bound: mapped, each reads what it uses)
            moved = sum(
                (n * 24 * max(1, s["bytes"] // 8) if f else s["bytes"]) + wmax * s["bytes"]
                for s, (n, f, _) in zip(p.stages, split)
            )
            print(
                f"| {name} | {len(p.stages)} | {stage_read(p) / 1e12:.2f} TB | {kept} | {stage_tasks} | "
                f"{moved / 2**30:.1f} GiB | {len(tasks)} | "
                f"{mem / 2**20:.0f} MiB | {src / 2**30:.1f} GiB | " + " | ".join(cells) + " |",
                flush=True,
            )
            print(f"  (planned in {time.perf_counter() - t0:.1f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
