"""NumPy ufuncs on b2lazy arrays, behind Array.__array_ufunc__ (b2lazy/_numpy_protocol.py):
the b2lazy elementwise function for each ufunc (by name, or composed from b2lazy's), and
ufunc.__call__, reduce, accumulate and outer as lazy b2lazy calls. A handler raises _Eager
for arguments it cannot take lazily.
"""

from __future__ import annotations

import numpy as np

from ._numpy_protocol import _NV, _Eager, _asarray, _bl, _lazy, store_out

# NumPy ufunc name -> b2lazy elementwise function, where the names differ.
UFUNC_NAMES = {
    "absolute": "abs",
    "power": "pow",
    "true_divide": "divide",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arctan2": "atan2",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
    "invert": "bitwise_invert",
    "bitwise_not": "bitwise_invert",
    "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift",
    "mod": "remainder",
    "conj": "conjugate",
}


def _composite(f):
    """An elementwise ufunc b2lazy composes from its own functions (lazily)."""
    return lambda *xs: f(_bl(), *[_asarray(x) if not np.isscalar(x) else x for x in xs])


def _fmaxmin(pick):
    def f(bl, a, b):
        m = getattr(bl, pick)(a, b)
        return bl.where(bl.isnan(a), b, bl.where(bl.isnan(b), a, m))

    return f


def _modf(bl, x):
    """(fractional part, integral part), both with x's sign; inf gives (±0, inf)."""
    x = x.astype(np.result_type(x.dtype, np.float16))
    whole = bl.trunc(x)
    frac = bl.where(bl.isinf(x), 0.0, x - whole)
    return bl.copysign(frac, x).astype(x.dtype), whole


def _float(x, name):
    """x in the float type NumPy's float-only loops take it in (int8 -> float16, int64 ->
    float64); complex has no such loop."""
    x = _asarray(x)
    if x.dtype.kind == "c":
        raise _Eager(f"{name} has no complex loop")
    return x.astype(np.result_type(x.dtype, np.float16))


def _heaviside(bl, x, h0):
    dt = np.result_type(x.dtype, h0 if np.isscalar(h0) else _asarray(h0).dtype)
    return bl.where(bl.isnan(x), x, bl.where(x < 0, 0.0, bl.where(x > 0, 1.0, h0))).astype(dt)


def _deg(bl, x):
    return _float(x, "degrees") * (180.0 / np.pi)


def _rad(bl, x):
    return _float(x, "radians") * (np.pi / 180.0)


COMPOSITE_UFUNCS = {
    "fmax": _composite(_fmaxmin("maximum")),
    "fmin": _composite(_fmaxmin("minimum")),
    "fabs": _composite(lambda bl, x: bl.abs(_float(x, "fabs"))),
    "rad2deg": _composite(_deg),
    "degrees": _composite(_deg),
    "deg2rad": _composite(_rad),
    "radians": _composite(_rad),
    "rint": _composite(lambda bl, x: bl.round(x if x.dtype.kind in "fc" else _float(x, "rint"))),
    "float_power": _composite(
        lambda bl, a, b: bl.pow(
            bl.asarray(a).astype(np.complex128 if np.result_type(a, b).kind == "c" else np.float64), b
        )
    ),
    "logaddexp2": _composite(lambda bl, a, b: bl.logaddexp(a * np.log(2), b * np.log(2)) / np.log(2)),
    "heaviside": _composite(lambda bl, x, h0: _heaviside(bl, _float(x, "heaviside"), h0)),
    "matmul": lambda a, b: _bl().matmul(a, b),
    "vecdot": lambda a, b: _bl().vecdot(a, b, axis=-1),
    "matvec": lambda m, v: _bl().squeeze(_bl().matmul(m, _bl().expand_dims(v, axis=-1)), axis=-1),
    "vecmat": lambda v, m: _bl().squeeze(_bl().matmul(_bl().expand_dims(_bl().conj(v), axis=-2), m), axis=-2),
    "divmod": lambda a, b: (_bl().floor_divide(a, b), _bl().remainder(a, b)),
    "modf": _composite(lambda bl, x: _modf(bl, x)),
}

# ufunc.reduce / accumulate: the ufunc -> the b2lazy reduction or scan.
UFUNC_REDUCE = {
    "add": "sum",
    "multiply": "prod",
    "maximum": "max",
    "minimum": "min",
    "logical_and": "all",
    "logical_or": "any",
    "fmax": "nanmax",
    "fmin": "nanmin",
}
UFUNC_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}
_NO_REDUCE_DTYPE = {"max", "min", "all", "any", "nanmax", "nanmin"}


def ufunc_function(ufunc):
    """The lazy elementwise function for `ufunc`, or None."""
    name = ufunc.__name__
    f = COMPOSITE_UFUNCS.get(name)
    if f is not None:
        return f
    return _lazy(UFUNC_NAMES.get(name, name))


_UFUNC_DEFAULTS = {"signature": None, "casting": "same_kind", "order": "K", "axes": None, "axis": None, "subok": True}


