"""Windows of decompressed blocks (issue #12, item 5): a source whose tasks pull parts of
the same blocks in turn — row bands of column strips, as a flattened scan reads them, or a
strip read twice by `a - mean(a, 0)` — is read through a window of its last blocks, not
kept whole: decompressed about once while the plan holds a few blocks, never the array."""

import blosc2
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import b2lazy as bl

MiB = 1 << 20


def column_strips(tmp_path, shape, chunk_cols, block_rows, seed=0, dtype="f8"):
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    p = str(tmp_path / f"cols_{shape[0]}x{shape[1]}_{chunk_cols}_{block_rows}.b2nd")
    blosc2.asarray(x, urlpath=p, mode="w", chunks=(shape[0], chunk_cols), blocks=(block_rows, chunk_cols))
    return bl.open(p), x, p


@pytest.mark.parametrize("nthreads", [1, 2])
def test_a_flattened_scan_over_column_strips_reads_them_once_through_a_window(tmp_path, nthreads):
    # 64 MiB in (8192, 32) strips of (1024, 32) blocks: a block row is 8 MiB, each 1 MiB
    # output chunk an eighth of one. Before: `a` kept dense (64 MiB), or 8x its reads.
    a, x, p = column_strips(tmp_path, (8192, 1024), 32, 1024)
    e = bl.cumsum(a)
    plan = e.plan(nthreads=nthreads)
    [w] = plan.windows
    # A block row (32 blocks), and another chunk's blocks for the second worker.
    assert w["name"] == p and w["blocks"] == 32 * nthreads
    assert w["bytes"] <= 8 * MiB * nthreads + nthreads * 256 * 1024
    assert w["pulled_bytes"] >= 7 * x.nbytes and w["read_bytes"] <= 1.1 * x.nbytes
    assert [s for s in plan.stages if s["source"]] == []  # not kept
    assert plan.projected_peak <= 28 * MiB  # the window and the workers: not the 64 MiB array
    assert f"read through a window of its last {32 * nthreads} decompressed blocks" in str(plan)

    r = e.compute(urlpath=str(tmp_path / "o.b2nd"), nthreads=nthreads)
    np.testing.assert_allclose(r[...], np.cumsum(x), rtol=1e-9, atol=1e-6)
    s = r.stats
    assert s["bytes_decompressed"][p] <= 1.25 * x.nbytes, s  # before: 8x, or kept whole
    assert s["window_hits"] > 0 and s["sources_kept"] == 0
    assert s["peak_scratch_bytes"] <= plan.projected_peak
    assert "blocks read from a window of decompressed blocks" in r.explain()


def test_a_minus_its_column_means_over_strips_reads_each_strip_once(tmp_path):
    a, x, p = column_strips(tmp_path, (4096, 1024), 32, 512, seed=1)
    e = a - bl.mean(a, axis=0)
    plan = e.plan(nthreads=2)
    assert [w["name"] for w in plan.windows] == [p]
    assert plan.windows[0]["bytes"] <= 5 * MiB  # the 8 blocks of 2 workers' strips, not the 32 MiB array
    r = e.compute(nthreads=2)
    np.testing.assert_allclose(r[...], x - x.mean(axis=0), rtol=1e-9, atol=1e-12)
    assert r.stats["bytes_decompressed"][p] <= 1.25 * x.nbytes, r.stats


def test_execution_of_part_of_the_tasks_reads_through_the_window_too(tmp_path):
    a, x, p = column_strips(tmp_path, (8192, 1024), 32, 1024, seed=2)
    plan = bl.cumsum(a).plan(nthreads=2)
    assert plan.windows
    out = np.zeros(x.size)
    half = plan.ntasks // 2
    plan.execute(out, half, plan.ntasks)  # the later half first: its carries come from the totals
    plan.execute(out, 0, half)
    np.testing.assert_allclose(out, np.cumsum(x), rtol=1e-9, atol=1e-6)


def test_small_sources_are_kept_rather_than_windowed(tmp_path):
    a, x, p = column_strips(tmp_path, (512, 1024), 32, 128, seed=3)  # 4 MiB
    plan = bl.cumsum(a).plan(nthreads=2)
    assert plan.windows == []


