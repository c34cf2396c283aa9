"""The reductions added through the registry of reduction kernels (issue #13, item 2) against
NumPy 2: nansum, nanprod, nanmin, nanmax, nanmean, nanvar, nanstd, nanargmin, nanargmax,
logsumexp (SciPy's definition, computed here in NumPy), and the holistic median, quantile and
percentile with NumPy's methods; random shapes / chunkings / dtypes / axes / sources, NaN and
all-NaN slices. Quantiles of float64 match NumPy to the last bit. Slices larger than the
budget are selected in passes: exact, counted reads, scratch within max_memory.
"""

from __future__ import annotations

import inspect
import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy
from array_cases import FLOAT_DTYPES, assert_close, assert_exact, evaluate, examples, make_source, shapes
from test_reductions import axes, norm_axes, random_values, reduced_count

NAN_FOLDS = ["nansum", "nanprod", "nanmin", "nanmax", "nanmean", "nanvar", "nanstd"]
NAN_ARGS = ["nanargmin", "nanargmax"]
METHODS = ["linear", "lower", "higher", "nearest", "midpoint"]
NUMERIC = [np.dtype(t) for t in ("int8", "int32", "int64", "uint16", "float32", "float64")]


def quiet(f, *a, **k):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(f(*a, **k))


def np_logsumexp(x, axis=None, keepdims=False):
    """scipy.special.logsumexp's values: log(sum(exp(x))) around the maximum."""
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        m = np.max(x, axis=axis, keepdims=True) if x.size else np.full((1,) * x.ndim, -np.inf)
        shift = np.where(np.isfinite(m), m, 0.0)
        s = np.sum(np.exp(x - shift), axis=axis, keepdims=True)
        r = np.where(np.isfinite(m), shift + np.log(s), m)
        if np.isnan(x).any():
            r = np.where(np.isnan(np.sum(x, axis=axis, keepdims=True)), np.nan, r)
    return r if keepdims else np.squeeze(r, axis=norm_axes(axis, x.ndim))


def with_nans(rng, x, all_nan_slice):
    if x.dtype.kind != "f" or x.size == 0:
        return x
    x = x.copy()
    x.flat[rng.integers(0, x.size, size=rng.integers(1, 4))] = np.nan
    if all_nan_slice and x.ndim >= 1:
        x[(rng.integers(0, x.shape[0]),)] = np.nan
    return x


