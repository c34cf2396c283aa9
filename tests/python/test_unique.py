"""unique_values / unique_counts / unique_inverse / unique_all (issue #15, item 3): NumPy 2
is the oracle (each NaN distinct, -0.0 equal to 0.0, indices the first occurrence,
inverse_indices of x's shape). Sort-based: the same checks with runs of a few elements
(merged out of core), and a unique larger than max_memory."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import b2lazy
from conftest import DTYPES, base_shapes, examples, make_source, random_values
from test_sorting import sort_runs


def check_unique(x, lazy, descr):
    want = np.unique_all(x)
    got = b2lazy.unique_all(lazy)
    assert got.values.dtype == x.dtype and got.indices.dtype == np.int64
    np.testing.assert_array_equal(got.values.to_numpy(), want.values, err_msg=descr)
    np.testing.assert_array_equal(got.indices.to_numpy(), want.indices, err_msg=descr)
    np.testing.assert_array_equal(got.inverse_indices.to_numpy(), want.inverse_indices, err_msg=descr)
    np.testing.assert_array_equal(got.counts.to_numpy(), want.counts, err_msg=descr)
    v, c = b2lazy.unique_counts(lazy)
    np.testing.assert_array_equal(c.to_numpy(), want.counts, err_msg=descr)
    v, inv = b2lazy.unique_inverse(lazy)
    assert inv.shape == x.shape
    np.testing.assert_array_equal(inv.to_numpy(), want.inverse_indices, err_msg=descr)
    # (NumPy 2.4's unique_values hashes integers: its order is unspecified, as the standard
    # allows; ours is sorted, as unique_all's)
    np.testing.assert_array_equal(b2lazy.unique_values(lazy).to_numpy(), want.values, err_msg=descr)


@given(
    dtype=st.sampled_from(DTYPES),
    shape=base_shapes(min_ndim=0, max_ndim=3),
    run=st.sampled_from([None, 1, 3, 8]),
    kind=st.sampled_from(["numpy", "mem", "disk"]),
    data=st.data(),
)
@examples(60)
def test_unique_matches_numpy(dtype, shape, run, kind, data, tmp_path):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = random_values(rng, np.dtype(dtype), shape)
    if x.size:  # repeated values
        x = x.reshape(-1)[rng.integers(0, max(1, x.size // 3 + 1), x.size)].reshape(shape)
    if x.dtype.kind == "f" and x.size and data.draw(st.booleans()):
        x.reshape(-1)[rng.integers(0, x.size, x.size // 2 + 1)] = rng.choice([0.0, -0.0, np.nan], x.size // 2 + 1)
    lazy, descr = make_source(data.draw, x, kind, str(tmp_path))
    if run is None:
        check_unique(x, lazy, descr)
    else:
        with sort_runs(run):
            check_unique(x, lazy, descr)


def test_unique_larger_than_max_memory(tmp_path):
    """64 MiB of float64 with many repeats, within a 48 MiB budget: sorted out of core
    into a temporary file (gone once the results are), counted, selected."""
    x = np.random.default_rng(11).integers(0, 1 << 20, 8 << 20).astype(np.float64)
    path = str(tmp_path / "x.b2nd")
    b2lazy.asarray(x).compute(urlpath=path, chunks=(1 << 20,), blocks=(1 << 16,))
    with sort_runs(1 << 19):
        v, c = b2lazy.unique_counts(b2lazy.open(path), max_memory=48 << 20)
    want = np.unique_counts(x)
    np.testing.assert_array_equal(v.to_numpy(max_memory=48 << 20), want.values)
    np.testing.assert_array_equal(c.to_numpy(max_memory=48 << 20), want.counts)


def test_unique_errors():
    with pytest.raises(TypeError):
        b2lazy.unique_values(np.zeros(3), max_memory="a lot")