def _ufunc_cast_inputs(ufunc, inputs, dtype):
    """The inputs for ufunc(..., dtype=dtype): NumPy fixes the output dtype and picks the
    loop — the inputs' own when it has that output (less(a, b, dtype=bool)), else the loop
    all in `dtype` (add(a, b, dtype=float32)), the inputs cast to it."""
    common = np.result_type(*[_asarray(x).dtype for x in inputs])
    own = common.char * ufunc.nin + "->" + dtype.char * ufunc.nout
    loop = dtype.char * ufunc.nin + "->" + dtype.char * ufunc.nout
    if own not in ufunc.types and loop in ufunc.types and not ufunc.signature:
        return [_asarray(x).astype(dtype) for x in inputs]
    return inputs


def _store_outs(label, r, out):
    """Results written into the given outputs of `out` (a tuple, one per result)."""
    outs = out if isinstance(out, tuple) else (out,)
    if all(o is None for o in outs):
        return r
    rs = r if isinstance(r, tuple) else (r,)
    stored = tuple(rv if o is None else store_out(label, rv, o) for rv, o in zip(rs, outs))
    return stored if isinstance(r, tuple) else stored[0]


def _ufunc_call(ufunc, inputs, kwargs):
    f = ufunc_function(ufunc)
    if f is None:
        raise _Eager("b2lazy has no lazy version")
    out = kwargs.pop("out", None)
    where = kwargs.pop("where", True)
    dtype = kwargs.pop("dtype", None)
    odd = sorted(
        k
        for k, v in kwargs.items()
        if k not in _UFUNC_DEFAULTS or (v != _UFUNC_DEFAULTS[k] and not (k == "order" and v in ("C", "A")))
    )
    if odd:
        raise _Eager(f"the ufunc arguments {', '.join(f'{k}={kwargs[k]!r}' for k in odd)} are not supported lazily")
    if dtype is not None:
        dtype = np.dtype(dtype)
        inputs = _ufunc_cast_inputs(ufunc, inputs, dtype)
    r = f(*inputs)
    if dtype is not None and not isinstance(r, tuple) and r.dtype != dtype and r.dtype != np.bool_:
        r = r.astype(dtype)
    if not (isinstance(where, (bool, np.bool_)) and where):
        first = out[0] if isinstance(out, tuple) else out
        if first is None:
            raise ValueError(
                f"numpy.{ufunc.__name__}: where= without out= leaves the unselected elements "
                f"undefined; give out= (a b2lazy Array or NumPy ndarray) to keep its values there"
            )
        if isinstance(r, tuple):
            raise _Eager("where= with a ufunc of several outputs is not supported lazily")
        r = _bl().where(where, r, _asarray(first))
    return _store_outs(ufunc.__name__, r, out)


def _ufunc_reduce(ufunc, inputs, kwargs):
    name = UFUNC_REDUCE.get(ufunc.__name__)
    if name is None or len(inputs) != 1:
        raise _Eager(f"{ufunc.__name__}.reduce has no lazy version")
    kw = dict(kwargs)
    out = kw.pop("out", None)
    axis = kw.pop("axis", 0)
    dtype = kw.pop("dtype", None)
    keepdims = kw.pop("keepdims", False)
    initial = kw.pop("initial", _NV)
    where = kw.pop("where", True)
    if kw or where is not True:
        raise _Eager(f"{ufunc.__name__}.reduce with {sorted(kw) or ['where']} is not supported lazily")
    f = _lazy(name)
    args = {"axis": axis, "keepdims": bool(keepdims)}
    if dtype is not None:
        if name in _NO_REDUCE_DTYPE:
            raise _Eager(f"{ufunc.__name__}.reduce with dtype= is not supported lazily")
        args["dtype"] = dtype
    r = f(inputs[0], **args)
    if initial is not _NV and initial is not None:
        r = ufunc_function(ufunc)(r, initial)
    return _store_outs(f"{ufunc.__name__}.reduce", r, out)


def _ufunc_accumulate(ufunc, inputs, kwargs):
    name = UFUNC_ACCUMULATE.get(ufunc.__name__)
    if name is None:
        raise _Eager(f"{ufunc.__name__}.accumulate has no lazy version")
    kw = dict(kwargs)
    out = kw.pop("out", None)
    axis = kw.pop("axis", 0)
    dtype = kw.pop("dtype", None)
    if kw:
        raise _Eager(f"{ufunc.__name__}.accumulate with {sorted(kw)} is not supported lazily")
    r = _lazy(name)(inputs[0], axis=axis, dtype=dtype)
    return _store_outs(f"{ufunc.__name__}.accumulate", r, out)


def _ufunc_outer(ufunc, inputs, kwargs):
    f = ufunc_function(ufunc)
    if f is None or ufunc.nin != 2 or ufunc.signature:
        raise _Eager(f"{ufunc.__name__}.outer has no lazy version")
    kw = dict(kwargs)
    out = kw.pop("out", None)
    if kw:
        raise _Eager(f"{ufunc.__name__}.outer with {sorted(kw)} is not supported lazily")
    a, b = _asarray(inputs[0]), _asarray(inputs[1])
    r = f(_bl().reshape(a, tuple(a.shape) + (1,) * b.ndim), b)
    return _store_outs(f"{ufunc.__name__}.outer", r, out)


# ufunc method -> its lazy handler (reduceat and at have none)
METHODS = {"__call__": _ufunc_call, "reduce": _ufunc_reduce, "accumulate": _ufunc_accumulate, "outer": _ufunc_outer}