def test_a_window_over_a_third_of_the_budget_gives_way_to_other_plans(tmp_path):
    a, x, p = column_strips(tmp_path, (8192, 1024), 32, 1024, seed=4)
    plan = bl.cumsum(a).plan(nthreads=2, max_memory=40 * MiB)  # the window (16.5 MiB) > 13.3 MiB
    assert plan.windows == []
    r = bl.cumsum(a).compute(nthreads=2, max_memory=40 * MiB)
    np.testing.assert_allclose(r[...], np.cumsum(x), rtol=1e-9, atol=1e-6)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.sampled_from([1536, 2048, 3000]),
    cols=st.sampled_from([512, 700, 1024]),
    chunk_cols=st.sampled_from([16, 32, 48]),
    block_rows=st.sampled_from([256, 512, 1000]),
    dtype=st.sampled_from(["f8", "f4", "i4"]),
    work=st.sampled_from(["cumsum", "minus_mean", "sum1", "cumsum0"]),
    budget=st.sampled_from([None, 32 * MiB, 64 * MiB]),
    nthreads=st.sampled_from([1, 2]),
)
def test_column_strips_through_windows_equal_numpy(
    tmp_path, rows, cols, chunk_cols, block_rows, dtype, work, budget, nthreads
):
    a, x, p = column_strips(tmp_path, (rows, cols), chunk_cols, min(block_rows, rows), dtype=dtype)
    # b2lazy scans floats in float64 (README): the reference too, not NumPy's float32 running
    # sum, whose error over 3 M elements exceeds the tolerance
    acc = np.float64 if x.dtype.kind == "f" else None
    exprs = {
        "cumsum": (bl.cumsum(a), lambda: np.cumsum(x, dtype=acc).astype(x.dtype)),
        "minus_mean": (a - bl.mean(a, axis=0), lambda: x - x.mean(axis=0)),
        "sum1": (bl.sum(a, axis=1), lambda: x.sum(axis=1)),
        "cumsum0": (bl.cumulative_sum(a, axis=0), lambda: np.cumsum(x, axis=0, dtype=acc).astype(x.dtype)),
    }
    e, ref = exprs[work]
    kw = {} if budget is None else {"max_memory": budget}
    try:
        plan = e.plan(nthreads=nthreads, **kw)
    except ValueError as err:  # refused before any work, naming a budget that works
        assert "the smallest budget that works is" in str(err)
        return
    assert plan.projected_peak <= (budget or 1 << 30)
    r = e.compute(nthreads=nthreads, **kw)
    want = ref()
    tol = 1e-5 if dtype == "f4" else 1e-9
    np.testing.assert_allclose(r[...], want, rtol=tol, atol=tol * max(1.0, float(np.abs(want).max())))
    if plan.windows:  # each block decompressed about once (edge blocks padded)
        br = min(block_rows, rows)
        padded = -(-rows // br) * br * -(-cols // chunk_cols) * chunk_cols * x.itemsize
        assert r.stats["bytes_decompressed"][p] <= 1.5 * padded, (plan.windows, r.stats)


def test_zarr_chunks_are_a_window_s_blocks(tmp_path):
    """Zarr decodes whole chunks: the window keeps decoded chunks. (1024, 32) chunks of an
    8192 x 1024 array: each 1 MiB band of the flattened scan touches 32 of them."""
    zarr = pytest.importorskip("zarr")
    x = np.random.default_rng(5).standard_normal((8192, 1024))
    p = str(tmp_path / "a.zarr")
    z = zarr.create_array(p, shape=x.shape, chunks=(1024, 32), dtype="f8")
    z[:] = x
    a = bl.open(p)
    plan = bl.cumsum(a).plan(nthreads=2)
    [w] = plan.windows
    assert w["blocks"] == 64 and w["read_bytes"] == x.nbytes and w["pulled_bytes"] >= 4 * x.nbytes
    r = bl.cumsum(a).compute(nthreads=2)
    np.testing.assert_allclose(r[...], np.cumsum(x), rtol=1e-9, atol=1e-6)
    assert r.stats["bytes_decompressed"][p] <= 1.25 * x.nbytes and r.stats["window_hits"] > 0, r.stats
