"""b2lazy.moving_reduce (a moving-window reduction node) and reductions over
sliding_window_view's window axis (built as the same node), against NumPy:
sliding_window_view over the data padded with missing values is the oracle."""

import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import b2lazy as bl
from conftest import examples

FUNCS = ["sum", "mean", "min", "max", "var", "std", "count"]
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_]


def oracle(x, w, func, axis, center, min_periods, ddof, skipna):
    """xarray's rolling semantics in NumPy: windows over the axis padded with missing
    values, NaNs skipped, fewer than min_periods valid values -> NaN."""
    xf = np.moveaxis(x.astype(np.float64), axis, -1)
    before = w // 2 if center else w - 1
    pads = [(0, 0)] * (xf.ndim - 1) + [(before, w - 1 - before)]
    win = np.lib.stride_tricks.sliding_window_view(np.pad(xf, pads, constant_values=np.nan), w, axis=-1)
    inside = np.lib.stride_tricks.sliding_window_view(
        np.pad(np.ones(xf.shape, bool), pads, constant_values=False), w, axis=-1
    )
    cnt = (~np.isnan(win)).sum(-1)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        res = {
            "sum": lambda: np.nansum(win, -1),
            "mean": lambda: np.nansum(win, -1) / cnt,
            "min": lambda: np.nanmin(win, -1),
            "max": lambda: np.nanmax(win, -1),
            "var": lambda: np.nanvar(win, -1, ddof=ddof),
            "std": lambda: np.nanstd(win, -1, ddof=ddof),
            "count": lambda: cnt.astype(np.float64),
        }[func]()
    if func in ("var", "std"):
        res = np.where(cnt - ddof > 0, res, np.nan)
    res = np.where(cnt >= min_periods, res, np.nan)
    if not skipna:
        res = np.where((np.isnan(win) & inside).any(-1), np.nan, res)
    return np.moveaxis(res, -1, axis)


def assert_close(got, want, x, w, func, rtol):
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    # the error scale: the largest magnitude in the data (squared for variances)
    mag = float(np.nanmax(np.abs(np.where(np.isfinite(x.astype(np.float64)), x, 0)), initial=1.0))
    scale = {"var": mag * mag, "std": mag}.get(func, mag * w)
    ok = np.isfinite(want)
    np.testing.assert_array_equal(got[~ok & ~np.isnan(want)], want[~ok & ~np.isnan(want)])  # the infinities
    assert np.all(np.abs(got[ok] - want[ok]) <= rtol * (np.abs(want[ok]) + scale) + 1e-300), (got, want)


