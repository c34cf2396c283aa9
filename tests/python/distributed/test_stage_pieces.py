"""Stages computed in pieces (b2lazy/distribute.hpp), in one process standing in for many:
each stage split for P processes, its pieces computed apart, merged pairwise in a tree,
finished, and imported into a second copy of the plan (another process), whose output
tasks then read them. Results equal NumPy for every reduction, on random layouts; the
split folds reductions of few chunks; missing or foreign pieces are refused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import b2lazy as bl
from b2lazy import _core


def _in_pieces(lazy, processes, tmp_path=None, **opts):
    """lazy computed as a cluster of `processes` would: (result, splits, stats)."""
    worker = lazy.plan(nthreads=1, **opts)  # the process computing the stages
    reader = lazy.plan(nthreads=1, **opts)  # another one, running the output tasks
    splits, finished = [], []
    for i, stage in enumerate(worker.stages):
        n, folds = _core.split_stage(worker._p, i, processes)
        splits.append((n, folds))
        pieces = []
        for k in range(n):
            path = str(tmp_path / f"s{i}p{k}.bin") if tmp_path is not None and not folds else ""
            data, _ = _core.compute_stage_piece(worker._p, i, k, processes, path, worker._ctx)
            pieces.append(path or data)
        while folds and len(pieces) > 2:  # a merge tree of fan-in 2
            pieces = [_core.merge_stage_pieces(worker._p, i, pieces[j : j + 2]) for j in range(0, len(pieces), 2)]
        path = str(tmp_path / f"s{i}.bin") if tmp_path is not None else ""
        data, _ = _core.finish_stage(worker._p, i, pieces, path, worker._ctx)
        _core.import_stage(worker._p, i, path or data)  # the stages after it read it
        finished.append(path or data)
    for i, f in enumerate(finished):
        _core.import_stage(reader._p, i, f)
    chunks, stats = _core.execute_part(reader._p, 0, reader.ntasks, "", reader._ctx)
    c = _core.OutputCommitter(reader._p)
    for cid, data in chunks:
        c.add(cid, data)
    r = c.finish(stats)
    return bl.Array(r, r.stats()).to_numpy(), splits, stats


REDUCTIONS = [
    "sum",
    "prod",
    "mean",
    "var",
    "std",
    "min",
    "max",
    "argmin",
    "argmax",
    "any",
    "all",
    "count_nonzero",
    "nansum",
    "nanprod",
    "nanmin",
    "nanmax",
    "nanmean",
    "nanvar",
    "nanstd",
    "nanargmin",
    "nanargmax",
    "logsumexp",
    "median",
]


def _logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    r = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return r if keepdims else np.squeeze(r, axis=axis)


def _with_nan(name, x):
    """x with one NaN for the nan* reductions to skip (never a whole row or column: nanarg*
    of an all-NaN slice raises, as NumPy's does)."""
    if name.startswith("nan") and x.dtype.kind == "f" and min(x.shape) > 1:
        x = x.copy()
        x.flat[x.size // 2] = np.nan
    return x


def _case(name, a, x, axis):
    fn, ref = getattr(bl, name), (_logsumexp if name == "logsumexp" else getattr(np, name))
    if name in ("any", "all", "count_nonzero"):
        a, x = a > 0.5, x > 0.5
    kd = axis is not None
    lazy_r = fn(a, axis=axis, keepdims=kd) if name not in ("argmin", "argmax") else fn(a, axis=axis, keepdims=kd)
    ref_r = ref(x, axis=axis, keepdims=kd)
    return lazy_r * 1 + a * 0, ref_r * 1 + x * 0  # broadcast over a: the reduction is a stage


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 70),
    m=st.integers(1, 40),
    cr=st.integers(1, 40),
    cc=st.integers(1, 40),
    name=st.sampled_from(REDUCTIONS),
    axis=st.sampled_from([None, 0, 1]),
    processes=st.integers(1, 6),
    dtype=st.sampled_from(["float64", "float32", "int32"]),
    seed=st.integers(0, 2**16),
    big=st.booleans(),
)
def test_reductions_in_pieces_equal_numpy(n, m, cr, cc, name, axis, processes, dtype, seed, big):
    if big:  # pieces of several slabs each (the smallest slab is 256 KiB)
        n, cr = n * 40, cr * 8
    rng = np.random.default_rng(seed)
    x = (rng.random((n, m)) * (10 if dtype == "int32" else 1)).astype(dtype)
    if name == "prod":
        x = (1 + x / 100).astype(dtype)
    x = _with_nan(name, x)
    a = bl.asarray(x, chunks=(cr, cc))
    lazy, ref = _case(name, a, x, axis)
    got, splits, _ = _in_pieces(lazy, processes, max_memory=4 << 20 if big else None)
    np.testing.assert_allclose(got, ref, rtol=1e-5 if dtype == "float32" or name == "prod" else 1e-10, atol=1e-12)


