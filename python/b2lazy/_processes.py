"""b2lazy on local worker processes, no dask needed: ``scheduler="processes"`` (one worker
process per CPU) or ``"processes:N"``. The algorithm is b2lazy._cluster's; this module is
its TaskRunner over concurrent.futures.ProcessPoolExecutor (a pool of "spawn"ed processes,
for this call: the engine's threads make fork unsafe). Each worker process evaluates with
`nthreads` threads (default: the CPUs shared out among the workers) within `max_memory`.

The pool knows no task graph, so the runner keeps one: a task is handed to the pool when
the tasks whose handles it was given have finished, with their results in their place. A
failed task is resubmitted up to `retries` times; a worker process that dies breaks the
pool, which is replaced and its running tasks resubmitted (each counts an attempt).
Cancelling (a failure, Ctrl-C) terminates the worker processes, so no task writes once
compute() has returned. As with any spawned process, a script using it needs the
``if __name__ == "__main__":`` guard.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
from concurrent.futures.process import BrokenProcessPool

from . import _cluster


class _Task:
    """A submitted task: its function, its arguments (handles among them), what waits for it."""

    __slots__ = ("key", "fn", "args", "retries", "waiting_on", "dependents", "users", "done", "result", "released")

    def __init__(self, key, fn, args, retries):
        self.key, self.fn, self.args, self.retries = key, fn, args, retries
        self.waiting_on = 0  # unfinished tasks among the arguments
        self.dependents = []  # tasks given this one's handle, not yet handed to the pool
        self.users = 0  # unfinished tasks given this one's handle (a retry resolves it again)
        self.done, self.result, self.released = False, None, False


def _handles(args):
    """The distinct tasks among `args` (and in their lists and tuples)."""
    out = {}
    for a in args:
        if isinstance(a, _Task):
            out[id(a)] = a
        elif isinstance(a, (list, tuple)):
            out.update((id(t), t) for t in _handles(a))
    return list(out.values())


def _resolved(args):
    return tuple(
        a.result if isinstance(a, _Task) else type(a)(_resolved(a)) if isinstance(a, (list, tuple)) else a for a in args
    )


class _ProcessRunner:
    """b2lazy._cluster.TaskRunner on a ProcessPoolExecutor of `nworkers` processes."""

    def __init__(self, nworkers, nthreads):
        self.nworkers, self.nthreads = nworkers, nthreads
        self._context = multiprocessing.get_context("spawn")
        self._pool = self._new_pool()
        self._running = {}  # the pool's future -> its task

    def _new_pool(self):
        return cf.ProcessPoolExecutor(self.nworkers, mp_context=self._context)

    def workers(self):
        return self.nworkers, self.nthreads

    def put(self, value, key):
        return value  # sent with every task that takes it

    def submit(self, fn, *args, key, retries):
        t = _Task(key, fn, args, retries)
        for d in _handles(args):
            d.users += 1
            if not d.done:
                t.waiting_on += 1
                d.dependents.append(t)
        if t.waiting_on == 0:
            self._start(t)
        return t

    def _start(self, t):
        self._running[self._pool.submit(t.fn, *_resolved(t.args))] = t

    @staticmethod
    def _drop_if_unused(t):
        if t.released and t.users == 0:
            t.result = None

    def _finished(self, t, result):
        t.done, t.result = True, result
        for d in _handles(t.args):
            d.users -= 1
            self._drop_if_unused(d)
        for r in t.dependents:
            r.waiting_on -= 1
            if r.waiting_on == 0:
                self._start(r)
        t.dependents = []

    def _broken(self, lost):
        """The pool broke (a worker process died): a new one, its running tasks resubmitted."""
        self._running.clear()
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = self._new_pool()
        for t in lost:
            if t.retries <= 0:
                raise RuntimeError(
                    f"b2lazy: a worker process died (or could not start: see its error above) running task {t.key}, "
                    "and the task has no retries left"
                )
            t.retries -= 1
            self._start(t)

    def as_completed(self, handles):
        pending = {id(t): t for t in handles}
        for t in list(pending.values()):
            if t.done:
                del pending[id(t)]
                yield t.key, t.result
                t.released = True
                self._drop_if_unused(t)
        while pending:
            if not self._running:
                raise RuntimeError(f"b2lazy: {len(pending)} tasks wait on tasks never submitted")
            finished, _ = cf.wait(list(self._running), return_when=cf.FIRST_COMPLETED)
            for f in finished:
                t = self._running.pop(f, None)
                if t is None:  # (a future of a pool replaced in this round)
                    continue
                error = f.exception()
                if isinstance(error, BrokenProcessPool):
                    self._broken([t, *self._running.values()])
                    break
                if error is not None:
                    if t.retries <= 0:
                        raise error  # the task's error: its region and its process
                    t.retries -= 1
                    self._start(t)
                    continue
                self._finished(t, f.result())
                if id(t) in pending:
                    del pending[id(t)]
                    yield t.key, t.result
                    t.released = True
                    self._drop_if_unused(t)

    def cancel(self, handles):
        """Every worker process terminated: nothing of this job runs once it returns."""
        pool, self._running = self._pool, {}
        for p in list((getattr(pool, "_processes", None) or {}).values()):
            p.terminate()  # (ProcessPoolExecutor has no public way before Python 3.14)
        pool.shutdown(wait=True, cancel_futures=True)

    def run_on_workers(self, fn, *args):
        pass  # the processes are this call's: they go with the pool

    def close(self):
        self._pool.shutdown(wait=True, cancel_futures=True)


def _parse(scheduler, nthreads):
    """(worker processes, threads per worker) for "processes" or "processes:N"."""
    cpus = os.cpu_count() or 1
    name, _, n = scheduler.partition(":") if isinstance(scheduler, str) else ("", "", "")
    if name != "processes" or (n and not (n.isdigit() and int(n) > 0)):
        raise TypeError(f"scheduler {scheduler!r}: the processes executor takes 'processes' or 'processes:N' (N > 0)")
    nworkers = int(n) if n else cpus
    return nworkers, nthreads if nthreads else max(1, cpus // nworkers)


def compute(x, urlpath=None, *, scheduler="processes", nthreads=None, retries=2, **options):
    """Array.compute(..., scheduler="processes[:N]"): `x` computed by N local worker
    processes (each with `nthreads` threads), through b2lazy._cluster."""
    runner = _ProcessRunner(*_parse(scheduler, nthreads))
    try:
        return _cluster.compute(x, urlpath, runner, retries=retries, **options)
    finally:
        runner.close()


def to_numpy(x, *, scheduler="processes", nthreads=None, max_memory=None, progress=None, retries=2):
    """Array.to_numpy(scheduler="processes[:N]"): computed by local worker processes into a
    compressed array in this process's memory, decompressed here."""
    return compute(
        x, scheduler=scheduler, nthreads=nthreads, max_memory=max_memory, progress=progress, retries=retries
    ).to_numpy()
