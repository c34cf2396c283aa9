"""b2lazy on dask.distributed: the plan's stages and output tasks handed to a
cluster the user already runs, never to a scheduler of our own.

The algorithm — stages in pieces merged in a tree, output tasks, the commit, retries,
cancelling, spill files — is b2lazy._cluster's, shared by every cluster backend; this
module is its dask TaskRunner (futures as task arguments, keys, retries, as_completed,
cancel, client.run) and the connection: a Client, an address or "local:N". A worker that
dies has its tasks rerun elsewhere by dask's scheduler. See docs/user-guide/distributed.md.
"""

from __future__ import annotations

from . import _cluster

# Stage pieces and finished stages above this many bytes go to a file every worker reads
# in place, not task data.
STAGE_INLINE_LIMIT = _cluster.STAGE_INLINE_LIMIT
# Partial states merged per task of a fold stage's merge tree.
MERGE_FANIN = _cluster.MERGE_FANIN
# An output task's uncompressed output at most (its compressed chunks wait in the
# worker's memory until the committer takes them).
PART_BYTES = _cluster.PART_BYTES


class _DaskRunner:
    """b2lazy._cluster.TaskRunner on a dask.distributed Client: handles are futures
    (dask passes their results to the tasks given them), submitted impure with their keys
    and retries; `cluster`, when given, is closed with the client by close()."""

    def __init__(self, client, cluster=None):
        self.client, self.cluster = client, cluster

    def workers(self):
        nthreads = list(self.client.nthreads().values())
        return max(1, len(nthreads)), min(nthreads or [1])

    def put(self, value, key):
        # A task, not scattered data: recomputed if the worker holding it dies.
        return self.client.submit(_cluster._identity, value, key=key, pure=False)

    def submit(self, fn, *args, key, retries):
        return self.client.submit(fn, *args, key=key, retries=retries, pure=False)

    def as_completed(self, handles):
        from distributed import as_completed

        for f in as_completed(handles):
            if f.status == "error":
                f.result()  # raises the task's error (with its region and worker)
            yield f.key, f.result()
            f.release()

    def cancel(self, handles):
        self.client.cancel(handles)

    def run_on_workers(self, fn, *args):
        self.client.run(fn, *args)

    def close(self):
        if self.cluster is not None:
            self.client.close()
            self.cluster.close()


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
    runner = _DaskRunner(*_connect(scheduler))
    try:
        return _cluster.compute(
            x,
            urlpath,
            runner,
            chunks=chunks,
            blocks=blocks,
            cparams=cparams,
            max_memory=max_memory,
            contiguous=contiguous,
            shards=shards,
            progress=progress,
            retries=retries,
            storage_options=storage_options,
            inline_limit=STAGE_INLINE_LIMIT,
            merge_fanin=MERGE_FANIN,
            part_bytes=PART_BYTES,
        )
    finally:
        runner.close()


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