@examples(250)
@given(data=st.data())
def test_nan_reductions_match_numpy(data, tmp_path_factory):
    name = data.draw(st.sampled_from(NAN_FOLDS + NAN_ARGS), label="reduction")
    dtype = data.draw(st.sampled_from(NUMERIC), label="dtype")
    shape = data.draw(shapes(max_size=2000), label="shape")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x = random_values(rng, dtype, shape, style="prod" if name == "nanprod" else "any")
    x = with_nans(rng, x, data.draw(st.booleans(), label="an all-NaN slice"))
    single = name in NAN_ARGS
    axis = data.draw(axes(x.ndim, allow_tuple=not single), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    corr = data.draw(st.sampled_from([0, 1, 1.5])) if name in ("nanvar", "nanstd") else None
    a = make_source(data.draw, x, tmp_path_factory)
    what = f"{name}(x{x.shape}:{x.dtype}, axis={axis}, keepdims={keepdims}, ddof={corr})"
    kw = {} if corr is None else {"ddof": corr}
    empty = reduced_count(x.shape, axis) == 0
    if name in ("nanmin", "nanmax") + tuple(NAN_ARGS) and empty:
        with pytest.raises(ValueError):
            evaluate(data.draw, getattr(b2lazy, name)(a, axis=axis, keepdims=keepdims))
        return
    if single:
        # NumPy raises on an all-NaN slice; so does b2lazy, when the values are computed.
        try:
            ref = quiet(getattr(np, name), x, axis=axis, keepdims=keepdims)
        except ValueError:
            with pytest.raises(ValueError, match="All-NaN slice"):
                evaluate(data.draw, getattr(b2lazy, name)(a, axis=axis, keepdims=keepdims))
            return
        got = evaluate(data.draw, getattr(b2lazy, name)(a, axis=axis, keepdims=keepdims))
        assert_exact(got, ref, what)
        return
    ref = quiet(getattr(np, name), x, axis=axis, keepdims=keepdims, **kw)
    r = getattr(b2lazy, name)(a, axis=axis, keepdims=keepdims, **kw)
    got = evaluate(data.draw, r)
    if name in ("nanvar", "nanstd"):  # the Array API's NaN where N - correction <= 0 (NumPy: inf or nan)
        n = quiet(np.sum, ~np.isnan(x.astype(np.float64)), axis=axis, keepdims=keepdims)
        ref = np.where(n - corr <= 0, np.nan, ref).astype(ref.dtype)
    assert got.dtype == ref.dtype and got.shape == ref.shape, (what, got.dtype, ref.dtype, got.shape)
    if ref.dtype.kind != "f" or name in ("nanmin", "nanmax"):
        assert_exact(got, ref, what)
        return
    f32 = ref.dtype == np.float32
    x64 = np.nan_to_num(np.abs(x.astype(np.float64)), nan=0.0)
    scale = quiet(
        np.sum if name != "nanprod" else np.prod,
        np.maximum(x64, 1.0 if name == "nanprod" else 0.0),
        axis=axis,
        keepdims=keepdims,
    )
    if name in ("nanvar", "nanstd"):
        scale = float(np.max(x64) ** 2) if x64.size else 0.0
        scale = math.sqrt(scale) if name == "nanstd" else scale
    ref64 = quiet(getattr(np, name), x.astype(np.float64), axis=axis, keepdims=keepdims, **kw)
    if name in ("nanvar", "nanstd"):
        ref64 = np.where(n - corr <= 0, np.nan, ref64)
    assert_close(got, ref64.astype(ref.dtype), 1e-5 if f32 else 1e-7, (1e-5 if f32 else 1e-9) * scale, what)


@examples(80)
@given(data=st.data())
def test_logsumexp_matches_scipys_definition(data, tmp_path_factory):
    dtype = data.draw(st.sampled_from(FLOAT_DTYPES + [np.dtype("int32")]), label="dtype")
    shape = data.draw(shapes(max_size=2000, allow_empty=False), label="shape")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x = (rng.standard_normal(shape) * rng.choice([1.0, 300.0])).astype(dtype)  # 300: exp overflows
    if dtype.kind == "f" and data.draw(st.booleans(), label="infinities"):
        x.flat[rng.integers(0, x.size)] = rng.choice([np.inf, -np.inf, np.nan])
    axis = data.draw(axes(x.ndim), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    a = make_source(data.draw, x, tmp_path_factory)
    got = evaluate(data.draw, b2lazy.logsumexp(a, axis=axis, keepdims=keepdims))
    ref = np_logsumexp(x, axis, keepdims).astype(np.float32 if dtype == np.float32 else np.float64)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    assert_close(
        got,
        ref,
        1e-5 if dtype == np.float32 else 1e-12,
        1e-5 if dtype == np.float32 else 1e-12,
        f"logsumexp axis={axis}",
    )


@examples(200)
@given(data=st.data())
def test_quantiles_match_numpy(data, tmp_path_factory):
    name = data.draw(st.sampled_from(["median", "quantile", "percentile"]), label="function")
    dtype = data.draw(st.sampled_from(NUMERIC), label="dtype")
    shape = data.draw(shapes(max_size=2000, allow_empty=False), label="shape")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x = random_values(rng, dtype, shape, style=data.draw(st.sampled_from(["any", "small"])))
    if data.draw(st.integers(0, 3), label="NaN") == 0:
        x = with_nans(rng, x, False)
    axis = data.draw(axes(x.ndim), label="axis")
    if axis == ():
        axis = None
    keepdims = data.draw(st.booleans(), label="keepdims")
    method = data.draw(st.sampled_from(METHODS), label="method")
    q = data.draw(st.sampled_from([0.0, 0.25, 0.5, 0.77, 1.0, 1 / 3]), label="q")
    if name == "percentile":
        q = q * 100
    a = make_source(data.draw, x, tmp_path_factory)
    if name == "median":
        r, ref = b2lazy.median(a, axis=axis, keepdims=keepdims), quiet(np.median, x, axis=axis, keepdims=keepdims)
    else:
        r = getattr(b2lazy, name)(a, q, axis=axis, keepdims=keepdims, method=method)
        # NumPy interpolates integers in their own type (int8: 127 - (-128) wraps); b2lazy in
        # float64, as NumPy does for the same values given as float64.
        xi = x.astype(np.float64) if x.dtype.kind in "iu" and method in ("linear", "midpoint") else x
        ref = quiet(getattr(np, name), xi, q, axis=axis, keepdims=keepdims, method=method)
    got = evaluate(data.draw, r)
    what = f"{name}(x{x.shape}:{x.dtype}, q={q}, axis={axis}, method={method})"
    assert got.dtype == ref.dtype and got.shape == ref.shape, (what, got.dtype, ref.dtype, got.shape, ref.shape)
    if ref.dtype == np.float32:  # NumPy interpolates in float32, b2lazy in float64 then rounds
        assert_close(got, ref, 1e-6, 1e-6 * float(np.nanmax(np.abs(x))), what)
    elif x.dtype.kind in "iu" and ref.dtype.kind == "f":
        assert_close(got, ref, 1e-15, 0, what)  # int64 values past 2**53 are compared as float64
    else:
        assert_exact(got, ref, what)


@pytest.mark.parametrize("q", [0.0, 0.13, 0.5, 0.999, 1.0])
def test_a_slice_larger_than_the_budget_is_selected_exactly_in_passes(tmp_path, q):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(600_000)  # 4.6 MiB: over a 2 MiB budget
    x[rng.integers(0, x.size, 50)] = np.inf
    x[:1000] = 0.25  # many ties
    path = str(tmp_path / "x.b2nd")
    b2lazy.asarray(x).compute(urlpath=path, chunks=(50_000,), blocks=(10_000,))
    a = b2lazy.open(path)
    budget = 2 << 20
    for r, ref in [(b2lazy.quantile(a, q), np.quantile(x, q)), (b2lazy.median(a), np.median(x))]:
        got = r.compute(max_memory=budget)
        assert np.array_equal(got.to_numpy(), ref, equal_nan=True), (q, got.to_numpy(), ref)
        s = got.stats
        assert s["peak_scratch_bytes"] <= budget
        passes = sum(s["bytes_decompressed"].values()) / x.nbytes
        # one pass for the range (and the infinities), then per rank one histogram pass and the
        # gathering pass
        # (slabs cut blocks: a block they share is decompressed by both)
        assert 1 <= passes <= 7, passes


@pytest.mark.parametrize("budget,most_reads", [(4 << 20, 3), (16 << 20, 1)])
def test_slices_are_pulled_in_pieces_the_plan_sees(tmp_path, budget, most_reads):
    # median(a, 0) over row chunks: each piece of columns cuts every chunk. The plan sees the
    # pieces (Node::pull_pieces): it keeps `a` when it fits the budget (read once), else
    # re-packs it into tiles shaped for the pieces (about twice).
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2000, 600))  # 9.2 MiB; one output's slice 16 KB
    path = str(tmp_path / "x.b2nd")
    b2lazy.asarray(x).compute(urlpath=path, chunks=(500, 600), blocks=(100, 600))
    a = b2lazy.open(path)
    got = b2lazy.median(a, axis=0).compute(max_memory=budget)
    assert np.array_equal(got.to_numpy(), np.median(x, axis=0))
    assert sum(got.stats["bytes_decompressed"].values()) <= most_reads * x.nbytes
    assert got.stats["peak_scratch_bytes"] <= budget


