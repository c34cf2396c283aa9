"""A plan on a cluster, written once: the algorithm every cluster backend (b2lazy.distributed
for dask, b2lazy._processes for local worker processes) runs, over the small TaskRunner
interface a backend implements. See docs/distributed.md.

Every process — the client and each worker — builds the same plan from the expression's
saved form (b2lazy/_serial.py) and the same options, with the workers' thread count, and
the plans are compared by fingerprint. The client computes nothing itself:

1. each stage (a node computed once: a reduction, scan totals, a kept operand), in order,
   runs as pieces on the workers — ranges of its chunks, or for a stage of few chunks
   that folds its input (a reduction) ranges of that input folded into partial states,
   merged in a tree — then one task finishes it into the form every worker imports;
   small pieces and stages travel as task data, large ones are files beside the output
   that every worker reads in place;
2. output tasks (ranges of the plan's tasks: whole chunks, a product's row band) run on
   the workers, each importing the stages once per process, within `max_memory` each;
3. the output is committed safely: a Zarr target gets its chunk files written by the
   workers into a temporary store that is renamed when complete; a b2nd target gets
   compressed chunks from the workers that one committer, on the client, inserts
   without recompressing (b2nd frames are not safe for concurrent writers).

Tasks are idempotent (a chunk written or sent again is the same chunk) and retried. A
failure that persists raises with the task's region and the worker's error and leaves
no output; Ctrl-C or a failure cancels the rest; spill files are removed either way.
"""

from __future__ import annotations

import glob
import os
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

# Stage pieces and finished stages above this many bytes go to a file every worker reads
# in place, not task data.
STAGE_INLINE_LIMIT = 16 << 20
# Partial states merged per task of a fold stage's merge tree.
MERGE_FANIN = 8
# An output task's uncompressed output at most (its compressed chunks wait in the
# worker's memory until the committer takes them).
PART_BYTES = 32 << 20


class TaskRunner(Protocol):
    """What a cluster backend gives the algorithm: worker processes that run picklable
    module-level functions. Handles are the runner's own (a dask Future, ...); the
    algorithm only passes them back.

    - ``workers()``: (worker processes, threads per worker) — the plan is split for the
      first and every worker builds its plan with the second.
    - ``put(value, key)``: what stands for `value` as a task argument (dask: a task
      returning it, recomputed if its worker dies; or `value` itself).
    - ``submit(fn, *args, key, retries)``: a handle of ``fn(*args)`` run on a worker, with
      every handle in `args` (or in a list or tuple there) replaced by its task's result,
      so the task runs after those; retried `retries` times when it fails. `key` is unique
      within the job (``b2lazy-stage{i}-piece{k}-{token}``, ``b2lazy-part-{first}-{token}``).
    - ``as_completed(handles)``: yields (key, result) of each as it finishes, releasing a
      handle's result once the consumer moves on (it must not be passed to a later
      submit); raises the task's error when a task fails after its retries.
    - ``cancel(handles)``: stops what has not finished (Ctrl-C, a failure); a runner that
      can should leave no task writing once it returns.
    - ``run_on_workers(fn, *args)``: ``fn(*args)`` once on every worker, best effort (it
      may fail or do nothing; the per-process plan cache is then kept until the worker
      goes).
    """

    def workers(self) -> tuple[int, int]: ...

    def put(self, value: Any, key: str) -> Any: ...

    def submit(self, fn: Callable[..., Any], *args: Any, key: str, retries: int) -> Any: ...

    def as_completed(self, handles: Iterable[Any]) -> Iterator[tuple[str, Any]]: ...

    def cancel(self, handles: Iterable[Any]) -> None: ...

    def run_on_workers(self, fn: Callable[..., Any], *args: Any) -> None: ...


# ---- the worker side: module-level functions the runners pickle by reference ----

_plans = {}  # per worker process: job token -> [its plan, indices of the stages imported]
_plans_lock = threading.Lock()


def _build_plan(payload, opts, nthreads):
    """The plan of the saved form `payload`; its remote operands open here, in this
    process, with the storage_options opts["operand_storage"] maps their URLs to."""
    import b2lazy

    opts = dict(opts)
    storage = opts.pop("operand_storage", None)
    x = b2lazy._serial.from_dict(payload, "the distributed expression", storage_by_url=storage)
    return x.plan(nthreads=nthreads, **opts)