def data(rng, shape, dtype, special):
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), shape, endpoint=True).astype(dtype)
    x = (rng.standard_normal(shape) * 10 + 3).astype(dtype)
    if special and x.size:
        for v in (np.nan, np.nan, np.inf, -np.inf):
            if rng.random() < 0.6:
                x.flat[rng.integers(x.size, size=max(1, x.size // 8))] = v
    return x


@st.composite
def cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, {1: 40, 2: 14, 3: 7}[ndim])) for _ in range(ndim))
    axis = draw(st.integers(-ndim, ndim - 1))
    n = shape[axis]
    chunks = tuple(draw(st.sampled_from([1, 2, max(1, s // 2), s])) for s in shape)
    w = draw(st.sampled_from([1, 2, 3, max(1, n // 2), n, n + 3]))
    return dict(
        shape=shape,
        axis=axis,
        chunks=chunks,
        w=w,
        func=draw(st.sampled_from(FUNCS)),
        dtype=draw(st.sampled_from(DTYPES)),
        center=draw(st.booleans()),
        min_periods=draw(st.integers(1, w)),
        ddof=draw(st.sampled_from([0, 1])),
        skipna=draw(st.booleans()),
        special=draw(st.booleans()),
        seed=draw(st.integers(0, 2**32 - 1)),
    )


@examples(300)
@given(cases())
def test_moving_reduce_matches_numpy(c):
    rng = np.random.default_rng(c["seed"])
    x = data(rng, c["shape"], c["dtype"], c["special"])
    a = bl.asarray(x, chunks=c["chunks"])
    got = bl.moving_reduce(
        a,
        c["w"],
        c["func"],
        axis=c["axis"],
        center=c["center"],
        min_periods=c["min_periods"],
        ddof=c["ddof"],
        skipna=c["skipna"],
    ).to_numpy()
    want = oracle(x, c["w"], c["func"], c["axis"], c["center"], c["min_periods"], c["ddof"], c["skipna"])
    out = np.float32 if c["dtype"] == np.float32 and c["func"] != "count" else np.float64
    assert got.dtype == out
    assert_close(got, want, x, c["w"], c["func"], 2e-5 if out == np.float32 else 1e-9)


def test_strided_region_of_a_moving_reduce():
    x = np.random.default_rng(1).standard_normal((50, 6))
    m = bl.moving_reduce(bl.asarray(x, chunks=(7, 6)), 5, "max", axis=0, min_periods=2)
    want = oracle(x, 5, "max", 0, False, 2, 0, True)
    np.testing.assert_array_equal(m[3:47:4, ::2].to_numpy(), want[3:47:4, ::2])


def test_float32_sums_do_not_drift_along_a_long_axis():
    # Sliding sums add and subtract along the axis; rounding must not grow with its length.
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(200_000) * 1e3 + 1e4).astype(np.float32)
    got = bl.moving_reduce(bl.asarray(x, chunks=(200_000,)), 16, "mean").to_numpy()
    want = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), 16).mean(-1)
    np.testing.assert_allclose(got[15:], want, rtol=1e-6)
    gotv = bl.moving_reduce(bl.asarray(x, chunks=(200_000,)), 16, "std", ddof=1).to_numpy()
    wantv = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), 16).std(-1, ddof=1)
    np.testing.assert_allclose(gotv[15:], wantv, rtol=1e-5)


def test_moving_reduce_over_a_zarr_array_reads_each_chunk_about_once(tmp_path):
    zarr = pytest.importorskip("zarr")
    x = np.random.default_rng(3).standard_normal((96, 5, 4)).astype(np.float32)
    z = zarr.create_array(str(tmp_path / "x.zarr"), shape=x.shape, chunks=(8, 5, 4), dtype="f4")
    z[...] = x
    a = bl.open(str(tmp_path / "x.zarr"))
    m = bl.moving_reduce(a, 4, "mean", axis=0)
    r = m.compute()
    np.testing.assert_allclose(r.to_numpy(), oracle(x, 4, "mean", 0, False, 4, 0, True), rtol=1e-6)
    # output chunks two storage chunks deep along the axis (16 rows): each region's halo
    # costs one more chunk per two, not one per chunk (12 chunks + 5 halos)
    assert r.stats["chunks_decompressed"]["total"] == 17


@pytest.mark.parametrize(
    "name", ["sum", "mean", "min", "max", "var", "std", "nansum", "nanmean", "nanmin", "nanmax", "nanvar", "nanstd"]
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.uint32])
def test_reduction_over_sliding_window_view_is_one_moving_node(name, dtype):
    rng = np.random.default_rng(4)
    x = data(rng, (23, 5), dtype, special=True)
    v = bl.sliding_window_view(bl.asarray(x, chunks=(4, 5)), 6, axis=0)
    kw = {"ddof": 1} if "var" in name or "std" in name else {}
    r = getattr(bl, name)(v, axis=-1, **kw)
    plan = r.explain()
    assert "moving" in plan and "sliding_window" not in plan and "stack" not in plan
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        want = getattr(np, name)(np.lib.stride_tricks.sliding_window_view(x, 6, axis=0), axis=-1, **kw)
    got = r.to_numpy()
    assert got.dtype == want.dtype
    if np.issubdtype(want.dtype, np.integer) or name in ("min", "max", "nanmin", "nanmax"):
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=2e-6 if want.dtype == np.float32 else 1e-12, equal_nan=True)


def test_keepdims_dtype_and_other_axes_keep_the_plain_reduction():
    x = np.arange(40.0).reshape(8, 5)
    v = bl.sliding_window_view(bl.asarray(x), 3, axis=0)
    want = np.lib.stride_tricks.sliding_window_view(x, 3, axis=0)
    np.testing.assert_array_equal(bl.sum(v, axis=-1, keepdims=True).to_numpy(), want.sum(-1, keepdims=True))
    np.testing.assert_array_equal(bl.sum(v, axis=2, dtype=np.float32).to_numpy(), want.sum(2, dtype=np.float32))
    for axis in (0, 1, (1, 2), None):  # not the window axis alone: the plain reduction
        r = bl.sum(v, axis=axis)
        assert "moving" not in r.explain()
        np.testing.assert_array_equal(r.to_numpy(), want.sum(axis=axis))
    np.testing.assert_array_equal(
        bl.sliding_window_view(bl.asarray(x), (2, 3), axis=(0, 0)).to_numpy(),
        np.lib.stride_tricks.sliding_window_view(x, (2, 3), axis=(0, 0)),
    )


@pytest.mark.parametrize("center", [False, True])
def test_a_window_far_beyond_the_axis_costs_what_the_axis_does(center):
    x = np.random.default_rng(5).standard_normal((9, 4))
    for func in ("max", "mean"):
        got = bl.moving_reduce(x, 10**12, func, axis=0, center=center, min_periods=1).to_numpy()
        np.testing.assert_allclose(got, oracle(x, 21, func, 0, center, 1, 0, True), rtol=1e-12)
    assert np.isnan(bl.moving_reduce(x, 10**12, "sum", axis=0).to_numpy()).all()  # min_periods: the window


def test_float16_and_bool():
    x = np.array([1, 2, 3, 4, np.nan, 6], np.float16)
    got = bl.moving_reduce(x, 2, "max", min_periods=1).to_numpy()
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, oracle(x, 2, "max", 0, False, 1, 0, True).astype(np.float16))
    v = bl.sliding_window_view(bl.asarray(x), 3)
    np.testing.assert_array_equal(
        bl.nanmax(v, axis=-1).to_numpy(), np.nanmax(np.lib.stride_tricks.sliding_window_view(x, 3), axis=-1)
    )
    b = np.array([True, False, True, True])
    got = bl.sum(bl.sliding_window_view(bl.asarray(b), 2), axis=-1).to_numpy()
    np.testing.assert_array_equal(got, np.lib.stride_tricks.sliding_window_view(b, 2).sum(-1))
    np.testing.assert_array_equal(bl.moving_reduce(b, 2, "sum").to_numpy(), [np.nan, 1, 1, 2])


def test_expression_string():
    x = np.arange(10.0)
    got = bl.evaluate("moving_reduce(x, 3, 'max', center=True, min_periods=1)", {"x": x}).to_numpy()
    np.testing.assert_array_equal(got, oracle(x, 3, "max", 0, True, 1, 0, True))


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: bl.moving_reduce(np.ones(5), 0), ["window", "at least 1"]),
        (lambda: bl.moving_reduce(np.ones(5), 3, "median"), ["func", "median"]),
        (lambda: bl.moving_reduce(np.ones(5), 3, min_periods=0), ["min_periods"]),
        (lambda: bl.moving_reduce(np.ones(5), 3, min_periods=4), ["min_periods", "window"]),
        (lambda: bl.moving_reduce(np.ones(5), 3, axis=1), ["axis"]),
        (lambda: bl.moving_reduce(np.ones(5), 3, "var", ddof=-1), ["ddof"]),
        (lambda: bl.moving_reduce(np.ones(5, complex), 3), ["complex"]),
        (lambda: bl.moving_reduce(np.float64(1.0), 1), ["dimension"]),
        (lambda: bl.moving_reduce(np.ones(5), 2.5), ["window"]),
    ],
)
def test_bad_input_is_a_clear_error(call, words):
    with pytest.raises((ValueError, TypeError, np.exceptions.AxisError)) as e:
        call()
    msg = str(e.value)
    assert "moving_reduce" in msg and all(w in msg for w in words), msg


