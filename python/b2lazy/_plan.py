"""Plan: the view of an evaluation plan (what compute() would run), as Array.plan() returns
it — printable, executable by task ranges into a NumPy buffer, or computed whole."""

from __future__ import annotations

import numpy as np

from . import _core, _progress_callback
from ._serial import namespace as _ns


class Plan:
    """An evaluation plan, as Array.plan() returns it: nothing is computed.

    It holds the output layout, the stages (nodes computed once and where they are kept),
    the windows (sources read through a window of their last decompressed blocks instead of
    kept), the tasks (groups of output chunks) with their projected memory and source bytes,
    and the projected peak. A thin view of the C++ b2lazy::Plan: ``str(plan)`` prints it;
    its attributes (shape, dtype, chunks, blocks, nchunks, ntasks, stages, tasks,
    projected_peak, ...) are the C++ plan's.

    Examples
    --------
    >>> x = bl.asarray(np.arange(16.0).reshape(4, 4))
    >>> p = (x + 1).plan(chunks=(2, 2))
    >>> p.shape, p.chunks, p.ntasks
    ((4, 4), (2, 2), 4)
    >>> p.execute()[0]
    array([1., 2., 3., 4.])
    """

    def __init__(self, core, ctx):
        self._p = core
        self._ctx = ctx

    def __str__(self):
        return str(self._p)

    def __repr__(self):
        return (
            f"b2lazy.Plan(shape={self.shape}, chunks={self.chunks}, stages={len(self.stages)}, "
            f"tasks={self.ntasks}, projected_peak={self.projected_peak})"
        )

    def __getattr__(self, name):  # shape, dtype, chunks, blocks, nchunks, ntasks, stages, tasks, ...
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._p, name)

    def execute(self, out=None, first_task=0, last_task=None, progress=None):
        """Run the stages, then tasks [first_task, last_task) into a NumPy array.

        Chunks of other tasks are left as they are, so runs over disjoint task ranges fill one
        result. The run's statistics are kept in ``last_stats``.

        Parameters
        ----------
        out : numpy.ndarray, optional
            A C-contiguous writeable array of the plan's shape and dtype (made when None).
        first_task : int, optional
            The first task to run (default 0).
        last_task : int, optional
            One past the last task to run (default: all of them).
        progress : bool or callable, optional
            True shows a tqdm bar; a callable gets (done, total) output chunks.

        Returns
        -------
        numpy.ndarray
            `out`, filled by the tasks run.

        Raises
        ------
        TypeError
            `out` is not a NumPy array, or a task number is not an int.
        ValueError
            `out` has another shape or dtype, or is not C-contiguous and writeable.
        IndexError
            The tasks are not a range of the plan's tasks.

        Examples
        --------
        >>> x = bl.asarray(np.arange(4.0))
        >>> p = (x * 10).plan(chunks=(2,))
        >>> out = np.zeros(4)
        >>> p.execute(out, first_task=0, last_task=1)
        array([ 0., 10.,  0.,  0.])
        >>> p.execute(out, first_task=1)
        array([ 0., 10., 20., 30.])
        """
        dtype = np.dtype(self._p.dtype)
        if out is None:
            out = np.empty(self._p.shape, dtype)
        if not isinstance(out, np.ndarray):
            raise TypeError(f"execute: out must be a numpy.ndarray, got {type(out).__name__}")
        if out.shape != self._p.shape or out.dtype != dtype:
            raise ValueError(
                f"execute: out has shape {out.shape} and dtype {out.dtype}; the plan "
                f"writes shape {self._p.shape} and dtype {dtype}"
            )
        if not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError("execute: out must be C-contiguous and writeable")
        ntasks = self._p.ntasks
        last = ntasks if last_task is None else last_task
        for what, v in (("first_task", first_task), ("last_task", last)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"execute: {what} must be an int, got {type(v).__name__}")
        if not 0 <= first_task <= last <= ntasks:
            raise IndexError(f"execute: tasks [{first_task}, {last}) are not a range of the plan's {ntasks} tasks")
        bar, callback = _progress_callback(progress, "execute")
        try:
            self.last_stats = _core.execute_plan(self._p, out, int(first_task), int(last), self._ctx, callback)
        finally:
            if bar is not None:
                bar.close()
        return out

    def compute(self, progress=None):
        """Run every task into the compressed array the plan's options name.

        The same as Array.compute() with the options the plan was made with.

        Parameters
        ----------
        progress : bool or callable, optional
            True shows a tqdm bar; a callable gets (done, total) output chunks.

        Returns
        -------
        Array
            The result: a b2nd array in memory, or on disk at the plan's urlpath.

        Examples
        --------
        >>> x = bl.asarray(np.arange(4.0))
        >>> (x + 1).plan(chunks=(2,)).compute().to_numpy()
        array([1., 2., 3., 4.])
        """
        bar, callback = _progress_callback(progress, "compute")
        try:
            r = _core.compute_plan(self._p, self._ctx, callback)
        finally:
            if bar is not None:
                bar.close()
        return _ns().Array(r, r.stats())
