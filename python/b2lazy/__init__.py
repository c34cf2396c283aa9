"""b2lazy: fully lazy array expressions over Blosc2 b2nd arrays, evaluated one output
chunk at a time by a C++ engine. This package is a thin layer over that engine."""

from __future__ import annotations

import atexit
import builtins as _builtins
import functools
import inspect as _inspect
import os
import sys
import threading

import numpy as np


def _load_core():
    # _core's OpenBLAS (scipy-openblas32) multiplies on the calling thread only: the
    # executor's workers are the parallelism. Told so before it loads, it starts no thread
    # pool, whose threads would otherwise spin for ~0.1 s of CPU after every import. Set
    # only while _core loads: NumPy's own BLAS (loaded above) is left as it is.
    saved = os.environ.get("OPENBLAS_NUM_THREADS")
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        from . import _core
    finally:
        if saved is None:
            del os.environ["OPENBLAS_NUM_THREADS"]
        else:
            os.environ["OPENBLAS_NUM_THREADS"] = saved
    return _core


_core = _load_core()
from . import _dtypes, _face, _numpy_protocol, _registry, _serial
from . import _fsspec_store
_fsspec_store.register(_core)  # fsspec's protocols (memory://, zip::, simplecache::, ...) as stores
from ._numpy_protocol import EagerEvaluationWarning
from ._registry import registered as _registered
from ._dtypes import as_dtype as _as_dtype
from ._info import CPU as _CPU, check_device as _check_device

__version__ = _face.package_version()
__array_api_version__ = "2024.12"
_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")

__all__ = ["Array", "Plan", "open", "asarray", "zeros", "ones", "full", "arange", "linspace",
           "where", "clip", "astype", "EagerEvaluationWarning"]

_SUPPORTED_DTYPES = tuple(_dtypes.ACCEPTED)  # (the namespace's dtypes and float16)

_contexts: dict[int, _core.Context] = {}
_contexts_lock = threading.Lock()


_MAX_THREADS = 1024  # as the command's --threads


def _context(nthreads):
    """One engine context (thread pool) per thread count, created on first use. While a
    saved expression is reopened, asking for one means a call would compute now: it is
    deferred to the first use of its values instead (b2lazy/_serial.py)."""
    if _serial.opening():
        raise _serial.WouldCompute
    if nthreads is None:
        n = os.cpu_count() or 1
    elif isinstance(nthreads, (bool, np.bool_)) or not isinstance(nthreads, (int, np.integer)):
        raise TypeError(f"nthreads must be an int or None, got {type(nthreads).__name__} {nthreads!r}")
    elif not 1 <= nthreads <= _MAX_THREADS:
        raise ValueError(f"nthreads must be in 1..{_MAX_THREADS}, got {nthreads}")
    else:
        n = int(nthreads)
    with _contexts_lock:
        ctx = _contexts.get(n)
        if ctx is None:
            ctx = _contexts[n] = _core.Context(n)
        return ctx


def _unwrap(x):
    """Array -> core array; Python scalars pass through; anything array-like is wrapped."""
    if isinstance(x, Array):
        return x._a
    if isinstance(x, (bool, int, float, complex)):
        return x
    return asarray(x)._a


def _progress_callback(progress, fn):
    """(tqdm bar or None, callable or None) for a progress argument."""
    if progress is True:
        from tqdm import tqdm
        bar = tqdm(total=0, unit="chunk", desc="b2lazy", leave=False)

        def callback(done, total):
            if bar.total != total:
                bar.total = total
            bar.update(done - bar.n)
        return bar, callback
    if progress is None or progress is False:
        return None, None
    if not callable(progress):
        raise TypeError(f"{fn}: progress must be True, False, None or a callable, got {progress!r}")
    return None, progress


@atexit.register
def _cancel_at_exit():
    """Evaluations still running on daemon threads when the interpreter exits are stopped,
    and their partial outputs removed, before the process goes."""
    _core.cancel_at_exit(30.0)


def _wrap(a, stats=None):
    return Array(a, stats)


def _zarr_compressor(cparams):
    """cparams without the key that only Zarr outputs read ('compressor': 'blosc', the
    default, or 'zstd'), and that key."""
    cp = dict(cparams or {})
    return cp, cp.pop("compressor", "blosc")


def _cparams_args(cparams):
    cp = dict(cparams or {})
    codec = cp.pop("codec", "zstd")
    if not isinstance(codec, str):  # blosc2.Codec enum
        codec = codec.name.lower()
    clevel = int(cp.pop("clevel", 1))
    filt = cp.pop("filter", cp.pop("filters", "shuffle"))
    if isinstance(filt, (list, tuple)):
        filt = filt[-1] if filt else "nofilter"
    if not isinstance(filt, str):  # blosc2.Filter enum
        filt = filt.name.lower()
    if cp:
        raise TypeError(f"unknown cparams keys: {sorted(cp)} (known: codec, clevel, filter)")
    return codec, clevel, filt


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
        return (f"b2lazy.Plan(shape={self.shape}, chunks={self.chunks}, stages={len(self.stages)}, "
                f"tasks={self.ntasks}, projected_peak={self.projected_peak})")

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
            raise ValueError(f"execute: out has shape {out.shape} and dtype {out.dtype}; the plan "
                             f"writes shape {self._p.shape} and dtype {dtype}")
        if not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError("execute: out must be C-contiguous and writeable")
        ntasks = self._p.ntasks
        last = ntasks if last_task is None else last_task
        for what, v in (("first_task", first_task), ("last_task", last)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"execute: {what} must be an int, got {type(v).__name__}")
        if not 0 <= first_task <= last <= ntasks:
            raise IndexError(f"execute: tasks [{first_task}, {last}) are not a range of the plan's "
                             f"{ntasks} tasks")
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
        return Array(r, r.stats())


