"""The "processes" executor (b2lazy._processes: local worker processes through
b2lazy._cluster, no dask): the seed workloads — elementwise, reductions and scans (stages
in pieces, merged in a tree), products — equal NumPy and the default executor, into b2nd,
Zarr and memory; a failing task names its region or stage and leaves no output; a
failure, Ctrl-C or a dead worker leaves no spill file and no worker process."""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
import sys

import numpy as np
import pytest

import b2lazy as bl
from b2lazy import _cluster, _core, _processes, executors

sys.path.insert(0, os.path.dirname(__file__))
from test_serialization import _workloads  # noqa: E402


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("operands")
    rng = np.random.default_rng(11)
    x, y, x3 = rng.random((64, 64)), rng.random((64, 64)), rng.random((64, 5, 64))
    out = []
    for name, arr, chunks in (("a", x, (16, 64)), ("b", y, (64, 16)), ("a3", x3, (16, 5, 32))):
        p = str(tmp / f"{name}.b2nd")
        bl.asarray(arr).compute(urlpath=p, chunks=chunks, blocks=tuple(max(1, c // 4) for c in chunks))
        out.append(bl.open(p))
    return out, (x, y, x3)


@pytest.fixture(scope="module")
def runner():
    """Two one-thread worker processes kept for the module (a pool per compute() costs a
    second of process starts)."""
    r = _processes._ProcessRunner(2, 1)
    yield r
    r.close()


def test_picked_by_name_and_by_processes_n():
    assert executors.pick("processes")[0] == "processes" and executors.pick("processes:3")[0] == "processes"
    assert executors.pick("local:2")[0] == "dask"  # other strings are still dask's
    assert _processes._parse("processes:3", None) == (3, max(1, (os.cpu_count() or 1) // 3))
    assert _processes._parse("processes:2", 4) == (2, 4)
    for bad in ("processes:0", "processes:00", "processes:x", "processes:-1"):
        with pytest.raises(TypeError, match="'processes' or 'processes:N'"):
            bl.asarray(np.ones(3)).to_numpy(scheduler=bad)


def test_seed_workloads_equal_numpy_and_threads(runner, stored, tmp_path, monkeypatch):
    """Every seed workload into b2nd and Zarr; pieces merged two at a time and every
    stage piece through a file half the time."""
    (a, b, a3), (x, y, x3) = stored
    monkeypatch.setattr(_cluster, "MERGE_FANIN", 2)
    for n, (name, lazy, ref) in enumerate(_workloads(a, b, a3, x, y, x3)):
        monkeypatch.setattr(_cluster, "STAGE_INLINE_LIMIT", 0 if n % 2 else 16 << 20)
        d = tmp_path / f"w{n}"
        d.mkdir()
        path = str(d / ("out.zarr" if n % 3 == 0 else "out.b2nd"))
        r = _cluster.compute(lazy, path, runner)
        got = bl.open(path).to_numpy()
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(got, lazy.to_numpy(), rtol=1e-12, atol=1e-12, err_msg=name)
        assert got.dtype == ref.dtype, name
        assert r.stats["output_chunks"] == lazy.plan(urlpath=path, nthreads=1).nchunks, name
        assert os.listdir(d) == [os.path.basename(path)], name  # no temporaries, no spill file


def test_reductions_in_pieces(runner, stored):
    """Reductions as stages (computed once, before the output tasks that read them), cut
    into pieces for two workers — folds merged in a tree — with several kinds of state."""
    (a, _, a3), (x, _, x3) = stored
    for lazy, ref in (
        (bl.sum(a) + a, x.sum() + x),
        (a3 - bl.var(a3, axis=(0, 2), keepdims=True), x3 - x3.var(axis=(0, 2), keepdims=True)),
        (bl.argmax(a3, axis=0) + a3, x3.argmax(axis=0) + x3),
        (a3 - bl.max(a3, axis=1, keepdims=True) - bl.min(a), x3 - x3.max(axis=1, keepdims=True) - x.min()),
        (a / bl.std(a, axis=0), x / x.std(axis=0)),
    ):
        plan = lazy.plan(nthreads=1)
        assert any(_core.split_stage(plan._p, i, 2)[1] for i in range(len(plan.stages))), plan.stages  # a fold
        np.testing.assert_allclose(_cluster.compute(lazy, None, runner).to_numpy(), ref, rtol=1e-12, atol=1e-12)


def test_scheduler_processes_to_numpy_and_to_a_file(stored, tmp_path):
    """The public path: compute(scheduler="processes:2") to a b2nd file, to_numpy, progress."""
    (a, b, _), (x, y, _) = stored
    before = _children()  # (the module's runner's)
    seen = []
    out = str(tmp_path / "m.b2nd")
    r = (bl.matmul(a, b) + bl.mean(a, axis=0)).compute(
        out, scheduler="processes:2", chunks=(16, 64), progress=lambda d, t: seen.append((d, t))
    )
    np.testing.assert_allclose(bl.open(out).to_numpy(), x @ y + x.mean(axis=0), rtol=1e-12)
    assert r.urlpath == out and seen[-1] == (4, 4) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    np.testing.assert_allclose(bl.cumsum(a, axis=0).to_numpy(scheduler="processes:2"), np.cumsum(x, axis=0))
    assert sorted(os.listdir(tmp_path)) == ["m.b2nd"]
    assert _children() <= before  # the pool went with the call


def _children():
    return {p.pid for p in multiprocessing.active_children()}


def _corrupt(tmp_path, x):
    """A sparse directory whose middle chunk (chunks of 8 rows) fails to decompress."""
    p = str(tmp_path / "x")
    bl.asarray(x).compute(urlpath=p + "/", chunks=(8, 32), blocks=(4, 32), contiguous=False, nthreads=1)
    files = sorted(f for f in os.listdir(p) if f.endswith(".chunk"))
    with open(os.path.join(p, files[len(files) // 2]), "r+b") as f:
        f.truncate(20)
    return bl.open(p)


def test_a_failing_task_names_its_region_and_leaves_nothing(tmp_path, monkeypatch):
    before = _children()
    x = np.random.default_rng(1).random((64, 32))
    a = _corrupt(tmp_path, x)
    for target in ("o.b2nd", "o.zarr"):
        out = str(tmp_path / target)
        with pytest.raises(RuntimeError, match=r"output chunks \[\d+, \d+\): the region .* failed on process \d+") as e:
            _processes.compute(a * 2, out, scheduler="processes:2", chunks=(8, 32), retries=1)
        k = int(re.search(r"output chunks \[(\d+),", str(e.value)).group(1))
        assert f"the region [({8 * k}, 0), ({8 * k + 8}, 32))" in str(e.value)
        assert f"chunk {k} is corrupted" in str(e.value)
        assert os.listdir(tmp_path) == ["x"]
    # A stage's piece fails (a kept copy of a, every piece through a spill file): named, no file left.
    monkeypatch.setattr(_cluster, "STAGE_INLINE_LIMIT", 0)
    lazy = a - bl.mean(a, axis=0)
    assert lazy.plan(nthreads=1, chunks=(8, 32)).stages[0]["kind"] == "b2nd"
    with pytest.raises(RuntimeError, match=r"piece \d+ of stage 0 \(b2nd .*\) failed on process \d+"):
        _processes.compute(lazy, str(tmp_path / "o.b2nd"), scheduler="processes:2", chunks=(8, 32), retries=0)
    assert os.listdir(tmp_path) == ["x"]
    assert _children() <= before


def test_ctrl_c_cancels_and_leaves_no_spill_file_or_worker(tmp_path, monkeypatch):
    """KeyboardInterrupt (from the progress callback, as Ctrl-C while committing) stops the
    job: the workers are terminated, the spill files and the output removed."""
    before = _children()
    x = np.random.default_rng(2).random((256, 64))
    p = str(tmp_path / "x.b2nd")
    bl.asarray(x).compute(urlpath=p, chunks=(8, 64), blocks=(4, 64))
    a = bl.open(p)
    monkeypatch.setattr(_cluster, "STAGE_INLINE_LIMIT", 0)  # stage pieces in spill files

    def interrupt(done, total):
        assert [f for f in os.listdir(tmp_path) if f.startswith(".b2lazy-")], "no spill file while running"
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        (a - bl.mean(a, axis=0)).compute(str(tmp_path / "o.b2nd"), scheduler="processes:2", progress=interrupt)
    assert sorted(os.listdir(tmp_path)) == ["x.b2nd"]
    assert _children() <= before  # terminated


def test_a_dead_worker_is_replaced_and_its_tasks_rerun(tmp_path):
    """A worker process killed (SIGKILL) after the first output tasks: the pool is replaced,
    the tasks that were running rerun (stages imported again by the new processes)."""
    before = _children()
    x = np.random.default_rng(3).random((400, 64))
    p = str(tmp_path / "x.b2nd")
    bl.asarray(x).compute(urlpath=p, chunks=(10, 64), blocks=(5, 64))
    a = bl.open(p)
    killed = []

    def progress(done, total):
        if not killed:
            victim = min(_children() - before)
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    out = str(tmp_path / "o.b2nd")
    lazy = bl.sin(a - bl.mean(a, axis=0)) + bl.cumsum(a, axis=1)
    lazy.compute(out, scheduler="processes:2", chunks=(10, 64), progress=progress)
    assert killed
    np.testing.assert_allclose(
        bl.open(out).to_numpy(), np.sin(x - x.mean(0)) + np.cumsum(x, axis=1), rtol=1e-12, atol=1e-12
    )
    assert sorted(os.listdir(tmp_path)) == ["o.b2nd", "x.b2nd"]