def _worker_plan(token, payload, opts, nthreads, fingerprint, stages=()):
    """This process's plan of the job, built on first use, with `stages` (finished stages
    as _finish_task returns them, by index) imported."""
    from . import _core

    with _plans_lock:
        entry = _plans.get(token)
        if entry is None:
            p = _build_plan(payload, opts, nthreads)
            fp = _core.plan_fingerprint(p._p)
            if fp != fingerprint:
                raise RuntimeError(
                    f"this worker planned the expression differently ({fp}) than the client "
                    f"({fingerprint}): are b2lazy's versions or the operands different here?"
                )
            entry = _plans[token] = [p, set()]
        p, imported = entry
        for i, (finished, _) in enumerate(stages):
            if i not in imported:
                _core.import_stage(p._p, i, finished)
                imported.add(i)
        return p


def _where():
    """This worker, as an error names it: a dask worker's address, else the process."""
    if "distributed" in sys.modules:  # (not imported by a worker of another runner)
        try:
            from distributed import get_worker

            return f"worker {get_worker().address}"
        except (ImportError, ValueError):
            pass
    return f"process {os.getpid()}"


def _stage_failed(p, i, what, e):
    st = p.stages[i]
    return RuntimeError(
        f"b2lazy: {what} of stage {i} ({st['kind']} {st['box'][1]}) failed on {_where()}: {type(e).__name__}: {e}"
    )


def _piece_task(token, payload, opts, nthreads, fingerprint, prior, i, k, processes, path):
    """Piece k of stage i (the stages before it imported): (bytes or its file's path, stats)."""
    from . import _core

    p = _worker_plan(token, payload, opts, nthreads, fingerprint, prior)
    try:
        data, stats = _core.compute_stage_piece(p._p, i, k, processes, path or "", p._ctx)
    except Exception as e:
        raise _stage_failed(p, i, f"piece {k}", e) from e
    return (path or data), stats


def _merge_task(token, payload, opts, nthreads, fingerprint, i, parts):
    """Partial states of stage i merged into one (a node of the merge tree)."""
    from . import _core

    p = _worker_plan(token, payload, opts, nthreads, fingerprint)
    try:
        return _core.merge_stage_pieces(p._p, i, [d for d, _ in parts]), {}
    except Exception as e:
        raise _stage_failed(p, i, "a merge", e) from e


def _finish_task(token, payload, opts, nthreads, fingerprint, i, parts, path):
    """Stage i from its pieces, as every worker imports it: (bytes or its file's path, stats)."""
    from . import _core

    p = _worker_plan(token, payload, opts, nthreads, fingerprint)
    try:
        data, stats = _core.finish_stage(p._p, i, [d for d, _ in parts], path or "", p._ctx)
    except Exception as e:
        raise _stage_failed(p, i, "finishing", e) from e
    return (path or data), stats


def _part_task(token, payload, opts, nthreads, fingerprint, stages, first, last, staging):
    """Output tasks [first, last): (compressed chunks or [], stats)."""
    from . import _core

    p = _worker_plan(token, payload, opts, nthreads, fingerprint, stages)
    try:
        return _core.execute_part(p._p, first, last, staging, p._ctx)
    except Exception as e:
        t = p.tasks
        c0, c1 = t[first]["chunks"][0], t[last - 1]["chunks"][1]
        raise RuntimeError(
            f"b2lazy: output tasks [{first}, {last}) (output chunks [{c0}, {c1}): the region "
            f"{_region(p, c0, c1)}) failed on {_where()}: {type(e).__name__}: {e}"
        ) from e


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


# ---- the client side ----


