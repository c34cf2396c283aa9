"""A harness for running the Array API test suite (data-apis/array-api-tests) against
b2lazy before b2lazy is a namespace of its own (issue #15): b2lazy's functions plus the
pieces the suite needs to load (dtype objects, constants, finfo/iinfo, result_type,
asarray/empty*/eye through NumPy). Not part of the package. From the suite's folder:

    ARRAY_API_TESTS_SKIP_DTYPES=complex64,complex128 \\
    ARRAY_API_TESTS_MODULE="exec('import sys; sys.path.insert(0, \\"<repo>/tests/outside\\"); \\
        from array_api_shim import xp')" \\
    python -m pytest array_api_tests/ --max-examples=100 --hypothesis-seed=0 --disable-deadline \\
        --disable-extension linalg fft --continue-on-collection-errors -q

(it needs the suite's requirements: ndindex, pytest-json-report)."""
import types

import numpy as np

import b2lazy

xp = types.ModuleType("b2lazy_array_api_shim")
for _k in dir(b2lazy):
    if not _k.startswith("__"):
        setattr(xp, _k, getattr(b2lazy, _k))
for _d in ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]:
    setattr(xp, _d, np.dtype(_d))
xp.e, xp.inf, xp.nan, xp.pi, xp.newaxis = np.e, np.inf, np.nan, np.pi, None
xp.finfo, xp.iinfo, xp.isdtype = np.finfo, np.iinfo, np.isdtype
xp.result_type, xp.can_cast = np.result_type, np.can_cast
xp.__array_api_version__ = "2023.12"


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    if isinstance(obj, b2lazy.Array):
        return obj if dtype is None else b2lazy.astype(obj, dtype)
    return b2lazy.asarray(np.asarray(obj, dtype=dtype))


def _through_numpy(name):
    def f(*args, **kwargs):
        args = [a.to_numpy() if isinstance(a, b2lazy.Array) else a for a in args]
        kwargs.pop("device", None)
        return b2lazy.asarray(np.asarray(getattr(np, name)(*args, **kwargs)))
    f.__name__ = name
    return f


xp.asarray = asarray
for _name in ["empty", "empty_like", "zeros_like", "ones_like", "full_like", "eye"]:
    setattr(xp, _name, _through_numpy(_name))
b2lazy.Array.__array_namespace__ = lambda self, api_version=None: xp
b2lazy.Array.device = property(lambda self: "cpu")
b2lazy.Array.to_device = lambda self, device, /, stream=None: self