@pytest.mark.parametrize(
    "name, fill",
    [
        ("sum", 0.0),
        ("max", -np.inf),
        ("min", np.inf),
        ("nanstd", np.nan),
        ("nanmean", np.nan),
        ("nansum", np.nan),
        ("nanmax", np.nan),
        ("sum", np.nan),
        ("max", np.nan),
        ("nanmax", -np.inf),
        ("sum", 1.0),
        ("mean", 0.0),
    ],
)
@pytest.mark.parametrize("widths", [(3, 0), (2, 1), (0, 0), (4, 4)])
def test_windows_over_padding_read_the_data_where_the_fill_is_neutral(name, fill, widths):
    # xarray pads with what the reduction ignores; the moving node then reads the data
    # itself. Other fills (or padding wider than the window) keep the pad node.
    x = np.random.default_rng(6).standard_normal((12, 3))
    x[[0, 5, 6, 7], 1] = np.nan
    p = np.pad(x, (widths, (0, 0)), constant_values=fill)
    r = getattr(bl, name)(
        bl.sliding_window_view(bl.pad(bl.asarray(x, chunks=(5, 3)), (widths, (0, 0)), constant_values=fill), 4, axis=0),
        axis=-1,
    )
    folded = "pad" not in r.explain()
    neutral = (np.isnan(fill) and name.startswith("nan")) or (name, fill) in (
        ("sum", 0.0),
        ("max", -np.inf),
        ("min", np.inf),
    )
    assert folded == ((neutral and max(widths) < 4) or widths == (0, 0))  # (no padding: no pad node)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        want = getattr(np, name)(np.lib.stride_tricks.sliding_window_view(p, 4, axis=0), axis=-1)
    np.testing.assert_allclose(r.to_numpy(), want, rtol=1e-12, atol=1e-12, equal_nan=True)