def _submit_stages(runner, plan, args, nworkers, spill_dir, token, retries, inline_limit, fanin):
    """The handles of every stage's pieces, merges and finish; the finished stages' handles."""
    from . import _core

    handles, finished = [], []
    for i, st in enumerate(plan.stages):
        pieces, folds = _core.split_stage(plan._p, i, nworkers)

        def big(nbytes, name):
            return os.path.join(spill_dir, f".b2lazy-{token}-s{i}{name}.bin") if nbytes > inline_limit else None

        level = []
        for k in range(pieces):
            path = None if folds else big(st["bytes"] // pieces, f"p{k}")
            level.append(
                runner.submit(
                    _piece_task,
                    *args,
                    list(finished),
                    i,
                    k,
                    nworkers,
                    path,
                    key=f"b2lazy-stage{i}-piece{k}-{token}",
                    retries=retries,
                )
            )
        handles += level
        depth = 0
        while folds and len(level) > fanin:  # the merge tree: small partial states as task data
            depth += 1
            level = [
                runner.submit(
                    _merge_task,
                    *args,
                    i,
                    level[j : j + fanin],
                    key=f"b2lazy-stage{i}-merge{depth}-{j}-{token}",
                    retries=retries,
                )
                for j in range(0, len(level), fanin)
            ]
            handles += level
        path = big(st["bytes"] if st["where"] != "spilled" else inline_limit + 1, "")
        fin = runner.submit(_finish_task, *args, i, level, path, key=f"b2lazy-stage{i}-{token}", retries=retries)
        handles.append(fin)
        finished.append(fin)
    return handles, finished


def _ranges(ntasks, group):
    return [(i, min(ntasks, i + group)) for i in range(0, ntasks, group)]


def _chunks_of(plan, first, last):
    t = plan.tasks
    return t[last - 1]["chunks"][1] - t[first]["chunks"][0]


def compute(
    x,
    urlpath,
    runner: TaskRunner,
    *,
    chunks=None,
    blocks=None,
    cparams=None,
    max_memory=None,
    contiguous=None,
    shards=None,
    progress=None,
    retries=2,
    storage_options=None,
    inline_limit=None,
    merge_fanin=None,
    part_bytes=None,
):
    """`x` computed through `runner` (a TaskRunner), into `urlpath` or memory: the stored
    Array. The options are Array.compute()'s (max_memory per worker process); the last
    three default to this module's STAGE_INLINE_LIMIT, MERGE_FANIN and PART_BYTES. The
    runner is not closed here: its backend closes what it opened."""
    import numpy as np

    from . import Array, _core, _progress_callback, _serial

    inline_limit = STAGE_INLINE_LIMIT if inline_limit is None else inline_limit
    fanin = MERGE_FANIN if merge_fanin is None else merge_fanin
    part_bytes = PART_BYTES if part_bytes is None else part_bytes
    t0 = time.perf_counter()
    remote_output = urlpath is not None and _serial.is_remote(os.fspath(urlpath))
    if urlpath is not None and not remote_output:
        urlpath = os.path.abspath(os.fspath(urlpath))  # the workers' working directory may differ
    opts = dict(
        urlpath=urlpath,
        chunks=chunks,
        blocks=blocks,
        cparams=cparams,
        max_memory=max_memory,
        contiguous=contiguous,
        shards=shards,
        storage_options=storage_options,
        operand_storage=_serial.storage_of(x),
    )
    payload = _serial.to_dict(x)
    token = uuid.uuid4().hex[:16]
    handles, spill_dir, committer = [], None, None
    bar, callback = _progress_callback(progress, "compute")
    try:
        nworkers, nthreads = runner.workers()
        nworkers, nthreads = max(1, int(nworkers)), max(1, int(nthreads))
        plan = _build_plan(payload, opts, nthreads)
        fingerprint = _core.plan_fingerprint(plan._p)
        committer = _core.OutputCommitter(plan._p)  # before any work: the path is checked here
        staging = committer.staging
        args = (token, runner.put(payload, f"b2lazy-expression-{token}"), opts, nthreads, fingerprint)
        spill_dir = os.path.dirname(urlpath) if urlpath and not remote_output else tempfile.gettempdir()
        handles, stages = _submit_stages(runner, plan, args, nworkers, spill_dir, token, retries, inline_limit, fanin)
        ntasks = plan.ntasks
        task_bytes = max(
            1,
            int(np.prod(plan.chunks))
            * np.dtype(plan.dtype).itemsize
            * ((plan.tasks[0]["chunks"][1] - plan.tasks[0]["chunks"][0]) if ntasks else 1),
        )
        group = max(1, min(-(-ntasks // (4 * nworkers)), part_bytes // task_bytes))
        parts = {}
        for first, last in _ranges(ntasks, group):
            key = f"b2lazy-part-{first}-{token}"
            handles.append(
                runner.submit(_part_task, *args, list(stages), first, last, staging, key=key, retries=retries)
            )
            parts[key] = (first, last)
        stats, done = [], 0
        total = plan.nchunks
        for key, result in runner.as_completed(handles):  # raises a task's error (its region, its worker)
            if key in parts:
                chunk_list, st = result
                for cid, data in chunk_list:
                    committer.add(cid, data)
                first, last = parts[key]
                done += _chunks_of(plan, first, last)
                if callback is not None:
                    callback(done, total)
            else:
                st = result[1]
            if st:
                stats.append(st)
        merged = _core.merge_stats(stats)
        merged["seconds"] = time.perf_counter() - t0
        r = committer.finish(merged)
        committer = None
        return Array(r, r.stats())
    except BaseException:
        runner.cancel(handles)  # Ctrl-C or a failure: the rest of the work stops
        raise
    finally:
        if bar is not None:
            bar.close()
        committer = None  # an unfinished output is removed with it
        if spill_dir:
            for f in glob.glob(os.path.join(spill_dir, f".b2lazy-{token}-*")):
                os.remove(f)
        try:
            runner.run_on_workers(_forget, token)
        except Exception:  # noqa: BLE001 - a closed cluster keeps nothing
            pass
