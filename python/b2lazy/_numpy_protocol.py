"""NumPy's protocols on b2lazy arrays: ``__array_ufunc__`` and ``__array_function__``.

Every NumPy function or ufunc method that b2lazy has stays lazy and returns a b2lazy
Array. Tables map a NumPy name to the b2lazy function (looked up by name at call
time, so functions other modules add become lazy once they exist) and an adapter from
NumPy's signature to b2lazy's. What b2lazy cannot do lazily evaluates the b2lazy operands
into NumPy and calls NumPy, with a one-time EagerEvaluationWarning per function: never a
silent full load. ``out=`` receives the result (see store_out). The tables: NumPy functions
in b2lazy/_numpy_functions.py (shape functions in _numpy_shapes.py, numpy.linalg in
_numpy_linalg.py), ufuncs in b2lazy/_numpy_ufuncs.py.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings

import numpy as np

_NV = np._NoValue


class EagerEvaluationWarning(UserWarning):
    """A NumPy function b2lazy cannot run lazily loaded its b2lazy operands into memory.

    Issued once per function (the first time it falls back), naming it and saying why;
    filter it as any warning (``warnings.simplefilter("error", EagerEvaluationWarning)``
    makes every fallback an error).

    Examples
    --------
    >>> import warnings, numpy as np, b2lazy as bl
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     r = np.kron(bl.asarray(np.ones(2)), np.ones(2))
    >>> r
    array([1., 1., 1., 1.])
    >>> [w.category.__name__ for w in caught]
    ['EagerEvaluationWarning']
    """


class _Eager(Exception):
    """Raised by an adapter: these arguments cannot be taken lazily (the message says why)."""


_warned: set[str] = set()
_warned_lock = threading.Lock()


def _bl():
    import b2lazy

    return b2lazy


def _lazy(name):
    """The b2lazy function `name`, or None while it does not exist (another part adds it)."""
    f = getattr(_bl(), name, None)
    return f if callable(f) else None


def _asarray(x):
    return _bl().asarray(x)


def _is_b2lazy(x):
    return isinstance(x, _bl().Array)


def _to_numpy(obj):
    """`obj` with every b2lazy Array inside (lists, tuples, dicts too) evaluated to NumPy."""
    if _is_b2lazy(obj):
        return obj.to_numpy()
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(_to_numpy(v) for v in obj)
    if isinstance(obj, dict):
        return {k: _to_numpy(v) for k, v in obj.items()}
    return obj


# Argument helpers shared by the tables (_numpy_functions, _numpy_shapes, _numpy_linalg).
def _unset(v):
    return v is _NV or v is None


def _no(fname, **given):
    """Refuse (lazily) arguments other than their defaults: these go eager."""
    for k, (v, default) in given.items():
        if (
            v is _NV
            or v is default
            or (isinstance(default, (bool, int, float, str)) and isinstance(v, type(default)) and v == default)
        ):
            continue
        raise _Eager(f"{k}={v!r} is not supported lazily")


def _keep(keepdims):
    return False if keepdims is _NV else bool(keepdims)


def warn_eager(name, reason, stacklevel=5):
    """The one-time warning (per function) that `name` loaded its b2lazy operands; it points
    at the caller of the NumPy function (`stacklevel` frames up)."""
    with _warned_lock:
        if name in _warned:
            return
        _warned.add(name)
    warnings.warn(
        f"numpy.{name} on b2lazy arrays: {reason}; the b2lazy operands were loaded into memory "
        f"(evaluated to NumPy) and NumPy computed it eagerly",
        EagerEvaluationWarning,
        stacklevel=stacklevel,
    )


# In-place NumPy functions: on a copy of a b2lazy target their update would be lost.
_IN_PLACE = {"place", "put", "putmask", "fill_diagonal", "put_along_axis", "copyto"}


def _qualified(func):
    """`func`'s name under numpy: "sum", "linalg.norm"."""
    module = getattr(func, "__module__", None) or "numpy"
    sub = module[len("numpy.") :] if module.startswith("numpy.") and not module.startswith("numpy._") else ""
    return f"{sub}.{func.__name__}" if sub else func.__name__


def eager(func, args, kwargs, reason):
    """NumPy's `func` on the operands evaluated to NumPy, after the one-time warning."""
    name = _qualified(func)
    if name in _IN_PLACE and args and _is_b2lazy(args[0]):
        raise TypeError(
            f"numpy.{name}: cannot update a b2lazy Array in place through NumPy; "
            f"use x[key] = value (or b2lazy.where) instead"
        )
    warn_eager(name, reason)
    return func(*_to_numpy(args), **_to_numpy(kwargs))


