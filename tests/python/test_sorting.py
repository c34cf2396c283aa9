"""sort / argsort along an axis (issue #15, item 3): NumPy is the oracle (a stable sort;
descending keeps equal values in their order; NaNs last). Lanes longer than two runs are
sorted out of core (runs kept or spilled, merged per output region): the same checks
with runs of a few elements, and a sort larger than max_memory."""

import contextlib
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

import b2lazy
from conftest import DTYPES, base_shapes, chunks_blocks, examples, make_source, random_values


def reference_order(x, axis, descending):
    """The stable order of each lane of x along axis: NaNs last, equal values by position."""

    def lane_order(v):
        nan = np.isnan(v) if v.dtype.kind == "f" else np.zeros(v.shape, bool)
        _, rank = np.unique(np.where(nan, 0, v), return_inverse=True)
        key = np.where(nan, np.iinfo(np.int64).max, -rank.reshape(-1) if descending else rank.reshape(-1))
        return np.lexsort((np.arange(v.size), key))

    if x.size == 0:
        return np.zeros(x.shape, np.int64)
    return np.apply_along_axis(lane_order, axis, x)


@contextlib.contextmanager
def sort_runs(n):
    """Graphs built inside sort lanes longer than 2 * n elements out of core."""
    old = b2lazy._core.sort_run_length()
    b2lazy._core.set_sort_run_length(n)
    try:
        yield
    finally:
        b2lazy._core.set_sort_run_length(old)


@given(
    dtype=st.sampled_from(DTYPES),
    shape=base_shapes(min_ndim=1, max_ndim=3),
    descending=st.booleans(),
    stable=st.booleans(),
    kind=st.sampled_from(["numpy", "mem", "disk"]),
    data=st.data(),
)
@examples(80)
def test_sort_and_argsort_match_numpy(dtype, shape, descending, stable, kind, data, tmp_path):
    check_sorts(dtype, shape, descending, stable, kind, data, tmp_path)


@given(
    dtype=st.sampled_from(DTYPES),
    shape=base_shapes(min_ndim=1, max_ndim=3),
    descending=st.booleans(),
    run=st.integers(1, 9),
    kind=st.sampled_from(["numpy", "mem", "disk"]),
    data=st.data(),
)
@examples(80)
def test_out_of_core_sorts_match_numpy(dtype, shape, descending, run, kind, data, tmp_path):
    """Runs of `run` elements: lanes longer than 2 * run are merged from sorted runs."""
    with sort_runs(run):
        check_sorts(dtype, shape, descending, True, kind, data, tmp_path)


