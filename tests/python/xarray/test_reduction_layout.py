"""Reductions of time-chunked Zarr data through xarray: the output is split along the axis
that follows the source's chunked one (coarsen's time), or kept whole when small (a count
over time), so each source chunk is decompressed once and no copy of the source is kept
(before: outputs split along lon/lat pulled every time chunk, the source kept or read twice).
Values against xarray on NumPy."""

import numpy as np
import pytest
import xarray as xr

import b2lazy as bl

# Long and thin (coarsen), and wide: a (128, 288) int64 count is 288 KiB, over the size
# a layout by shape alone splits in two.
LONG = (480, 37, 72), (24, 37, 72)
WIDE = (96, 128, 288), (24, 128, 288)


def open_era(tmp_path, shape, chunks):
    rng = np.random.default_rng(3)
    t = (rng.standard_normal(shape) * 8 + 285).astype(np.float32)
    ds = xr.Dataset({"t": (("time", "lat", "lon"), t)})
    path = str(tmp_path / "era.zarr")
    ds.to_zarr(path, encoding={"t": {"chunks": chunks}}, zarr_format=3, consolidated=False)
    lazy = xr.open_dataset(path, engine="zarr", chunks={}, chunked_array_type="b2lazy")
    eager = xr.open_dataset(path, engine="zarr")
    return lazy, eager


def nchunks(shape, chunks):
    return int(np.prod([-(-s // c) for s, c in zip(shape, chunks)]))


def computed(a):
    r = a.compute(nthreads=2)
    return r.to_numpy(), r.stats


def t_path(stats):
    (path,) = [k for k in stats["chunks_decompressed"] if k.endswith("/t")]
    return path


def assert_each_chunk_read_once(stats, layout):
    path = t_path(stats)
    assert stats["chunks_decompressed"][path] == nchunks(*layout), stats
    assert stats["max_decompressions_per_chunk"][path] == 1, stats
    assert stats["sources_kept"] == 0, stats


def test_coarsen_splits_along_time_and_reads_each_chunk_once(tmp_path):
    lazy, eager = open_era(tmp_path, *LONG)
    a = lazy.t.coarsen(time=4, lat=2, boundary="trim").mean().data
    assert isinstance(a, bl.Array)
    p = a.plan(nthreads=2)
    assert all(c == s for c, s in zip(p.chunks[1:], a.shape[1:])), p.chunks  # split along time only
    got, stats = computed(a)
    want = eager.t.coarsen(time=4, lat=2, boundary="trim").mean().values
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert_each_chunk_read_once(stats, LONG)


@pytest.mark.parametrize("how", ["count", "sum_min_count"])
def test_small_reduction_over_time_is_one_chunk_reading_each_chunk_once(tmp_path, how):
    lazy, eager = open_era(tmp_path, *WIDE)

    def reduce(ds):
        masked = ds.t.where(ds.t > 290)
        return masked.count("time") if how == "count" else masked.sum("time", min_count=3)

    a = reduce(lazy).data
    got, stats = computed(a)
    np.testing.assert_allclose(got, reduce(eager).values, rtol=1e-5)
    if how == "count":  # int64, over the size a layout splits by shape alone
        assert a.plan(nthreads=2).nchunks == 1
        assert_each_chunk_read_once(stats, WIDE)
    else:  # the sum and the count of the same data, one output chunk: read once (a small copy kept) or twice
        path = t_path(stats)
        assert a.plan(nthreads=2).nchunks == 1
        assert stats["max_decompressions_per_chunk"][path] <= 2, stats
