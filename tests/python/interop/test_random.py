"""b2lazy.random: counter-based (Philox4x32-10) lazy random arrays. The values of an
element depend on (seed, stream, flat index) only: any region, chunking or thread count
gives the same values. Statistical checks use fixed seeds (deterministic) with bounds
several standard errors wide."""

import math
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy as bl
from conftest import base_shapes, examples


def _draws(rng, kind, shape, chunks, dtype):
    if kind == "random":
        return rng.random(shape, dtype=dtype, chunks=chunks)
    if kind == "uniform":
        return rng.uniform(-3.5, 2.0, shape, dtype=dtype, chunks=chunks)
    if kind == "normal":
        return rng.normal(1.0, 2.0, shape, dtype=dtype, chunks=chunks)
    return rng.integers(-7, 9, shape, chunks=chunks)


@examples(40)
@given(
    shape=base_shapes(min_ndim=1, max_ndim=3),
    kind=st.sampled_from(["random", "uniform", "normal", "integers"]),
    dtype=st.sampled_from(["float32", "float64"]),
    seed=st.integers(0, 2**64 - 1),
    data=st.data(),
)
def test_any_region_chunking_and_thread_count_give_the_same_values(shape, kind, dtype, seed, data):
    whole = _draws(bl.random.default_rng(seed), kind, shape, None, dtype).to_numpy(nthreads=1)
    chunks = tuple(data.draw(st.integers(1, max(1, s))) for s in shape)
    again = _draws(bl.random.default_rng(seed), kind, shape, chunks, dtype)
    np.testing.assert_array_equal(again.to_numpy(nthreads=2), whole)
    key = tuple(
        slice(data.draw(st.integers(0, s)), data.draw(st.integers(0, s)), data.draw(st.sampled_from([1, 2, -1, 3])))
        for s in shape
    )
    np.testing.assert_array_equal(again[key].to_numpy(nthreads=2), whole[key])
    # a stored copy with other chunks: the same values
    np.testing.assert_array_equal(again.compute(chunks=tuple(max(1, s // 2) for s in shape)).to_numpy(), whole)


def test_calls_differ_seeds_repeat():
    rng = bl.random.default_rng(123)
    a, b = rng.random(100).to_numpy(), rng.random(100).to_numpy()
    assert not np.array_equal(a, b)
    rng2 = bl.random.default_rng(123)
    np.testing.assert_array_equal(rng2.random(100).to_numpy(), a)
    np.testing.assert_array_equal(rng2.random(100).to_numpy(), b)
    assert not np.array_equal(bl.random.default_rng(124).random(100).to_numpy(), a)


def test_seed_none_draws_one_seed_that_saves():
    rng = bl.random.default_rng()
    assert 0 <= rng.seed < 2**64
    x = rng.normal(size=(50, 40), chunks=(7, 9))
    y = pickle.loads(pickle.dumps(x))
    np.testing.assert_array_equal(y.to_numpy(), x.to_numpy())
    z = pickle.loads(pickle.dumps(rng))  # the Generator goes on with the same streams
    np.testing.assert_array_equal(z.random(5).to_numpy(), rng.random(5).to_numpy())


def test_saved_expression_round_trip(tmp_path):
    rng = bl.random.default_rng(99)
    e = rng.integers(0, 10, (30, 30)) + rng.uniform(size=(30, 30), dtype="float32") * 2
    e.save(str(tmp_path / "r.b2lazy"))
    back = bl.open(str(tmp_path / "r.b2lazy"))
    np.testing.assert_array_equal(back.to_numpy(), e.to_numpy())


def test_expression_strings_call_the_sources():
    a = bl.evaluate("random_uniform((4, 6), 1.0, 2.0, seed=5, stream=3) * 2", {})
    b = bl.random_uniform((4, 6), 1.0, 2.0, seed=5, stream=3) * 2
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())


def _ks(sample, cdf):
    """Kolmogorov–Smirnov statistic of a sample against a CDF."""
    s = np.sort(sample)
    n = len(s)
    f = cdf(s)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


@pytest.mark.parametrize("seed", [0, 1, 2**63 + 5])
def test_distributions_are_sane(seed):
    n = 200_000
    rng = bl.random.default_rng(seed)
    crit = 1.95 / math.sqrt(n)  # KS at alpha = 0.001: 1.95 / sqrt(n)
    u = rng.random(n).to_numpy()
    assert 0 <= u.min() and u.max() < 1
    assert _ks(u, lambda s: s) < crit
    u32 = rng.random(n, dtype=np.float32).to_numpy()
    assert u32.dtype == np.float32 and 0 <= u32.min() and u32.max() < 1
    assert _ks(u32.astype(np.float64), lambda s: s) < crit
    z = rng.normal(3.0, 2.0, n).to_numpy()
    assert abs(z.mean() - 3.0) < 5 * 2.0 / math.sqrt(n)
    assert abs(z.std() - 2.0) < 0.02
    from math import erf

    cdf = np.vectorize(lambda v: 0.5 * (1 + erf((v - 3.0) / (2.0 * math.sqrt(2)))))
    assert _ks(z[:20_000], cdf) < 1.95 / math.sqrt(20_000)
    k = rng.integers(-3, 4, n).to_numpy()
    counts = np.bincount(k + 3, minlength=7)
    assert k.min() == -3 and k.max() == 3
    expected = n / 7
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 22.46  # chi-squared, 6 degrees of freedom, alpha = 0.001


@pytest.mark.parametrize(
    "dtype,low,high,endpoint",
    [
        ("int8", -128, 127, True),
        ("uint8", 0, 256, False),
        ("int64", -(2**63), 2**63 - 1, True),
        ("uint64", 0, 2**64 - 1, True),
        ("uint64", 2**63, 2**64, False),
        ("int32", -5, -4, False),
        ("int16", -1000, 1000, False),
    ],
)
def test_integer_ranges_and_edges(dtype, low, high, endpoint):
    v = bl.random.default_rng(11).integers(low, high, 5000, dtype=dtype, endpoint=endpoint).to_numpy()
    assert v.dtype == np.dtype(dtype)
    top = high if endpoint else high - 1
    assert low <= int(v.min()) and int(v.max()) <= top
    if top - low < 1000:
        assert int(v.min()) == low and int(v.max()) == top  # every value is reached


def test_full_int64_range_uses_all_bits():
    v = bl.random.default_rng(3).integers(-(2**63), 2**63, 10_000, endpoint=False).to_numpy()
    assert (v < 0).mean() == pytest.approx(0.5, abs=0.03)
    assert (v & 1).mean() == pytest.approx(0.5, abs=0.03)


@pytest.mark.parametrize(
    "call,exc,words",
    [
        (lambda r: r.integers(5, 5), ValueError, "low >= high"),
        (lambda r: r.integers(0, 300, dtype="uint8"), ValueError, "out of bounds for uint8"),
        (lambda r: r.integers(-1, 3, dtype="uint16"), ValueError, "out of bounds for uint16"),
        (lambda r: r.integers(0.5, 3), TypeError, "low must be an int"),
        (lambda r: r.random(3, dtype="int32"), TypeError, "float32 or float64"),
        (lambda r: r.normal(0, -1, 3), ValueError, "scale"),
        (lambda r: r.uniform([0, 1], 2, 3), ValueError, "do not broadcast"),
        (lambda r: r.normal(0, [1, -1]), ValueError, "scale"),
        (lambda r: r.integers([0, 1], 5), TypeError, "low must be a scalar"),
        (lambda r: r.random((2, -1)), ValueError, "negative dimensions"),
    ],
)
def test_bad_arguments_are_named(call, exc, words):
    with pytest.raises(exc, match=words):
        call(bl.random.default_rng(0))


def test_bad_seeds():
    with pytest.raises(ValueError, match="seed"):
        bl.random.default_rng(-1)
    with pytest.raises(TypeError, match="seed"):
        bl.random.default_rng(1.5)
    with pytest.raises(ValueError, match="seed"):
        bl.random.default_rng(2**64)


def test_size_none_is_0d_and_sources_read_nothing():
    rng = bl.random.default_rng(8)
    x = rng.random()
    assert x.shape == () and 0 <= float(x.to_numpy()) < 1
    big = rng.random((10**6, 10**6), chunks=(1000, 1000))  # 8 TB, never materialised
    assert big.shape == (10**6, 10**6)
    np.testing.assert_array_equal(big[123456, 5:9].to_numpy(), big[123456:123457, 5:9].to_numpy()[0])


def test_array_parameters_broadcast():
    rng = bl.random.default_rng(21)
    low = np.array([0.0, 10.0, 100.0])
    x = rng.uniform(low, low + 1, size=(4, 3)).to_numpy()
    assert x.shape == (4, 3) and ((x >= low) & (x < low + 1)).all()
    z = bl.random.default_rng(21).normal(np.array([[0.0], [50.0]]), 0.0).to_numpy()
    np.testing.assert_array_equal(z, [[0.0], [50.0]])
    # the values of the scalar form: low + (high - low) * u of the same stream (to rounding:
    # the fused elementwise kernel may contract the multiply-add)
    a = bl.random.default_rng(3).uniform(np.array([2.0]), 5.0, size=6).to_numpy()
    b = bl.random.default_rng(3).uniform(2.0, 5.0, size=6).to_numpy()
    np.testing.assert_allclose(a, b, rtol=4e-16)
