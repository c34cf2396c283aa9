"""pad against np.pad: random shapes, chunkings (stored b2nd operands), widths (beyond the
axis too) and modes, strided regions of the result; per-axis constants; what a small region
of a pad over a large stored array reads; errors; xarray's NaN-padding call."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import b2lazy as bl

MODES = ["constant", "edge", "reflect", "symmetric", "wrap"]


@st.composite
def pad_cases(draw):
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 7)) for _ in range(nd))
    chunks = tuple(draw(st.integers(1, n)) for n in shape)
    form = draw(st.sampled_from(["int", "pair", "per_axis"]))
    w = lambda: draw(st.integers(0, 12))  # noqa: E731 (beyond the axis: repeated reflections)
    if form == "int":
        width = w()
    elif form == "pair":
        width = (w(), w())
    else:
        width = tuple((w(), w()) for _ in range(nd))
    return shape, chunks, width, draw(st.sampled_from(MODES))


@settings(max_examples=120)
@given(
    pad_cases(),
    st.sampled_from([np.float64, np.int16, np.uint8, np.bool_, np.float32]),
    st.integers(0, 2**32 - 1),
    st.booleans(),
)
def test_random_pads_match_numpy(tmp_path_factory, case, dtype, seed, stored):
    shape, chunks, width, mode = case
    x = (np.random.default_rng(seed).integers(0, 100, shape)).astype(dtype)
    a = bl.asarray(x)
    if stored:
        a = a.compute(str(tmp_path_factory.mktemp("pad") / "x.b2nd"), chunks=chunks)
    kw = {"constant_values": 7} if mode == "constant" and dtype != np.bool_ else {}
    expected = np.pad(x, width, mode=mode, **kw)
    got = bl.pad(a, width, mode=mode, **kw)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got.to_numpy(), expected)
    # a strided, reversed region of it
    key = tuple(slice(None, None, -2) for _ in shape)
    np.testing.assert_array_equal(got[key].to_numpy(), expected[key])
    np.testing.assert_array_equal(got.compute(chunks=tuple(max(1, n // 3) for n in got.shape)).to_numpy(), expected)


def test_constant_values_per_axis_and_side():
    x = np.arange(12.0).reshape(3, 4)
    cv = ((1, 2), (3, 4))
    np.testing.assert_array_equal(
        bl.pad(x, ((1, 2), (2, 1)), constant_values=cv).to_numpy(), np.pad(x, ((1, 2), (2, 1)), constant_values=cv)
    )
    np.testing.assert_array_equal(bl.pad(x, 2, constant_values=(5, 6)).to_numpy(), np.pad(x, 2, constant_values=(5, 6)))
    np.testing.assert_array_equal(
        bl.pad(x.astype(np.int32), 1, constant_values=2.7).to_numpy(),
        np.pad(x.astype(np.int32), 1, constant_values=2.7),
    )
    assert np.isnan(bl.pad(x, 1, constant_values=np.nan).to_numpy()[0, 0])
    # empty: zeros (NumPy leaves the padding undefined)
    assert bl.pad(x, 1, mode="empty").to_numpy()[1:-1, 1:-1].tolist() == x.tolist()


def test_expression_string_and_lazy_operand():
    x = np.arange(10.0).reshape(2, 5)
    r = bl.evaluate("pad(a, ((1, 0), (2, 3)), 'symmetric') + 1", {"a": x})
    np.testing.assert_array_equal(r.to_numpy(), np.pad(x, ((1, 0), (2, 3)), "symmetric") + 1)
    lazy = bl.asarray(x) * 2
    np.testing.assert_array_equal(bl.pad(lazy, 3, mode="wrap").to_numpy(), np.pad(x * 2, 3, mode="wrap"))


def test_small_region_reads_only_its_chunks(tmp_path):
    n = 2000
    a = bl.arange(n * n, dtype=bl.float64).reshape((n, n)).compute(str(tmp_path / "big.b2nd"), chunks=(200, 200))
    whole = a.to_numpy()
    for mode in MODES:
        p = bl.pad(a, 50, mode=mode)
        # the top-left 60 x 60: pads to the left and above, and the first chunk's corner
        r = p[:60, :60].compute()
        np.testing.assert_array_equal(r.to_numpy(), np.pad(whole, 50, mode=mode)[:60, :60])
        decompressed = sum(r.stats["distinct_chunks_decompressed"].values())
        # constant, edge, reflect, symmetric: only chunk (0, 0); wrap: the four corner chunks
        assert decompressed == (4 if mode == "wrap" else 1), (mode, r.stats)


def test_errors_name_the_mode_and_parameter():
    x = np.ones((3, 3))
    for mode in ("linear_ramp", "maximum", "mean", "median", "minimum"):
        with pytest.raises(ValueError, match=f"pad: mode '{mode}' is not supported.*constant, edge, reflect"):
            bl.pad(x, 1, mode=mode)
    with pytest.raises(ValueError, match="pad: mode 'nope'"):
        bl.pad(x, 1, mode="nope")
    with pytest.raises(ValueError, match="negative"):
        bl.pad(x, -1)
    with pytest.raises(ValueError, match="pad_width of shape"):
        bl.pad(x, ((1, 2, 3),))
    with pytest.raises(TypeError, match="integral"):
        bl.pad(x, 1.5)
    with pytest.raises(ValueError, match="empty axis"):
        bl.pad(np.ones((0, 3)), 1, mode="wrap")
    with pytest.raises(ValueError, match="cannot be converted"):
        bl.pad(np.ones(3, dtype=np.int64), 1, constant_values=np.nan)
    with pytest.raises(ValueError, match="reflect_type"):
        bl.pad(x, 1, mode="reflect", reflect_type="odd")


def test_xarray_pads_with_nan():
    xr = pytest.importorskip("xarray")
    x = np.random.default_rng(0).standard_normal((40, 3))
    da = xr.DataArray(bl.asarray(x), dims=("time", "y"))
    padded = da.pad(time=(7, 0), mode="constant", constant_values=np.nan)  # what .rolling(time=8) asks
    assert isinstance(padded.data, bl.Array)
    np.testing.assert_array_equal(
        np.asarray(padded.data.to_numpy()), np.pad(x, ((7, 0), (0, 0)), constant_values=np.nan)
    )


@pytest.mark.parametrize("window,axis", [(3, None), ((2, 3), (1, 0)), (4, -1), ((1, 2), (0, 1))])
def test_sliding_window_view_matches_numpy(window, axis):
    x = np.arange(60.0).reshape(6, 10)
    if axis is None:
        window = (window, window)
    expected = np.lib.stride_tricks.sliding_window_view(x, window, axis=axis)
    got = bl.lib.stride_tricks.sliding_window_view(bl.asarray(x), window, axis=axis)
    np.testing.assert_array_equal(got.to_numpy(), expected)
    with pytest.raises(ValueError, match="longer than axis"):
        bl.sliding_window_view(x, 11, axis=1)


def test_xarray_rolling_mean_is_lazy_and_equal():
    xr = pytest.importorskip("xarray")
    x = np.random.default_rng(0).standard_normal((40, 3))
    x[5, 1] = np.nan
    r = xr.DataArray(bl.asarray(x), dims=("time", "y")).rolling(time=8).mean()
    assert isinstance(r.data, bl.Array)
    expected = xr.DataArray(x, dims=("time", "y")).rolling(time=8).mean().values
    np.testing.assert_allclose(np.asarray(r.data.to_numpy()), expected, equal_nan=True)
