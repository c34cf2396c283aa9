"""The engine on the climate layout (issue #38, part D): reductions over the chunked leading
axis of time-chunked 3-D float32 data, one small output from many input chunks. Counters,
not times: the inner means computed once (not once per slab of the outer reduction), each
input chunk decompressed at most twice, nothing kept beyond the budget; values vs NumPy."""

import numpy as np
import pytest
import zarr
from hypothesis import HealthCheck, given, settings, strategies as st

import b2lazy as bl

MiB = 1 << 20


def zarr_vars(tmp_path, shape, chunks, names="uv", seed=0):
    """float32 variables in one Zarr v3 group, as xarray's climate data is stored."""
    rng = np.random.default_rng(seed)
    root = tmp_path / "era.zarr"
    out = {}
    for name in names:
        x = (rng.standard_normal(shape) * 3 + 10).astype(np.float32)
        z = zarr.create_array(
            str(root), name=name, shape=shape, dtype=np.float32, chunks=chunks, zarr_format=3, overwrite=True
        )
        z[...] = x
        path = str(root / name)
        out[name] = (bl.open(path), x, path)
    return out


def covariance(u, v):
    return bl.mean((u - bl.mean(u, axis=0)) * (v - bl.mean(v, axis=0)), axis=0)


def covariance_np(x, y):
    x, y = x.astype(np.float64), y.astype(np.float64)
    return ((x - x.mean(0)) * (y - y.mean(0))).mean(0)


def nchunks(shape, chunks):
    return int(np.prod([-(-s // c) for s, c in zip(shape, chunks)]))


@pytest.mark.parametrize("budget", [None, 8 * MiB])
def test_covariance_computes_the_inner_means_once_and_reads_each_chunk_at_most_twice(tmp_path, budget):
    # 9.2 MiB a variable in 20 time chunks: over the small-copy size, so not kept; the outer
    # mean folds it in several slabs at 8 MiB (before: each slab computed mean(u) and
    # mean(v) again from a kept copy of u and v, slabs x slabs reads).
    shape, chunks = (400, 60, 100), (20, 60, 100)
    d = zarr_vars(tmp_path, shape, chunks)
    (u, x, pu), (v, y, pv) = d["u"], d["v"]
    e = covariance(u, v)
    p = e.plan(max_memory=budget, nthreads=2)
    assert sorted(s["kind"] for s in p.stages) == ["mean", "mean"], p.stages  # computed once, not the sources
    assert p.nchunks == 1  # one output chunk at either budget: no re-read strips
    r = e.compute(max_memory=budget, nthreads=2)
    np.testing.assert_allclose(r.to_numpy(), covariance_np(x, y), rtol=1e-4, atol=1e-4)
    s = r.stats
    n = nchunks(shape, chunks)
    for path in (pu, pv):
        assert s["max_decompressions_per_chunk"][path] == 2, s  # the inner mean's pass, the outer's
        assert s["chunks_decompressed"][path] == 2 * n
    assert s["sources_kept"] == 0 and s["cache_misses"] == 2
    # The two means read by each slab of the outer mean: a few reads per slab, not slabs**2.
    assert s["cache_hits"] <= 2 * n
    if budget:
        assert s["projected_peak_bytes"] <= budget and s["peak_scratch_bytes"] <= budget


def test_std_of_anomalies_reads_each_chunk_twice_within_a_small_budget(tmp_path):
    shape, chunks = (400, 60, 100), (20, 60, 100)
    ((t, x, pt),) = zarr_vars(tmp_path, shape, chunks, names="t").values()
    e = bl.std(t - bl.mean(t, axis=0), axis=0)
    budget = 8 * MiB
    r = e.compute(max_memory=budget, nthreads=2)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(r.to_numpy(), (x64 - x64.mean(0)).std(0), rtol=1e-4)
    s = r.stats
    assert s["max_decompressions_per_chunk"][pt] == 2 and s["sources_kept"] == 0, s
    assert s["projected_peak_bytes"] <= budget


def test_anomaly_product_reads_u_and_v_at_most_twice(tmp_path):
    # Issue item 3: (u - mean(u)) * (v - mean(v)) over many output chunks: the means once
    # (their pass reads u and v once), then each output chunk reads its own part once more.
    shape, chunks = (240, 30, 40), (12, 30, 40)
    d = zarr_vars(tmp_path, shape, chunks)
    (u, x, pu), (v, y, pv) = d["u"], d["v"]
    e = (u - bl.mean(u, axis=0)) * (v - bl.mean(v, axis=0))
    r = e.compute(nthreads=2)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    np.testing.assert_allclose(r[...], (x64 - x64.mean(0)) * (y64 - y64.mean(0)), rtol=1e-4, atol=1e-4)
    s = r.stats
    n = nchunks(shape, chunks)
    for path in (pu, pv):
        assert s["max_decompressions_per_chunk"][path] <= 2, s
        assert s["chunks_decompressed"][path] <= 2 * n
    assert s["cache_misses"] == 2  # each mean computed once


def test_a_source_read_twice_is_not_kept_over_the_small_copy_size(tmp_path):
    # Keeping it would save one decompression, at the price of filling and first-touching
    # a copy as large as the data; the plan says so.
    shape, chunks = (400, 60, 100), (20, 60, 100)
    ((t, _, pt),) = zarr_vars(tmp_path, shape, chunks, names="t").values()
    p = bl.std(t - bl.mean(t, axis=0), axis=0).plan(nthreads=2)
    assert [s for s in p.stages if s["source"]] == []
    assert "not kept" in str(p) or pt not in str(p).split("computed once")[1]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    nt=st.integers(20, 90),
    ny=st.integers(3, 17),
    nx=st.integers(3, 23),
    ct=st.integers(1, 40),
    cy=st.integers(1, 17),
    cx=st.integers(1, 23),
    budget=st.sampled_from([None, 1 * MiB, 4 * MiB]),
)
def test_time_reductions_match_numpy_on_any_chunking(tmp_path_factory, nt, ny, nx, ct, cy, cx, budget):
    tmp = tmp_path_factory.mktemp("layout")
    shape, chunks = (nt, ny, nx), (min(ct, nt), min(cy, ny), min(cx, nx))
    d = zarr_vars(tmp, shape, chunks, names="uvt", seed=nt * 7 + ny)
    (u, x, _), (v, y, _), (t, z, pt) = d["u"], d["v"], d["t"]
    got = covariance(u, v).compute(max_memory=budget).to_numpy()
    np.testing.assert_allclose(got, covariance_np(x, y), rtol=1e-4, atol=1e-4)
    r = bl.std(t - bl.mean(t, axis=0), axis=0).compute(max_memory=budget)
    z64 = z.astype(np.float64)
    np.testing.assert_allclose(r.to_numpy(), (z64 - z64.mean(0)).std(0), rtol=1e-4, atol=1e-5)
    if budget is None:
        assert r.stats["max_decompressions_per_chunk"][pt] <= 2, r.stats
