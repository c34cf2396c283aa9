"""segment_reduce (reductions by group codes along one axis) against NumPy, over random
shapes, chunkings, dtypes and group layouts; counters: each stored input chunk is read
once per output region, not once per group."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

import b2lazy as bl

FUNCS = [
    "sum",
    "nansum",
    "prod",
    "nanprod",
    "mean",
    "nanmean",
    "min",
    "nanmin",
    "max",
    "nanmax",
    "var",
    "nanvar",
    "std",
    "nanstd",
    "any",
    "all",
    "count",
    "first",
    "last",
    "nanfirst",
    "nanlast",
]
NP = {
    "count": lambda v, axis: np.sum(~np.isnan(v) if v.dtype.kind in "fc" else np.ones(v.shape, bool), axis=axis),
    "first": lambda v, axis: np.take(v, 0, axis=axis),
    "last": lambda v, axis: np.take(v, -1, axis=axis),
}


def _nanpick(v, axis, last):
    """The first (last) value along axis that is not NaN, NaN when none."""
    v = np.moveaxis(v, axis, -1)
    if last:
        v = v[..., ::-1]
    ok = ~np.isnan(v) if v.dtype.kind == "f" else np.ones(v.shape, bool)
    i = np.argmax(ok, axis=-1)
    got = np.take_along_axis(v, i[..., None], axis=-1)[..., 0].astype(
        np.result_type(v.dtype, np.float64) if v.dtype.kind == "f" else v.dtype
    )
    return np.where(ok.any(axis=-1), got, np.nan) if v.dtype.kind == "f" else got


def oracle(x, codes, func, ngroups, axis, ddof):
    """NumPy, group by group."""
    codes = np.asarray(codes)
    parts = []
    for g in range(ngroups):
        v = np.take(x, np.flatnonzero(codes == g), axis=axis)
        empty = v.shape[axis] == 0
        if func in ("min", "max", "nanmin", "nanmax", "first", "last", "nanfirst", "nanlast") and empty:
            shape = list(x.shape)
            shape[axis] = 1
            parts.append(np.full(shape, np.nan))
            continue
        with np.errstate(all="ignore"):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                if func in ("var", "std", "nanvar", "nanstd"):
                    r = getattr(np, func)(v, axis=axis, ddof=ddof)
                elif func in ("nanfirst", "nanlast"):
                    r = _nanpick(v, axis, func == "nanlast")
                elif func in NP:
                    r = NP[func](v, axis)
                else:
                    r = getattr(np, func)(v, axis=axis)
        parts.append(np.expand_dims(np.asarray(r), axis))
    return np.concatenate(parts, axis=axis) if parts else None


@st.composite
def cases(draw):
    ndim = draw(st.integers(1, 3), label="ndim")
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=ndim, max_size=ndim)))
    axis = draw(st.integers(-ndim, ndim - 1), label="axis")
    n = shape[axis]
    layout = draw(st.sampled_from(["contiguous", "interleaved", "unsorted", "dropped"]), label="layout")
    ngroups = draw(st.integers(1, 6), label="ngroups")
    if layout == "contiguous":
        codes = np.sort(np.asarray(draw(st.lists(st.integers(0, ngroups - 1), min_size=n, max_size=n))))
    elif layout == "interleaved":
        codes = np.arange(n) % ngroups
    else:
        lo = -1 if layout == "dropped" else 0
        codes = np.asarray(draw(st.lists(st.integers(lo, ngroups - 1), min_size=n, max_size=n)))
    ngroups += draw(st.integers(0, 2), label="extra empty groups")
    dtype = draw(st.sampled_from(["float64", "float32", "int32", "int64", "bool", "uint8"]), label="dtype")
    rng = np.random.default_rng(draw(st.integers(0, 2**16), label="seed"))
    x = rng.standard_normal(shape) * 3
    if dtype.startswith("float"):
        x[rng.random(shape) < draw(st.sampled_from([0.0, 0.2, 0.9]), label="nan fraction")] = np.nan
    elif dtype == "bool":
        x = x > 0
    else:
        x = np.round(x)
        if dtype == "uint8":
            x = np.abs(x)
    x = x.astype(dtype)
    chunks = tuple(draw(st.integers(1, s)) for s in shape)
    func = draw(st.sampled_from(FUNCS), label="func")
    ddof = draw(st.sampled_from([0, 1]), label="ddof")
    return x, codes.astype(np.int64), func, ngroups, axis, ddof, chunks


def close(got, want, dtype):
    if np.dtype(dtype) == np.float32:
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, equal_nan=True)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9, equal_nan=True)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_against_numpy(case):
    x, codes, func, ngroups, axis, ddof, chunks = case
    if func in ("prod", "nanprod") and x.dtype.kind in "iu":
        x = np.clip(x, -2, 2).astype(x.dtype)  # (no overflow to compare)
    want = oracle(x, codes, func, ngroups, axis, ddof)
    a = bl.asarray(x, chunks=chunks)
    got = bl.segment_reduce(a, codes, func, ngroups=ngroups, axis=axis, ddof=ddof)
    assert got.shape == want.shape
    g = got.to_numpy()
    if func in ("sum", "prod", "nansum", "nanprod", "count", "any", "all"):
        assert g.dtype == want.dtype, (func, x.dtype, g.dtype, want.dtype)
    close(
        g.astype(np.float64) if g.dtype != np.bool_ else g,
        want.astype(np.float64) if g.dtype != np.bool_ else want,
        x.dtype,
    )
    # a random sub-region of the result equals the same region of the whole
    sl = tuple(slice(s // 3, s) for s in got.shape)
    close(got[sl].to_numpy().astype(np.float64), g[sl].astype(np.float64), np.float64)


def test_dtypes_follow_numpy():
    codes = [0, 1, 0]
    for dt, func, want in [
        ("int8", "sum", np.int64),
        ("uint8", "sum", np.uint64),
        ("bool", "sum", np.int64),
        ("int32", "mean", np.float64),
        ("float32", "mean", np.float32),
        ("float32", "var", np.float32),
        ("int16", "min", np.int16),
        ("int16", "count", np.int64),
        ("float32", "any", np.bool_),
    ]:
        assert bl.segment_reduce(np.ones((2, 3), dt), codes, func).dtype == want, (dt, func)
    # an empty group makes min of integers floating (NaN there)
    r = bl.segment_reduce(np.arange(3, dtype=np.int32), [0, 0, 2], "min")
    assert r.dtype == np.float64
    np.testing.assert_array_equal(r.to_numpy(), [0, np.nan, 2])
    assert bl.segment_reduce(np.ones(3, np.float16), [0, 0, 1], "mean").dtype == np.float16


def test_bad_input_is_named():
    x = np.ones((4, 5))
    with pytest.raises(ValueError, match="codes has 4 values; x has 5 along axis 1"):
        bl.segment_reduce(x, [0, 1, 0, 1], "sum")
    with pytest.raises(ValueError, match="func 'median' is not one of"):
        bl.segment_reduce(x, [0] * 5, "median")
    with pytest.raises(ValueError, match=r"codes\[2\] is -3"):
        bl.segment_reduce(x, [0, 0, -3, 0, 0], "sum")
    with pytest.raises(ValueError, match="holds group 4 but ngroups is 2"):
        bl.segment_reduce(x, [0, 0, 4, 0, 0], "sum", ngroups=2)
    with pytest.raises(ValueError, match="ngroups .* is more than"):
        bl.segment_reduce(x, [0] * 5, "sum", ngroups=10**12)
    with pytest.raises(TypeError, match="codes must be integers"):
        bl.segment_reduce(x, [0.5] * 5, "sum")
    with pytest.raises(ValueError, match="codes must be 1-d"):
        bl.segment_reduce(x, [[0] * 5], "sum")
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        bl.segment_reduce(x, [0] * 5, "sum", axis=2)
    with pytest.raises(TypeError, match="not supported for complex"):
        bl.segment_reduce(x.astype(complex), [0] * 5, "max")
    with pytest.raises(ValueError, match="0-d"):
        bl.segment_reduce(np.float64(1), [], "sum")


def test_expression_string_is_the_same():
    x = np.random.default_rng(1).standard_normal((6, 4))
    got = bl.evaluate("segment_reduce(x, [1, 0, 1, -1, 2, 2], 'nanvar', axis=0, ddof=1)", {"x": bl.asarray(x)})
    want = bl.segment_reduce(x, [1, 0, 1, -1, 2, 2], "nanvar", axis=0, ddof=1)
    np.testing.assert_array_equal(got.to_numpy(), want.to_numpy())


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """(365 * 2, 20, 30) float32 days, stored in chunks of 24 days."""
    x = np.random.default_rng(3).standard_normal((730, 20, 30)).astype(np.float32)
    p = tmp_path_factory.mktemp("seg") / "t.b2nd"
    bl.asarray(x).compute(urlpath=str(p), chunks=(24, 20, 30), blocks=(24, 20, 30))
    return x, p


def month_codes(n):
    days = np.arange(n) % 365
    return np.searchsorted(np.cumsum([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]), days, side="right")


def test_climatology_reads_each_chunk_once(stored):
    x, p = stored
    codes = month_codes(x.shape[0])
    r = bl.segment_reduce(bl.open(p), codes, "mean", axis=0).compute()
    nchunks = -(-x.shape[0] // 24)
    assert r.stats["chunks_decompressed"]["total"] == nchunks  # not once per month (12 x 31 chunks ~ 2x)
    want = oracle(x.astype(np.float64), codes, "mean", 12, 0, 0)
    np.testing.assert_allclose(r.to_numpy(), want, rtol=1e-5, atol=1e-6)


def test_climatology_region_reads_only_its_groups(stored):
    x, p = stored
    codes = month_codes(x.shape[0])
    r = bl.segment_reduce(bl.open(p), codes, "max", axis=0)[1:2].compute()  # February
    rows = np.flatnonzero(codes == 1)
    assert r.stats["chunks_decompressed"]["total"] == len(np.unique(rows // 24))
    np.testing.assert_array_equal(r.to_numpy(), oracle(x, codes, "max", 12, 0, 0)[1:2])


def test_resample_reads_each_chunk_once(stored):
    x, p = stored
    codes = np.arange(x.shape[0]) // 10  # 10-day bins, across the 24-day chunks
    r = bl.segment_reduce(bl.open(p), codes, "sum", axis=0).compute()
    assert r.stats["chunks_decompressed"]["total"] == -(-x.shape[0] // 24)
    np.testing.assert_allclose(
        r.to_numpy(), oracle(x.astype(np.float64), codes, "sum", codes.max() + 1, 0, 0), rtol=1e-5, atol=1e-4
    )


def test_anomaly_is_one_plan(stored):
    """x - climatology[codes]: the climatology is computed once, x read twice at most."""
    x, p = stored
    codes = month_codes(x.shape[0])
    t = bl.open(p)
    clim = bl.segment_reduce(t, codes, "mean", axis=0)
    r = (t - bl.take(clim, codes, axis=0)).compute()
    assert r.stats["chunks_decompressed"]["total"] <= 2 * -(-x.shape[0] // 24)
    want = x - oracle(x.astype(np.float64), codes, "mean", 12, 0, 0)[codes]
    np.testing.assert_allclose(r.to_numpy(), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "int16"])
def test_long_runs_fed_in_pieces(dtype):
    """Runs longer than a converted piece (1 MiB of accumulators), with axes before the
    grouped one (each piece gathered): the same as NumPy."""
    x = (np.random.default_rng(5).standard_normal((3, 700, 200)) * 100).astype(dtype)
    codes = np.arange(700) // 350
    codes[10:20] = -1
    for func in ("mean", "var", "max", "last"):
        got = bl.segment_reduce(bl.asarray(x, chunks=(2, 300, 150)), codes, func, axis=1).to_numpy()
        want = oracle(x, codes, func, 2, 1, 0)
        np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else 1e-9, atol=1e-4)


def test_climatology_within_a_small_budget(stored):
    x, p = stored
    codes = month_codes(x.shape[0])
    t = bl.open(p)
    r = (t - bl.take(bl.segment_reduce(t, codes, "mean", axis=0), codes, axis=0)).compute(max_memory=8 << 20)
    assert r.stats["peak_scratch_bytes"] <= 8 << 20
    want = x - oracle(x.astype(np.float64), codes, "mean", 12, 0, 0)[codes]
    np.testing.assert_allclose(r.to_numpy(), want, rtol=1e-4, atol=1e-5)
