"""isin, digitize, bincount, histogram, histogram2d against NumPy as the oracle (random
data with hypothesis; edges: values on the last edge, NaN, empty arrays, weights), and the
data streamed: the counts read each chunk of a stored operand once."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy as bl
from conftest import examples


def _values(data, n, dtype, nan):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    if np.dtype(dtype).kind == "f":
        v = np.round(rng.normal(0, 4, n), data.draw(st.sampled_from([0, 1, 3]))).astype(dtype)
        if nan and n:
            v[rng.random(n) < 0.1] = np.nan
        return v
    return rng.integers(-20, 20, n).astype(dtype)


@examples(60)
@given(
    n=st.integers(0, 300),
    dtype=st.sampled_from(["int64", "int16", "float64", "float32"]),
    invert=st.booleans(),
    nan=st.booleans(),
    data=st.data(),
)
def test_isin_is_numpys(n, dtype, invert, nan, data):
    x = _values(data, n, dtype, nan)
    test = _values(data, data.draw(st.integers(0, 30)), data.draw(st.sampled_from(["int32", "float64"])), nan)
    chunks = (data.draw(st.integers(1, max(1, n))),)
    got = bl.isin(bl.asarray(x, chunks=chunks), test, invert=invert).to_numpy()
    np.testing.assert_array_equal(got, np.isin(x, test, invert=invert))


def test_isin_keeps_shape_and_bounds_its_table():
    x = np.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(bl.isin(x, [[3, 5], [23, 99]]).to_numpy(), np.isin(x, [[3, 5], [23, 99]]))
    big = bl.zeros(2**24 + 1)
    with pytest.raises(ValueError, match="test_elements has 16777217 elements"):
        bl.isin(x, big)


@examples(60)
@given(
    n=st.integers(0, 200),
    nb=st.integers(1, 12),
    right=st.booleans(),
    decreasing=st.booleans(),
    nan=st.booleans(),
    data=st.data(),
)
def test_digitize_is_numpys(n, nb, right, decreasing, nan, data):
    x = _values(data, n, "float64", nan)
    bins = np.sort(np.round(np.random.default_rng(nb).normal(0, 4, nb), 1))
    if decreasing:
        bins = bins[::-1].copy()
    got = bl.digitize(bl.asarray(x, chunks=(max(1, n // 3),)), bins, right=right).to_numpy()
    np.testing.assert_array_equal(got, np.digitize(x, bins, right=right))


def test_digitize_refuses_unsorted_bins():
    with pytest.raises(ValueError, match="monotonically increasing or decreasing"):
        bl.digitize(np.arange(3.0), [1.0, 0.0, 2.0])
    with pytest.raises(ValueError, match="monotonically"):
        bl.digitize(np.arange(3.0), [0.0, np.nan, 2.0])


@examples(60)
@given(
    n=st.integers(0, 300),
    minlength=st.integers(0, 50),
    weighted=st.booleans(),
    dtype=st.sampled_from(["int64", "uint8", "int32", "bool"]),
    data=st.data(),
)
def test_bincount_is_numpys(n, minlength, weighted, dtype, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = rng.integers(0, data.draw(st.integers(1, 100)), n).astype(dtype)
    w = rng.normal(size=n) if weighted else None
    got = bl.bincount(bl.asarray(x, chunks=(max(1, n // 4),)), weights=w, minlength=minlength).to_numpy()
    want = np.bincount(x, weights=w, minlength=minlength)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_bincount_errors_name_the_problem():
    with pytest.raises(ValueError, match="no negative elements"):
        bl.bincount(np.array([1, -2, 3]))
    with pytest.raises(TypeError, match="integer dtype"):
        bl.bincount(np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="1-dimensional"):
        bl.bincount(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="same length"):
        bl.bincount(np.array([1, 2]), weights=np.ones(3))
    with pytest.raises(ValueError, match="2\\*\\*28"):
        bl.bincount(np.array([2**40]))


@examples(80)
@given(
    n=st.integers(0, 400),
    bins=st.one_of(st.integers(1, 20), st.lists(st.floats(-10, 10), min_size=2, max_size=8)),
    use_range=st.booleans(),
    weighted=st.booleans(),
    density=st.booleans(),
    nan=st.booleans(),
    dtype=st.sampled_from(["float64", "int64", "float32"]),
    data=st.data(),
)
def test_histogram_is_numpys(n, bins, use_range, weighted, density, nan, dtype, data):
    x = _values(data, n, dtype, nan and use_range)
    if not isinstance(bins, int):
        bins = sorted(bins)
    rng = (-5.0, 3.5) if use_range else None
    w = np.random.default_rng(n).random(n) if weighted else None
    if isinstance(bins, int) and rng is None and np.isnan(x).any() if x.dtype.kind == "f" else False:
        return
    chunks = (data.draw(st.integers(1, max(1, n))),)
    try:
        want_h, want_e = np.histogram(x, bins=bins, range=rng, weights=w, density=density)
    except ValueError:
        with pytest.raises(ValueError):
            bl.histogram(bl.asarray(x, chunks=chunks), bins=bins, range=rng, weights=w, density=density)
        return
    got_h, got_e = bl.histogram(bl.asarray(x, chunks=chunks), bins=bins, range=rng, weights=w, density=density)
    assert got_e.dtype == want_e.dtype
    np.testing.assert_array_equal(got_e, want_e)
    got = got_h.to_numpy()
    assert got.dtype == want_h.dtype
    if density or weighted:
        np.testing.assert_allclose(got, want_h, rtol=1e-12)
    else:
        np.testing.assert_array_equal(got, want_h)


def test_histogram_edges():
    x = np.array([0.0, 1.0, 2.0, 3.0, 3.0, np.nan, 4.0])
    h, e = bl.histogram(x, bins=3, range=(0, 3))  # values on the last edge: in the last bin
    wh, we = np.histogram(x, bins=3, range=(0, 3))
    np.testing.assert_array_equal(h.to_numpy(), wh)
    np.testing.assert_array_equal(e, we)
    with pytest.raises(ValueError, match="autodetected range of \\[nan, nan\\] is not finite"):
        bl.histogram(x)
    h, e = bl.histogram(np.array([], dtype=np.float64))
    np.testing.assert_array_equal(h.to_numpy(), np.histogram(np.array([]))[0])
    np.testing.assert_array_equal(e, np.histogram(np.array([]))[1])
    h, e = bl.histogram(np.full(5, 2.5), bins=4)  # one value: range +- 0.5, as NumPy
    np.testing.assert_array_equal(e, np.histogram(np.full(5, 2.5), bins=4)[1])
    with pytest.raises(ValueError, match="not supported"):
        bl.histogram(x, bins="auto")
    with pytest.raises(ValueError, match="increase monotonically"):
        bl.histogram(x, bins=[0, 2, 1])
    with pytest.raises(ValueError, match="max must be larger than min"):
        bl.histogram(x, range=(2, 1))


@examples(50)
@given(
    n=st.integers(0, 300),
    bins=st.one_of(st.integers(1, 9), st.tuples(st.integers(1, 6), st.integers(1, 6))),
    use_range=st.booleans(),
    weighted=st.booleans(),
    density=st.booleans(),
    data=st.data(),
)
def test_histogram2d_is_numpys(n, bins, use_range, weighted, density, data):
    x = _values(data, n, "float64", False)
    y = _values(data, n, "float64", False)
    rng = [[-4, 4], [-2, 6]] if use_range else None
    w = np.random.default_rng(n).random(n) if weighted else None
    chunks = (data.draw(st.integers(1, max(1, n))),)
    with np.errstate(all="ignore"):
        want = np.histogram2d(x, y, bins=bins, range=rng, weights=w, density=density)
    got = bl.histogram2d(
        bl.asarray(x, chunks=chunks), bl.asarray(y, chunks=chunks), bins=bins, range=rng, weights=w, density=density
    )
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[2], want[2])
    g = got[0].to_numpy()
    assert g.dtype == want[0].dtype and g.shape == want[0].shape
    np.testing.assert_allclose(g, want[0], rtol=1e-12)


def test_histogram2d_with_edges_and_nan():
    x = np.array([0.0, 1.0, 2.0, np.nan, 1.5])
    y = np.array([0.0, 1.0, 2.0, 1.0, 5.0])
    edges = [np.array([0.0, 1.0, 2.0]), np.array([0.0, 0.5, 2.0])]
    got = bl.histogram2d(x, y, bins=edges)
    want = np.histogram2d(x, y, bins=edges)
    np.testing.assert_array_equal(got[0].to_numpy(), want[0])


def test_histogram_streams_a_stored_array_chunk_by_chunk(tmp_path):
    a = np.random.default_rng(0).normal(size=200_000)
    bl.asarray(a, chunks=(10_000,)).compute(urlpath=str(tmp_path / "a.b2nd"))
    x = bl.open(str(tmp_path / "a.b2nd"))
    h, e = bl.histogram(x, bins=50, range=(-4, 4))  # range given: nothing read at call time
    out = h.compute()
    np.testing.assert_array_equal(out.to_numpy(), np.histogram(a, bins=50, range=(-4, 4))[0])
    assert out.stats["chunks_decompressed"]["total"] == 20  # each of the 20 chunks once
    counts = bl.bincount(bl.astype(bl.abs(x) * 10, "int64")).compute()
    assert counts.stats["chunks_decompressed"]["total"] == 20
    np.testing.assert_array_equal(counts.to_numpy(), np.bincount((np.abs(a) * 10).astype(np.int64)))


def test_expression_strings():
    ops = {"a": bl.asarray(np.array([1, 5, 2, 2, 9]))}
    np.testing.assert_array_equal(
        bl.evaluate("bincount(a, minlength=12)", ops).to_numpy(), np.bincount([1, 5, 2, 2, 9], minlength=12)
    )
    np.testing.assert_array_equal(
        bl.evaluate("isin(a, [2, 9], invert=True)", ops).to_numpy(), np.isin([1, 5, 2, 2, 9], [2, 9], invert=True)
    )
    np.testing.assert_array_equal(
        bl.evaluate("histogram(a, 3)[0]", ops).to_numpy(), np.histogram([1, 5, 2, 2, 9], 3)[0]
    )
    np.testing.assert_array_equal(
        bl.evaluate("histogram2d(a, a, [2, [0, 5, 10]])[0]", ops).to_numpy(),
        np.histogram2d([1, 5, 2, 2, 9], [1, 5, 2, 2, 9], [2, [0, 5, 10]])[0],
    )


def test_saved_bincount_defers_its_max(tmp_path):
    x = bl.asarray(np.array([3, 1, 4, 1, 5]))
    c = bl.bincount(x * 2)
    c.save(str(tmp_path / "c.b2lazy"))
    back = bl.open(str(tmp_path / "c.b2lazy"))
    assert "deferred bincount" in repr(back)  # reopening computes nothing; max(x) on first use
    np.testing.assert_array_equal(back.to_numpy(), np.bincount(np.array([3, 1, 4, 1, 5]) * 2))