# --- out= ------------------------------------------------------------------------------
def store_out(fname, result, out):
    """`result` written into `out` and `out` returned, as NumPy does. `out` is a b2lazy
    Array (one opened with mode="r+" writes through to its file; a lazy one becomes the
    result), a NumPy ndarray (filled by evaluating into it) or a path of a b2nd/Zarr
    target (evaluated there; the opened result is returned)."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise TypeError(f"numpy.{fname}: out must hold one array, got {len(out)}")
        out = out[0]
    bl = _bl()
    if isinstance(out, (str, os.PathLike)):
        return bl.asarray(result).compute(urlpath=out)
    if not isinstance(out, (bl.Array, np.ndarray)):
        raise TypeError(
            f"numpy.{fname}: out must be a b2lazy Array, a NumPy ndarray or a b2nd/Zarr path, got {type(out).__name__}"
        )
    r = bl.asarray(result)
    if tuple(out.shape) != tuple(r.shape):
        raise ValueError(f"numpy.{fname}: out has shape {tuple(out.shape)}, the result has shape {tuple(r.shape)}")
    if isinstance(out, bl.Array):
        out[...] = r
    else:
        out[...] = r.to_numpy()
    return out


_by_function = {}  # NumPy function object -> entry; built on first use


def _entry(func):
    global _by_function
    if not _by_function:  # built whole, then published: threads (Dask's) never see half of it
        table = {}
        from ._numpy_functions import FUNCTIONS
        from ._numpy_linalg import LINALG

        for module, entries in ((np, FUNCTIONS), (np.linalg, LINALG)):
            for n, e in entries.items():
                f = getattr(module, n, None)
                if f is not None:
                    table.setdefault(f, e)
        _by_function = table
    return _by_function.get(func)


def _known_type(t):
    """Operand types b2lazy wraps as they are: its own, python-blosc2's and plain NumPy
    arrays (memmaps too) — not masked arrays or np.matrix, whose meaning a plain array
    would lose (their own protocol, or NumPy's error, handles them)."""
    if issubclass(t, _bl().Array) or t.__module__.startswith("blosc2"):
        return True
    return issubclass(t, (np.ndarray, np.generic)) and not issubclass(t, (np.ma.MaskedArray, np.matrix))


def _known_types(types):
    return all(_known_type(t) for t in types)


_NO_OUT = object()
_signatures = {}


def _signature(func):
    """NumPy's signature of `func` (cached: inspect is slow), None if it has none."""
    sig = _signatures.get(func, _NO_OUT)
    if sig is _NO_OUT:
        import inspect

        try:
            sig = inspect.signature(func)
        except (TypeError, ValueError):
            sig = None
        _signatures[func] = sig
    return sig


_dask_registered = False


def register_with_dask():
    """Dask's percentile dispatch (da.percentile) has no default for an unknown block type:
    b2lazy blocks take the NumPy one, whose NumPy calls come back here lazily. Done once,
    on the first protocol call after dask.array is imported (b2lazy does not import Dask)."""
    global _dask_registered
    _dask_registered = True
    from dask.array.backends import percentile
    from dask.array.dispatch import percentile_lookup

    percentile_lookup.register(_bl().Array, percentile)


def array_function(func, types, args, kwargs):
    """Array.__array_function__: the lazy b2lazy function when there is one, else NumPy's
    on the evaluated operands with a one-time warning."""
    if not _dask_registered and "dask.array" in sys.modules:
        register_with_dask()
    if not _known_types(types):
        return NotImplemented
    entry = _entry(func)
    name = _qualified(func)
    if entry is None:
        return eager(func, args, kwargs, "b2lazy has no lazy version")
    target, adapt = entry
    fn = _lazy(target)
    if fn is None:
        return eager(func, args, kwargs, f"b2lazy.{target} is not available")
    sig = _signature(func)
    try:
        bound = sig.bind(*args, **kwargs).arguments if sig is not None else None
    except TypeError as e:
        raise TypeError(f"numpy.{name}(): {e}") from None
    if bound is None:
        pos, kw = list(args), dict(kwargs)
    else:
        pos, kw = [], {}
        params = sig.parameters
        for k, v in bound.items():
            p = params[k]
            if p.kind == p.VAR_POSITIONAL:
                pos.extend(v)
            elif p.kind == p.VAR_KEYWORD:
                kw.update(v)
            elif p.kind == p.POSITIONAL_ONLY:
                pos.append(v)
            else:
                kw[k] = v
    out = kw.pop("out", _NO_OUT)
    try:
        r = adapt(fn, *pos, **kw)
    except _Eager as e:
        return eager(func, args, kwargs, str(e))
    if out is not _NO_OUT and out is not None:
        return store_out(name, r, out)
    return r


def array_ufunc(ufunc, method, inputs, kwargs):
    """Array.__array_ufunc__: lazy for every ufunc and method b2lazy has; else NumPy on the
    evaluated operands with a one-time warning; ufunc.at, which updates its operand in
    place, is refused for a b2lazy operand."""
    if not _dask_registered and "dask.array" in sys.modules:
        register_with_dask()
    outs = kwargs.get("out") or ()
    for x in list(inputs) + list(outs):
        if (
            x is not None
            and not isinstance(x, (bool, int, float, complex, list, tuple, str, os.PathLike))
            and not _known_type(type(x))
        ):
            return NotImplemented
    label = f"{ufunc.__name__}.{method}" if method != "__call__" else ufunc.__name__
    if method == "at" and inputs and _is_b2lazy(inputs[0]):
        raise TypeError(
            f"numpy.{ufunc.__name__}.at: cannot update a b2lazy Array in place; "
            f"use x[key] = value (or b2lazy.where) instead"
        )
    from ._numpy_ufuncs import METHODS

    handler = METHODS.get(method)
    try:
        if handler is None:
            raise _Eager(f"ufunc method {method!r} has no lazy version")
        return handler(ufunc, list(inputs), dict(kwargs))
    except _Eager as e:
        warn_eager(label, str(e), stacklevel=4)
        return getattr(ufunc, method)(*_to_numpy(tuple(inputs)), **_to_numpy(kwargs))