class Array:
    """A lazy N-d array: a stored source (b2nd, Zarr, HDF5, .b2z), an in-memory one (NumPy,
    a constructor such as arange) or an expression over them.

    Nothing is computed until compute(), to_numpy() or a conversion asks for values; then
    the expression is evaluated one output chunk at a time by the C++ engine. Arrays are
    made by b2lazy.open(), b2lazy.asarray() and the namespace's functions, not by calling
    this class. Operators, indexing and the namespace's functions return new lazy Arrays.

    Examples
    --------
    >>> x = bl.asarray(np.arange(6.0).reshape(2, 3))
    >>> y = (x * 2 + 1).sum(axis=0)
    >>> y.shape
    (3,)
    >>> y.to_numpy()
    array([ 8., 12., 16.])
    """

    __array_priority__ = 100  # NumPy defers mixed operators to us
    _byteorder = None  # astype to a non-native order ('>f4'): reported, values held native

    def __init__(self, core, stats=None):
        self._a = core
        self.stats = stats
        self._call = None  # the namespace call that made it (b2lazy/_serial.py), if any
        self._writable = None  # opened with mode="r+": its path, where x[key] = value writes

    # --- saving and shipping (issue #14) --------------------------------------------
    def save(self, urlpath, inline_limit=None):
        """Store the lazy expression (not its values) in a small JSON file.

        b2lazy.open() reopens it as that expression. The file holds the namespace calls that
        built it, operands by absolute path, and in-memory operands inline up to `inline_limit`
        bytes (larger ones are refused). Reopening checks that every operand still has the shape
        and dtype it had. Format: docs/serialization.md.

        Parameters
        ----------
        urlpath : str or os.PathLike
            The file to write.
        inline_limit : int, optional
            Largest in-memory operand stored inline, in bytes (default
            b2lazy._serial.INLINE_LIMIT, 64 MiB).

        Returns
        -------
        None

        Examples
        --------
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "expr.b2lazy")
        >>> x = bl.asarray(np.arange(3.0))
        >>> (x * 2).save(path)
        >>> bl.open(path).to_numpy()
        array([0., 2., 4.])
        """
        _serial.save(self, urlpath, inline_limit)

    def __reduce__(self):
        # Pickles as its saved form: what dask.distributed ships to workers. Remote operands
        # travel as URLs with the storage_options they were opened with (no open connection
        # is pickled: each worker opens its own); save() never writes those options.
        storage = _serial.storage_of(self)
        if storage:
            return (_serial.loads, (_serial.dumps(self), "b2lazy expression", storage))
        return (_serial.loads, (_serial.dumps(self),))

    # --- metadata -------------------------------------------------------------------
    @property
    def shape(self):
        """The array's shape, a tuple of ints (known without computing anything).

        Examples
        --------
        >>> bl.asarray(np.zeros((2, 3))).T.shape
        (3, 2)
        """
        return self._a.shape

    @property
    def dtype(self):
        """The array's NumPy dtype (known without computing anything).

        Examples
        --------
        >>> (bl.asarray(np.arange(3)) / 2).dtype
        dtype('float64')
        """
        d = np.dtype(self._a.dtype)
        return d if self._byteorder is None else d.newbyteorder(self._byteorder)

    @property
    def ndim(self):
        """The number of axes.

        Examples
        --------
        >>> bl.asarray(np.zeros((2, 3))).ndim
        2
        """
        return self._a.ndim

    @property
    def size(self):
        """The number of elements.

        Examples
        --------
        >>> bl.asarray(np.zeros((2, 3))).size
        6
        """
        return self._a.size

    @property
    def chunks(self):
        """The chunks compute() evaluates on by default, as Dask normalizes them.

        The plan's output chunks (``x.plan().chunks``) as a tuple of block lengths per axis
        (what xarray reads). Planned once per array; no data is read.

        Returns
        -------
        tuple of tuple of int

        Examples
        --------
        >>> import numpy as np, b2lazy as bl
        >>> (bl.asarray(np.zeros((5, 4)), chunks=(2, 4)) + 1).chunks
        ((2, 2, 1), (4,))
        """
        return _face.dask_chunks(self)

    @property
    def itemsize(self):
        """The size of one element in bytes.

        Examples
        --------
        >>> import b2lazy as bl
        >>> bl.ones(3, dtype="float32").itemsize
        4
        """
        return self.dtype.itemsize

    @property
    def nbytes(self):
        """The size of the values in bytes, uncompressed (``size * itemsize``).

        Examples
        --------
        >>> import b2lazy as bl
        >>> bl.ones((1000, 1000)).nbytes
        8000000
        """
        return self.size * self.dtype.itemsize

    @property
    def urlpath(self):
        """The path or URL of a stored array; None for in-memory arrays and expressions.

        Examples
        --------
        >>> print(bl.asarray(np.zeros(3)).urlpath)
        None
        """
        return self._a.urlpath()

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __repr__(self):
        """``b2lazy.Array<add>(shape=(1000, 1000), dtype=float64, chunks=(250, 1000), nbytes=7.6 MiB)``:
        the root operation, shape, dtype, the plan's chunk shape and the size uncompressed."""
        return _face.array_repr(self)

    def _repr_html_(self):
        """The HTML repr notebooks show: a table of the array's and one chunk's bytes and
        shape, the dtype, the number of chunks and the root operation (as Dask's).

        Returns
        -------
        str
        """
        return _face.array_html(self)

    # --- evaluation -----------------------------------------------------------------
    def compute(self, urlpath=None, chunks=None, blocks=None, cparams=None, nthreads=None,
                max_memory=None, contiguous=None, progress=None, shards=None, scheduler=None,
                storage_options=None):
        """Evaluate into a compressed array, in memory or on disk.

        The result is b2nd in memory, or on disk in the format `urlpath` names: b2nd ("x.b2nd",
        a sparse directory "x/") or a Zarr v3 array ("x.zarr", "zarr:PATH"). Ctrl-C (SIGINT) or
        SIGTERM, on any thread, stops the evaluation within a unit of work and leaves no output
        file (an existing one is unchanged); then Python's own handler decides.

        Parameters
        ----------
        urlpath : str or os.PathLike, optional
            Where to write the result (default: in memory): a path, or a remote URL
            ("s3://bucket/x.zarr", "memory://x.b2nd"), written so that a reader never sees a
            half-written array.
        chunks : tuple of int, optional
            The result's chunk shape (default: chosen by the planner). For Zarr, its chunks.
        blocks : tuple of int, optional
            The result's block shape (b2nd).
        cparams : dict, optional
            Compression: {"codec", "clevel", "filter"} for blosc, or, for Zarr,
            {"compressor": "zstd", "clevel": n}.
        nthreads : int, optional
            Worker threads (default: the CPU count).
        max_memory : int, optional
            Memory budget in bytes for the evaluation (per worker with a scheduler).
        contiguous : bool, optional
            Write a contiguous b2nd file rather than a sparse directory.
        progress : bool or callable, optional
            True shows a tqdm bar; a callable gets (done, total) output chunks.
        shards : tuple of int, optional
            Zarr only: shard shape (multiples of `chunks`) to write a sharded array.
        scheduler : distributed.Client or str, optional
            A distributed.Client, a scheduler address ("tcp://host:port") or "local:N": the
            plan's stages and tasks run on that dask.distributed cluster
            (b2lazy.distributed.compute); `nthreads` does not apply.
        storage_options : dict, optional
            How to reach a remote `urlpath` (fsspec's names, as b2lazy.open takes them).

        Returns
        -------
        Array
            The stored result (its ``stats`` tell what the evaluation read and did).

        Examples
        --------
        >>> x = bl.asarray(np.arange(6.0).reshape(2, 3))
        >>> y = (x * 2).compute(chunks=(1, 3))
        >>> y.chunks
        ((1, 1), (3,))
        >>> y.to_numpy()
        array([[ 0.,  2.,  4.],
               [ 6.,  8., 10.]])
        """
        if scheduler is not None:
            from . import distributed
            return distributed.compute(self, urlpath, scheduler=scheduler, chunks=chunks, blocks=blocks,
                                       cparams=cparams, max_memory=max_memory, contiguous=contiguous,
                                       shards=shards, progress=progress, storage_options=storage_options)
        if urlpath is not None:
            urlpath = _path_text(os.fspath(urlpath), "compute: urlpath")
        cparams, compressor = _zarr_compressor(cparams)
        codec, clevel, filt = _cparams_args(cparams)
        bar, callback = _progress_callback(progress, "compute")
        try:
            r = _core.compute(self._a, urlpath, chunks, blocks, codec, clevel, filt,
                              _context(nthreads), max_memory, contiguous, callback, shards, compressor,
                              storage_options)
        finally:
            if bar is not None:
                bar.close()
        out = Array(r, r.stats())
        if urlpath is not None and _serial.is_remote(urlpath):
            _serial.remember_storage(urlpath, storage_options)
        return out

    def plan(self, urlpath=None, chunks=None, blocks=None, cparams=None, nthreads=None,
             max_memory=None, contiguous=None, shards=None, storage_options=None):
        """The plan compute() would run with these options; nothing is computed.

        ``str()`` prints it; its attributes expose the stages, tasks and projected peak;
        execute() runs it, whole or by ranges of tasks.

        Parameters
        ----------
        urlpath : str or os.PathLike, optional
            As compute()'s.
        chunks : tuple of int, optional
            As compute()'s.
        blocks : tuple of int, optional
            As compute()'s.
        cparams : dict, optional
            As compute()'s.
        nthreads : int, optional
            As compute()'s.
        max_memory : int, optional
            As compute()'s.
        contiguous : bool, optional
            As compute()'s.
        shards : tuple of int, optional
            As compute()'s.
        storage_options : dict, optional
            As compute()'s.

        Returns
        -------
        Plan
            The evaluation plan.

        Examples
        --------
        >>> x = bl.asarray(np.arange(16.0).reshape(4, 4))
        >>> p = (x + 1).plan(chunks=(2, 2))
        >>> p.nchunks
        4
        """
        if urlpath is not None:
            urlpath = _path_text(os.fspath(urlpath), "plan: urlpath")
        cparams, compressor = _zarr_compressor(cparams)
        codec, clevel, filt = _cparams_args(cparams)
        ctx = _context(nthreads)
        return Plan(_core.plan(self._a, urlpath, chunks, blocks, codec, clevel, filt, ctx, max_memory,
                               contiguous, shards, compressor, storage_options), ctx)

    def persist(self, nthreads=None, max_memory=None):
        """The values, evaluated now into an in-memory compressed b2nd array.

        Parameters
        ----------
        nthreads : int, optional
            The engine's threads (all cores by default).
        max_memory : int, optional
            The evaluation's memory budget in bytes.

        Returns
        -------
        Array
            An Array over the compressed values (see ``b2lazy.persist``).

        Examples
        --------
        >>> import b2lazy as bl
        >>> (bl.arange(4) * 2).persist().to_numpy()
        array([0, 2, 4, 6])
        """
        return _store.persist(self, nthreads=nthreads, max_memory=max_memory)

    def to_numpy(self, nthreads=None, max_memory=None, progress=None, scheduler=None):
        """Evaluate straight into a NumPy array (no compression).

        Signals as in compute(). The run's statistics are kept in ``last_stats``.

        Parameters
        ----------
        nthreads : int, optional
            Worker threads (default: the CPU count).
        max_memory : int, optional
            Memory budget in bytes for the evaluation.
        progress : bool or callable, optional
            True shows a tqdm bar; a callable gets (done, total) output chunks.
        scheduler : distributed.Client or str, optional
            Evaluate on that dask.distributed cluster, as compute()'s.

        Returns
        -------
        numpy.ndarray
            The values.

        Examples
        --------
        >>> x = bl.asarray(np.arange(4))
        >>> (x ** 2).to_numpy()
        array([0, 1, 4, 9])
        """
        if scheduler is not None:
            from . import distributed
            return distributed.to_numpy(self, scheduler=scheduler, max_memory=max_memory, progress=progress)
        bar, callback = _progress_callback(progress, "to_numpy")
        try:
            out, stats = _core.to_numpy(self._a, _context(nthreads), max_memory, callback)
        finally:
            if bar is not None:
                bar.close()
        self.last_stats = stats
        return out if self._byteorder is None else out.astype(self.dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """NumPy's ufunc protocol: ``np.sin(x)``, ``np.add.reduce(x)`` on b2lazy arrays.

        Calls, ``reduce``, ``accumulate`` and ``outer`` stay lazy when b2lazy has the
        function (``dtype=``, ``out=`` and ``where=`` with ``out=`` included); others load
        the b2lazy operands and let NumPy compute, with a one-time EagerEvaluationWarning.

        Parameters
        ----------
        ufunc : numpy.ufunc
            The ufunc called.
        method : str
            ``"__call__"``, ``"reduce"``, ``"accumulate"``, ``"outer"``, ``"reduceat"`` or ``"at"``.
        *inputs, **kwargs
            Its operands and keywords, as given to NumPy.

        Returns
        -------
        Array or tuple of Array or numpy.ndarray
            A lazy Array (or the ``out=`` given, holding the result); NumPy's result when
            it fell back.

        Examples
        --------
        >>> import numpy as np, b2lazy as bl
        >>> x = bl.asarray(np.arange(6.0).reshape(2, 3))
        >>> np.add.reduce(x, axis=1).to_numpy()
        array([ 3., 12.])
        """
        return _numpy_protocol.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        """NumPy's function protocol: ``np.sum(x)``, ``np.concatenate([x, y])`` on b2lazy arrays.

        Every NumPy function b2lazy has stays lazy and returns a b2lazy Array (NumPy's
        keywords mapped onto b2lazy's, ``out=`` filled and returned); the others load the
        b2lazy operands and call NumPy, with a one-time EagerEvaluationWarning naming the
        function (b2lazy/_numpy_protocol.py holds the table).

        Parameters
        ----------
        func : callable
            The NumPy function called.
        types : collection of type
            The types of the operands that implement the protocol.
        args, kwargs : tuple, dict
            Its arguments, as given to NumPy.

        Returns
        -------
        Array or object
            A lazy Array (or the ``out=`` given); NumPy's result when it fell back;
            NotImplemented for operand types b2lazy does not know (Dask arrays, ...).

        Examples
        --------
        >>> import numpy as np, b2lazy as bl
        >>> x = bl.asarray(np.arange(6.0).reshape(2, 3))
        >>> m = np.mean(x, axis=0)
        >>> type(m).__name__, m.to_numpy()
        ('Array', array([1.5, 2.5, 3.5]))
        """
        return _numpy_protocol.array_function(func, types, args, kwargs)

    def __array__(self, dtype=None, copy=None):
        out = self.to_numpy()
        return out if dtype is None else out.astype(dtype, copy=False)

    def explain(self):
        """The evaluation plan in words: what each node of the expression is asked for.

        Nothing is computed: the text is the plan compute() and to_numpy() would run with
        default options (as ``str(self.plan())``).

        Returns
        -------
        str
            The plan: layout, tasks, the expression tree and the projected reads and peak.

        Examples
        --------
        >>> x = bl.asarray(np.arange(16.0).reshape(4, 4))
        >>> print((x + 1).explain().splitlines()[0])  # doctest: +ELLIPSIS
        plan: float64 (4, 4) = 0.1 KiB in 1 output chunk of (4, 4) = 0.1 KiB, ...
        """
        return self._a.explain()

    def to_cframe(self, nthreads=None):
        """Evaluate into an in-memory b2nd array and return its contiguous frame (cframe).

        python-blosc2 reads it with ``blosc2.ndarray_from_cframe``.

        Parameters
        ----------
        nthreads : int, optional
            Worker threads (default: the CPU count).

        Returns
        -------
        bytes
            The serialized b2nd array.

        Examples
        --------
        >>> import blosc2
        >>> frame = bl.asarray(np.arange(3.0)).to_cframe()
        >>> blosc2.ndarray_from_cframe(frame)[:]
        array([0., 1., 2.])
        """
        return _core.to_cframe(self._a, _context(nthreads))

    def to_blosc2(self, urlpath=None):
        """A blosc2.NDArray with the same values, chunks and blocks."""
        import blosc2
        if urlpath is not None:
            urlpath = os.fspath(urlpath)
            if self.urlpath != urlpath:
                self.compute(urlpath=urlpath)
            return blosc2.open(urlpath)
        return blosc2.ndarray_from_cframe(self.to_cframe())

    # --- indexing and casts ---------------------------------------------------------
    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        _check_int64_indices(items, self.shape)
        if not _builtins.any(_is_array_index(k) for k in items):
            r = Array(self._a.getitem(key))
        elif len(items) == 1 and self.ndim and _is_full_mask(items[0], self.shape):
            # A mask of the array's shape: counted in one pass, values pulled lazily. Its
            # saved form keeps the counts: reopening it (each worker of a cluster) does
            # not count again.
            mask = asarray(items[0])
            stamps = _serial.source_stamps(mask)  # what the counts are taken from (before counting)
            strip, counts = _core.count_mask(mask._a, self.dtype.itemsize, _context(None))
            return _mask_select_counted(self, mask, tuple(strip), np.asarray(counts, dtype=np.int64), stamps)
        else:
            r = _advanced_getitem(self, items)
        return _serial.record(r, _serial._GETITEM, (self, key))

    def __setitem__(self, key, value, /):
        """x[key] = value, as NumPy: the value is cast to x's dtype and broadcast to x[key].
        Keys: integers, slices, ..., None, or a boolean mask (of x's shape, or of its leading
        axes; the value then broadcasts against the selected elements, as a scalar does).

        A lazy array rebinds to a lazy update of its old value: nothing is computed or
        written, and arrays made from x before keep the values x had. An array opened with
        open(path, mode="r+") writes the update through to its file at once, rewriting only
        the storage chunks the key touches (other arrays still open on that file then report
        it changed)."""
        items = key if isinstance(key, tuple) else (key,)
        mask = _setitem_mask(self, items)
        value = _setitem_value(self.dtype, value)
        if isinstance(value, Array):
            v = value
        else:  # a snapshot, as NumPy copies: later changes to a NumPy value do not leak in
            v = asarray(value, copy=True if isinstance(value, np.ndarray) and self._writable is None else None)
        if self._writable is not None:
            if mask is None:
                _check_int64_indices(items, self.shape)
                _core.assign_stored(self._writable, key, v._a, _context(None), None)
            else:
                _core.assign_stored_where(self._writable, mask._a, v._a, _context(None), None)
            self._a, self._call, self.stats = _core.open(self._writable), None, None
            return
        old = Array(self._a, self.stats)
        old._call = self._call
        new = _assigned(old, key, v, mask)
        self._a, self._call, self.stats = new._a, new._call, None

    @property
    def vindex(self):
        """Pointwise (vectorised) indexing, as zarr's: the index arrays broadcast together and
        select points, NumPy's advanced indexing. Lazy.

        Examples
        --------
        >>> x = bl.asarray(np.arange(16.0).reshape(4, 4))
        >>> x.vindex[[0, 1], [1, 2]].to_numpy()
        array([1., 6.])
        """
        return _VIndex(self)

    @property
    def oindex(self):
        """Orthogonal indexing, as zarr's: each axis's integer or boolean array selects along that
        axis independently; slices and integers as usual. Lazy.

        Examples
        --------
        >>> x = bl.asarray(np.arange(16.0).reshape(4, 4))
        >>> x.oindex[[0, 1], [1, 2]].to_numpy()
        array([[1., 2.],
               [5., 6.]])
        """
        return _OIndex(self)

    def astype(self, dtype, /, *, copy=True, device=None):
        """The array cast to `dtype`, lazily.

        Parameters
        ----------
        dtype : dtype
            The dtype to cast to.
        copy : bool, optional
            Arrays are immutable: False returns this array when it has that dtype; a copy is a
            new Array over the same graph.
        device : str, optional
            b2lazy's one device, ``'cpu'``, or None.

        Returns
        -------
        Array
            The cast array.

        Examples
        --------
        >>> bl.asarray(np.array([1.5, -2.7])).astype(np.int32).to_numpy()
        array([ 1, -2], dtype=int32)
        """
        _check_device(device, "astype")
        order = _dtypes.non_native_order(dtype)
        dtype = _as_dtype(np.dtype(dtype).newbyteorder("=") if order else dtype, "astype")
        if order is not None:  # values stay native; the dtype reported (and written) is NumPy's
            r = Array(self._a if dtype == np.dtype(self._a.dtype) else self._a.astype(dtype.name))
            r._byteorder = order
            return _serial.record(r, "astype", (self, dtype.newbyteorder(order)))
        if dtype == self.dtype:
            return self if not copy else _serial.record(Array(self._a, self.stats), "asarray", (self,))
        return _serial.record(Array(self._a.astype(dtype.name)), "astype", (self, dtype))

    # --- the Array API's array object -------------------------------------------------
    def __array_namespace__(self, /, *, api_version=None):
        if api_version is not None and api_version not in _API_VERSIONS:
            raise ValueError(f"api_version {api_version!r} is not supported (supported: "
                             f"{', '.join(_API_VERSIONS)})")
        return sys.modules[__name__]

    @property
    def device(self):
        """The array's device: b2lazy's one device, ``'cpu'``.

        Examples
        --------
        >>> bl.asarray(np.zeros(2)).device
        'cpu'
        """
        return _CPU

    def to_device(self, device, /, *, stream=None):
        """This array on `device`, which must be b2lazy's one device (``'cpu'``).

        Parameters
        ----------
        device : str
            ``'cpu'``.
        stream : None, optional
            b2lazy has no streams.

        Returns
        -------
        Array
            This array.

        Raises
        ------
        ValueError
            Another device, or a stream.

        Examples
        --------
        >>> x = bl.asarray(np.zeros(2))
        >>> x.to_device("cpu") is x
        True
        """
        _check_device(device, "to_device")
        if stream is not None:
            raise ValueError("to_device: b2lazy has no streams; stream must be None")
        return self

    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack export: the array is evaluated into a NumPy array whose capsule is
        returned (it owns the memory), so an export is always a copy of lazy values."""
        if stream is not None:
            raise ValueError("__dlpack__: b2lazy has no streams; stream must be None")
        if copy is False:
            raise BufferError("__dlpack__: a lazy array is evaluated for export, which is a copy; "
                              "copy=False cannot be honoured")
        kwargs = {"dl_device": dl_device}
        if max_version is not None:
            kwargs["max_version"] = max_version
        return self.to_numpy().__dlpack__(**kwargs)

    def __dlpack_device__(self, /):
        return (1, 0)  # (kDLCPU, device 0)

    def _scalar(self, what):
        if self.ndim != 0:
            if self.size != 1:
                raise TypeError(f"only 0-d arrays (or arrays of one element) can be converted to "
                                f"Python {what}, got shape {self.shape}")
        return self.to_numpy().reshape(())

    def __bool__(self, /):
        if self.size != 1:
            raise ValueError("the truth value of an array with more than one element is ambiguous")
        return bool(self.to_numpy().reshape(()))

    def __float__(self, /):
        return float(self._scalar("float"))

    def __complex__(self, /):
        return complex(self._scalar("complex"))

    def __index__(self, /):
        if self.ndim != 0 or self.dtype.kind not in "iu":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self.to_numpy())

    def __int__(self, /):
        return int(self._scalar("int"))  # nan: ValueError, inf: OverflowError, as Python's int()

    @property
    def T(self):
        """The array with its axes reversed (lazy).

        Examples
        --------
        >>> bl.asarray(np.arange(6).reshape(2, 3)).T.to_numpy()
        array([[0, 3],
               [1, 4],
               [2, 5]])
        """
        return permute_dims(self, tuple(range(self.ndim))[::-1])

    @property
    def mT(self):
        """The array with its last two axes swapped (lazy).

        Examples
        --------
        >>> bl.asarray(np.zeros((4, 2, 3))).mT.shape
        (4, 3, 2)
        """
        return matrix_transpose(self)

    def reshape(self, *shape, copy=None):
        """The same elements in C order with a new shape, lazily (NumPy's ndarray.reshape).

        Parameters
        ----------
        *shape : int or tuple of int
            The new shape, as ``a.reshape(2, 3)`` or ``a.reshape((2, 3))``; one entry may be -1.
        copy : bool, optional
            False is refused (a lazy reshape is never a view).

        Returns
        -------
        Array
            The reshaped array.

        Examples
        --------
        >>> bl.asarray(np.arange(6)).reshape(2, 3).to_numpy()
        array([[0, 1, 2],
               [3, 4, 5]])
        """
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        return reshape(self, shape, copy=copy)

    def flatten(self):
        """The elements in C order as a 1-d array (lazy, not a copy). Also ``ravel()``.

        Returns
        -------
        Array
            The 1-d array.

        Examples
        --------
        >>> bl.asarray(np.arange(4).reshape(2, 2)).flatten().to_numpy()
        array([0, 1, 2, 3])
        """
        return reshape(self, -1)

    ravel = flatten

    def nonzero(self):
        """Coordinates of the nonzero elements, one int64 array per axis (b2lazy.nonzero).

        Counts the nonzero elements now (one pass); the coordinates are lazy.

        Returns
        -------
        tuple of Array
            One array of indices per axis.

        Examples
        --------
        >>> [a.to_numpy() for a in bl.asarray(np.array([[0, 1], [2, 0]])).nonzero()]
        [array([0, 1]), array([1, 0])]
        """
        return nonzero(self)

    def __matmul__(self, other):
        if not isinstance(other, (Array, np.ndarray)):
            return NotImplemented
        return matmul(self, other)

    def __rmatmul__(self, other):
        if not isinstance(other, (Array, np.ndarray)):
            return NotImplemented
        return matmul(other, self)


def _index_axes(k):
    """How many axes of the array an index entry consumes (None, ... and booleans: none)."""
    if k is None or k is Ellipsis or isinstance(k, (bool, np.bool_)):
        return 0
    if _is_array_index(k):
        a = k if isinstance(k, Array) else np.asarray(k)
        return a.ndim if a.dtype == np.bool_ else 1
    return 1


def _check_int64_indices(items, shape):
    """An integer index beyond int64 is out of bounds: IndexError with NumPy's message."""
    for pos, k in enumerate(items):
        if isinstance(k, (int, np.integer)) and not isinstance(k, bool) and not -2**63 <= int(k) < 2**63:
            if _builtins.any(x is Ellipsis for x in items[:pos]):
                axis = len(shape) - _builtins.sum(_index_axes(x) for x in items[pos:])
            else:
                axis = _builtins.sum(_index_axes(x) for x in items[:pos])
            if 0 <= axis < len(shape):
                raise IndexError(f"index {int(k)} is out of bounds for axis {axis} with size {shape[axis]}")
            raise IndexError(f"index {int(k)} is out of bounds")


def _setitem_value(dtype, value):
    """The value of x[key] = value for an x of `dtype`, cast as NumPy's setitem casts it.

    Python and NumPy scalars, 0-d arrays and nested lists are stored through NumPy itself, so
    they fail as NumPy fails (NaN into an integer is a ValueError, infinity or an integer out
    of range an OverflowError, a complex number into a real array a TypeError) and warn as it
    warns. NumPy arrays are cast by NumPy when the cast is not same-kind (its warnings for NaN
    and for discarded imaginary parts included). A lazy b2lazy Array cannot warn about values
    it has not computed, so the casts for which NumPy would warn — float or complex into an
    integer array, complex into a real one — are refused; astype() says the cast is meant."""
    if isinstance(value, Array):
        src, dst = value.dtype.kind, dtype.kind
        if (src in "fc" and dst in "iu") or (src == "c" and dst == "f"):
            loss = "the imaginary part" if dst == "f" else "NaN, infinity and fractions"
            raise TypeError(f"x[key] = value: cannot assign {value.dtype} values to a {dtype} array without "
                            f"losing {loss}; cast the value explicitly (value.astype({dtype.name!r}))")
        return value
    if isinstance(value, np.ndarray) and value.ndim > 0:
        if value.dtype == dtype or np.can_cast(value.dtype, dtype, "same_kind"):
            return value
        return value.astype(dtype)  # NumPy's unsafe setitem cast, with its warnings
    if isinstance(value, (bool, int, float, complex, np.generic, np.ndarray, list, tuple)):
        stored = np.empty(np.shape(value), dtype)
        stored[...] = value
        return stored
    return value


def _setitem_mask(x, items):
    """For x[key] = value: None for a basic key; for a boolean mask of x's shape or of its
    leading axes, that mask as a b2lazy bool Array of x's shape (broadcast along the rest)."""
    if not _builtins.any(_is_array_index(k) for k in items):
        return None
    if len(items) == 1 and _is_array_index(items[0]):
        m = items[0] if isinstance(items[0], Array) else asarray(np.asarray(items[0]))
        if m.dtype == np.bool_:
            lead = tuple(x.shape[:m.ndim])
            if m.ndim > x.ndim or tuple(m.shape) != lead:
                raise IndexError(f"x[mask] = value: the mask's shape {tuple(m.shape)} does not match the "
                                 f"leading axes of x's shape {tuple(x.shape)}")
            if m.ndim < x.ndim:
                m = broadcast_to(reshape(m, tuple(m.shape) + (1,) * (x.ndim - m.ndim)), x.shape)
            return m
    raise IndexError("x[key] = value with integer index arrays is not supported; keys are integers, "
                     "slices, ..., None or one boolean mask (b2lazy.where(mask, value, x) builds any "
                     "masked update)")


def _assigned(x, key, value, mask=None):
    """x with x[key] = value, lazily (a new Array; x is unchanged): a basic key an update
    node, a boolean mask `where`. Recorded as `.setitem` for saving."""
    if mask is None:
        items = key if isinstance(key, tuple) else (key,)
        _check_int64_indices(items, x.shape)
        r = Array(_core.assign(x._a, key, value._a))
    else:
        v = value if value.dtype == x.dtype else value.astype(x.dtype)
        k = key[0] if isinstance(key, tuple) else key
        rest = tuple(x.shape[k.ndim if isinstance(k, Array) else np.ndim(k):])  # after the masked axes
        if v.ndim > len(rest) and _builtins.any(s != 1 for s in v.shape[:v.ndim - len(rest)]):
            raise ValueError(f"x[mask] = value: a value of shape {tuple(v.shape)} would be matched with the "
                             f"selected elements one by one, which b2lazy does not do lazily; give a scalar or "
                             f"a value of shape {tuple(rest)} (or use b2lazy.where(mask, values, x))")
        if v.ndim > len(rest):
            v = reshape(v, v.shape[v.ndim - len(rest):])
        r = where(mask, v, x)
    return _serial.record(r, _serial._SETITEM, (x, key, value))


def _mask_select_counted(x, mask, strip, counts, stamps=None):
    """x[mask] from the mask's counts per strip (count_mask), recorded with them and with
    `stamps`, what identified the mask's stored operands when they were counted
    ({URL: stamp}, b2lazy/_serial.py)."""
    counts = np.asarray(counts)
    if counts.ndim != 1 or (counts.size and counts.dtype.kind not in "iu"):
        raise ValueError(f"mask counts: a 1-d array of integers, got {counts.dtype} of shape {counts.shape}")
    counts = counts.astype(np.int64)
    r = Array(_core.mask_select_counted(x._a, mask._a, [int(s) for s in strip], counts.tolist()))
    return _serial.record(r, _serial._MASKSELECT, (x, mask, tuple(strip), counts),
                          {_serial.STAMPS: stamps or {}})


def _is_full_mask(k, shape):
    a = k if isinstance(k, Array) else np.asarray(k) if isinstance(k, (list, np.ndarray)) else None
    return a is not None and a.dtype == np.bool_ and tuple(a.shape) == tuple(shape)


def _is_array_index(k):
    return isinstance(k, (list, np.ndarray, Array)) and not isinstance(k, (str, bytes))


def _numpy_key(items):
    """The key with every array entry as a NumPy array (lazy ones are evaluated first:
    their values decide what is read); the C++ side checks and applies it."""
    out = []
    for k in items:
        if _is_array_index(k):
            a = np.asarray(k.to_numpy() if isinstance(k, Array) else k)
            if a.size == 0 and a.dtype.kind == "f":
                a = a.astype(np.int64)  # [] is an empty integer index, as in NumPy
            k = a
        out.append(k)
    return tuple(out)


def _advanced_getitem(x, items):
    """NumPy indexing with index arrays among basic indices, lazily (C++ getitem)."""
    return Array(x._a.getitem_arrays(_numpy_key(items), _context(None)))


class _VIndex:
    def __init__(self, x):
        self._x = x

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        _check_int64_indices(items, self._x.shape)
        if not _builtins.any(_is_array_index(k) for k in items):
            return self._x[key]
        return _serial.record(_advanced_getitem(self._x, items), _serial._VINDEX, (self._x, key))


class _OIndex:
    def __init__(self, x):
        self._x = x

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        _check_int64_indices(items, self._x.shape)
        return _serial.record(Array(self._x._a.oindex(_numpy_key(items))), _serial._OINDEX, (self._x, key))


def _binary(name, reflected=False):
    def op(self, other):
        if not isinstance(other, (Array, bool, int, float, complex, np.ndarray, np.generic)):
            return NotImplemented
        a, b = (other, self) if reflected else (self, other)
        return _serial.record(Array(_core.elementwise(name, _unwrap(a), _unwrap(b))), name, (a, b))
    op.__name__ = f"__{'r' if reflected else ''}{name}__"
    return op


def _unary(name):
    def op(self):
        return _serial.record(Array(_core.elementwise(name, self._a)), name, (self,))
    return op


for _dunder, _name in [("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                       ("truediv", "divide"), ("floordiv", "floor_divide"), ("mod", "remainder"),
                       ("pow", "pow"), ("and", "bitwise_and"), ("or", "bitwise_or"),
                       ("xor", "bitwise_xor"), ("lshift", "bitwise_left_shift"),
                       ("rshift", "bitwise_right_shift")]:
    setattr(Array, f"__{_dunder}__", _binary(_name))
    setattr(Array, f"__r{_dunder}__", _binary(_name, reflected=True))
for _dunder, _name in [("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                       ("ge", "greater_equal"), ("eq", "equal"), ("ne", "not_equal")]:
    setattr(Array, f"__{_dunder}__", _binary(_name))
Array.__hash__ = None
Array.__neg__ = _unary("negative")
Array.__pos__ = _unary("positive")
Array.__abs__ = _unary("abs")
Array.__invert__ = _unary("bitwise_invert")


def _make_function(name, arity):
    # The Array API's signatures, (x, /) and (x1, x2, /): nothing to bind, so the fast
    # form with the registry's signature.
    if arity == 1:
        def fn(x, /):
            return Array(_core.elementwise(name, _unwrap(x)))
    else:
        def fn(x1, x2, /):
            return Array(_core.elementwise(name, _unwrap(x1), _unwrap(x2)))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name}, lazy; NumPy broadcasting and type promotion."
    return _registered(fn)


for _entry in _registry.ENTRIES.values():
    if _entry["family"] == "elementwise" and _entry["kernel"] is not None:
        globals()[_entry["name"]] = _make_function(_entry["name"], len(_entry["params"]))
        __all__.append(_entry["name"])


# --- linear algebra ------------------------------------------------------------------
def _axis(v, what):
    """An axis as an int; one beyond a C int is out of bounds (AxisError), as the engine
    says of any axis out of range, not a conversion error."""
    v = int(v)
    if not -2**31 <= v < 2**31:
        raise np.exceptions.AxisError(f"{what}: axis {v} is out of bounds")
    return v


def _int_axes(v, what, as_axes=True):
    conv = (lambda x: _axis(x, what)) if as_axes else int
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return [conv(v)]
    try:
        out = [conv(x) for x in v if isinstance(x, (int, np.integer)) and not isinstance(x, bool)]
        if len(out) == len(v):
            return out
    except TypeError:
        pass
    raise TypeError(f"{what} must be an int or a sequence of ints, got {v!r}")


@_registered
def matmul(x1, x2, /):
    """Matrix product (NumPy semantics: 1-d promotion, broadcast batch axes); lazy."""
    return Array(_core.matmul(asarray(x1)._a, asarray(x2)._a))


@_registered
def tensordot(x1, x2, /, axes):
    """Contract the last `axes` axes of x1 with the first of x2, or the axes given as
    a pair of sequences; lazy."""
    a, b = asarray(x1)._a, asarray(x2)._a
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        return Array(_core.tensordot(a, b, _axis(axes, "tensordot: axes")))
    try:
        xa, xb = axes
    except (TypeError, ValueError):
        raise TypeError(f"tensordot: axes must be an int or a pair of sequences, got {axes!r}") from None
    return Array(_core.tensordot_axes(a, b, _int_axes(xa, "tensordot: axes[0]"), _int_axes(xb, "tensordot: axes[1]")))


@_registered
def vecdot(x1, x2, /, *, axis):
    """Dot product of vectors along `axis`, broadcasting the other axes; lazy."""
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"vecdot: axis must be an int, got {axis!r}")
    return Array(_core.vecdot(asarray(x1)._a, asarray(x2)._a, _axis(axis, "vecdot")))


@_registered
def outer(x1, x2, /):
    """Outer product of the flattened operands; lazy."""
    return Array(_core.outer(asarray(x1)._a, asarray(x2)._a))


@_registered
def permute_dims(x, /, axes):
    """The array with its axes in the order `axes`; lazy."""
    return Array(_core.permute_dims(asarray(x)._a, _int_axes(axes, "permute_dims: axes")))


@_registered
def transpose(x, axes):
    """NumPy's transpose: reversed axes by default."""
    x = asarray(x)
    return permute_dims(x, tuple(range(x.ndim))[::-1] if axes is None else axes)


@_registered
def matrix_transpose(x, /):
    """Swap the last two axes; lazy."""
    return Array(_core.matrix_transpose(asarray(x)._a))


@_registered
def take(x, indices, /, axis):
    """Elements of `x` at integer `indices` along `axis` (NumPy's take; axis=None takes
    from `x` flattened). Lazy: only the chunks the indices touch are read."""
    axis = _axis_or_none(axis, "take")
    idx = _int_indices(indices, "take")
    return Array(_core.take(asarray(x)._a, idx, axis))


def _int_indices(indices, fn):
    """Integer indices as a C-contiguous int64 NumPy array (lazy ones are evaluated)."""
    if isinstance(indices, Array):
        indices = indices.to_numpy()
    idx = np.asarray(indices)
    if idx.size == 0 and idx.dtype.kind == "f":
        idx = idx.astype(np.int64)  # [] is an empty integer index, as in NumPy
    if idx.dtype.kind not in "iub":
        raise TypeError(f"{fn}: indices must be integers, got dtype {idx.dtype}")
    if idx.dtype.kind == "u" and idx.size and idx.max() > np.iinfo(np.int64).max:
        raise IndexError(f"{fn}: index {idx.max()} is out of bounds")
    return np.require(idx.astype(np.int64, copy=False), requirements="C")  # keeps 0-d arrays 0-d


def _axis_or_none(axis, fn):
    if axis is not None and (not isinstance(axis, (int, np.integer)) or isinstance(axis, bool)):
        raise TypeError(f"{fn}: axis must be an int or None, got {axis!r}")
    return None if axis is None else _axis(axis, fn)


@_registered
def take_along_axis(x, indices, /, axis):
    """NumPy's take_along_axis: `indices` (as many axes as `x`) select along `axis` and
    broadcast against `x` on the other axes; axis=None works on `x` flattened. Lazy:
    only the chunks the indices touch are read."""
    axis = _axis_or_none(axis, "take_along_axis")
    return Array(_core.take_along_axis(asarray(x)._a, _int_indices(indices, "take_along_axis"), axis))


@_registered
def nonzero(x, /):
    """Coordinates of the nonzero elements, one int64 array per axis (C order). Counts
    the nonzero elements now (one pass over `x`); the coordinates are lazy."""
    return tuple(Array(a) for a in _core.nonzero(asarray(x)._a, _context(None)))


@_registered
def flatten(x, /):
    """The elements in C order as one axis; lazy."""
    return Array(_core.reshape(asarray(x)._a, [-1]))


@_registered
def reshape(x, /, shape, *, copy):
    """The same elements in C order with a new `shape` (one entry may be -1); lazy."""
    if copy is False:
        raise ValueError("reshape: copy=False is not supported (a lazy reshape is never a view)")
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    for s in shape:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"reshape: shape entries must be integers, got {s!r}")
    return Array(_core.reshape(asarray(x)._a, [int(s) for s in shape]))


def _axes_arg(axis, fn):
    if axis is None:
        return None
    return _int_axes(axis, f"{fn}: axis")


@_registered
def expand_dims(x, /, axis):
    """A new axis of length 1 at `axis`; lazy."""
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"expand_dims: axis must be an int, got {axis!r}")
    return Array(_core.expand_dims(asarray(x)._a, _axis(axis, "expand_dims")))


@_registered
def squeeze(x, /, axis):
    """Without the given length-1 axes (all of them by default); lazy."""
    return Array(_core.squeeze(asarray(x)._a, _axes_arg(axis, "squeeze")))


@_registered
def flip(x, /, *, axis):
    """Reversed along `axis` (all axes by default); lazy."""
    return Array(_core.flip(asarray(x)._a, _axes_arg(axis, "flip")))


@_registered
def moveaxis(x, source, destination, /):
    """Axes moved from `source` to `destination`, the others in order; lazy."""
    return Array(_core.moveaxis(asarray(x)._a, _int_axes(source, "moveaxis: source"),
                                _int_axes(destination, "moveaxis: destination")))


@_registered
def broadcast_to(x, /, shape):
    """`x` repeated along broadcast axes to `shape`, without copying; lazy."""
    return Array(_core.broadcast_to(asarray(x)._a, shape))


@_registered
def concat(arrays, /, *, axis):
    """Arrays joined along an existing axis (axis=None: flattened first); lazy."""
    if axis is not None and (not isinstance(axis, (int, np.integer)) or isinstance(axis, bool)):
        raise TypeError(f"concat: axis must be an int or None, got {axis!r}")
    return Array(_core.concat([asarray(a)._a for a in arrays], None if axis is None else _axis(axis, "concat")))


@_registered
def stack(arrays, /, *, axis):
    """Arrays of one shape joined along a new axis; lazy."""
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"stack: axis must be an int, got {axis!r}")
    return Array(_core.stack([asarray(a)._a for a in arrays], _axis(axis, "stack")))


