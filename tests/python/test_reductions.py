"""Reductions (sum, prod, min, max, mean, var, std, any, all, count_nonzero, argmin, argmax)
against NumPy 2: random shapes / chunkings / dtypes / axes / sources (property tests),
reductions nested with elementwise expressions in both directions, reductions of
reductions, the chunk-read work counters and the error cases.

Tolerances (see the engine's accumulation strategy):
* integer / bool results, min / max / argmin / argmax / any / all / count_nonzero: exact
  (integer sums and products wrap around exactly like NumPy's, modulo 2**bits);
* float sums and means: float64 accumulators, so the reference is NumPy in float64 (then cast
  to the result dtype), rtol 1e-9 (float64) / 1e-5 (float32) plus an atol scaled by the sum of
  magnitudes (cancellation);
* var / std: rtol 1e-7 (float64) / 1e-5 (float32) plus an atol scaled by max(x**2).

Shared strategies and checks live in array_cases.py (no conftest fixtures).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy
from array_cases import (
    DTYPES,
    FLOAT_DTYPES,
    assert_close,
    assert_exact,
    basic_index,
    evaluate,
    examples,
    make_source,
    shapes,
)

REDUCTIONS = ["sum", "prod", "min", "max", "mean", "var", "std", "any", "all", "count_nonzero", "argmin", "argmax"]
HAS_DTYPE = {"sum", "prod", "mean", "var", "std"}
ORDERING = {"min", "max", "argmin", "argmax"}


# ----------------------------------------------------------------------------------------
# strategies and helpers
# ----------------------------------------------------------------------------------------
def random_values(rng, dtype, shape, *, style="any", nan=False, inf=False):
    """NumPy values of `dtype`: style 'any' (wide range), 'small' (many ties / zeros) or 'prod'
    (products stay representable)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        p = rng.choice([0.02, 0.5, 0.98])
        return np.array(rng.random(shape) < p)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if style == "prod":
            lo, hi = (-1, 2) if dtype.kind == "i" else (0, 2)
            v = rng.integers(lo, hi + 1, size=shape)
            v = np.where(rng.random(shape) < 0.85, np.where(v == 0, 1, v), v)  # few zeros
            return np.array(v, dtype=dtype)
        if style == "small" or rng.random() < 0.3:
            lo = max(info.min, -4)
            return np.array(rng.integers(lo, 5, size=shape), dtype=dtype)
        return np.array(rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True))
    if style == "prod":
        v = rng.uniform(0.8, 1.25, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    elif style == "small" or rng.random() < 0.25:
        v = rng.integers(-3, 4, size=shape).astype(np.float64) * 0.5
    else:
        v = rng.standard_normal(shape) * rng.choice([1.0, 1e3, 1e-3]) + rng.choice([0.0, 10.0])
    v = np.array(v, dtype=dtype)
    if v.size:
        if nan:
            k = rng.integers(1, 4)
            v.flat[rng.integers(0, v.size, size=k)] = np.nan
        if inf:
            v.flat[rng.integers(0, v.size)] = rng.choice([np.inf, -np.inf])
    return v


@st.composite
def axes(draw, nd, allow_tuple=True):
    if nd == 0:
        return draw(st.sampled_from([None, ()] if allow_tuple else [None]))
    choice = draw(st.integers(0, 4 if allow_tuple else 2))
    if choice == 0:
        return None
    if choice <= 2:
        ax = draw(st.integers(0, nd - 1))
        return ax - nd if draw(st.booleans()) else ax
    ax = draw(st.lists(st.integers(0, nd - 1), unique=True, min_size=0 if choice == 3 else 1, max_size=nd))
    return tuple(a - nd if draw(st.booleans()) else a for a in ax)


def norm_axes(axis, nd):
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(a % nd for a in axis)


def reduced_count(shape, axis):
    return math.prod(shape[a] for a in norm_axes(axis, len(shape)))


def np_reduce(name, x, axis=None, keepdims=False, dtype=None, corr=0.0):
    """NumPy's own result (dtype oracle and exact value oracle)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if name in ("argmin", "argmax"):
            return np.asarray(getattr(np, name)(x, axis=axis, keepdims=keepdims))
        if name == "count_nonzero":
            return np.asarray(np.count_nonzero(x, axis=axis, keepdims=keepdims), dtype=np.int64)
        kw = {}
        if dtype is not None:
            kw["dtype"] = dtype
        if name in ("var", "std"):
            kw["ddof"] = corr
            r = np.asarray(getattr(np, name)(x, axis=axis, keepdims=keepdims, **kw))
            if reduced_count(x.shape, axis) - corr <= 0:  # the Array API's NaN (NumPy: inf or nan)
                r = np.full_like(r, np.nan)
            return r
        return np.asarray(getattr(np, name)(x, axis=axis, keepdims=keepdims, **kw))


def b2_reduce(name, a, axis=None, keepdims=False, dtype=None, corr=None, method=False):
    kw = {"keepdims": keepdims}
    if axis is not None or method:
        kw["axis"] = axis
    if dtype is not None:
        kw["dtype"] = dtype
    if corr is not None:
        kw["correction"] = corr
    if method and name != "count_nonzero":
        return getattr(a, name)(**kw)
    return getattr(b2lazy, name)(a, **kw)


def check_reduction(name, got, x, axis, keepdims, dtype, corr, what=""):
    """Check the evaluated b2lazy result `got` of reduction `name` of the NumPy values `x`."""
    native = np_reduce(name, x, axis, keepdims, dtype, corr)
    assert got.dtype == native.dtype, f"{what}: dtype {got.dtype} != NumPy {native.dtype}"
    assert got.shape == native.shape, f"{what}: shape {got.shape} != NumPy {native.shape}"
    rdt = native.dtype
    if rdt.kind != "f" or name in ("min", "max"):
        assert_exact(got, native, what)
        return
    x64 = x.astype(np.float64)
    finite = np.nan_to_num(np.abs(x64), nan=0.0, posinf=0.0, neginf=0.0)
    f32 = rdt == np.float32
    # a float64 reference, computed the way the engine accumulates, then cast
    if name in ("sum", "mean"):
        ref = np_reduce(name, x64, axis, keepdims, None).astype(rdt)
        scale = np_reduce(name, finite, axis, keepdims, None)
        assert_close(got, ref, 1e-5 if f32 else 1e-9, (1e-6 if f32 else 1e-12) * scale, what)
    elif name == "prod":
        ref = np_reduce(name, x64, axis, keepdims, None).astype(rdt)
        scale = np_reduce(name, finite, axis, keepdims, None)
        assert_close(got, ref, 1e-5 if f32 else 1e-9, (1e-6 if f32 else 1e-12) * scale, what)
    else:  # var, std
        ref = np_reduce(name, x64, axis, keepdims, None, corr).astype(rdt)
        msq = float(np.max(finite) ** 2) if finite.size else 0.0
        atol = (1e-6 if f32 else 1e-9) * msq
        if name == "std":
            atol = math.sqrt(atol)
        assert_close(got, ref, 1e-5 if f32 else 1e-7, atol, what)


def numpy_raises(name, x, axis, corr=0.0):
    """Would this reduction raise? (NumPy's empty rule for min/max/arg*)"""
    return name in ORDERING and reduced_count(x.shape, axis) == 0


@st.composite
def reduction_case(draw, names=REDUCTIONS, dtypes=DTYPES):
    name = draw(st.sampled_from(names), label="reduction")
    dtype = draw(st.sampled_from(dtypes), label="dtype")
    shape = draw(shapes(), label="shape")
    seed = draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    style = "prod" if name == "prod" else draw(st.sampled_from(["any", "small"]))
    nan = dtype.kind == "f" and draw(st.integers(0, 3)) == 0
    inf = dtype.kind == "f" and name in ORDERING | {"any", "all", "count_nonzero"} and draw(st.integers(0, 4)) == 0
    x = random_values(rng, dtype, shape, style=style, nan=nan, inf=inf)
    axis = draw(axes(x.ndim, allow_tuple=name not in ("argmin", "argmax")), label="axis")
    keepdims = draw(st.booleans(), label="keepdims")
    rdtype = None
    if name in HAS_DTYPE and draw(st.integers(0, 2)) == 0:
        if name in ("sum", "prod") and dtype.kind != "f":
            rdtype = draw(st.sampled_from(["int64", "uint64", "int32", "float64", "float32"]))
        else:
            rdtype = draw(st.sampled_from(["float64", "float32"]))
        rdtype = np.dtype(rdtype)
    corr = None
    if name in ("var", "std") and draw(st.booleans()):
        corr = draw(st.sampled_from([0, 1, 1.5, 2, 0.5]))
    return name, x, axis, keepdims, rdtype, corr


# ----------------------------------------------------------------------------------------
# property tests: plain reductions of sources
# ----------------------------------------------------------------------------------------
@examples(500)
@given(data=st.data())
def test_random_reductions(data, tmp_path_factory):
    name, x, axis, keepdims, rdtype, corr = data.draw(reduction_case(), label="case")
    a = make_source(data.draw, x, tmp_path_factory)
    method = data.draw(st.booleans(), label="as method")
    what = f"{name}(x{x.shape}:{x.dtype}, axis={axis}, keepdims={keepdims}, dtype={rdtype}, corr={corr})"
    if numpy_raises(name, x, axis, corr or 0.0):
        with pytest.raises(ValueError):
            r = b2_reduce(name, a, axis, keepdims, rdtype, corr, method)
            evaluate(data.draw, r)
        return
    r = b2_reduce(name, a, axis, keepdims, rdtype, corr, method)
    got = evaluate(data.draw, r)
    # lazy metadata agrees with the evaluated result
    assert tuple(r.shape) == got.shape and r.dtype == got.dtype, what
    check_reduction(name, got, x, axis, keepdims, rdtype, corr or 0.0, what)


@examples(120)
@given(data=st.data())
def test_random_reductions_float_nan(data, tmp_path_factory):
    """Float inputs with NaNs in them: propagation, first NaN wins in argmin/argmax."""
    name = data.draw(st.sampled_from(REDUCTIONS), label="reduction")
    dtype = data.draw(st.sampled_from(FLOAT_DTYPES), label="dtype")
    shape = data.draw(shapes(allow_empty=False), label="shape")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x = random_values(rng, dtype, shape, style="small", nan=True)
    axis = data.draw(axes(x.ndim, allow_tuple=name not in ("argmin", "argmax")), label="axis")
    a = make_source(data.draw, x, tmp_path_factory)
    r = b2_reduce(name, a, axis, False)
    check_reduction(name, evaluate(data.draw, r), x, axis, False, None, 0.0, f"{name} axis={axis}")


# ----------------------------------------------------------------------------------------
# nested with elementwise expressions
# ----------------------------------------------------------------------------------------
EXPRS = {
    "a*b+1": (lambda a, b: a * b + 1, lambda a, b: a * b + a.dtype.type(1)),
    "a-b": (lambda a, b: a - b, lambda a, b: a - b),
    "abs(a-b)": (lambda a, b: abs(a - b), lambda a, b: np.abs(a - b)),
    "where(a>b,a,b)": (lambda a, b: b2lazy.where(a > b, a, b), lambda a, b: np.where(a > b, a, b)),
    "a*a": (lambda a, b: a * a, lambda a, b: a * a),
    "maximum(a,b)-a": (lambda a, b: b2lazy.maximum(a, b) - a, lambda a, b: np.maximum(a, b) - a),
}
EXPR_DTYPES = [np.dtype(t) for t in ("int16", "int32", "int64", "uint32", "float32", "float64")]


@st.composite
def broadcast_partner(draw, shape):
    """A shape that broadcasts against `shape` to `shape` (trailing dims, some set to 1)."""
    k = draw(st.integers(0, len(shape)))
    tail = shape[len(shape) - k :]
    return tuple(1 if draw(st.integers(0, 3)) == 0 else n for n in tail)


@examples(200)
@given(data=st.data())
def test_reduction_of_expression(data, tmp_path_factory):
    dtype = data.draw(st.sampled_from(EXPR_DTYPES), label="dtype")
    shape = data.draw(shapes(), label="shape")
    bshape = data.draw(broadcast_partner(shape), label="b shape")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    name = data.draw(
        st.sampled_from(["sum", "mean", "min", "max", "var", "std", "any", "count_nonzero", "argmax", "prod"]),
        label="reduction",
    )
    style = "prod" if name == "prod" else "any"
    x = random_values(rng, dtype, shape, style=style, nan=dtype.kind == "f" and rng.random() < 0.2)
    y = random_values(rng, dtype, bshape, style=style)
    ename = data.draw(st.sampled_from(sorted(EXPRS)), label="expression")
    if name == "prod":
        ename = data.draw(st.sampled_from(["a-b", "where(a>b,a,b)", "maximum(a,b)-a"]))
    lazy_f, np_f = EXPRS[ename]
    with np.errstate(all="ignore"):
        ref_vals = np_f(x, y)
    axis = data.draw(axes(len(shape), allow_tuple=name != "argmax"), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    a = make_source(data.draw, x, tmp_path_factory, label="a")
    b = make_source(data.draw, y, tmp_path_factory, label="b")
    what = f"{name}({ename}, axis={axis}) a{shape} b{bshape} {dtype}"
    if numpy_raises(name, ref_vals, axis):
        with pytest.raises(ValueError):
            evaluate(data.draw, b2_reduce(name, lazy_f(a, b), axis, keepdims))
        return
    got = evaluate(data.draw, b2_reduce(name, lazy_f(a, b), axis, keepdims))
    check_reduction(name, got, ref_vals, axis, keepdims, None, 0.0, what)


def _normalize_case(a, x, k, keep):
    m = b2lazy.mean(a, axis=k, keepdims=keep)
    s = b2lazy.std(a, axis=k, keepdims=keep)
    return (a - m) / s, (x - x.mean(axis=k, keepdims=True)) / x.std(axis=k, keepdims=True)


@examples(160)
@given(data=st.data())
def test_expression_of_reductions(data, tmp_path_factory):
    """Reductions used as operands of elementwise expressions (broadcast back)."""
    shape = data.draw(shapes(allow_empty=False, max_size=3000), label="shape")
    nd = len(shape)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    dtype = data.draw(st.sampled_from([np.dtype("float64"), np.dtype("float32")]), label="dtype")
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    y = (rng.standard_normal(shape) * 3).astype(dtype)
    a = make_source(data.draw, x, tmp_path_factory, label="a")
    b = make_source(data.draw, y, tmp_path_factory, label="b")
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    case = data.draw(
        st.sampled_from(
            ["normalize", "sum(a)+a", "max(abs(a-b))", "a-min(a,k)", "sum0*2+max0", "a/sum(abs(a))", "var(a)+mean(b,k)"]
        ),
        label="case",
    )
    k = data.draw(st.integers(-nd, nd - 1), label="k")
    exact = False
    if case == "normalize":
        if shape[0] < 2 and data.draw(st.booleans()):
            return
        if data.draw(st.booleans()):  # the issue's form: axis=0 without keepdims
            kk = 0
            lazy, ref = _normalize_case(a, x64, kk, False)
        else:
            kk = k
            lazy, ref = _normalize_case(a, x64, kk, True)
        with np.errstate(all="ignore"):
            ref = np.nan_to_num(ref, nan=np.nan)
            # Rounding x and its mean in `dtype` is amplified by (|x| + |mean|) / std: two close
            # float32 values normalise to +-1 within ~eps * |x| / |x1 - x2|, not within 1e-4.
            cond = (np.abs(x64) + np.abs(x64.mean(axis=kk, keepdims=True))) / x64.std(axis=kk, keepdims=True)
        # zero-length reductions -> std 0 -> nan/inf: compare where finite only
        got = evaluate(data.draw, lazy)
        assert got.dtype == dtype
        ok = np.isfinite(ref)
        atol = (1e-4 if dtype == np.float32 else 1e-9) + 8 * np.finfo(dtype).eps * cond
        assert_close(got[ok], ref[ok].astype(dtype), 1e-4 if dtype == np.float32 else 1e-8, atol[ok], case)
        return
    if case == "sum(a)+a":
        lazy, ref = b2lazy.sum(a) + a, x64.sum() + x64
        scale = np.abs(x64).sum() + np.abs(x64)
    elif case == "max(abs(a-b))":
        lazy, ref, exact = b2lazy.max(abs(a - b)), np.max(np.abs(x - y)), True
    elif case == "a-min(a,k)":
        lazy, ref, exact = a - b2lazy.min(a, axis=k, keepdims=True), x - x.min(axis=k, keepdims=True), True
    elif case == "sum0*2+max0":
        lazy = b2lazy.sum(a, axis=0) * 2 + b2lazy.max(b, axis=0)
        ref = x64.sum(axis=0) * 2 + y64.max(axis=0)
        scale = 2 * np.abs(x64).sum(axis=0) + np.abs(y64).max(axis=0)
    elif case == "a/sum(abs(a))":
        lazy, ref = a / b2lazy.sum(abs(a)), x64 / np.abs(x64).sum()
        scale = np.abs(ref)
    else:
        lazy = b2lazy.var(a) + b2lazy.mean(b, axis=k, keepdims=data.draw(st.booleans()))
        ref = x64.var() + y64.mean(axis=k)
        if lazy.ndim == nd:
            ref = x64.var() + y64.mean(axis=k, keepdims=True)
        scale = x64.var() + np.abs(y64).mean(axis=k, keepdims=lazy.ndim == nd)
    got = evaluate(data.draw, lazy)
    assert got.dtype == dtype, (case, got.dtype)
    if exact:
        assert_exact(got, ref.astype(dtype), case)
    else:
        f32 = dtype == np.float32
        assert_close(got, ref.astype(dtype), 1e-5 if f32 else 1e-9, (1e-6 if f32 else 1e-12) * scale, case)


@examples(160)
@given(data=st.data())
def test_reduction_of_reduction(data, tmp_path_factory):
    shape = data.draw(shapes(min_nd=2, allow_empty=False), label="shape")
    nd = len(shape)
    dtype = data.draw(
        st.sampled_from([np.dtype(t) for t in ("int16", "int64", "uint8", "float64", "float32")]), label="dtype"
    )
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x = random_values(rng, dtype, shape, style=data.draw(st.sampled_from(["any", "small"])))
    a = make_source(data.draw, x, tmp_path_factory)
    inner = data.draw(st.sampled_from(["sum", "max", "min", "mean", "any", "count_nonzero"]), label="inner")
    iaxis = data.draw(
        st.one_of(
            st.integers(-nd, nd - 1),
            st.lists(st.integers(0, nd - 1), unique=True, min_size=1, max_size=nd - 1).map(tuple),
        ),
        label="inner axis",
    )
    ikeep = data.draw(st.booleans(), label="inner keepdims")
    mid_lazy = b2_reduce(inner, a, iaxis, ikeep)
    mid_ref = np_reduce(inner, x, iaxis, ikeep)
    exact_mid = mid_ref.dtype.kind != "f" or inner in ("max", "min")
    outers = ["sum", "max", "min", "mean", "var", "prod", "any", "all"]
    if exact_mid:
        outers += ["argmax", "argmin", "count_nonzero"]
    outer = data.draw(st.sampled_from(outers), label="outer")
    oaxis = data.draw(axes(mid_ref.ndim, allow_tuple=outer not in ("argmin", "argmax")), label="outer axis")
    okeep = data.draw(st.booleans(), label="outer keepdims")
    what = f"{outer}({inner}(x{shape}:{dtype}, {iaxis}, {ikeep}), {oaxis}, {okeep})"
    if outer == "prod" and mid_ref.dtype.kind == "f" and inner in ("sum", "mean"):
        return  # products of inexact sums: error bounds not meaningful
    got = evaluate(data.draw, b2_reduce(outer, mid_lazy, oaxis, okeep))
    if exact_mid:
        check_reduction(outer, got, mid_ref, oaxis, okeep, None, 0.0, what)
        return
    # the intermediate is inexact: compare against NumPy on the exact float64 intermediate
    native = np_reduce(outer, mid_ref, oaxis, okeep)
    assert got.dtype == native.dtype and got.shape == native.shape, what
    if native.dtype.kind != "f":
        # any/all of an inexact sum: only meaningful away from zero; the values are never
        # exactly cancelling in practice except for exact integers, which are exact anyway
        assert_exact(got, native, what)
        return
    mid64 = np_reduce(inner, x.astype(np.float64), iaxis, ikeep)
    scale_mid = np_reduce(inner, np.abs(x.astype(np.float64)), iaxis, ikeep)
    if outer in ("max", "min"):
        ref, scale = np_reduce(outer, mid64, oaxis, okeep), np.max(scale_mid)
    elif outer == "var":
        ref, scale = np_reduce(outer, mid64, oaxis, okeep), np.max(scale_mid) ** 2
    else:
        ref = np_reduce(outer, mid64, oaxis, okeep)
        scale = np_reduce(outer if outer != "prod" else "sum", scale_mid, oaxis, okeep)
    f32 = native.dtype == np.float32
    assert_close(got, ref.astype(native.dtype), 1e-5 if f32 else 1e-8, (1e-5 if f32 else 1e-11) * scale, what)


@examples(120)
@given(data=st.data())
def test_indexed_reductions_and_reductions_of_slices(data, tmp_path_factory):
    shape = data.draw(shapes(min_nd=2, allow_empty=False), label="shape")
    dtype = data.draw(st.sampled_from([np.dtype("int32"), np.dtype("float64")]), label="dtype")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x = random_values(rng, dtype, shape, style="small")
    a = make_source(data.draw, x, tmp_path_factory)
    name = data.draw(st.sampled_from(["sum", "max", "argmin", "any", "prod", "min"]), label="red")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    if data.draw(st.booleans(), label="slice first"):
        key = data.draw(basic_index(shape), label="source index")
        xs = x[key]
        if xs.ndim == 0:
            return
        axis = axis % xs.ndim
        if name in ORDERING and xs.shape[axis] == 0:
            return
        got = b2_reduce(name, a[key], axis).to_numpy()
        assert_exact(got, np_reduce(name, xs, axis), f"{name}(a[{key}], {axis})")
    else:
        r = b2_reduce(name, a, axis)
        ref = np_reduce(name, x, axis)
        key = data.draw(basic_index(ref.shape), label="result index")
        assert_exact(evaluate(data.draw, r[key]), ref[key], f"{name}(a, {axis})[{key}]")


# ----------------------------------------------------------------------------------------
# table tests: dtypes, empties, NaNs, 0-d
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "dt", ["bool", "int8", "uint8", "int16", "uint16", "int32", "int64", "uint64", "float32", "float64"]
)
@pytest.mark.parametrize("name", ["mean", "var", "std", "sum", "prod"])
def test_result_dtypes(dt, name):
    """mean/var/std of bool/int8/uint8 give float64 (as NumPy does, no float16)."""
    x = np.arange(1, 13).reshape(3, 4).astype(dt)
    got = getattr(b2lazy, name)(b2lazy.asarray(x, chunks=(2, 3), blocks=(1, 2)), axis=0)
    ref = np_reduce(name, x, 0)
    assert got.dtype == ref.dtype
    out = got.to_numpy()
    assert out.dtype == ref.dtype
    check_reduction(name, out, x, 0, False, None, 0.0, f"{name} {dt}")
    if dt in ("bool", "int8", "uint8") and name in ("mean", "var", "std"):
        assert out.dtype == np.float64


@pytest.mark.parametrize("kind", ["numpy", "mem"])
@pytest.mark.parametrize(
    "shape,axis", [((0,), None), ((0, 3), 0), ((3, 0), 1), ((2, 0, 3), (1,)), ((2, 0, 3), (0, 1)), ((0, 4), None)]
)
def test_empty_reductions(kind, shape, axis):
    x = np.zeros(shape)
    a = b2lazy.asarray(x) if kind == "numpy" else b2lazy.asarray(x, chunks=tuple(max(1, n) for n in shape))
    out_shape = np.sum(x, axis=axis).shape
    expect = {"sum": 0.0, "prod": 1.0, "any": False, "all": True, "count_nonzero": 0}
    for name, v in expect.items():
        got = getattr(b2lazy, name)(a, axis=axis).to_numpy()
        assert got.shape == out_shape and np.all(got == v), (name, got)
    for name in ("mean", "var", "std"):
        got = getattr(b2lazy, name)(a, axis=axis).to_numpy()
        assert got.shape == out_shape and np.all(np.isnan(got)), (name, got)
    for name in ("min", "max", "argmin", "argmax"):
        ax = axis if name not in ("argmin", "argmax") or not isinstance(axis, tuple) else axis[-1]
        with pytest.raises(ValueError):
            getattr(b2lazy, name)(a, axis=ax).to_numpy()


def test_empty_sum_dtypes():
    assert b2lazy.sum(np.zeros((0, 2), np.int8)).to_numpy() == 0
    assert b2lazy.sum(np.zeros((0, 2), np.int8)).dtype == np.int64
    assert b2lazy.prod(np.zeros((0,), np.uint16)).dtype == np.uint64
    assert b2lazy.prod(np.zeros((0,), np.uint16)).to_numpy() == 1
    assert b2lazy.sum(np.zeros((0,), np.float32)).dtype == np.float32


@pytest.mark.parametrize("name", ["min", "max", "argmin", "argmax"])
def test_ordering_reduction_over_empty_axis_raises_even_for_empty_output(name):
    with pytest.raises(ValueError):
        getattr(np, name)(np.zeros((0, 0)), axis=0)
    with pytest.raises(ValueError):
        getattr(b2lazy, name)(b2lazy.asarray(np.zeros((0, 0))), axis=0).to_numpy()


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("shape,axis,corr", [((0,), None, 1), ((0, 3), 0, 2), ((4, 0), (0, 1), 0.5)])
def test_var_std_over_no_elements_with_correction(name, shape, axis, corr):
    got = getattr(b2lazy, name)(np.zeros(shape), axis=axis, correction=corr).to_numpy()
    assert np.all(np.isnan(got)), got


_EDGE_REPRO = """
import numpy as np, b2lazy
x = np.arange(30.).reshape(5, 6)
got = b2lazy.asarray(x, chunks=(5, 4), blocks=(5, 4)).to_numpy()
assert np.array_equal(got, x), got
y = np.arange(12.)
for i in range(20):
    got = b2lazy.asarray(y, chunks=(5,), blocks=(5,)).to_numpy()
    assert np.array_equal(got, y), got
print("OK")
"""


def test_single_block_edge_chunk_read():
    """Run in a subprocess: this bug used to corrupt the heap and abort the interpreter."""
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-c", _EDGE_REPRO], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "OK" in p.stdout, (p.returncode, p.stdout[-500:], p.stderr[-500:])


@pytest.mark.parametrize("kind", ["numpy", "mem"])
def test_nan_semantics(kind):
    x = np.array([[1.0, np.nan, 3.0, np.nan], [np.nan, 0.5, -2.0, 7.0], [4.0, 5.0, 6.0, 8.0]])
    a = b2lazy.asarray(x) if kind == "numpy" else b2lazy.asarray(x, chunks=(2, 2), blocks=(1, 1))
    for name in ("min", "max", "argmin", "argmax", "sum", "mean", "var", "any", "all", "count_nonzero"):
        for axis in (None, 0, 1):
            got = getattr(b2lazy, name)(a, axis=axis).to_numpy()
            assert_exact(got, np_reduce(name, x, axis), f"{name} axis={axis}")
    assert b2lazy.argmin(a).to_numpy() == 1 and b2lazy.argmax(a).to_numpy() == 1


def test_argmin_argmax_first_occurrence():
    x = np.array([[3, 1, 1, 5, 5], [2, 2, 2, 2, 2], [0, 9, 0, 9, 0]], dtype=np.int16)
    a = b2lazy.asarray(x, chunks=(2, 2), blocks=(1, 1))
    for name in ("argmin", "argmax"):
        for axis in (None, 0, 1, -1):
            for keep in (False, True):
                assert_exact(
                    getattr(b2lazy, name)(a, axis=axis, keepdims=keep).to_numpy(),
                    np_reduce(name, x, axis, keep),
                    f"{name} {axis} {keep}",
                )


@pytest.mark.parametrize("name", REDUCTIONS)
def test_zero_d_input(name):
    x = np.array(2.5)
    got = getattr(b2lazy, name)(b2lazy.asarray(x)).to_numpy()
    assert_exact(got, np_reduce(name, x))


def test_var_correction_values():
    x = np.random.default_rng(1).standard_normal((7, 9))
    a = b2lazy.asarray(x, chunks=(3, 4), blocks=(2, 2))
    for corr in (0, 1, 2.5, 6.5):
        for axis in (0, None):
            got = b2lazy.var(a, axis=axis, correction=corr).to_numpy()
            assert_close(got, np.var(x, axis=axis, ddof=corr), 1e-12, 1e-14, f"var {corr}")
            got = b2lazy.std(a, axis=axis, ddof=corr).to_numpy()
            assert_close(got, np.std(x, axis=axis, ddof=corr), 1e-12, 1e-14, f"std {corr}")
    assert np.all(np.isnan(b2lazy.var(a, axis=0, correction=7).to_numpy()))  # N - correction == 0
    assert np.all(np.isnan(b2lazy.var(a, axis=1, correction=9).to_numpy()))  # N - correction <= 0


def test_large_float_sum_accuracy():
    """Long float64 sums: sequential float64 accumulation with 8 partials stays within 1e-9."""
    x = np.random.default_rng(3).uniform(0, 1, (1000, 500))
    for src in (b2lazy.asarray(x), b2lazy.asarray(x, chunks=(128, 100), blocks=(32, 50))):
        for axis in (None, 0, 1):
            assert_close(b2lazy.sum(src, axis=axis).to_numpy(), np.sum(x, axis=axis), 1e-9, 0)
            assert_close(b2lazy.mean(src, axis=axis).to_numpy(), np.mean(x, axis=axis), 1e-9, 0)
    x32 = x.astype(np.float32)
    got = b2lazy.sum(b2lazy.asarray(x32, chunks=(100, 100))).to_numpy()
    assert got.dtype == np.float32
    assert_close(got, np.float32(x32.astype(np.float64).sum()), 1e-6, 0)


def test_var_with_large_offset_is_accurate():
    """No catastrophic cancellation: var of 1e6 + N(0, 1) within 1e-7 relative."""
    x = 1e6 + np.random.default_rng(0).standard_normal((300, 200))
    for src in (b2lazy.asarray(x), b2lazy.asarray(x, chunks=(64, 50), blocks=(16, 25))):
        for axis in (None, 0, 1, (1, 0)):
            assert_close(b2lazy.var(src, axis=axis).to_numpy(), np.var(x, axis=axis), 1e-7, 0)
            assert_close(b2lazy.std(src, axis=axis, correction=1).to_numpy(), np.std(x, axis=axis, ddof=1), 1e-7, 0)
    x32 = (1e3 + np.random.default_rng(1).standard_normal((300, 200))).astype(np.float32)
    got = b2lazy.var(b2lazy.asarray(x32, chunks=(64, 64)), axis=0).to_numpy()
    assert got.dtype == np.float32
    assert_close(got, np.var(x32.astype(np.float64), axis=0).astype(np.float32), 1e-5, 0)


def test_reduction_computed_to_disk_and_reopened(tmp_path):
    x = np.random.default_rng(2).integers(-100, 100, (60, 70)).astype(np.int32)
    a = b2lazy.asarray(x, chunks=(16, 32), blocks=(8, 8))
    path = tmp_path / "r.b2nd"
    b2lazy.sum(a * 2, axis=0, keepdims=True).compute(urlpath=path, chunks=(1, 32), blocks=(1, 16))
    r = b2lazy.open(path)
    assert r.shape == (1, 70) and r.dtype == np.int64
    assert_exact(r.to_numpy(), (x * 2).sum(axis=0, keepdims=True, dtype=np.int64))
    assert_exact(b2lazy.argmax(r, axis=1).to_numpy(), np.argmax((x * 2).sum(axis=0, keepdims=True), axis=1))


# ----------------------------------------------------------------------------------------
# work counters (the issue's checks)
# ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def counted_sources(tmp_path_factory):
    x = np.random.default_rng(7).standard_normal((400, 300))
    path = tmp_path_factory.mktemp("counters") / "a.b2nd"
    b2lazy.asarray(x).compute(urlpath=str(path), chunks=(50, 60), blocks=(10, 20))
    return x, {"disk": lambda: b2lazy.open(path), "mem": lambda: b2lazy.asarray(x, chunks=(50, 60), blocks=(10, 20))}


@pytest.mark.parametrize("kind", ["disk", "mem"])
def test_counter_sum_axis1_slice(counted_sources, kind):
    x, src = counted_sources
    r = b2lazy.sum(src[kind](), axis=1)[100:200].compute()
    assert r.stats["chunks_decompressed"]["total"] == 10
    assert_close(r.to_numpy(), x.sum(axis=1)[100:200], 1e-9, 1e-12)


@pytest.mark.parametrize("kind", ["disk", "mem"])
def test_counter_sum_plus_a(counted_sources, kind):
    x, src = counted_sources
    a = src[kind]()
    r = (b2lazy.sum(a) + a).compute()
    st_ = r.stats
    assert st_["chunks_decompressed"]["total"] <= 80
    assert st_["cache_misses"] >= 1 and st_["cache_hits"] >= 1
    assert_close(r.to_numpy(), x.sum() + x, 1e-9, 1e-10)


@pytest.mark.parametrize("kind", ["disk", "mem"])
def test_counter_normalize(counted_sources, kind):
    x, src = counted_sources
    a = src[kind]()
    r = ((a - b2lazy.mean(a, axis=0)) / b2lazy.std(a, axis=0)).compute()
    assert r.stats["chunks_decompressed"]["total"] <= 120
    assert_close(r.to_numpy(), (x - x.mean(axis=0)) / x.std(axis=0), 1e-9, 1e-12)


@pytest.mark.parametrize("kind", ["disk", "mem"])
def test_counter_reductions_read_each_chunk_once(counted_sources, kind):
    x, src = counted_sources
    for axis in (None, 0, 1, (0, 1)):
        r = b2lazy.sum(src[kind](), axis=axis).compute()
        assert r.stats["chunks_decompressed"]["total"] == 40, axis
    r = b2lazy.max(src[kind](), axis=0)[10:70].compute()  # columns 10..70 -> chunk cols 0, 1
    assert r.stats["chunks_decompressed"]["total"] == 16
    assert_exact(r.to_numpy(), x.max(axis=0)[10:70])


# ----------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("axis", [2, -3, 5])
def test_axis_out_of_range(name, axis):
    a = b2lazy.asarray(np.ones((3, 4)))
    with pytest.raises(ValueError, match=str(axis)):
        b2lazy_fn = getattr(b2lazy, name)
        b2lazy_fn(a, axis=axis).to_numpy()


@pytest.mark.parametrize("name", [n for n in REDUCTIONS if n not in ("argmin", "argmax")])
@pytest.mark.parametrize("axis", [(0, 0), (1, -1), (0, 3), (-3,)])
def test_bad_axis_tuples(name, axis):
    a = b2lazy.asarray(np.ones((3, 4)))
    with pytest.raises(ValueError):
        getattr(b2lazy, name)(a, axis=axis).to_numpy()


@pytest.mark.parametrize("name", ["argmin", "argmax"])
@pytest.mark.parametrize("axis", [(0,), (0, 1), [1]])
def test_arg_reduction_tuple_axis(name, axis):
    with pytest.raises((TypeError, ValueError)):
        getattr(b2lazy, name)(b2lazy.asarray(np.ones((3, 4))), axis=axis).to_numpy()


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("axis,corr", [(0, 4), (1, 5), (None, 13), ((0, 1), 12.5), (0, 3), (None, 12)])
def test_correction_too_large(name, axis, corr):
    """N - correction <= 0 gives NaN (Array API; NumPy gives inf or nan), never an error."""
    a = b2lazy.asarray(np.arange(12.0).reshape(3, 4), chunks=(2, 2))
    got = getattr(b2lazy, name)(a, axis=axis, correction=corr).to_numpy()
    assert np.all(np.isnan(got)), got


@pytest.mark.parametrize("name", ["min", "max", "any", "all", "argmin", "argmax", "count_nonzero"])
def test_dtype_not_allowed(name):
    with pytest.raises(TypeError):
        getattr(b2lazy, name)(b2lazy.asarray(np.ones(3)), dtype=np.float64)


def test_other_bad_arguments():
    a = b2lazy.asarray(np.ones((3, 4)))
    with pytest.raises(TypeError):
        b2lazy.sum(a, axis=1.0)
    with pytest.raises(TypeError):
        b2lazy.sum(a, axis=True)
    with pytest.raises(TypeError):
        b2lazy.sum(a, axis="0")
    with pytest.raises(TypeError):
        b2lazy.var(a, correction=1, ddof=1)
    with pytest.raises(TypeError):
        b2lazy.sum(a, correction=1)
    with pytest.raises(TypeError):
        b2lazy.mean(a, dtype=np.int64)
    with pytest.raises(ValueError):
        b2lazy.sum(b2lazy.asarray(np.array(1.0)), axis=0)
