"""xarray's coarsen on b2lazy-backed data opened from time-chunked Zarr (a reshape of the
trimmed source, then a reduction): values equal to xarray on NumPy over random shapes,
storage chunks and windows; and, where a slab would otherwise cut the storage chunks
(a window inside a chunk, a window of two chunks, a budget too small to keep the source),
each chunk decompressed once with nothing kept and no window of blocks."""

import tempfile
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")
import b2lazy as bl  # noqa: E402
import b2lazy._xarray  # noqa: E402,F401

MiB = 1 << 20
REDUCTIONS = ["mean", "sum", "max", "min", "std"]


def write_era(path, shape, chunks, nan=0.0, seed=0):
    rng = np.random.default_rng(seed)
    t = (rng.standard_normal(shape) * 8 + 285).astype(np.float32)
    if nan:
        t[rng.random(shape) < nan] = np.nan
    ds = xr.Dataset({"t": (("time", "lat", "lon"), t)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(path, encoding={"t": {"chunks": chunks}}, zarr_format=3, consolidated=False)


def open_both(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lazy = xr.open_dataset(path, engine="zarr", chunks={}, chunked_array_type="b2lazy")
        eager = xr.open_dataset(path, engine="zarr")
    return lazy, eager


@st.composite
def layouts(draw):
    shape = (draw(st.integers(8, 60)), draw(st.integers(3, 13)), draw(st.integers(2, 12)))
    chunks = (draw(st.integers(1, shape[0])), draw(st.sampled_from([shape[1], max(1, shape[1] // 2)])), shape[2])
    window = {"time": draw(st.integers(1, min(12, shape[0])))}
    for dim, n in (("lat", shape[1]), ("lon", shape[2])):
        w = draw(st.integers(1, min(3, n)))
        if w > 1:
            window[dim] = w
    return shape, chunks, window, draw(st.sampled_from(REDUCTIONS)), draw(st.booleans())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layouts())
def test_coarsen_equals_xarray_on_numpy(layout):
    shape, chunks, window, how, with_nan = layout
    with tempfile.TemporaryDirectory() as d:
        write_era(d + "/era.zarr", shape, chunks, nan=0.1 if with_nan else 0.0)
        lazy, eager = open_both(d + "/era.zarr")
        got = getattr(lazy.t.coarsen(window, boundary="trim"), how)()
        assert isinstance(got.data, bl.Array)
        want = getattr(eager.t.coarsen(window, boundary="trim"), how)()
        xr.testing.assert_allclose(got.compute(), want, rtol=1e-5, atol=1e-4)


def test_coarsen_pad_boundary_equals_xarray_on_numpy(tmp_path):
    write_era(str(tmp_path / "era.zarr"), (50, 7, 9), (8, 7, 9), nan=0.05)
    lazy, eager = open_both(str(tmp_path / "era.zarr"))
    got = lazy.t.coarsen(time=6, lon=2, boundary="pad").mean()
    xr.testing.assert_allclose(got.compute(), eager.t.coarsen(time=6, lon=2, boundary="pad").mean(), rtol=1e-5)


# (240, 19, 36) float32 in 24-row chunks of 64 KiB. Before: at 4 MiB each chunk was read up
# to 4 times (slabs of one day of each window, strided over the chunks), at 8 MiB the
# source was kept whole; a 48-day window (two chunks) was read twice at the default budget.
SHAPE, CHUNKS = (240, 19, 36), (24, 19, 36)
CASES = {
    "mean 4 days, 2x2 cells": lambda t: t.coarsen(time=4, lat=2, lon=2, boundary="trim").mean(),
    "sum 8 days (skipna)": lambda t: t.coarsen(time=8).sum(),
    "std 4 days, 2 lats": lambda t: t.coarsen(time=4, lat=2, boundary="trim").std(),
    "max 48 days": lambda t: t.coarsen(time=48).max(),
    "region time mean": lambda t: t.isel(lat=slice(5, 15), lon=slice(10, 30)).mean("time"),
}


@pytest.mark.parametrize("budget", [None, 4 * MiB, 8 * MiB])
@pytest.mark.parametrize("case", list(CASES))
def test_each_chunk_decompressed_once_nothing_kept(tmp_path, case, budget):
    write_era(str(tmp_path / "era.zarr"), SHAPE, CHUNKS)
    lazy, eager = open_both(str(tmp_path / "era.zarr"))
    a = CASES[case](lazy.t).data
    r = a.compute(nthreads=2, max_memory=budget)
    np.testing.assert_allclose(r.to_numpy(), CASES[case](eager.t).values, rtol=1e-5, atol=1e-4)
    s = r.stats
    (path,) = [k for k in s["chunks_decompressed"] if k != "total"]
    assert s["chunks_decompressed"][path] == SHAPE[0] // CHUNKS[0], s
    assert s["max_decompressions_per_chunk"][path] == 1, s
    assert s["sources_kept"] == 0 and s["window_hits"] == 0, s


def test_chunks_too_big_for_the_budget_are_not_pulled_whole(tmp_path):
    # 2.6 MiB chunks at 8 MiB on 2 workers: a slab one chunk deep would not fit beside the
    # chunk decompressed, so the slabs stay thin and the plan stays within the budget.
    shape = (96, 60, 120)
    write_era(str(tmp_path / "era.zarr"), shape, shape)
    lazy, eager = open_both(str(tmp_path / "era.zarr"))
    a = lazy.t.coarsen(time=4, lat=2, lon=2).mean().data
    r = a.compute(nthreads=2, max_memory=8 * MiB)
    np.testing.assert_allclose(r.to_numpy(), eager.t.coarsen(time=4, lat=2, lon=2).mean().values, rtol=1e-5)
    assert r.stats["projected_peak_bytes"] <= 8 * MiB, r.stats
    assert r.stats["peak_scratch_bytes"] <= r.stats["projected_peak_bytes"] + 2 * MiB, r.stats
