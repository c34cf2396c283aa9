"""Where an evaluation runs: the executors that ``compute(scheduler=...)``,
``to_numpy(scheduler=...)`` and the command's ``--scheduler`` choose from, by name or by the
scheduler object given.

Three are built in:

- ``"threads"``: this process's thread pool (the default: ``scheduler=None``);
- ``"dask"``: a dask.distributed cluster (:mod:`b2lazy.distributed`), taken for a
  ``distributed.Client``, an address (``"tcp://host:port"``) or ``"local:N"`` (a local
  cluster of N worker processes);
- ``"processes"``: local worker processes, no dask needed (b2lazy._processes):
  ``"processes"`` (one per CPU) or ``"processes:N"``.

An executor is an object with ``compute(x, urlpath, scheduler, **options)`` and
``to_numpy(x, scheduler, **options)`` (the options are those of Array.compute and
Array.to_numpy); :func:`register` adds one under a name, with a test of the scheduler
arguments it takes. A cluster backend implements b2lazy._cluster.TaskRunner and calls
b2lazy._cluster.compute, as dask and processes do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["register", "names", "pick"]

# name -> (executor, claims): claims(scheduler) says whether it takes that argument.
_EXECUTORS: dict[str, tuple[Any, Callable[[Any], bool] | None]] = {}


def register(name: str, executor: Any, claims: Callable[[Any], bool] | None = None) -> None:
    """Make `executor` available as ``scheduler=name`` (and for the scheduler arguments
    `claims` accepts); a name registered before is replaced."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"register: the name must be a non-empty str, got {name!r}")
    for method in ("compute", "to_numpy"):
        if not callable(getattr(executor, method, None)):
            raise TypeError(f"register: executor {name!r} has no {method}() method")
    _EXECUTORS[name] = (executor, claims)


def names() -> list[str]:
    """The executors' names, in the order they were registered."""
    return list(_EXECUTORS)


def pick(scheduler: Any) -> tuple[str, Any]:
    """(name, executor) for a scheduler argument: None or "threads" is this process; a
    registered name, alone or followed by ":" and its options ("processes:4"), is that
    executor; otherwise the first whose test takes it."""
    if scheduler is None:
        return "threads", _EXECUTORS["threads"][0]
    if isinstance(scheduler, str) and scheduler.partition(":")[0] in _EXECUTORS:
        name = scheduler.partition(":")[0]
        return name, _EXECUTORS[name][0]
    for name, (executor, claims) in _EXECUTORS.items():
        if claims is not None and claims(scheduler):
            return name, executor
    raise TypeError(
        f"scheduler {scheduler!r}: no executor takes it (executors: {', '.join(_EXECUTORS)}; "
        f"dask takes a distributed.Client, an address 'tcp://host:port' or 'local:N'; "
        f"processes takes 'processes' or 'processes:N')"
    )


class _Threads:
    """This process's thread pool: the engine's own evaluation."""

    @staticmethod
    def compute(x, urlpath, scheduler, **options):
        return x.compute(urlpath, **options)

    @staticmethod
    def to_numpy(x, scheduler, **options):
        return x.to_numpy(**options)


class _Dask:
    """A dask.distributed cluster (b2lazy.distributed: the plan's stages and tasks as the
    cluster's tasks); nthreads does not apply there."""

    @staticmethod
    def compute(x, urlpath, scheduler, nthreads=None, **options):
        from . import distributed

        return distributed.compute(x, urlpath, scheduler=scheduler, **options)

    @staticmethod
    def to_numpy(x, scheduler, nthreads=None, **options):
        from . import distributed

        return distributed.to_numpy(x, scheduler=scheduler, **options)


class _Processes:
    """Local worker processes (b2lazy._processes: the plan's stages and tasks as tasks of a
    process pool); nthreads is each worker process's thread count."""

    @staticmethod
    def compute(x, urlpath, scheduler, **options):
        from . import _processes

        return _processes.compute(x, urlpath, scheduler=scheduler, **options)

    @staticmethod
    def to_numpy(x, scheduler, **options):
        from . import _processes

        return _processes.to_numpy(x, scheduler=scheduler, **options)


def _is_processes_scheduler(scheduler) -> bool:
    return scheduler == "processes" or (isinstance(scheduler, str) and scheduler.startswith("processes:"))


def _is_dask_scheduler(scheduler) -> bool:
    # A Client (without importing distributed: it is loaded when one exists), or a string:
    # an address or "local:N" (any other string, as before executors had names).
    if isinstance(scheduler, str):
        return True
    return any(c.__module__.split(".")[0] == "distributed" and c.__name__ == "Client" for c in type(scheduler).__mro__)


register("threads", _Threads())
register("dask", _Dask(), _is_dask_scheduler)
register("processes", _Processes(), _is_processes_scheduler)