@_registered
def roll(x, /, shift, *, axis):
    """Elements shifted along `axis`, wrapping around; lazy."""
    shifts = _int_axes(shift, "roll: shift", as_axes=False)
    return Array(_core.roll(asarray(x)._a, shifts, _axes_arg(axis, "roll")))


__all__ += ["matmul", "tensordot", "vecdot", "outer", "permute_dims", "transpose", "matrix_transpose", "take",
            "expand_dims", "squeeze", "flip", "moveaxis", "broadcast_to", "concat", "stack",
            "roll", "reshape", "flatten", "take_along_axis", "nonzero"]


# --- reductions -------------------------------------------------------------------------
def _check_axis(axis, fn):
    if axis is None or isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
        return None if axis is None else _axis(axis, fn)
    if isinstance(axis, (tuple, list)) and _builtins.all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in axis):
        return tuple(_axis(a, fn) for a in axis)
    raise TypeError(f"axis must be None, an int or a tuple of ints, got {axis!r}")


def _reduction(entry):
    name = entry["name"]

    def body(x, axis, keepdims, dtype=None, correction=None, ddof=None):
        if entry["single_axis"] and axis is not None and not isinstance(axis, (int, np.integer)):
            raise TypeError(f"{name}(): axis must be None or an int")
        if correction is not None and ddof is not None:
            raise TypeError(f"{name}(): give correction or ddof, not both")
        corr = correction if correction is not None else (ddof if ddof is not None else 0)
        if not isinstance(keepdims, (bool, np.bool_)):
            raise TypeError(f"{name}(): keepdims must be a bool, got {keepdims!r}")
        return Array(_core.reduce(name, asarray(x)._a, _check_axis(axis, name), bool(keepdims), dtype, float(corr)))
    flattened = "the array flattened" if entry["single_axis"] else "all axes"
    return _registry.generated(name, body, f"Lazy {name} over `axis` (None: {flattened}), NumPy semantics.")