def test_errors_name_the_function_and_the_argument():
    a = b2lazy.asarray(np.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError, match=r"quantile: quantiles must be in the range \[0, 1\]"):
        b2lazy.quantile(a, 1.5)
    with pytest.raises(ValueError, match=r"percentile.*\[0, 100\]"):
        b2lazy.percentile(a, 101)
    with pytest.raises(ValueError, match="method 'cubic' is not one of"):
        b2lazy.quantile(a, 0.5, method="cubic")
    with pytest.raises(ValueError, match="nanargmax: All-NaN slice"):
        b2lazy.nanargmax(b2lazy.asarray(np.full((2, 3), np.nan)), axis=1).to_numpy()
    with pytest.raises(TypeError, match="unexpected keyword argument .dtype."):
        b2lazy.nanmin(a, dtype="float32")
    with pytest.raises(ValueError, match="zero-size array to reduction operation nanmax"):
        b2lazy.nanmax(b2lazy.asarray(np.zeros((0, 3))), axis=0)


def test_signatures_come_from_the_registry():
    sig = inspect.signature(b2lazy.nanvar)
    assert list(sig.parameters) == ["x", "axis", "keepdims", "dtype", "correction", "ddof"]
    assert list(inspect.signature(b2lazy.nanmax).parameters) == ["x", "axis", "keepdims"]
    assert list(inspect.signature(b2lazy.quantile).parameters) == ["x", "q", "axis", "method", "keepdims"]
    names = [r["name"] for r in b2lazy._core.functions() if r["family"] == "reduction"]
    assert set(names) <= set(b2lazy.__all__) and set(names) <= set(b2lazy._core.expression_functions())


