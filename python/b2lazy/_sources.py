"""Where arrays come from: open (files, URLs, .b2z members, HDF5 datasets, saved
expressions), asarray (NumPy, python-blosc2, Zarr, h5py, ... and scalars) and the
constructors full, zeros, ones, arange and linspace."""

from __future__ import annotations

import builtins as _builtins
import os
import sys

import numpy as np

from . import _SUPPORTED_DTYPES, _core, _cparams_args, _serial, _wrapping
from ._array import Array
from ._dtypes import as_dtype as _as_dtype
from ._info import check_device as _check_device
from ._registry import registered as _registered
from ._serial import namespace as _ns


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
        paths or Arrays used instead (docs/user-guide/saving.md).
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
        raise TypeError(
            f"open(): storage_options must be a dict (fsspec's names), got {type(storage_options).__name__}"
        )
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
            raise ValueError(
                f"open(): mode='r+' updates b2nd files in place; '{urlpath}' is a "
                f"{x._a.kind} array{' inside a container' if '#' in urlpath else ''}"
            )
        x._writable = urlpath
    return x


def asarray(
    obj, /, dtype=None, *, device=None, copy=None, chunks=None, blocks=None, cparams=None, storage_options=None
):
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
    storage_options=storage_options) does.

    Parameters
    ----------
    obj : array_like, Array, scalar or str
        A NumPy array (or anything NumPy converts), a b2lazy Array, a python-blosc2
        NDArray or LazyExpr, a zarr or h5py array, any object with ``shape``, ``dtype`` and
        ``__getitem__``, a Python scalar, or a remote URL.
    dtype : dtype, optional
        Cast to this dtype (lazily).
    device : {"cpu", None}, optional
        The only device is ``"cpu"``.
    copy : bool, optional
        ``True``: copy a NumPy array now; ``False``: raise ``ValueError`` when NumPy would
        have to copy; ``None`` (default): copy only when needed.
    chunks, blocks : tuple of int, optional
        Compress a NumPy array into an in-memory b2nd array with these chunks and blocks.
    cparams : dict, optional
        Compression parameters of that in-memory array (``codec``, ``clevel``, ``filter``).
    storage_options : dict, optional
        How to reach a remote URL (fsspec's names); only for a URL.

    Returns
    -------
    Array
        A lazy array; no data is read or copied unless said above.

    Raises
    ------
    ValueError
        ``copy=False`` when a copy is needed, or ``storage_options`` without a URL.

    See Also
    --------
    open : open a stored array by path or URL.
    from_array : a region source over another library's array, with chosen chunks.

    Examples
    --------
    >>> import numpy as np, b2lazy as bl
    >>> x = np.arange(6.0).reshape(2, 3)
    >>> a = bl.asarray(x)              # no copy
    >>> (a + 1).to_numpy()
    array([[1., 2., 3.],
           [4., 5., 6.]])
    >>> bl.asarray(x, chunks=(1, 3)).chunks
    ((1, 1), (3,))
    >>> bl.asarray(x, dtype=bl.float32).dtype
    dtype('float32')
    """
    _check_device(device, "asarray")
    if isinstance(obj, str) and _serial.is_remote(obj):
        a = _ns().open(obj, storage_options=storage_options)
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
        return _ns().full((), obj, dtype=dtype)
    blosc2 = sys.modules.get("blosc2")  # (not imported: obj is none of its arrays; importing costs 0.1 s)
    if blosc2 is not None:
        if isinstance(obj, blosc2.NDArray):
            path = obj.schunk.urlpath
            ref = getattr(obj, "_blosc2_ref", None)  # a member of a DictStore (.b2z)
            if path and ref is not None and getattr(ref, "kind", None) == "dictstore_key":
                a = _ns().open(ref.urlpath, key=ref.key)
            elif path and not str(path).endswith(".b2z"):
                a = _ns().open(path)
            else:  # in memory, or embedded in a .b2z's embed.b2e (a copy python-blosc2 made)
                a = Array(_core.from_cframe(obj.to_cframe()))
            return a if dtype is None else a.astype(dtype)
    if chunks is None and blocks is None and not copy and _wrapping.wraps(obj):  # zarr, h5py, LazyExpr, ...
        a = _wrapping.wrap(obj)
        return a if dtype is None else a.astype(dtype)
    arr = np.array(obj, dtype=dtype, copy=copy)
    if arr.dtype.byteorder == ">" and arr.dtype.name in _SUPPORTED_DTYPES:  # held in native order
        if copy is False:
            raise ValueError(
                f"asarray: big-endian {arr.dtype.str} is held in native order, which needs a copy, but copy=False"
            )
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
    return Array(
        _core.full(shape, _fill_scalar(fill_value, "full"), None if dtype is None else _as_dtype(dtype, "full"), chunks)
    )


@_registered
def zeros(shape, dtype, *, device, chunks):
    """float64 zeros unless `dtype` says otherwise (None too, as NumPy)."""
    return _ns().full(shape, 0, dtype=np.float64 if dtype is None else dtype, device=device, chunks=chunks)


@_registered
def ones(shape, dtype, *, device, chunks):
    """float64 ones unless `dtype` says otherwise (None too, as NumPy)."""
    return _ns().full(shape, 1, dtype=np.float64 if dtype is None else dtype, device=device, chunks=chunks)


@_registered
def arange(start, /, stop, step, dtype, *, device, shape, chunks):
    _check_device(device, "arange")
    if dtype is not None:
        dtype = _as_dtype(dtype, "arange")
    if stop is None:
        start, stop = 0, start
    ints = _builtins.all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (start, stop, step))
    if ints and _builtins.all(-(2**63) <= int(v) < 2**63 for v in (start, stop, step)):
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
        re = _ns().linspace(start.real, stop.real, num=num, endpoint=endpoint, dtype=part, shape=shape, chunks=chunks)
        im = _ns().linspace(start.imag, stop.imag, num=num, endpoint=endpoint, dtype=part, shape=shape, chunks=chunks)
        return (re + im * 1j).astype(dtype or np.complex128)
    return Array(_core.linspace(float(start), float(stop), num, bool(endpoint), dtype, shape, chunks))