# One function per reduction of the registry (names, arguments and defaults shared with
# the expression strings and the command).
_reduction_names = [e["name"] for e in _registry.ENTRIES.values() if e["family"] == "reduction"]
for _n in _reduction_names:
    globals()[_n] = _reduction(_registry.ENTRIES[_n])
del _n
logsumexp.__doc__ = "Lazy log(sum(exp(x))) over `axis` (scipy.special.logsumexp), without overflow."


def _holistic(name, q, x, axis, keepdims, method):
    if not isinstance(keepdims, (bool, np.bool_)):
        raise TypeError(f"{name}(): keepdims must be a bool, got {keepdims!r}")
    x = asarray(x)
    qs = np.asarray(q, dtype=np.float64)
    if qs.ndim == 0:
        return Array(_core.quantile(name, x._a, float(qs), _check_axis(axis, name), bool(keepdims), method))
    # Several quantiles: stacked along a new first axis, as NumPy's (each a recorded call of
    # its own, so a saved expression holds them as such).
    one = globals()[name]
    parts = [one(x, float(v), axis=axis, method=method, keepdims=keepdims) for v in qs.ravel()]
    return reshape(stack(parts), qs.shape + parts[0].shape)


@_registered
def median(x, /, axis, *, keepdims):
    """Lazy median over `axis` (None: all axes), as np.median (a slice with NaN gives NaN).
    Each output pulls its slice whole when it fits the budget, else selects it in passes."""
    return _holistic("median", 0.5, x, axis, keepdims, "linear")


