"""b2lazy on dask.distributed (issue #14): the plan's stages and output tasks handed to a
cluster the user already runs, never to a scheduler of our own.

Every process — the client and each worker — builds the same plan from the expression's
saved form (b2lazy/_serial.py) and the same options, with the workers' thread count, and
the plans are compared by fingerprint. The client computes nothing itself:

1. one task computes the stages (nodes computed once: reductions, scan totals, kept
   operands) and exports them; small results travel as task data, large ones are written
   to a file beside the output that every worker reads;
2. output tasks (ranges of the plan's tasks: whole chunks, a product's row band) run on
   the workers, each importing the stages once per process, within `max_memory` each;
3. the output is committed safely: a Zarr target gets its chunk files written by the
   workers into a temporary store that is renamed when complete; a b2nd target gets
   compressed chunks from the workers that one committer, on the client, inserts
   without recompressing (b2nd frames are not safe for concurrent writers).

Tasks are idempotent (a chunk written or sent again is the same chunk) and retried; a
worker that dies has its tasks rerun elsewhere by the scheduler. A failure that persists
raises with the task's region and the worker's error and leaves no output. See
docs/distributed.md.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
import uuid

# Exported stages above this many bytes go to a file every worker reads, not task data.
STAGE_INLINE_LIMIT = 16 << 20
# An output task's uncompressed output at most (its compressed chunks wait in the
# worker's memory until the committer takes them).
PART_BYTES = 32 << 20

_plans = {}  # per worker process: job token -> its plan, stages imported
_plans_lock = threading.Lock()


def _build_plan(payload, opts, nthreads):
    import b2lazy
    x = b2lazy._serial.from_dict(payload, "the distributed expression")
    return x.plan(nthreads=nthreads, **opts)


def _worker_plan(token, payload, opts, nthreads, fingerprint, stages):
    """This process's plan of the job, built and its stages imported on first use."""
    from . import _core
    with _plans_lock:
        p = _plans.get(token)
        if p is None:
            p = _build_plan(payload, opts, nthreads)
            fp = _core.plan_fingerprint(p._p)
            if fp != fingerprint:
                raise RuntimeError(f"this worker planned the expression differently ({fp}) than the client "
                                   f"({fingerprint}): are b2lazy's versions or the operands different here?")
            if stages is not None:
                kind, data = stages
                if kind == "file":
                    _core.import_stages_file(p._p, data)
                else:
                    _core.import_stages(p._p, data)
            _plans[token] = p
        return p


def _where():
    try:
        from distributed import get_worker
        return f"worker {get_worker().address}"
    except (ImportError, ValueError):
        return f"process {os.getpid()}"


def _stage_task(token, payload, opts, nthreads, fingerprint, spill_dir):
    """Computes the plan's stages; their exported bytes, or the file holding them."""
    from . import _core
    t0 = time.perf_counter()
    p = _worker_plan(token, payload, opts, nthreads, fingerprint, None)
    kept = sum(1 for st in p.stages if st["source"])  # as one process's compute() counts them
    try:
        if sum(st["bytes"] for st in p.stages) <= STAGE_INLINE_LIMIT:
            result = ("bytes", _core.export_stages(p._p, p._ctx))
        else:  # written by C++ straight to the file (no copy of the whole in memory)
            path = os.path.join(spill_dir, f".b2lazy-stages-{token}.bin")
            _core.export_stages_file(p._p, path, p._ctx)
            result = ("file", path)
    except Exception as e:
        raise RuntimeError(f"b2lazy: computing the stages failed on {_where()}: {e}") from e
    _forget(token)  # this process's copy of the stages goes (another task imports them if it needs)
    stats = {"cache_misses": len(p.stages) - kept, "sources_kept": kept, "seconds": time.perf_counter() - t0}
    return result, stats


def _part_task(token, payload, opts, nthreads, fingerprint, stages, first, last, staging):
    """Output tasks [first, last): (compressed chunks or [], stats)."""
    from . import _core
    p = _worker_plan(token, payload, opts, nthreads, fingerprint, stages[0] if stages else None)
    try:
        return _core.execute_part(p._p, first, last, staging, p._ctx)
    except Exception as e:
        t = p.tasks
        c0, c1 = t[first]["chunks"][0], t[last - 1]["chunks"][1]
        raise RuntimeError(f"b2lazy: output tasks [{first}, {last}) (output chunks [{c0}, {c1}): the region "
                           f"{_region(p, c0, c1)}) failed on {_where()}: {type(e).__name__}: {e}") from e


