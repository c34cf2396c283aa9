"""The Plan object (issue #12): expr.plan(**compute options) is the plan compute() runs;
str() is explain()'s text; execute() runs any range of its tasks into one result."""

import numpy as np
import pytest

import b2lazy as bl


def reduction_expr():
    x = np.arange(60 * 50, dtype=np.float64).reshape(60, 50) / 7
    a = bl.asarray(x, chunks=(7, 9), blocks=(7, 3))
    return a - bl.mean(a, axis=0) + bl.sum(a), x - x.mean(axis=0) + x.sum()


def test_plan_exposes_layout_stages_tasks_and_peak():
    e, want = reduction_expr()
    p = e.plan(chunks=(8, 10), max_memory=2**26, nthreads=2)
    assert p.shape == (60, 50) and p.dtype == "float64"
    assert p.chunks == (8, 10) and p.nchunks == 8 * 5
    assert p.max_memory == 2**26 and p.nworkers == 2
    assert p.ntasks == len(p.tasks) == 40
    assert [t["chunks"] for t in p.tasks] == [(i, i + 1) for i in range(40)]
    assert all(t["projected_bytes"] > 0 for t in p.tasks)
    assert p.projected_peak >= max(t["projected_bytes"] for t in p.tasks)
    computed = [s for s in p.stages if not s["source"]]
    assert sorted(s["kind"] for s in computed) == ["mean", "sum"], p.stages
    # a's chunks (7, 9), whose blocks do not keep their C order, are read whole by each of
    # the 8 x 10 output chunks overlapping them: the plan keeps a too (small: dense).
    assert [s["kind"] for s in p.stages if s["source"]] == ["b2nd"]
    assert all(s["where"] == "dense" for s in p.stages)
    assert p.kept_bytes == sum(s["bytes"] for s in p.stages)
    assert [line.split(":")[0] for line in p.passes][0] == "layout"
    assert p.passes[-1].startswith("tasks:")
    text = str(p)
    for word in ["plan:", "passes:", "computed once", "tasks:", "peak memory", "mean(axis=0)"]:
        assert word in text
    np.testing.assert_allclose(p.execute(), want, rtol=1e-12)
    np.testing.assert_allclose(p.compute()[:], want, rtol=1e-12)


def test_disjoint_task_ranges_fill_one_result():
    e, want = reduction_expr()
    p = e.plan(chunks=(8, 10))
    out = np.full(want.shape, np.nan)
    k = p.ntasks // 3
    p.execute(out, k, 2 * k)
    assert np.isnan(out).any()  # the other tasks' chunks are untouched
    nstages = len(p.stages)
    assert nstages >= 2 and p.last_stats["stages_reused"] == 0
    assert p.last_stats["cache_misses"] + p.last_stats["sources_kept"] == nstages
    p.execute(out, 2 * k)
    # the stages the first range computed are kept with the plan: read, not computed again
    assert p.last_stats["stages_reused"] == nstages
    assert p.last_stats["cache_misses"] == p.last_stats["sources_kept"] == 0
    p.execute(out, 0, k)
    np.testing.assert_allclose(out, want, rtol=1e-12)
    np.testing.assert_array_equal(out, e.to_numpy())
    assert p.last_stats["output_chunks"] == sum(t["chunks"][1] - t["chunks"][0] for t in p.tasks[:k])


def test_execute_checks_its_arguments():
    e, want = reduction_expr()
    p = e.plan()
    with pytest.raises(ValueError, match="shape"):
        p.execute(np.empty((60, 49)))
    with pytest.raises(ValueError, match="dtype"):
        p.execute(np.empty((60, 50), np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        p.execute(np.empty((50, 60)).T)
    with pytest.raises(TypeError):
        p.execute([[0.0] * 50] * 60)
    with pytest.raises(IndexError, match="range"):
        p.execute(None, 0, p.ntasks + 1)
    with pytest.raises(IndexError, match="range"):
        p.execute(None, 2, 1)
    with pytest.raises(TypeError):
        p.execute(None, 0.5)


def test_plan_refuses_bad_options_like_compute():
    e, _ = reduction_expr()
    with pytest.raises(ValueError, match="chunks"):
        e.plan(chunks=(0, 5))
    with pytest.raises(ValueError, match="max_memory"):
        e.plan(max_memory=0)


def test_explain_prints_the_plan_compute_ran():
    e, _ = reduction_expr()
    p = e.plan(chunks=(8, 10), max_memory=2**26)
    r = e.compute(chunks=(8, 10), max_memory=2**26)
    measured = r.explain()
    assert measured.startswith(str(p).split("\n")[0])  # the same layout and budget
    assert "measured:" in measured and "computed once: 2 nodes, 1 source kept" in measured
    assert r.stats["cache_misses"] + r.stats["sources_kept"] == len(p.stages) == 3
    assert r.stats["output_chunks"] == p.nchunks


def test_plain_elementwise_over_identically_stored_operands_is_block_major():
    x = np.random.default_rng(1).random((64, 64))
    a = bl.asarray(x, chunks=(16, 64), blocks=(4, 64))
    p = bl.sin(a).plan()
    assert p.block_major and p.stages == [] and p.chunks == (16, 64) and p.blocks == (4, 64)
    r = p.compute()
    assert r.stats["block_major_path"]
    np.testing.assert_allclose(r[:], np.sin(x), rtol=1e-14)