@_registered
def quantile(x, /, q, axis, *, method, keepdims):
    """Lazy q-th quantile(s), 0 <= q <= 1, over `axis`, as np.quantile (methods 'linear',
    'lower', 'higher', 'nearest', 'midpoint')."""
    return _holistic("quantile", q, x, axis, keepdims, method)


@_registered
def percentile(x, /, q, axis, *, method, keepdims):
    """Lazy q-th percentile(s), 0 <= q <= 100, over `axis`, as np.percentile."""
    return _holistic("percentile", q, x, axis, keepdims, method)


__all__ += ["median", "quantile", "percentile"]


def lazyudf(func, inputs, dtype, shape=None, chunked=True, *, depth=0, name=None, chunked_eval=None):
    """A lazy array computed block by block by a Python function (python-blosc2's lazyudf).

    For each block the evaluation asks for, ``func(inputs, output, offset)`` is called with
    `inputs` a tuple of read-only NumPy arrays — each input's values over the block, widened
    by `depth` elements along every axis (clipped at the array's edges: the view of input
    axis d starts at ``max(0, offset[d] - depth)``), 0-d inputs whole — `output` the block to
    fill (a writable NumPy array of the block's shape and `dtype`) and `offset` the block's
    start. Blocks are filled on the worker threads, one call at a time under the GIL; a
    numba function jitted with ``nogil=True`` releases it and runs on all of them. The
    result nests in expressions like any array; it cannot be saved (its function is Python
    code).

    Parameters
    ----------
    func : callable
        ``func(inputs, output, offset)``, filling `output`.
    inputs : sequence of array_like
        b2lazy arrays (or anything asarray takes) of `shape`, or scalars (passed as 0-d
        arrays).
    dtype : dtype
        The result's dtype.
    shape : tuple of int, optional
        The result's shape (default: the inputs').
    chunked : bool, optional
        False shows every call the whole inputs (depth = the shape), for functions that are
        not local.
    depth : int or sequence of int, optional
        Halo width, for every axis or one per axis (stencils).
    name : str, optional
        The name shown in plans (default: the function's).
    chunked_eval : bool, optional
        python-blosc2's name for `chunked`.

    Returns
    -------
    Array
        The lazy result.

    Raises
    ------
    TypeError
        `func` is not callable.
    ValueError
        No `shape` and no array input.

    Examples
    --------
    >>> def double(inputs, output, offset):
    ...     output[...] = inputs[0] * 2
    >>> x = bl.asarray(np.arange(4.0))
    >>> bl.lazyudf(double, (x,), np.float64).to_numpy()
    array([0., 2., 4., 6.])
    """
    if chunked_eval is not None:
        chunked = chunked_eval
    if not callable(func):
        raise TypeError(f"lazyudf: func must be callable, got {type(func).__name__}")
    ins = [x if isinstance(x, Array) else asarray(x) for x in inputs]
    if shape is None:
        shapes = [x.shape for x in ins if x.ndim]
        if not shapes:
            raise ValueError("lazyudf: give shape= when no input is an array")
        shape = shapes[0]
    shape = tuple(int(s) for s in shape)
    if not chunked:
        depth = list(shape)
    depth = [int(depth)] * len(shape) if np.isscalar(depth) else [int(d) for d in depth]
    fname = name or getattr(func, "__name__", type(func).__name__)
    return Array(_core.lazyudf(func, [x._a for x in ins], np.dtype(dtype).name, list(shape), depth, fname))