def check_sorts(dtype, shape, descending, stable, kind, data, tmp_path):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = random_values(rng, np.dtype(dtype), shape)
    if x.dtype.kind in "iub" and x.size:  # repeated values: stability shows
        x = x[..., rng.integers(0, max(1, shape[-1]), shape[-1])] if shape[-1] else x
    if x.dtype.kind == "f" and x.size and data.draw(st.booleans()):  # signed zeros, NaNs: ties
        x.reshape(-1)[rng.integers(0, x.size, x.size // 2 + 1)] = rng.choice([0.0, -0.0, np.nan], x.size // 2 + 1)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    lazy, descr = make_source(data.draw, x, kind, str(tmp_path))
    order = reference_order(x, axis % x.ndim, descending)
    want = np.take_along_axis(x, order, axis)
    got_idx = b2lazy.argsort(lazy, axis=axis, descending=descending, stable=stable)
    got = b2lazy.sort(lazy, axis=axis, descending=descending, stable=stable)
    assert got_idx.dtype == np.int64 and got.dtype == x.dtype and got.shape == x.shape
    np.testing.assert_array_equal(got_idx.to_numpy(), order, err_msg=descr)
    np.testing.assert_array_equal(got.to_numpy(), want, err_msg=descr)
    if not descending:
        np.testing.assert_array_equal(got.to_numpy(), np.sort(x, axis=axis, kind="stable"))
    # output chunks that cut the axis, and a strided read: each region sorts its whole lanes
    chunks, blocks = data.draw(chunks_blocks(shape))
    np.testing.assert_array_equal(got.compute(chunks=chunks, blocks=blocks).to_numpy(), want)
    sl = tuple(slice(None, None, -2) for _ in shape)
    np.testing.assert_array_equal(got_idx[sl].to_numpy(), order[sl])


_REFUSED = re.compile(r"the smallest budget that works is (\d+) MiB")


@pytest.mark.parametrize("positions", [False, True])
def test_a_sort_larger_than_max_memory(positions, tmp_path):
    """64 MiB sorted within a budget under that: runs spilled and read back in slices; the
    source read once (argsort's runs hold (position, key) pairs)."""
    x = np.random.default_rng(7).standard_normal(8 << 20)
    x[::97] = x[5]  # ties
    path = str(tmp_path / "x.b2nd")
    b2lazy.asarray(x).compute(urlpath=path, chunks=(1 << 20,), blocks=(1 << 16,))
    with sort_runs(1 << 18):
        s = (b2lazy.argsort if positions else b2lazy.sort)(b2lazy.open(path))
    budget = 48 << 20
    try:
        r = s.compute(urlpath=str(tmp_path / "s.b2nd"), max_memory=budget)
    except ValueError as e:  # refused before any work: the smallest budget that works
        budget = int(_REFUSED.search(str(e)).group(1)) << 20
        r = s.compute(urlpath=str(tmp_path / "s.b2nd"), max_memory=budget)
    assert budget < x.nbytes
    assert r.stats["projected_peak_bytes"] <= budget and r.stats["peak_scratch_bytes"] <= budget
    read = r.stats["bytes_decompressed"]
    assert read[path] == x.nbytes
    assert any("spill" in k for k in read)  # the runs went to a temporary file
    got = b2lazy.open(str(tmp_path / "s.b2nd")).to_numpy()
    np.testing.assert_array_equal(got, np.argsort(x, kind="stable") if positions else np.sort(x))


def test_output_chunks_cutting_the_axis_sort_each_lane_once():
    """Output chunks that cut the sorted axis: the sort is kept (computed once, in whole
    lanes) instead of every chunk sorting its lanes again."""
    x = np.random.default_rng(9).standard_normal((64, 256))
    s = b2lazy.sort(b2lazy.asarray(x), axis=1)
    plan = s.plan(chunks=(16, 32))
    assert [st["kind"] for st in plan.stages] == ["sort"]
    r = s.compute(chunks=(16, 32))
    np.testing.assert_array_equal(r.to_numpy(), np.sort(x, axis=1))
    assert r.stats["cache_misses"] == 1  # computed once
    assert not b2lazy.sort(b2lazy.asarray(x), axis=1).plan(chunks=(16, 256)).stages  # whole lanes: nothing kept


def test_a_row_reads_only_its_chunks(tmp_path):
    x = np.random.default_rng(3).standard_normal((40, 30))
    path = str(tmp_path / "x.b2nd")
    b2lazy.asarray(x).compute(urlpath=path, chunks=(10, 10), blocks=(10, 10))
    s = b2lazy.sort(b2lazy.open(path), axis=1)
    part = s[12:14].compute()
    np.testing.assert_array_equal(part.to_numpy(), np.sort(x[12:14], axis=1))
    assert part.stats["distinct_chunks_decompressed"][path] == 3  # the row strip's 3 chunks


def test_sort_in_expressions_and_strings():
    x = np.array([[3.0, np.nan, 1.0], [2.0, 2.0, -1.0]])
    a = b2lazy.asarray(x)
    np.testing.assert_array_equal(b2lazy.evaluate("sort(a, axis=1) * 2", a=a).to_numpy(), np.sort(x, axis=1) * 2)
    np.testing.assert_array_equal(
        b2lazy.evaluate("argsort(a, axis=0, descending=True)", a=a).to_numpy(), np.array([[0, 1, 0], [1, 0, 1]])
    )
    np.testing.assert_array_equal((b2lazy.sort(a, axis=0) + a).to_numpy(), np.sort(x, axis=0) + x)


def test_sort_errors():
    with pytest.raises(ValueError, match="at least one dimension"):
        b2lazy.sort(b2lazy.asarray(1.0))
    with pytest.raises(np.exceptions.AxisError):
        b2lazy.argsort(b2lazy.zeros((2, 3)), axis=2)
    with pytest.raises(TypeError, match="descending"):
        b2lazy.sort(b2lazy.zeros(3), descending=1)


@given(
    dtype=st.sampled_from(DTYPES),
    n=st.integers(1, 60),
    vshape=base_shapes(min_ndim=0, max_ndim=3),
    side=st.sampled_from(["left", "right"]),
    use_sorter=st.booleans(),
    data=st.data(),
)
@examples(80)
def test_searchsorted_matches_numpy(dtype, n, vshape, side, use_sorter, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x1 = random_values(rng, np.dtype(dtype), (n,))
    values = np.concatenate([x1, random_values(rng, np.dtype(dtype), (n,))])  # hits and misses
    x2 = values[rng.integers(0, values.size, int(np.prod(vshape)))].reshape(vshape)
    if use_sorter:
        sorter = np.argsort(x1, kind="stable")
        want = np.searchsorted(x1, x2, side=side, sorter=sorter)
        got = b2lazy.searchsorted(x1, b2lazy.asarray(x2), side=side, sorter=sorter)
    else:
        x1 = np.sort(x1)
        want = np.searchsorted(x1, x2, side=side)
        chunks, blocks = data.draw(chunks_blocks((n,)))
        got = b2lazy.searchsorted(b2lazy.asarray(x1, chunks=chunks, blocks=blocks), x2, side=side)
    assert got.dtype == np.int64 and got.shape == x2.shape
    np.testing.assert_array_equal(got.to_numpy(), want)


def test_searchsorted_keeps_x1_once(tmp_path):
    """Many output chunks search the same stored x1: it is read once, kept."""
    x1 = np.sort(np.random.default_rng(5).standard_normal(5000))
    path = str(tmp_path / "x1.b2nd")
    b2lazy.asarray(x1).compute(urlpath=path, chunks=(1000,), blocks=(500,))
    x2 = np.random.default_rng(6).standard_normal(20000)
    r = b2lazy.searchsorted(b2lazy.open(path), x2).compute(chunks=(1000,))
    np.testing.assert_array_equal(r.to_numpy(), np.searchsorted(x1, x2))
    assert r.stats["bytes_decompressed"][path] == x1.nbytes
    with pytest.raises(ValueError, match="1-dimensional"):
        b2lazy.searchsorted(b2lazy.zeros((2, 2)), 1.0)
    with pytest.raises(ValueError, match="side"):
        b2lazy.searchsorted(x1, 1.0, side="middle")
