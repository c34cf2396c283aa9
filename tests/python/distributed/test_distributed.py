"""compute(scheduler=...) on dask.distributed (issue #14), on
LocalCluster(processes=True, n_workers=2, threads_per_worker=1): every seed workload into
b2nd and Zarr targets equals NumPy; a worker killed during the output stage still gives
the complete result; a persistent failure raises with the task's region and leaves no
output; stats are merged across workers."""

from __future__ import annotations

import os
import re
import signal
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import b2lazy as bl

distributed = pytest.importorskip("distributed")
sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
from test_serialization import _workloads  # noqa: E402


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("operands")
    rng = np.random.default_rng(7)
    x, y, x3 = rng.random((96, 96)), rng.random((96, 96)), rng.random((96, 5, 96))
    out = []
    for name, arr, chunks in (("a", x, (32, 96)), ("b", y, (96, 16)), ("a3", x3, (24, 5, 48))):
        p = str(tmp / f"{name}.b2nd")
        bl.asarray(arr).compute(urlpath=p, chunks=chunks, blocks=tuple(max(1, c // 4) for c in chunks))
        out.append(bl.open(p))
    return out, (x, y, x3)


@pytest.mark.parametrize("target", ["out.b2nd", "out.zarr"])
def test_seed_workloads_equal_numpy(client, stored, tmp_path, target):
    (a, b, a3), (x, y, x3) = stored
    path = str(tmp_path / target)
    for name, lazy, ref in _workloads(a, b, a3, x, y, x3):
        r = lazy.compute(urlpath=path, scheduler=client, chunks=None)
        got = bl.open(path).to_numpy()
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12, err_msg=name)
        assert got.dtype == ref.dtype, name
        plan = lazy.plan(urlpath=path, nthreads=1)
        assert r.stats["output_chunks"] == plan.nchunks, name
        assert r.urlpath == path
    assert sorted(os.listdir(tmp_path)) == [target]  # no temporaries left beside it


def test_stage_pieces_through_files_and_a_merge_tree(client, stored, tmp_path, monkeypatch):
    """Every stage piece and finished stage through a file (none inline), fold pieces
    merged two at a time: the same results, and no file left behind."""
    (a, b, a3), (x, y, x3) = stored
    monkeypatch.setattr(bl.distributed, "STAGE_INLINE_LIMIT", 0)
    monkeypatch.setattr(bl.distributed, "MERGE_FANIN", 2)
    path = str(tmp_path / "out.b2nd")
    for name, lazy, ref in _workloads(a, b, a3, x, y, x3):
        lazy.compute(urlpath=path, scheduler=client, chunks=None)
        np.testing.assert_allclose(bl.open(path).to_numpy(), ref, rtol=1e-12, atol=1e-12, err_msg=name)
    assert sorted(os.listdir(tmp_path)) == ["out.b2nd"]


def test_in_memory_result_and_to_numpy(client, stored):
    (a, b, _), (x, y, _) = stored
    r = (bl.matmul(a, b) + b).compute(scheduler=client)
    np.testing.assert_allclose(r.to_numpy(), x @ y + y, rtol=1e-12)
    np.testing.assert_allclose(bl.cumsum(a, axis=0).to_numpy(scheduler=client), np.cumsum(x, axis=0), rtol=1e-12)


def test_stages_are_computed_once_and_stats_merged(client, stored, tmp_path):
    (a, _, _), (x, _, _) = stored
    lazy = a - bl.mean(a, axis=0)
    plan = lazy.plan(nthreads=1, chunks=(16, 96))
    assert [st["kind"] for st in plan.stages] == ["b2nd", "mean"] and plan.ntasks > 2  # a kept, then its mean
    r = lazy.compute(urlpath=str(tmp_path / "o.b2nd"), scheduler=client, chunks=(16, 96))
    s = r.stats
    assert s["cache_misses"] == 1 and s["sources_kept"] == 1  # once (in pieces, finished on one worker)
    assert s["stages_reused"] >= 2  # each process running output tasks imported it instead
    assert s["output_chunks"] == plan.nchunks
    assert s["bytes_written"] > 0 and s["seconds"] > 0
    assert "Plan" in r.explain() or "plan" in r.explain().lower()


@settings(max_examples=12, deadline=None)
@given(
    n=st.integers(1, 70),
    m=st.integers(1, 40),
    ch=st.integers(1, 30),
    dtype=st.sampled_from(["float64", "float32", "int32"]),
    axis=st.sampled_from([None, 0, 1]),
    kind=st.sampled_from(["b2nd", "zarr"]),
)
def test_random_layouts(client, tmp_path_factory, n, m, ch, dtype, axis, kind):
    tmp = tmp_path_factory.mktemp("random")
    rng = np.random.default_rng(n * 100 + m)
    x = (rng.random((n, m)) * 10).astype(dtype)
    p = str(tmp / "x.b2nd")
    bl.asarray(x).compute(urlpath=p, chunks=(min(ch, n), m), blocks=(max(1, min(ch, n) // 2), m))
    a = bl.open(p)
    out = str(tmp / ("o.zarr" if kind == "zarr" else "o.b2nd"))
    for lazy, ref in (
        (bl.sum(a, axis=axis) * 2, np.sum(x, axis=axis) * 2),
        (a - bl.max(a, axis=0), x - x.max(axis=0)),
        (bl.cumsum(a, axis=1), np.cumsum(x, axis=1)),
    ):
        lazy.compute(urlpath=out, scheduler=client, chunks=(max(1, ch // 2),) * lazy.ndim if lazy.ndim else None)
        got = bl.open(out).to_numpy()
        np.testing.assert_allclose(got, ref, rtol=1e-5 if dtype == "float32" else 1e-12)


def test_worker_killed_during_output_stage(tmp_path):
    """A worker process killed (SIGKILL) after the first output tasks completed: its
    tasks, and results it held, are recomputed elsewhere; the output is complete."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    c = distributed.Client(cluster)
    try:
        rng = np.random.default_rng(3)
        x = rng.random((600, 400))
        p = str(tmp_path / "x.b2nd")
        bl.asarray(x).compute(urlpath=p, chunks=(10, 400), blocks=(5, 400))
        a = bl.open(p)
        pids = list(c.run(os.getpid).values())
        killed = []

        def progress(done, total):
            if not killed and done >= 2:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(done)

        for target in ("o.b2nd", "o.zarr"):
            killed.clear()
            out = str(tmp_path / target)
            lazy = bl.sin(a - bl.mean(a, axis=0)) + bl.cumsum(a, axis=1)
            lazy.compute(urlpath=out, scheduler=c, chunks=(10, 400), progress=progress)
            assert killed, "the worker was not killed during the run"
            # (atol: the mean is summed in parts merged in another order than NumPy's)
            np.testing.assert_allclose(
                bl.open(out).to_numpy(), np.sin(x - x.mean(0)) + np.cumsum(x, axis=1), rtol=1e-12, atol=1e-12
            )
            c.wait_for_workers(2, timeout=60)
            pids = list(c.run(os.getpid).values())
    finally:
        c.close()
        cluster.close()


def test_persistent_failure_names_region_and_leaves_no_output(client, tmp_path):
    x = np.random.default_rng(1).random((64, 32))
    p = str(tmp_path / "x")  # a sparse directory: one file per chunk
    # Written by one thread: files are numbered in writing order, so the middle file is the
    # middle chunk. (Written by two, it was now and then chunk 0, whose header C-Blosc2
    # reads when it opens a sparse directory: the workers then failed to open the array.)
    bl.asarray(x).compute(urlpath=p + "/", chunks=(8, 32), blocks=(4, 32), contiguous=False, nthreads=1)
    a = bl.open(p)
    chunk_files = sorted(f for f in os.listdir(p) if f.endswith(".chunk"))
    with open(os.path.join(p, chunk_files[len(chunk_files) // 2]), "r+b") as f:  # one chunk fails to decompress
        f.truncate(20)
    for target in ("o.b2nd", "o.zarr"):
        out = str(tmp_path / target)
        with pytest.raises(
            Exception, match=r"output chunks \[(\d+), \d+\): the region .* failed on worker tcp://"
        ) as e:
            (a * 2).compute(urlpath=out, scheduler=client, chunks=(8, 32))
        k = int(re.search(r"output chunks \[(\d+),", str(e.value)).group(1))
        assert f"the region [({8 * k}, 0), ({8 * k + 8}, 32))" in str(e.value) and f"chunk {k} is corrupted" in str(
            e.value
        )
        assert not os.path.exists(out)
        assert [f for f in os.listdir(tmp_path) if f not in ("x",)] == []


def test_existing_output_is_replaced_only_when_complete(client, stored, tmp_path):
    (a, _, _), (x, _, _) = stored
    out = str(tmp_path / "o.b2nd")
    (a + 1).compute(urlpath=out, scheduler=client)
    np.testing.assert_allclose(bl.open(out).to_numpy(), x + 1)
    (a + 2).compute(urlpath=out, scheduler=client)
    np.testing.assert_allclose(bl.open(out).to_numpy(), x + 2)


def test_local_scheduler_string(stored, tmp_path):
    (a, _, _), (x, _, _) = stored
    r = bl.sum(a, axis=1).compute(scheduler="local:2")
    np.testing.assert_allclose(r.to_numpy(), x.sum(axis=1), rtol=1e-12)


def test_committer_refuses_an_incomplete_or_foreign_output(stored):
    (a, _, _), _ = stored
    plan = (a + 1).plan(nthreads=1, chunks=(32, 96))
    c = bl._core.OutputCommitter(plan._p)
    with pytest.raises(ValueError, match="not a compressed chunk"):
        c.add(0, b"\x00" * 64)
    with pytest.raises(IndexError, match="chunk 99"):
        c.add(99, b"\x00" * 64)
    chunks, _ = bl._core.execute_part(plan._p, 0, 1, "", plan._ctx)
    for cid, data in chunks:
        c.add(cid, data)
    with pytest.raises(ValueError, match="chunk 1 of 3 was never added"):
        c.finish({})


def test_out_of_core_sort(client, tmp_path):
    """A lane longer than two runs (the default run length: the workers rebuild the graph
    with theirs) sorted on the cluster: runs' stage, samples, merge regions."""
    x = np.random.default_rng(4).standard_normal(2 * bl._core.sort_run_length() + 12345)
    p = str(tmp_path / "x.b2nd")
    bl.asarray(x).compute(urlpath=p, chunks=(1 << 20,), blocks=(1 << 16,))
    out = str(tmp_path / "s.b2nd")
    bl.sort(bl.open(p)).compute(urlpath=out, scheduler=client)
    np.testing.assert_array_equal(bl.open(out).to_numpy(), np.sort(x))
