"""b2lazy: fully lazy array expressions over Blosc2 b2nd arrays, evaluated one output
chunk at a time by a C++ engine. This package is a thin layer over that engine."""

from __future__ import annotations

import atexit
import os
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

__version__ = _face.package_version()
__array_api_version__ = "2024.12"
_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")

__all__ = [
    "Array",
    "Plan",
    "open",
    "asarray",
    "zeros",
    "ones",
    "full",
    "arange",
    "linspace",
    "where",
    "clip",
    "astype",
    "EagerEvaluationWarning",
]

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


# The package's parts by category (each imports what it needs from the lines above).
from ._array import (
    Array,
    _OIndex,
    _VIndex,
    _advanced_getitem,
    _assigned,
    _binary,
    _check_int64_indices,
    _index_axes,
    _is_array_index,
    _is_full_mask,
    _mask_select_counted,
    _numpy_key,
    _setitem_mask,
    _setitem_value,
    _unary,
)
from ._plan import Plan


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

from . import _array, _evaluate, _linalg, _plan, _reductions, _shape_functions, _sources, _udf
from ._shape_functions import *
from ._shape_functions import _axes_arg, _axis, _axis_or_none, _int_axes, _int_indices
from ._linalg import *
from ._reductions import *
from ._udf import lazyudf
from ._reductions import (
    _axis_int,
    _check_axis,
    _holistic,
    _method,
    _reduction,
    _reduction_names,
    astype,
    clip,
    where,
)
from ._sources import (
    _fill_scalar,
    _path_text,
    _text,
    arange,
    asarray,
    full,
    linspace,
    ones,
    open,
    zeros,
)
from ._evaluate import evaluate

__all__ += _shape_functions.__all__ + _linalg.__all__ + _reductions.__all__ + _udf.__all__ + ["evaluate"]

# What those modules define is b2lazy's own, as when it was defined here: pickling finds a
# function under its __module__ (b2lazy.reshape, not the unrecorded one of its module), and
# reprs and docs say b2lazy.Array.
for _part in (_array, _plan, _sources, _shape_functions, _linalg, _reductions, _udf, _evaluate):
    for _v in list(vars(_part).values()) + list(vars(Array).values()) + list(vars(Plan).values()):
        if getattr(_v, "__module__", None) == _part.__name__:
            _v.__module__ = __name__
del _part, _v


# --- the Array API namespace ---------------------------------------------
from ._creation import *
from ._creation import __all__ as _creation_all
from ._dtypes import DTYPE_NAMES as _DTYPE_NAMES
from ._dtypes import (
    can_cast,
    complex64,
    complex128,
    finfo,
    float16,
    float32,
    float64,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    isdtype,
    result_type,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._info import __array_namespace_info__
from ._manipulation import *
from ._manipulation import __all__ as _manipulation_all
from ._sorting import *
from ._sorting import __all__ as _sorting_all
from . import _store, _wrapping  # (_wrapping, not _wrap: that name is a function here)
from . import random  # (b2lazy.random: default_rng over the random_* sources)
from . import linalg  # (b2lazy.linalg: the Array API's linalg extension)
from ._store import *
from ._blocks import *
from ._blocks import __all__ as _blocks_all
from ._statistics import *
from ._statistics import __all__ as _statistics_all
from ._einsum_pad import *
from ._einsum_pad import __all__ as _einsum_pad_all
from ._rolling import *
from ._rolling import __all__ as _rolling_all
from ._groupby import *
from ._groupby import __all__ as _groupby_all
from ._linalg_ext import *
from ._linalg_ext import __all__ as _linalg_ext_all

_groupby._install_when_xarray_imports()  # xarray's groupby reductions of b2lazy objects: segment_reduce
from ._gradient import *
from ._gradient import __all__ as _gradient_all
from ._fft import *
from ._fft import __all__ as _fft_all
from . import fft  # (b2lazy.fft: the Array API's fft extension over the fft_* functions)
from ._wrapping import from_array

_wrapping.install_blosc2_chunks(Array)  # after Array.chunks exists (it wraps that property)
__all__ += _store.__all__ + _blocks_all + ["from_array"]

e, pi, inf, nan = float(np.e), float(np.pi), float("inf"), float("nan")
newaxis = None
__all__ += (
    _creation_all
    + _manipulation_all
    + _sorting_all
    + _statistics_all
    + _einsum_pad_all
    + _rolling_all
    + _groupby_all
    + _gradient_all
    + _fft_all
    + _linalg_ext_all
    + [
        "can_cast",
        "finfo",
        "iinfo",
        "isdtype",
        "result_type",
        "e",
        "pi",
        "inf",
        "nan",
        "newaxis",
        "__array_namespace_info__",
    ]
    + list(_DTYPE_NAMES)
)


# Every registry function is here under its name and its aliases: the ones the modules
# above do not define (they need nothing of Python's own) call their row through
# _core.call, so a function added to the registry needs no Python.
for _entry in _registry.ENTRIES.values():
    if _entry["name"] not in globals():
        globals()[_entry["name"]] = _registry.called(_entry["name"])
        __all__.append(_entry["name"])
    for _alias in _entry["aliases"]:
        globals()[_alias] = globals()[_entry["name"]]
        __all__.append(_alias)
del _entry, _alias

# numpydoc docstrings from the registry (b2lazy/_docs.py), before the wrappers below copy them.
from . import _docs

_docs.document_registry(globals(), _registry.ENTRIES)

# Every namespace function remembers, on the Arrays it returns, the call that made them
# (their saved form, b2lazy/_serial.py); the methods that are namespace functions too.
import types as _types

_wrapped = {}  # one wrapper per function: aliases (arctan2 is atan2) stay the same object
for _name in __all__:
    _f = globals().get(_name)
    if isinstance(_f, _types.FunctionType):
        if id(_f) not in _wrapped:
            _g = _serial.recording(_f.__name__ if _f.__name__ in __all__ else _name, _f)
            # b2lazy.<name> is the wrapper: pickled by reference there (as dask and
            # multiprocessing send functions), not at its module's unrecorded function.
            _g.__module__, _g.__qualname__ = __name__, (_f.__name__ if _f.__name__ in __all__ else _name)
            _wrapped[id(_f)] = _g
        globals()[_name] = _wrapped[id(_f)]
for _name in [n for e in _registry.ENTRIES.values() if e["method"] for n in [e["name"], *e["aliases"]]]:
    if _name not in Array.__dict__:  # Array's own (astype, reshape, flatten, nonzero) stay
        setattr(Array, _name, _method(globals()[_name]))
del _name, _f, _g, _wrapped

# NumPy's ndarray methods xarray calls by name (round(decimals), conj, real, imag, argsort).
from ._ndarray_methods import attach as _attach_ndarray_methods

_attach_ndarray_methods(Array)


def __getattr__(name):
    # b2lazy.bool is the bool dtype; a module global named bool would shadow Python's
    # bool inside this module's own functions.
    if name == "bool":
        return np.dtype(np.bool_)
    raise AttributeError(f"module 'b2lazy' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"bool"})