@pytest.mark.parametrize("name", [r for r in REDUCTIONS if r != "median"])  # (median: no fold)
@pytest.mark.parametrize("axis", [None, 0])
def test_pieces_of_several_slabs(name, axis):
    """Each fold piece spans many slabs (4 MiB budget: 256 KiB slabs; 2.4 MiB per piece)."""
    rng = np.random.default_rng(5)
    x = rng.random((4000, 300))
    if name == "prod":
        x = 1 + x / 1000
    x = _with_nan(name, x)
    a = bl.asarray(x, chunks=(100, 300))
    lazy, ref = _case(name, a, x, axis)
    got, splits, _ = _in_pieces(lazy, 2, max_memory=4 << 20)
    assert splits[-1] == (4, True), splits
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-9)


def test_a_scalar_reduction_folds_over_the_input_and_a_kept_source_splits_by_chunks(tmp_path):
    x = np.random.default_rng(0).random((400, 300))
    a = bl.asarray(x, chunks=(50, 300))
    got, splits, stats = _in_pieces(bl.sum(a) + a, 2)
    np.testing.assert_allclose(got, x.sum() + x, rtol=1e-12)
    # the source, read twice and under 8 MiB, is kept (4 ranges of its chunks); the sum's
    # 8 input chunks folded in 4 parts
    assert splits == [(4, False), (4, True)], splits
    assert stats["stages_reused"] == 2 and stats["cache_misses"] == 0  # the reader computed nothing
    got, splits, _ = _in_pieces(bl.cumsum(a, axis=0) * 2, 3, tmp_path, chunks=(50, 100))
    np.testing.assert_allclose(got, np.cumsum(x, axis=0) * 2, rtol=1e-12)
    assert splits[0][0] == 6 and not splits[0][1], splits  # the source kept: 6 ranges of its 8 chunks


def test_a_small_dense_stage_that_does_not_fold_is_cut_in_cells(tmp_path):
    """mean(axis=0) over Zarr (no partial reads) on wide chunks: fill() would cut its one
    chunk in column pieces, so it does not fold; its chunk is cut in cells instead."""
    zarr = pytest.importorskip("zarr")
    x = np.random.default_rng(4).random((1024, 4096))
    z = zarr.create_array(str(tmp_path / "a.zarr"), shape=x.shape, chunks=(512, 1024), dtype="float64")
    z[...] = x
    a = bl.open(str(tmp_path / "a.zarr"))
    for processes in (1, 2, 3):
        got, splits, _ = _in_pieces(a - bl.mean(a, axis=0), processes)
        np.testing.assert_allclose(got, x - x.mean(axis=0), rtol=1e-12, atol=1e-12)
        assert splits[-1] == (2 * processes, False), splits  # one cell of the one chunk per piece


def test_stages_that_depend_on_stages_and_a_spilled_stage(tmp_path):
    rng = np.random.default_rng(2)
    x3, y = rng.random((64, 3, 48)), rng.random((48, 40))
    a3, b = bl.asarray(x3, chunks=(16, 3, 16)), bl.asarray(y, chunks=(16, 40))
    lazy = bl.matmul(bl.sum(a3, axis=1), b) + bl.mean(bl.sum(a3, axis=1))
    ref = x3.sum(axis=1) @ y + x3.sum(axis=1).mean()
    for budget in (None, 1 << 20):
        got, splits, _ = _in_pieces(lazy, 2, tmp_path, max_memory=budget)
        np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_missing_foreign_and_unimported_pieces_are_refused():
    x = np.random.default_rng(1).random((200, 30))
    a = bl.asarray(x, chunks=(20, 30))
    b = bl.asarray(x[::-1].copy(), chunks=(20, 30))  # (a source read once: not kept, one stage)
    p = (bl.sum(a) + b).plan(nthreads=1)
    n, folds = _core.split_stage(p._p, 0, 2)
    pieces = [_core.compute_stage_piece(p._p, 0, k, 2, "", p._ctx)[0] for k in range(n)]
    with pytest.raises(ValueError, match="3 of its 4 pieces given"):
        _core.finish_stage(p._p, 0, pieces[:3], "", p._ctx)
    with pytest.raises(IndexError, match="has 4 pieces, not piece 4"):
        _core.compute_stage_piece(p._p, 0, 4, 2, "", p._ctx)
    with pytest.raises(ValueError, match="not a piece of a stage"):
        _core.merge_stage_pieces(p._p, 0, [b"garbage!" * 8])
    with pytest.raises(ValueError, match="not a finished stage"):
        _core.import_stage(p._p, 0, pieces[0])
    with pytest.raises(IndexError, match="stage 1 of a plan with 1 stages"):
        _core.split_stage(p._p, 1, 2)
    q = (bl.mean(bl.cumsum(a, axis=0)) + a).plan(nthreads=1)
    if len(q.stages) > 1:
        with pytest.raises(ValueError, match="not imported yet"):
            _core.compute_stage_piece(q._p, len(q.stages) - 1, 0, 2, "", q._ctx)