__all__ += ["lazyudf"]


def _axis_int(axis, fn):
    if axis is None:
        return None
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{fn}(): axis must be None or an int, got {axis!r}")
    return _axis(axis, fn)


@_registered
def cumulative_sum(x, /, *, axis, dtype, include_initial):
    """Array API cumulative sum (axis required for more than one dimension)."""
    return Array(_core.scan("sum", asarray(x)._a, _axis_int(axis, "cumulative_sum"), dtype,
                            bool(include_initial), False))


@_registered
def cumulative_prod(x, /, *, axis, dtype, include_initial):
    return Array(_core.scan("prod", asarray(x)._a, _axis_int(axis, "cumulative_prod"), dtype,
                            bool(include_initial), False))


@_registered
def cumsum(x, axis, dtype):
    """NumPy cumsum: axis=None scans the array flattened in C order."""
    return Array(_core.scan("sum", asarray(x)._a, _axis_int(axis, "cumsum"), dtype, False, True))


@_registered
def cumprod(x, axis, dtype):
    return Array(_core.scan("prod", asarray(x)._a, _axis_int(axis, "cumprod"), dtype, False, True))


__all__ += _reduction_names + ["cumulative_sum", "cumulative_prod", "cumsum", "cumprod"]

def _method(f):
    """f as an Array method; its signature (inspect.signature) is f's, self as x."""
    @functools.wraps(f)
    def method(self, /, *args, **kwargs):
        return f(self, *args, **kwargs)
    return method



