"""nanmedian, nanquantile, nanpercentile against NumPy over random shapes, axes, NaN
densities, methods and chunkings; all-NaN slices give NaN; slices too large for the
budget are selected in passes (NaNs left out there too)."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy as bl
from conftest import base_shapes, examples

METHODS = ["linear", "lower", "higher", "nearest", "midpoint"]


def _np(name, x, q, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy warns on all-NaN slices
        f = getattr(np, name)
        return f(x, **kw) if name == "nanmedian" else f(x, q, **kw)


@examples(80)
@given(
    shape=base_shapes(min_ndim=1, max_ndim=3, allow_zero=False),
    density=st.sampled_from([0.0, 0.2, 0.7, 1.0]),
    name=st.sampled_from(["nanmedian", "nanquantile", "nanpercentile"]),
    method=st.sampled_from(METHODS),
    keepdims=st.booleans(),
    dtype=st.sampled_from(["float64", "float32"]),
    data=st.data(),
)
def test_nan_quantiles_are_numpys(shape, density, name, method, keepdims, dtype, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = np.round(rng.normal(size=shape), 2).astype(dtype)
    x[rng.random(shape) < density] = np.nan
    ndim = len(shape)
    axis = data.draw(
        st.one_of(
            st.none(),
            st.integers(-ndim, ndim - 1),
            st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True).map(tuple),
        )
    )
    q = data.draw(st.one_of(st.floats(0, 1), st.lists(st.floats(0, 1), min_size=1, max_size=3)))
    if name == "nanpercentile":
        q = np.asarray(q) * 100
    chunks = tuple(data.draw(st.integers(1, s)) for s in shape)
    a = bl.asarray(x, chunks=chunks)
    kw = {"axis": axis, "keepdims": keepdims}
    if name != "nanmedian":
        kw["method"] = method
    want = _np(name, x, q, **kw)
    got = (bl.nanmedian(a, **kw) if name == "nanmedian" else getattr(bl, name)(a, q, **kw)).to_numpy()
    assert got.shape == np.shape(want)
    # (NumPy's small arrays go lane by lane, an all-NaN lane giving x's dtype whatever q is;
    # the first lane's result then sets the output dtype: compared where no lane is all NaN)
    if not np.isnan(want).any():
        assert got.dtype == np.asarray(want).dtype
    # (float32: NumPy interpolates in float32, b2lazy in float64; differences within a few
    # float32 ulps of the data's magnitude)
    mag = float(np.nanmax(np.abs(x))) if not np.isnan(x).all() else 0.0
    np.testing.assert_allclose(
        got,
        want,
        rtol=1e-6 if dtype == "float32" else 1e-12,
        atol=1e-6 * mag if dtype == "float32" else 0,
        equal_nan=True,
    )


def test_integers_have_no_nan_and_match_quantile():
    x = np.arange(24).reshape(4, 6)
    np.testing.assert_array_equal(bl.nanquantile(x, 0.3, axis=1).to_numpy(), np.nanquantile(x, 0.3, axis=1))
    np.testing.assert_array_equal(bl.nanmedian(x).to_numpy(), np.nanmedian(x))


def test_large_slices_are_selected_in_passes():
    # A slice above the budget's share is selected in passes: NaNs skipped there too.
    rng = np.random.default_rng(5)
    x = rng.normal(size=600_000)
    x[rng.random(x.size) < 0.3] = np.nan
    a = bl.asarray(x, chunks=(50_000,))
    for q in (0.0, 0.1, 0.5, 0.99, 1.0):
        got = bl.nanquantile(a, q).to_numpy(max_memory=2 << 20)
        assert got == np.nanquantile(x, q)
    allnan = bl.asarray(np.full(300_000, np.nan), chunks=(50_000,))
    assert np.isnan(bl.nanmedian(allnan).to_numpy(max_memory=1 << 20))


def test_errors_name_the_function():
    with pytest.raises(ValueError, match="nanquantile: quantiles must be in the range"):
        bl.nanquantile(np.ones(3), 1.5)
    with pytest.raises(ValueError, match="percentiles in \\[0, 100\\]"):
        bl.nanpercentile(np.ones(3), 150)
    with pytest.raises(ValueError, match="method"):
        bl.nanquantile(np.ones(3), 0.5, method="weird")


def test_expression_strings():
    x = np.array([[1.0, np.nan, 4.0], [np.nan, np.nan, np.nan]])
    ops = {"a": bl.asarray(x)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(bl.evaluate("nanmedian(a, axis=1)", ops).to_numpy(), np.nanmedian(x, axis=1))
        np.testing.assert_array_equal(
            bl.evaluate("nanpercentile(a, 25, axis=1, method='lower')", ops).to_numpy(),
            np.nanpercentile(x, 25, axis=1, method="lower"),
        )