def _region(p, c0, c1):
    """The box from chunk c0's start to chunk c1 - 1's end (C order of the chunk grid)."""
    import numpy as np
    grid = [-(-n // c) for n, c in zip(p.shape, p.chunks)]
    lo = np.unravel_index(c0, grid) if grid else ()
    hi = np.unravel_index(c1 - 1, grid) if grid else ()
    start = tuple(int(i) * c for i, c in zip(lo, p.chunks))
    stop = tuple(min(n, (int(i) + 1) * c) for i, c, n in zip(hi, p.chunks, p.shape))
    return f"[{start}, {stop})"


def _identity(x):
    return x


def _forget(token):
    with _plans_lock:
        _plans.pop(token, None)


def _connect(scheduler):
    """(client, cluster to close or None) for a Client, an address or 'local:N'."""
    from distributed import Client
    if isinstance(scheduler, Client):
        return scheduler, None
    if isinstance(scheduler, str) and scheduler.startswith("local:"):
        from distributed import LocalCluster
        n = int(scheduler.split(":", 1)[1])
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
        return Client(cluster), cluster
    if isinstance(scheduler, str):
        return Client(scheduler), None
    raise TypeError(f"scheduler must be a distributed.Client, an address or 'local:N', got {scheduler!r}")


def _ranges(ntasks, group):
    return [(i, min(ntasks, i + group)) for i in range(0, ntasks, group)]


def compute(x, urlpath=None, *, scheduler, chunks=None, blocks=None, cparams=None, max_memory=None,
            contiguous=None, shards=None, progress=None, retries=2):
    """Array.compute(..., scheduler=...): the same result, computed on a dask.distributed
    cluster. `max_memory` is per worker process."""
    import numpy as np
    from distributed import as_completed

    from . import Array, _core, _progress_callback, _serial

    t0 = time.perf_counter()
    if urlpath is not None:
        urlpath = os.path.abspath(os.fspath(urlpath))  # the workers' working directory may differ
    opts = dict(urlpath=urlpath, chunks=chunks, blocks=blocks, cparams=cparams, max_memory=max_memory,
                contiguous=contiguous, shards=shards)
    payload = _serial.to_dict(x)
    client, cluster = _connect(scheduler)
    token = uuid.uuid4().hex[:16]
    futures, stage_file, committer = [], None, None
    bar, callback = _progress_callback(progress, "compute")
    try:
        nthreads = np.min(list(client.nthreads().values()) or [1])
        nworkers = max(1, len(client.nthreads()))
        plan = _build_plan(payload, opts, int(nthreads))
        fingerprint = _core.plan_fingerprint(plan._p)
        committer = _core.OutputCommitter(plan._p)  # before any work: the path is checked here
        staging = committer.staging
        # A task, not scattered data: recomputed if the worker holding it dies.
        payload_f = client.submit(_identity, payload, key=f"b2lazy-expression-{token}", pure=False)
        args = (token, payload_f, opts, int(nthreads), fingerprint)
        stages = None
        if plan.stages:
            spill_dir = os.path.dirname(urlpath) if urlpath else tempfile.gettempdir()
            stages = client.submit(_stage_task, *args, spill_dir, key=f"b2lazy-stages-{token}",
                                   retries=retries, pure=False)
            futures.append(stages)
        ntasks = plan.ntasks
        task_bytes = max(1, int(np.prod(plan.chunks)) * np.dtype(plan.dtype).itemsize *
                         ((plan.tasks[0]["chunks"][1] - plan.tasks[0]["chunks"][0]) if ntasks else 1))
        group = max(1, min(-(-ntasks // (4 * nworkers)), PART_BYTES // task_bytes))
        parts = {}
        for first, last in _ranges(ntasks, group):
            f = client.submit(_part_task, *args, stages, first, last, staging,
                              key=f"b2lazy-part-{first}-{token}", retries=retries, pure=False)
            parts[f.key] = (first, last)
            futures.append(f)
        stats, done = [], 0
        total = plan.nchunks
        for f in as_completed(futures):
            if f.status == "error":
                f.result()  # raises the task's error (with its region and worker)
            result = f.result()
            if f.key in parts:
                chunk_list, st = result
                for cid, data in chunk_list:
                    committer.add(cid, data)
                first, last = parts[f.key]
                done += _chunks_of(plan, first, last)
                if callback is not None:
                    callback(done, total)
            else:
                st = result[1]
                stage_file = result[0][1] if result[0][0] == "file" else None
            stats.append(st)
            f.release()
        merged = _core.merge_stats(stats)
        merged["seconds"] = time.perf_counter() - t0
        r = committer.finish(merged)
        committer = None
        return Array(r, r.stats())
    except BaseException:
        client.cancel(futures)  # Ctrl-C or a failure: the rest of the work stops
        raise
    finally:
        if bar is not None:
            bar.close()
        committer = None  # an unfinished output is removed with it
        if stage_file and os.path.exists(stage_file):
            os.remove(stage_file)
        try:
            client.run(_forget, token)
        except Exception:  # noqa: BLE001 - a closed cluster keeps nothing
            pass
        if cluster is not None:
            client.close()
            cluster.close()


def _chunks_of(plan, first, last):
    t = plan.tasks
    return t[last - 1]["chunks"][1] - t[first]["chunks"][0]


def to_numpy(x, *, scheduler, max_memory=None, progress=None, retries=2):
    """Array.to_numpy(scheduler=...): computed on the cluster into a compressed array in
    the client's memory, then decompressed here."""
    return compute(x, scheduler=scheduler, max_memory=max_memory, progress=progress, retries=retries).to_numpy()
