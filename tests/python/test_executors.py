"""Executors (b2lazy.executors): compute(scheduler=...) and to_numpy(scheduler=...) pick
where the evaluation runs by name ("threads", "dask", or one registered), or by the
scheduler object given (a registered executor's test); values against NumPy. The dask
executor's own runs are in tests/python/distributed/."""

import numpy as np
import pytest

import b2lazy as bl
from b2lazy import executors


class Recording:
    """An executor that runs on this process's threads and remembers what it was given."""

    def __init__(self):
        self.calls = []

    def compute(self, x, urlpath, scheduler, **options):
        self.calls.append(("compute", scheduler, sorted(options)))
        return x.compute(urlpath, nthreads=1, max_memory=options["max_memory"])

    def to_numpy(self, x, scheduler, **options):
        self.calls.append(("to_numpy", scheduler, sorted(options)))
        return x.to_numpy(nthreads=1)


class Cluster:
    """A scheduler object of the kind a registered executor says it takes."""


@pytest.fixture
def recording():
    ex = Recording()
    executors.register("recording", ex, claims=lambda s: isinstance(s, Cluster))
    yield ex
    executors._EXECUTORS.pop("recording")


def test_the_built_in_executors():
    assert executors.names()[:2] == ["threads", "dask"]
    assert executors.pick(None)[0] == "threads" and executors.pick("threads")[0] == "threads"
    assert executors.pick("local:2")[0] == "dask" and executors.pick("tcp://127.0.0.1:8786")[0] == "dask"


def test_threads_by_name_is_the_default(tmp_path):
    x = np.arange(60.0).reshape(6, 10)
    e = bl.asarray(x) * 2 + 1
    np.testing.assert_array_equal(e.to_numpy(scheduler="threads"), x * 2 + 1)
    r = e.compute(str(tmp_path / "t.b2nd"), scheduler="threads")
    np.testing.assert_array_equal(r.to_numpy(), x * 2 + 1)


def test_a_registered_executor_by_name_and_by_its_scheduler_objects(recording):
    x = np.arange(24.0).reshape(4, 6)
    e = bl.sum(bl.asarray(x), axis=0)
    np.testing.assert_allclose(e.to_numpy(scheduler="recording"), x.sum(axis=0))
    np.testing.assert_allclose(e.compute(scheduler=Cluster(), max_memory=1 << 26).to_numpy(), x.sum(axis=0))
    assert [c[0] for c in recording.calls] == ["to_numpy", "compute"]
    assert isinstance(recording.calls[1][1], Cluster)
    # compute's options reach the executor (nthreads too: an executor decides what applies)
    assert recording.calls[1][2] == sorted(
        ["chunks", "blocks", "cparams", "nthreads", "max_memory", "contiguous", "progress", "shards", "storage_options"]
    )


def test_a_scheduler_no_executor_takes_is_a_clear_error():
    with pytest.raises(TypeError, match=r"scheduler 3: no executor takes it \(executors: threads, dask"):
        bl.asarray(np.ones(3)).to_numpy(scheduler=3)


def test_register_checks_the_executor():
    with pytest.raises(TypeError, match="has no to_numpy"):
        executors.register("half", type("Half", (), {"compute": lambda self: None})())
    with pytest.raises(TypeError, match="non-empty str"):
        executors.register("", Recording())
    assert "half" not in executors.names()