@_registered
def where(condition, x, y):
    """Elements of `x` where `condition` is true, else of `y`; with only `condition`,
    nonzero(condition)."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
    return Array(_core.where(_unwrap(condition), _unwrap(x), _unwrap(y)))


@_registered
def clip(x, /, min, max):
    return Array(_core.clip(_unwrap(x), None if min is None else _unwrap(min),
                            None if max is None else _unwrap(max)))


@_registered
def astype(x, dtype, /, *, copy, device):
    """`x` cast to `dtype`, lazily (see Array.astype)."""
    return asarray(x).astype(dtype, copy=copy, device=device)


# --- sources --------------------------------------------------------------------------
def _text(s, what):
    """`s` (a str) as UTF-8 can hold it: a lone surrogate ("\\ud800") is a ValueError
    naming the argument (nanobind would refuse the call as "incompatible arguments")."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"{what}: not valid text: a lone surrogate {s[e.start]!r} at position {e.start}") from None
    return s


def _path_text(s, what):
    """A path or URL argument: valid text (_text) without NUL characters (which would cut it
    short in C++)."""
    _text(s, what)
    if "\0" in s:
        raise ValueError(f"{what}: {s!r:.80} holds a NUL character")
    return s


def open(urlpath, *, key=None, dataset=None, mode="r", operands=None, storage_options=None):
    """Open a stored array, lazily: nothing is read.

    `urlpath` may be a remote URL: https://, s3://bucket/key, gs://bucket/key (b2lazy's own
    libcurl stores), or any protocol fsspec knows, chained URLs included (memory://,
    "simplecache::https://...", zip::...; storage_options={"use_fsspec": True} sends
    http/s3/gs through fsspec too). Only the byte ranges evaluation needs are fetched.

    The format follows the URL's scheme, else its suffix, else what is there: b2nd
    ("x.b2nd", a sparse directory, "b2nd:PATH"), Zarr v2/v3 in a directory store
    ("x.zarr", "zarr:PATH", any directory holding zarr.json or .zarray), an array in a
    python-blosc2 DictStore zip ("s.b2z" with `key="/x"`, or the URL "s.b2z#/x"), or a
    dataset of an HDF5 file ("f.h5" with `dataset="/group/x"`, or "f.h5#/group/x"). A lazy
    expression stored by Array.save() is reopened as that expression (its operands checked
    against the shapes and dtypes they had).

    Parameters
    ----------
    urlpath : str or os.PathLike
        The file, directory or URL.
    key : str, optional
        The member of a .b2z DictStore.
    dataset : str, optional
        The dataset of an HDF5 file.
    mode : {'r', 'r+'}, optional
        'r+' (a b2nd file or sparse directory only): ``x[key] = value`` writes through to
        the file, rewriting only the storage chunks the key touches.
    operands : dict, optional
        For a saved expression: operand URLs, as the saved file writes them, mapped to
        paths or Arrays used instead (docs/serialization.md).
    storage_options : dict, optional
        How to reach a remote URL, with fsspec's names and nesting: {"anon": True},
        {"key": ..., "secret": ..., "client_kwargs": {"endpoint_url": ...}},
        {"token": ...}, {"headers": {...}}; also "concurrency" (requests in flight) and
        "max_retries". Not given: the AWS_* environment and ~/.aws files (S3),
        GOOGLE_APPLICATION_CREDENTIALS (GCS). For a saved expression: the options of its
        remote operands. Never written into a saved expression, never shown in repr.

    Returns
    -------
    Array
        The lazy array.

    Raises
    ------
    ValueError
        A bad mode, or operands= or mode='r+' where they do not apply.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.b2nd")
    >>> _ = bl.asarray(np.arange(6.0).reshape(2, 3)).compute(urlpath=path)
    >>> x = bl.open(path)
    >>> x.shape, x.dtype
    ((2, 3), dtype('float64'))
    >>> x.sum(axis=1).to_numpy()
    array([ 3., 12.])
    """
    urlpath = os.fspath(urlpath)
    if mode not in ("r", "r+"):
        raise ValueError(f"open(): mode must be 'r' or 'r+', got {mode!r}")
    if dataset is not None:
        if key is not None:
            raise TypeError("open(): give key (a .b2z member) or dataset (an HDF5 dataset), not both")
        key = dataset
    if key is not None:
        urlpath = f"{urlpath}#{key if key.startswith('/') else '/' + key}"
    _path_text(urlpath, "open(): urlpath")
    if storage_options is not None and not isinstance(storage_options, dict):
        raise TypeError(f"open(): storage_options must be a dict (fsspec's names), got {type(storage_options).__name__}")
    remote = _serial.is_remote(urlpath)
    if not remote and _serial.is_saved_expression(urlpath):
        if mode != "r":
            raise ValueError(f"open(): '{urlpath}' is a saved expression, which cannot be written (mode='r+')")
        return _serial.load(urlpath, operands, storage_options)
    if operands is not None:
        raise ValueError(f"open(): operands= substitutes the operands of a saved expression; '{urlpath}' is not one")
    if remote and mode != "r":
        raise ValueError(f"open(): mode='r+' updates local b2nd files in place; '{urlpath}' is remote")
    x = Array(_core.open(urlpath, storage_options))
    # Recorded by its absolute URL now: a later chdir does not change what it names.
    x._call = (("open", (_serial.absolute_url(urlpath, os.getcwd()),), {}), None)
    if remote:
        _serial.remember_storage(urlpath, storage_options)
    if mode == "r+":
        if x._a.kind != "b2nd" or "#" in urlpath:
            raise ValueError(f"open(): mode='r+' updates b2nd files in place; '{urlpath}' is a "
                             f"{x._a.kind} array{' inside a container' if '#' in urlpath else ''}")
        x._writable = urlpath
    return x


def asarray(obj, /, dtype=None, *, device=None, copy=None, chunks=None, blocks=None, cparams=None,
            storage_options=None):
    """A lazy Array over `obj` (the Array API's asarray, plus b2lazy's storage options).

    NumPy arrays are wrapped without copying unless `copy=True` (copied once, now) or
    `chunks` is given, in which case they are compressed into an in-memory b2nd array
    with those chunks and blocks. python-blosc2 NDArrays are opened by path when on disk,
    by cframe when in memory. zarr and h5py arrays, python-blosc2 LazyExprs and any object
    with shape, dtype and __getitem__ are wrapped without reading (b2lazy.from_array, which
    says how). Python scalars become 0-d constants; nested sequences go
    through NumPy. `dtype` casts (lazily for b2lazy arrays). b2lazy arrays are
    immutable, so `copy` never changes what an Array holds; copy=False raises ValueError
    when NumPy would have to copy to make the array. A string naming a remote URL
    (https://, s3://, memory://, ...) is opened, lazily, as b2lazy.open(obj,
    storage_options=storage_options) does."""
    _check_device(device, "asarray")
    if isinstance(obj, str) and _serial.is_remote(obj):
        a = open(obj, storage_options=storage_options)
        return a if dtype is None else a.astype(dtype)
    if storage_options is not None:
        raise ValueError("asarray: storage_options applies to a remote URL only")
    if dtype is not None:
        dtype = _as_dtype(dtype, "asarray")
    if isinstance(obj, Array):
        if dtype is not None and dtype != obj.dtype:
            if copy is False:
                raise ValueError(f"asarray: casting {obj.dtype} to {dtype} needs a copy, but copy=False")
            return obj.astype(dtype)
        return Array(obj._a, obj.stats) if copy else obj
    if isinstance(obj, (bool, int, float, complex)):
        return full((), obj, dtype=dtype)
    blosc2 = sys.modules.get("blosc2")  # (not imported: obj is none of its arrays; importing costs 0.1 s)
    if blosc2 is not None:
        if isinstance(obj, blosc2.NDArray):
            path = obj.schunk.urlpath
            ref = getattr(obj, "_blosc2_ref", None)  # a member of a DictStore (.b2z)
            if path and ref is not None and getattr(ref, "kind", None) == "dictstore_key":
                a = open(ref.urlpath, key=ref.key)
            elif path and not str(path).endswith(".b2z"):
                a = open(path)
            else:  # in memory, or embedded in a .b2z's embed.b2e (a copy python-blosc2 made)
                a = Array(_core.from_cframe(obj.to_cframe()))
            return a if dtype is None else a.astype(dtype)
    if chunks is None and blocks is None and not copy and _wrapping.wraps(obj):  # zarr, h5py, LazyExpr, ...
        a = _wrapping.wrap(obj)
        return a if dtype is None else a.astype(dtype)
    arr = np.array(obj, dtype=dtype, copy=copy)
    if arr.dtype.byteorder == ">" and arr.dtype.name in _SUPPORTED_DTYPES:  # held in native order
        if copy is False:
            raise ValueError(f"asarray: big-endian {arr.dtype.str} is held in native order, which needs "
                             f"a copy, but copy=False")
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if arr.dtype.name not in _SUPPORTED_DTYPES:
        raise TypeError(f"unsupported dtype {arr.dtype.name} (supported: {', '.join(_SUPPORTED_DTYPES)})")
    if chunks is not None or blocks is not None:
        codec, clevel, filt = _cparams_args(cparams)
        arr = np.require(arr, requirements="C")  # keeps 0-d arrays 0-d
        r = Array(_core.from_numpy_compressed(arr, chunks, blocks, codec, clevel, filt))
        r._call = _serial.LEAF  # saved by its frame: `obj` need not stay alive
        return r
    return Array(_core.from_numpy(arr, f"numpy#{id(arr):x}"))


def _fill_scalar(value, fn):
    """A fill value as a Python bool, int, float or complex (NumPy scalars and 0-d arrays too)."""
    if isinstance(value, Array):
        value = value.to_numpy()
    if isinstance(value, (np.generic, np.ndarray)):
        if np.ndim(value) != 0:
            raise ValueError(f"{fn}: fill_value must be a scalar, got an array of shape {np.shape(value)}")
        value = value.item()
    return value