def test_nested_and_reused():
    x = np.random.default_rng(1).standard_normal((300, 200))
    x[5, 7] = np.nan
    a = b2lazy.asarray(x, chunks=(64, 50))
    r = (a - b2lazy.nanmean(a, axis=0)) / b2lazy.nanstd(a, axis=0) + b2lazy.median(a, axis=1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = (x - np.nanmean(x, axis=0)) / np.nanstd(x, axis=0) + np.median(x, axis=1, keepdims=True)
    got = r.compute()
    assert_close(got.to_numpy(), ref, 1e-12, 1e-12, "nested")
    s = b2lazy.evaluate("quantile(a, 0.9, axis=0) - nanmax(a, axis=0)", {"a": a}).to_numpy()
    assert_close(s, np.quantile(x, 0.9, axis=0) - np.nanmax(x, axis=0), 1e-12, 1e-12, "string")


def test_saved_expressions_keep_the_new_reductions(tmp_path):
    x = np.random.default_rng(4).standard_normal((30, 20))
    a = b2lazy.asarray(x)
    e = b2lazy.quantile(a, [0.1, 0.9], axis=0) + b2lazy.nanstd(a, axis=0) - b2lazy.median(a, axis=0)
    path = str(tmp_path / "e.b2lazy")
    e.save(path)
    ref = np.quantile(x, [0.1, 0.9], axis=0) + np.nanstd(x, axis=0) - np.median(x, axis=0)
    assert_close(b2lazy.open(path).to_numpy(), ref, 1e-12, 1e-12, "saved")


# Every reduction of the registry that NumPy has by the same name, against NumPy, generated
# from the registry: a reduction added there is tested here without a line of its own.
REGISTRY_REDUCTIONS = sorted(
    e["name"] for e in b2lazy._core.functions() if e["family"] == "reduction" and hasattr(np, e["name"])
)


@pytest.mark.parametrize("name", REGISTRY_REDUCTIONS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int16", "uint8", "bool"])
def test_every_registry_reduction_matches_numpy(name, dtype):
    rng = np.random.default_rng(len(name))
    x = (rng.standard_normal((13, 9, 5)) * 50).astype(dtype)
    a = b2lazy.asarray(x, chunks=(4, 5, 3), blocks=(2, 5, 3))
    for axis in (None, 0, 2, (0, 1)):
        if axis is not None and not isinstance(axis, int) and "arg" in name:
            continue  # arg* take one axis
        try:
            ref = quiet(getattr(np, name), x, axis=axis)
        except TypeError:  # NumPy refuses the dtype: so must b2lazy
            with pytest.raises(TypeError):
                getattr(b2lazy, name)(a, axis=axis).to_numpy()
            continue
        got = getattr(b2lazy, name)(a, axis=axis).to_numpy()
        assert got.dtype == ref.dtype, (name, dtype, axis)
        if ref.dtype.kind == "f":
            assert_close(got, ref, rtol=1e-4 if ref.dtype == np.float32 else 1e-10, atol=1e-3, what=f"{name} {axis}")
        else:
            assert_exact(got, ref, what=f"{name} {axis}")
