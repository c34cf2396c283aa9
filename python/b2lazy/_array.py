"""The lazy array type: Array (its methods, properties, indexing and operators; its
plan() is a Plan, _plan.py). The namespace's functions the methods call (matmul,
reshape, where, ...) are taken from the package when called (b2lazy._serial.namespace):
they are defined after this module, and record their calls for saved expressions."""

from __future__ import annotations

import builtins as _builtins
import os

import numpy as np

from . import _API_VERSIONS, _context, _core, _cparams_args, _dtypes, _face, _numpy_protocol, _progress_callback
from . import _serial, _unwrap, _zarr_compressor, executors
from ._dtypes import as_dtype as _as_dtype
from ._info import CPU as _CPU, check_device as _check_device
from ._plan import Plan
from ._serial import namespace as _ns


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

    # --- saving and shipping --------------------------------------------
    def save(self, urlpath, inline_limit=None):
        """Store the lazy expression (not its values) in a small JSON file.

        b2lazy.open() reopens it as that expression. The file holds the namespace calls that
        built it, operands by absolute path, and in-memory operands inline up to `inline_limit`
        bytes (larger ones are refused). Reopening checks that every operand still has the shape
        and dtype it had. Format: docs/user-guide/saving.md.

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
    def compute(
        self,
        urlpath=None,
        chunks=None,
        blocks=None,
        cparams=None,
        nthreads=None,
        max_memory=None,
        contiguous=None,
        progress=None,
        shards=None,
        scheduler=None,
        storage_options=None,
    ):
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
        scheduler : str or distributed.Client, optional
            Where it runs (b2lazy.executors): "threads" (this process, the default),
            "processes" or "processes:N" (local worker processes, `nthreads` threads each),
            an executor's registered name, or for dask.distributed a Client, a scheduler
            address ("tcp://host:port") or "local:N" — the plan's stages and tasks run on
            that cluster (b2lazy.distributed.compute); `nthreads` does not apply there.
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
        if scheduler is not None and scheduler != "threads":  # another executor (b2lazy.executors)
            _, executor = executors.pick(scheduler)
            return executor.compute(
                self,
                urlpath,
                scheduler,
                chunks=chunks,
                blocks=blocks,
                cparams=cparams,
                nthreads=nthreads,
                max_memory=max_memory,
                contiguous=contiguous,
                progress=progress,
                shards=shards,
                storage_options=storage_options,
            )
        if urlpath is not None:
            urlpath = _ns()._path_text(os.fspath(urlpath), "compute: urlpath")
        cparams, compressor = _zarr_compressor(cparams)
        codec, clevel, filt = _cparams_args(cparams)
        bar, callback = _progress_callback(progress, "compute")
        try:
            r = _core.compute(
                self._a,
                urlpath,
                chunks,
                blocks,
                codec,
                clevel,
                filt,
                _context(nthreads),
                max_memory,
                contiguous,
                callback,
                shards,
                compressor,
                storage_options,
            )
        finally:
            if bar is not None:
                bar.close()
        out = Array(r, r.stats())
        if urlpath is not None and _serial.is_remote(urlpath):
            _serial.remember_storage(urlpath, storage_options)
        return out

    def plan(
        self,
        urlpath=None,
        chunks=None,
        blocks=None,
        cparams=None,
        nthreads=None,
        max_memory=None,
        contiguous=None,
        shards=None,
        storage_options=None,
    ):
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
            urlpath = _ns()._path_text(os.fspath(urlpath), "plan: urlpath")
        cparams, compressor = _zarr_compressor(cparams)
        codec, clevel, filt = _cparams_args(cparams)
        ctx = _context(nthreads)
        return Plan(
            _core.plan(
                self._a,
                urlpath,
                chunks,
                blocks,
                codec,
                clevel,
                filt,
                ctx,
                max_memory,
                contiguous,
                shards,
                compressor,
                storage_options,
            ),
            ctx,
        )

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
        return _ns()._store.persist(self, nthreads=nthreads, max_memory=max_memory)

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
        scheduler : str or distributed.Client, optional
            Where it runs, as compute()'s (b2lazy.executors).

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
        if scheduler is not None and scheduler != "threads":
            _, executor = executors.pick(scheduler)
            return executor.to_numpy(self, scheduler, nthreads=nthreads, max_memory=max_memory, progress=progress)
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
        """A python-blosc2 ``NDArray`` with the same values, chunks and blocks.

        Parameters
        ----------
        urlpath : str or path-like, optional
            Where the NDArray is stored. An array already stored there is opened as it is;
            otherwise the array is computed into that b2nd file first. Without it, the
            values are computed into an in-memory NDArray (through its frame).

        Returns
        -------
        blosc2.NDArray
            The values, evaluated now.

        See Also
        --------
        to_cframe : the same values as the bytes of a b2nd frame.
        asarray : the other way: a lazy Array over a python-blosc2 NDArray.

        Examples
        --------
        >>> import numpy as np, b2lazy as bl
        >>> b = (bl.arange(6) * 2).to_blosc2()
        >>> type(b).__name__, b[:]
        ('NDArray', array([ 0,  2,  4,  6,  8, 10]))
        >>> bl.asarray(b).sum().to_numpy()
        array(30)
        """
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
            mask = _ns().asarray(items[0])
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
            v = _ns().asarray(value, copy=True if isinstance(value, np.ndarray) and self._writable is None else None)
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
            raise ValueError(f"api_version {api_version!r} is not supported (supported: {', '.join(_API_VERSIONS)})")
        return _ns()

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
            raise BufferError(
                "__dlpack__: a lazy array is evaluated for export, which is a copy; copy=False cannot be honoured"
            )
        kwargs = {"dl_device": dl_device}
        if max_version is not None:
            kwargs["max_version"] = max_version
        return self.to_numpy().__dlpack__(**kwargs)

    def __dlpack_device__(self, /):
        return (1, 0)  # (kDLCPU, device 0)

    def _scalar(self, what):
        if self.ndim != 0:
            if self.size != 1:
                raise TypeError(
                    f"only 0-d arrays (or arrays of one element) can be converted to "
                    f"Python {what}, got shape {self.shape}"
                )
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
        return _ns().permute_dims(self, tuple(range(self.ndim))[::-1])

    @property
    def mT(self):
        """The array with its last two axes swapped (lazy).

        Examples
        --------
        >>> bl.asarray(np.zeros((4, 2, 3))).mT.shape
        (4, 3, 2)
        """
        return _ns().matrix_transpose(self)

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
        return _ns().reshape(self, shape, copy=copy)

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
        return _ns().reshape(self, -1)

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
        return _ns().nonzero(self)

    def __matmul__(self, other):
        if not isinstance(other, (Array, np.ndarray)):
            return NotImplemented
        return _ns().matmul(self, other)

    def __rmatmul__(self, other):
        if not isinstance(other, (Array, np.ndarray)):
            return NotImplemented
        return _ns().matmul(other, self)


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
        if isinstance(k, (int, np.integer)) and not isinstance(k, bool) and not -(2**63) <= int(k) < 2**63:
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
            raise TypeError(
                f"x[key] = value: cannot assign {value.dtype} values to a {dtype} array without "
                f"losing {loss}; cast the value explicitly (value.astype({dtype.name!r}))"
            )
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
        m = items[0] if isinstance(items[0], Array) else _ns().asarray(np.asarray(items[0]))
        if m.dtype == np.bool_:
            lead = tuple(x.shape[: m.ndim])
            if m.ndim > x.ndim or tuple(m.shape) != lead:
                raise IndexError(
                    f"x[mask] = value: the mask's shape {tuple(m.shape)} does not match the "
                    f"leading axes of x's shape {tuple(x.shape)}"
                )
            if m.ndim < x.ndim:
                m = _ns().broadcast_to(_ns().reshape(m, tuple(m.shape) + (1,) * (x.ndim - m.ndim)), x.shape)
            return m
    raise IndexError(
        "x[key] = value with integer index arrays is not supported; keys are integers, "
        "slices, ..., None or one boolean mask (b2lazy.where(mask, value, x) builds any "
        "masked update)"
    )


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
        rest = tuple(x.shape[k.ndim if isinstance(k, Array) else np.ndim(k) :])  # after the masked axes
        if v.ndim > len(rest) and _builtins.any(s != 1 for s in v.shape[: v.ndim - len(rest)]):
            raise ValueError(
                f"x[mask] = value: a value of shape {tuple(v.shape)} would be matched with the "
                f"selected elements one by one, which b2lazy does not do lazily; give a scalar or "
                f"a value of shape {tuple(rest)} (or use b2lazy.where(mask, values, x))"
            )
        if v.ndim > len(rest):
            v = _ns().reshape(v, v.shape[v.ndim - len(rest) :])
        r = _ns().where(mask, v, x)
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
    return _serial.record(r, _serial._MASKSELECT, (x, mask, tuple(strip), counts), {_serial.STAMPS: stamps or {}})


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


for _dunder, _name in [
    ("add", "add"),
    ("sub", "subtract"),
    ("mul", "multiply"),
    ("truediv", "divide"),
    ("floordiv", "floor_divide"),
    ("mod", "remainder"),
    ("pow", "pow"),
    ("and", "bitwise_and"),
    ("or", "bitwise_or"),
    ("xor", "bitwise_xor"),
    ("lshift", "bitwise_left_shift"),
    ("rshift", "bitwise_right_shift"),
]:
    setattr(Array, f"__{_dunder}__", _binary(_name))
    setattr(Array, f"__r{_dunder}__", _binary(_name, reflected=True))
for _dunder, _name in [
    ("lt", "less"),
    ("le", "less_equal"),
    ("gt", "greater"),
    ("ge", "greater_equal"),
    ("eq", "equal"),
    ("ne", "not_equal"),
]:
    setattr(Array, f"__{_dunder}__", _binary(_name))
Array.__hash__ = None
Array.__neg__ = _unary("negative")
Array.__pos__ = _unary("positive")
Array.__abs__ = _unary("abs")
Array.__invert__ = _unary("bitwise_invert")
