"""da.from_array(b2lazy_array): Dask calls NumPy functions on b2lazy blocks (the protocols
of b2lazy/_numpy_protocol.py), without meta= or asarray=. Dask's results are b2lazy Arrays
(the block type, as CuPy-backed Dask returns CuPy), checked against NumPy; the source is
read by region (each storage chunk decompressed once), under Dask's threaded scheduler.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import b2lazy as bl

da = pytest.importorskip("dask.array")
blosc2 = pytest.importorskip("blosc2")

OPS = {
    "elementwise": (lambda d: np.sin(d) * 2 + 1, lambda a: np.sin(a) * 2 + 1),
    "sum": (lambda d: d.sum(), lambda a: a.sum()),
    "sum-axis-dtype": (lambda d: d.sum(axis=1, dtype=np.float32), lambda a: a.sum(axis=1, dtype=np.float32)),
    "mean": (lambda d: d.mean(axis=0), lambda a: a.mean(axis=0)),
    "std": (lambda d: d.std(axis=1), lambda a: a.std(axis=1)),
    "max": (lambda d: d.max(), lambda a: a.max()),
    "argmax": (lambda d: d.argmax(axis=0), lambda a: a.argmax(axis=0)),
    "matmul": (lambda d: d @ d.T, lambda a: a @ a.T),
    "concatenate": (lambda d: da.concatenate([d, d[:5]], axis=0), lambda a: np.concatenate([a, a[:5]], axis=0)),
    "rechunk": (lambda d: d.rechunk((7, 11)) + 0, lambda a: a),
    "slicing": (lambda d: d[3:40:2, ::-3], lambda a: a[3:40:2, ::-3]),
    "np.mean": (lambda d: np.mean(d, axis=1), lambda a: np.mean(a, axis=1)),
}


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    a = np.random.default_rng(7).random((60, 45))
    f = tmp_path_factory.mktemp("dask") / "a.b2nd"
    blosc2.asarray(a, urlpath=str(f), mode="w", chunks=(10, 15), blocks=(5, 5))
    return a, f


@pytest.mark.parametrize("name", sorted(OPS))
def test_dask_on_b2lazy_blocks(stored, name):
    a, f = stored
    lazy_op, numpy_op = OPS[name]
    d = da.from_array(bl.open(f), chunks=(20, 15))
    assert isinstance(d._meta, bl.Array)  # blocks are b2lazy arrays, no meta= given
    with warnings.catch_warnings():
        warnings.simplefilter("error", bl.EagerEvaluationWarning)  # nothing falls back to NumPy
        r = lazy_op(d).compute(scheduler="threads")
    assert isinstance(r, bl.Array)
    want = numpy_op(a)
    got = r.to_numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5 if want.dtype == np.float32 else 1e-12)


def test_reads_by_region(stored):
    """Each storage chunk is decompressed once for the whole Dask result: no block reads the
    whole array."""
    a, f = stored
    r = da.from_array(bl.open(f), chunks=(20, 15)).mean(axis=0).compute()
    r.to_numpy()
    st_ = r.last_stats
    assert st_["max_decompressions_per_chunk"][str(f)] == 1
    assert st_["chunks_decompressed"][str(f)] == (60 // 10) * (45 // 15)
    # a slice touches only its chunks
    s = da.from_array(bl.open(f), chunks=(20, 15))[:10, :15].sum().compute()
    s.to_numpy()
    assert s.last_stats["chunks_decompressed"][str(f)] == 1


def test_persist(stored):
    a, f = stored
    p = (da.from_array(bl.open(f), chunks=(20, 15)) * 3).persist()
    np.testing.assert_allclose(p.sum(axis=0).compute().to_numpy(), (a * 3).sum(axis=0), rtol=1e-12)


def test_threaded_scheduler_many_blocks(stored):
    """Many small blocks built and reduced concurrently on Dask's thread pool."""
    a, f = stored
    x = bl.open(f) * 2 - 1
    d = da.from_array(x, chunks=(4, 5))
    for _ in range(3):
        r = (d.sum(axis=0) + d.std(axis=0) + d.argmax(axis=0)).compute(scheduler="threads", num_workers=8)
        want = (a * 2 - 1).sum(axis=0) + (a * 2 - 1).std(axis=0) + (a * 2 - 1).argmax(axis=0)
        np.testing.assert_allclose(r.to_numpy(), want, rtol=1e-10)


@settings(max_examples=15)
@given(
    shape=st.tuples(st.integers(1, 30), st.integers(1, 30)),
    ch=st.tuples(st.integers(1, 12), st.integers(1, 12)),
    axis=st.sampled_from([None, 0, 1]),
    op=st.sampled_from(["sum", "mean", "max", "min", "var", "argmin", "argmax", "prod", "any"]),
)
def test_random_reductions(shape, ch, axis, op):
    a = np.random.default_rng(sum(shape)).random(shape)
    d = da.from_array(bl.asarray(a), chunks=ch)
    with warnings.catch_warnings():
        warnings.simplefilter("error", bl.EagerEvaluationWarning)  # nothing falls back to NumPy
        got = getattr(d, op)(axis=axis).compute()
    want = getattr(a, op)(axis=axis)
    assert isinstance(got, bl.Array)
    np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-12)


def test_percentile(stored):
    """da.percentile dispatches on the block type: b2lazy blocks take Dask's NumPy path
    (registered on the first protocol call after dask.array is imported); its final np.interp
    on the few per-block percentiles is an announced eager step."""
    a, f = stored
    d = da.from_array(bl.open(f), chunks=(20, 15)).ravel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bl.EagerEvaluationWarning)
        got = da.percentile(d, [10, 50, 90]).compute()
    want = da.percentile(da.from_array(a, chunks=(20, 15)).ravel(), [10, 50, 90]).compute()
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def test_distributed_scheduler(stored, client):
    """On a dask.distributed cluster the lazy blocks travel as their saved form (the source
    by path): the workers build the same lazy result."""
    a, f = stored
    d = da.from_array(bl.open(f), chunks=(20, 15))
    r = client.compute((np.sin(d) @ d.T).sum(axis=1)).result()
    assert isinstance(r, bl.Array)
    np.testing.assert_allclose(r.to_numpy(), (np.sin(a) @ a.T).sum(axis=1), rtol=1e-12)