@_registered
def full(shape, fill_value, dtype, *, device, chunks):
    """`fill_value` everywhere (never materialised); dtype from the value by default
    (bool, int64, float64 or complex128)."""
    _check_device(device, "full")
    return Array(_core.full(shape, _fill_scalar(fill_value, "full"),
                            None if dtype is None else _as_dtype(dtype, "full"), chunks))


@_registered
def zeros(shape, dtype, *, device, chunks):
    """float64 zeros unless `dtype` says otherwise (None too, as NumPy)."""
    return full(shape, 0, dtype=np.float64 if dtype is None else dtype, device=device, chunks=chunks)


@_registered
def ones(shape, dtype, *, device, chunks):
    """float64 ones unless `dtype` says otherwise (None too, as NumPy)."""
    return full(shape, 1, dtype=np.float64 if dtype is None else dtype, device=device, chunks=chunks)


@_registered
def arange(start, /, stop, step, dtype, *, device, shape, chunks):
    _check_device(device, "arange")
    if dtype is not None:
        dtype = _as_dtype(dtype, "arange")
    if stop is None:
        start, stop = 0, start
    ints = _builtins.all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (start, stop, step))
    if ints and _builtins.all(-2**63 <= int(v) < 2**63 for v in (start, stop, step)):
        # exactly: through doubles, values and lengths beyond 2**53 would be rounded
        return Array(_core.arange_int(int(start), int(stop), int(step), dtype, shape, chunks))
    if dtype is None:
        dtype = np.float64  # (ints beyond int64 too, as NumPy)
    return Array(_core.arange(float(start), float(stop), float(step), dtype, shape, chunks))


@_registered
def linspace(start, stop, /, num, endpoint, dtype, *, device, shape, chunks):
    _check_device(device, "linspace")
    if dtype is not None:
        dtype = _as_dtype(dtype, "linspace")
    if isinstance(start, complex) or isinstance(stop, complex) or (dtype is not None and dtype.kind == "c"):
        # complex: the real and imaginary parts spaced on their own, as NumPy's values are
        start, stop = complex(start), complex(stop)
        part = None if dtype is None else np.dtype(dtype.char.lower())
        re = linspace(start.real, stop.real, num=num, endpoint=endpoint, dtype=part, shape=shape, chunks=chunks)
        im = linspace(start.imag, stop.imag, num=num, endpoint=endpoint, dtype=part, shape=shape, chunks=chunks)
        return (re + im * 1j).astype(dtype or np.complex128)
    return Array(_core.linspace(float(start), float(stop), num, bool(endpoint), dtype,
                                shape, chunks))


# --- expression strings ---------------------------------------------------------------
def evaluate(expression, operands=None, /, **kwargs):
    """The lazy Array an expression string describes.

    Parsed and built in C++ (no Python eval): Python's operators and precedence, calls of
    the namespace's functions with keyword arguments, methods, ``.T``/``.mT``, indexing with
    integers, slices and literal lists. With no operands given, the names are looked up in
    the caller's variables.

    Parameters
    ----------
    expression : str
        For instance ``"matmul(sum(a, axis=1), b) + 1"``.
    operands : dict, optional
        Operand names mapped to Arrays, NumPy arrays, python-blosc2 arrays or numbers.
    **kwargs
        More operands, by name.

    Returns
    -------
    Array
        The lazy result.

    Raises
    ------
    TypeError
        The expression is not a string, or an operand is not an array or a number.
    ValueError
        The expression does not parse, or names an unknown function or keyword.

    Examples
    --------
    >>> a = bl.asarray(np.arange(6.0).reshape(2, 3))
    >>> bl.evaluate("sum(a, axis=1) * 2 + k", a=a, k=1).to_numpy()
    array([ 7., 25.])
    """
    if not isinstance(expression, str):
        raise TypeError(f"evaluate: the expression must be a string, got {type(expression).__name__}")
    _text(expression, "evaluate: the expression")
    ops = dict(operands or {})
    ops.update(kwargs)
    if operands is None and not kwargs:
        frame = sys._getframe(1)
        while frame.f_globals.get("__name__") == "b2lazy._serial":  # the recording wrapper
            frame = frame.f_back
        scope = {**frame.f_globals, **frame.f_locals}
        ops = {n: scope[n] for n in _core.expression_names(expression) if n in scope}
    arrays = {}
    for name, v in ops.items():
        if not isinstance(name, str):
            raise TypeError(f"evaluate: operand names must be strings, got {name!r}")
        _text(name, "evaluate: an operand name")
        if type(v) in (bool, int, float, complex):  # Python numbers stay weak (NEP 50); NumPy scalars do not
            arrays[name] = v
            continue
        try:
            arrays[name] = asarray(v)._a
        except Exception as e:  # noqa: BLE001
            raise TypeError(f"evaluate: operand '{name}' is not an array or a number: {e}") from None
    r = Array(_core.evaluate(expression, arrays, _context(None)))
    return _serial.record(r, "evaluate", (expression, ops))


__all__ += ["evaluate"]


# --- the Array API namespace (issue #15) ---------------------------------------------
from ._creation import *  # noqa: E402,F401,F403
from ._creation import __all__ as _creation_all  # noqa: E402
from ._dtypes import (can_cast, complex64, complex128, finfo, float16, float32, float64, iinfo,  # noqa: E402,F401
                      int8, int16, int32, int64, isdtype, result_type, uint8, uint16, uint32, uint64)
from ._info import __array_namespace_info__  # noqa: E402,F401
from ._manipulation import *  # noqa: E402,F401,F403
from ._manipulation import __all__ as _manipulation_all  # noqa: E402
from ._sorting import *  # noqa: E402,F401,F403
from ._sorting import __all__ as _sorting_all  # noqa: E402
from . import _store, _wrapping  # noqa: E402  (_wrapping, not _wrap: that name is a function here)
from . import random  # noqa: E402,F401  (b2lazy.random: default_rng over the random_* sources)
from ._store import *  # noqa: E402,F401,F403
from ._blocks import *  # noqa: E402,F401,F403
from ._blocks import __all__ as _blocks_all  # noqa: E402
from ._statistics import *  # noqa: E402,F401,F403
from ._statistics import __all__ as _statistics_all  # noqa: E402
from ._einsum_pad import *  # noqa: E402,F401,F403
from ._einsum_pad import __all__ as _einsum_pad_all  # noqa: E402
from ._rolling import *  # noqa: E402,F401,F403
from ._rolling import __all__ as _rolling_all  # noqa: E402
from ._groupby import *  # noqa: E402,F401,F403
from ._groupby import __all__ as _groupby_all  # noqa: E402

_groupby._install_when_xarray_imports()  # xarray's groupby reductions of b2lazy objects: segment_reduce
from ._gradient import *  # noqa: E402,F401,F403
from ._gradient import __all__ as _gradient_all  # noqa: E402
from ._wrapping import from_array  # noqa: E402,F401

_wrapping.install_blosc2_chunks(Array)  # after Array.chunks exists (it wraps that property)
__all__ += _store.__all__ + _blocks_all + ["from_array"]

e, pi, inf, nan = float(np.e), float(np.pi), float("inf"), float("nan")
newaxis = None
__all__ += (_creation_all + _manipulation_all + _sorting_all + _statistics_all + _einsum_pad_all + _rolling_all +
            _groupby_all + _gradient_all +
            ["can_cast", "finfo", "iinfo", "isdtype", "result_type", "e", "pi", "inf", "nan", "newaxis",
             "__array_namespace_info__", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
             "uint32", "uint64", "float32", "float64", "complex64", "complex128"])


# Every registry function is here under its name and its aliases (a missing one fails the
# import: the registry and the package cannot drift).
for _entry in _registry.ENTRIES.values():
    if _entry["name"] not in globals():
        raise ImportError(f"b2lazy: the registry's function {_entry['name']} has no Python function")
    for _alias in _entry["aliases"]:
        globals()[_alias] = globals()[_entry["name"]]
        __all__.append(_alias)
del _entry, _alias

# numpydoc docstrings from the registry (b2lazy/_docs.py), before the wrappers below copy them.
from . import _docs  # noqa: E402

_docs.document_registry(globals(), _registry.ENTRIES)

# Every namespace function remembers, on the Arrays it returns, the call that made them
# (their saved form, b2lazy/_serial.py); the methods that are namespace functions too.
import types as _types  # noqa: E402

_wrapped = {}  # one wrapper per function: aliases (arctan2 is atan2) stay the same object
for _name in __all__:
    _f = globals().get(_name)
    if isinstance(_f, _types.FunctionType):
        if id(_f) not in _wrapped:
            _wrapped[id(_f)] = _serial.recording(_f.__name__ if _f.__name__ in __all__ else _name, _f)
        globals()[_name] = _wrapped[id(_f)]
for _name in [n for e in _registry.ENTRIES.values() if e["method"] for n in [e["name"], *e["aliases"]]]:
    if _name not in Array.__dict__:  # Array's own (astype, reshape, flatten, nonzero) stay
        setattr(Array, _name, _method(globals()[_name]))
del _name, _f, _wrapped

# NumPy's ndarray methods xarray calls by name (round(decimals), conj, real, imag, argsort).
from ._ndarray_methods import attach as _attach_ndarray_methods  # noqa: E402

_attach_ndarray_methods(Array)


def __getattr__(name):
    # b2lazy.bool is the bool dtype; a module global named bool would shadow Python's
    # bool inside this module's own functions.
    if name == "bool":
        return np.dtype(np.bool_)
    raise AttributeError(f"module 'b2lazy' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"bool"})
