"""b2lazy on dask.distributed (issue #14): the plan's stages and output tasks handed to a
cluster the user already runs, never to a scheduler of our own.

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

Tasks are idempotent (a chunk written or sent again is the same chunk) and retried; a
worker that dies has its tasks rerun elsewhere by the scheduler. A failure that persists
raises with the task's region and the worker's error and leaves no output. See
docs/distributed.md.
"""

from __future__ import annotations

import glob
import os
import tempfile
import threading
import time
import uuid

# Stage pieces and finished stages above this many bytes go to a file every worker reads
# in place, not task data.
STAGE_INLINE_LIMIT = 16 << 20
# Partial states merged per task of a fold stage's merge tree.
MERGE_FANIN = 8
# An output task's uncompressed output at most (its compressed chunks wait in the
# worker's memory until the committer takes them).
PART_BYTES = 32 << 20

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
    try:
        from distributed import get_worker

        return f"worker {get_worker().address}"
    except (ImportError, ValueError):
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


def _submit_stages(client, plan, args, nworkers, spill_dir, token, retries):
    """The futures of every stage's pieces, merges and finish; the finished stages' futures."""
    from . import _core

    futures, finished = [], []
    for i, st in enumerate(plan.stages):
        pieces, folds = _core.split_stage(plan._p, i, nworkers)

        def big(nbytes, name):
            return os.path.join(spill_dir, f".b2lazy-{token}-s{i}{name}.bin") if nbytes > STAGE_INLINE_LIMIT else None

        level = []
        for k in range(pieces):
            path = None if folds else big(st["bytes"] // pieces, f"p{k}")
            level.append(
                client.submit(
                    _piece_task,
                    *args,
                    list(finished),
                    i,
                    k,
                    nworkers,
                    path,
                    key=f"b2lazy-stage{i}-piece{k}-{token}",
                    retries=retries,
                    pure=False,
                )
            )
        futures += level
        depth = 0
        while folds and len(level) > MERGE_FANIN:  # the merge tree: small partial states as task data
            depth += 1
            level = [
                client.submit(
                    _merge_task,
                    *args,
                    i,
                    level[j : j + MERGE_FANIN],
                    key=f"b2lazy-stage{i}-merge{depth}-{j}-{token}",
                    retries=retries,
                    pure=False,
                )
                for j in range(0, len(level), MERGE_FANIN)
            ]
            futures += level
        path = big(st["bytes"] if st["where"] != "spilled" else STAGE_INLINE_LIMIT + 1, "")
        fin = client.submit(
            _finish_task, *args, i, level, path, key=f"b2lazy-stage{i}-{token}", retries=retries, pure=False
        )
        futures.append(fin)
        finished.append(fin)
    return futures, finished


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


def compute(
    x,
    urlpath=None,
    *,
    scheduler,
    chunks=None,
    blocks=None,
    cparams=None,
    max_memory=None,
    contiguous=None,
    shards=None,
    progress=None,
    retries=2,
    storage_options=None,
):
    """Array.compute(..., scheduler=...): the same result, computed on a dask.distributed cluster.

    The plan's stages and output tasks run as tasks of the cluster; the output chunks are
    written by the client as they arrive.

    Parameters
    ----------
    x : Array
        The array to evaluate.
    urlpath : str or os.PathLike, optional
        Where to write the result (default: in the client's memory).
    scheduler : distributed.Client or str
        A Client, a scheduler address ("tcp://host:port") or "local:N" (a LocalCluster of N
        single-threaded worker processes, for this call).
    chunks : tuple of int, optional
        As Array.compute()'s.
    blocks : tuple of int, optional
        As Array.compute()'s.
    cparams : dict, optional
        As Array.compute()'s.
    max_memory : int, optional
        Memory budget in bytes per worker process.
    contiguous : bool, optional
        As Array.compute()'s.
    shards : tuple of int, optional
        As Array.compute()'s.
    progress : bool or callable, optional
        True shows a tqdm bar; a callable gets (done, total) output chunks.
    retries : int, optional
        How many times a failed task is retried (a lost worker's too).
    storage_options : dict, optional
        How to reach a remote `urlpath` (as Array.compute()'s). Remote operands are sent
        to the workers as URLs with the storage_options they were opened with; each
        worker opens its own connections.

    Returns
    -------
    Array
        The stored result.

    Examples
    --------
    >>> import b2lazy.distributed
    >>> x = bl.asarray(np.arange(4.0))
    >>> bl.distributed.compute(x * 2, scheduler="local:1").to_numpy()
    array([0., 2., 4., 6.])
    """
    import numpy as np
    from distributed import as_completed

    from . import Array, _core, _progress_callback, _serial

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
    client, cluster = _connect(scheduler)
    token = uuid.uuid4().hex[:16]
    futures, spill_dir, committer = [], None, None
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
        spill_dir = os.path.dirname(urlpath) if urlpath and not remote_output else tempfile.gettempdir()
        futures, stages = _submit_stages(client, plan, args, nworkers, spill_dir, token, retries)
        ntasks = plan.ntasks
        task_bytes = max(
            1,
            int(np.prod(plan.chunks))
            * np.dtype(plan.dtype).itemsize
            * ((plan.tasks[0]["chunks"][1] - plan.tasks[0]["chunks"][0]) if ntasks else 1),
        )
        group = max(1, min(-(-ntasks // (4 * nworkers)), PART_BYTES // task_bytes))
        parts = {}
        for first, last in _ranges(ntasks, group):
            f = client.submit(
                _part_task,
                *args,
                list(stages),
                first,
                last,
                staging,
                key=f"b2lazy-part-{first}-{token}",
                retries=retries,
                pure=False,
            )
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
            if st:
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
        if spill_dir:
            for f in glob.glob(os.path.join(spill_dir, f".b2lazy-{token}-*")):
                os.remove(f)
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
    """Array.to_numpy(scheduler=...): computed on a dask.distributed cluster.

    The cluster computes into a compressed array in the client's memory, decompressed here.

    Parameters
    ----------
    x : Array
        The array to evaluate.
    scheduler : distributed.Client or str
        As compute()'s.
    max_memory : int, optional
        Memory budget in bytes per worker process.
    progress : bool or callable, optional
        True shows a tqdm bar; a callable gets (done, total) output chunks.
    retries : int, optional
        How many times a failed task is retried.

    Returns
    -------
    numpy.ndarray
        The values.

    Examples
    --------
    >>> import b2lazy.distributed
    >>> x = bl.asarray(np.arange(4.0))
    >>> bl.distributed.to_numpy(x + 1, scheduler="local:1")
    array([1., 2., 3., 4.])
    """
    return compute(x, scheduler=scheduler, max_memory=max_memory, progress=progress, retries=retries).to_numpy()
