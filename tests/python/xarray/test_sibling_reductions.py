"""Sibling reductions over one input read it once (issue #38): reductions over the same axes
of inputs that read the same stored sources through elementwise nodes are folded in
lockstep, each source slab decompressed once and lent to all of them (Plan::siblings).
The weighted mean's two sums (data x weights, notnull(data) x weights) and the mean and std
stages of a standardised anomaly, over Zarr (zstd), netCDF-4 (zlib) and b2nd; values against
xarray on NumPy / NumPy, counters for the reads; reductions that must not be folded together
(other axes, other sources, other regions) stay correct."""

import warnings

import numpy as np
import pytest
import xarray as xr
from hypothesis import HealthCheck, given, settings, strategies as st

import b2lazy as bl

pytest.importorskip("h5netcdf")
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

DIMS = ("time", "lat", "lon")


def era(shape, seed=0, nan=True):
    rng = np.random.default_rng(seed)
    t = (rng.standard_normal(shape) * 8 + 285).astype(np.float32)
    if nan:
        t.flat[rng.integers(0, t.size, max(1, t.size // 50))] = np.nan
    u = (rng.standard_normal(shape) * 3).astype(np.float32)
    lat = np.linspace(-80, 80, shape[1])
    return xr.Dataset({"t": (DIMS, t), "u": (DIMS, u)}, coords={"lat": lat})


def stored(tmp_path, ds, chunks, fmt):
    """(b2lazy-backed, NumPy-backed) datasets of `ds` written as `fmt` in `chunks`."""
    enc = {v: {"chunks": chunks} for v in ("t", "u")}
    if fmt == "zarr":
        path, engine = str(tmp_path / "era.zarr"), "zarr"
        ds.to_zarr(path, mode="w", zarr_format=3, encoding=enc, consolidated=False)
    else:
        path, engine = str(tmp_path / "era.nc"), "h5netcdf"
        for v in enc.values():
            v["chunksizes"] = v.pop("chunks")
            v.update(zlib=True, complevel=1)
        ds.to_netcdf(path, engine=engine, encoding=enc)
    lazy = xr.open_dataset(path, engine=engine, chunks={}, chunked_array_type="b2lazy")
    eager = xr.open_dataset(path, engine=engine)
    return lazy, eager


def nchunks(shape, chunks):
    return int(np.prod([-(-s // c) for s, c in zip(shape, chunks)]))


def evaluated(a):
    """(values, stats) of a b2lazy-backed DataArray computed to memory (as .compute())."""
    arr = a.data
    assert isinstance(arr, bl.Array)
    return arr.to_numpy(), arr.last_stats


def t_reads(stats):
    paths = [k for k in stats["chunks_decompressed"] if k.endswith("/t")]
    if not paths:  # (a tiny variable is read when opened)
        return 0, 0
    (path,) = paths
    return stats["chunks_decompressed"][path], stats["max_decompressions_per_chunk"][path]


def weighted(ds):
    t = ds.t
    return t.weighted(np.cos(np.deg2rad(t.lat))).mean(("lat", "lon"))


def std_anomaly(ds):
    t = ds.t
    return (t - t.mean("time")) / t.std("time")


def std_anomaly_f64(eager):
    """The oracle in float64 (NumPy's float32 mean of values near 285 is off by more than
    b2lazy's, which accumulates in float64): NaN skipped as xarray does."""
    x = eager.t.values.astype(np.float64)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (x - np.nanmean(x, 0)) / np.nanstd(x, 0)


@pytest.mark.parametrize("fmt", ["zarr", "nc"])
def test_weighted_mean_reads_each_chunk_once_and_keeps_nothing(tmp_path, fmt):
    shape, chunks = (96, 19, 36), (8, 19, 36)
    lazy, eager = stored(tmp_path, era(shape), chunks, fmt)
    got, stats = evaluated(weighted(lazy))
    np.testing.assert_allclose(got, weighted(eager).values, rtol=1e-5)
    assert t_reads(stats) == (nchunks(shape, chunks), 1), stats
    assert stats["sources_kept"] == 0, stats  # (before: t kept whole, the two sums reading the copy)
    assert "siblings: 2 reductions" in weighted(lazy).data.explain()


@pytest.mark.parametrize("fmt", ["zarr", "nc"])
def test_mean_and_std_stages_read_the_data_once(tmp_path, fmt):
    shape, chunks = (256, 73, 144), (16, 73, 144)  # 10.3 MiB: over what is kept when small
    lazy, eager = stored(tmp_path, era(shape), chunks, fmt)
    got, stats = evaluated(std_anomaly(lazy))
    np.testing.assert_allclose(got, std_anomaly_f64(eager), rtol=1e-4, atol=1e-4)
    # The two stages' one pass, then the output's (before: three).
    assert t_reads(stats) == (2 * nchunks(shape, chunks), 2), stats


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    nt=st.integers(1, 40),
    ny=st.integers(1, 9),
    nx=st.integers(1, 9),
    ct=st.integers(1, 12),
    cy=st.integers(1, 9),
    cx=st.integers(1, 9),
    fmt=st.sampled_from(["zarr", "nc"]),
    seed=st.integers(0, 99),
)
def test_siblings_on_random_layouts_match_xarray_on_numpy(tmp_path_factory, nt, ny, nx, ct, cy, cx, fmt, seed):
    shape, chunks = (nt, ny, nx), (min(ct, nt), min(cy, ny), min(cx, nx))
    lazy, eager = stored(tmp_path_factory.mktemp("era"), era(shape, seed), chunks, fmt)
    got, stats = evaluated(weighted(lazy))
    np.testing.assert_allclose(got, weighted(eager).values, rtol=1e-5, equal_nan=True)
    reads, most = t_reads(stats)
    assert reads <= nchunks(shape, chunks) or most == 1, stats  # never a chunk once per sibling
    got, _ = evaluated(std_anomaly(lazy))
    want = std_anomaly_f64(eager)
    # x - mean is a float32 subtraction of values near 285: its rounding (eps * |x|) over
    # the std is the error bound, large where a slice's values are nearly equal.
    x = eager.t.values.astype(np.float64)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bound = 1e-4 + 1e-4 * np.abs(want) + 8 * np.finfo(np.float32).eps * np.abs(x) / np.nanstd(x, 0)
    both_nan = np.isnan(got) & np.isnan(want)
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    assert np.all(both_nan | (np.abs(got - want) <= bound)), (got, want, bound)


def test_b2nd_mean_and_std_and_weighted_pair(tmp_path):
    shape, chunks = (256, 73, 144), (16, 73, 144)  # over what is kept when small
    x = era(shape, nan=False).t.values
    path = str(tmp_path / "t.b2nd")
    bl.asarray(x, chunks=chunks, blocks=(4, 73, 144)).compute(urlpath=path)
    a = bl.open(path)
    e = (a - bl.mean(a, axis=0)) / bl.std(a, axis=0)
    got = e.to_numpy()
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(got, (x64 - x64.mean(0)) / x64.std(0), rtol=1e-4, atol=1e-4)
    assert e.last_stats["chunks_decompressed"]["total"] == 2 * nchunks(shape, chunks), e.last_stats
    w = bl.asarray(np.cos(np.linspace(-1, 1, shape[1]))[:, None])
    s = bl.sum(a * w, axis=(1, 2)) / bl.sum((a * 0 + 1) * w, axis=(1, 2))
    got = s.to_numpy()
    wn = np.cos(np.linspace(-1, 1, shape[1]))[:, None]
    want = (x.astype(np.float64) * wn).sum((1, 2)) / (np.ones_like(x, np.float64) * wn).sum((1, 2))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert s.last_stats["chunks_decompressed"]["total"] == nchunks(shape, chunks), s.last_stats
    assert s.last_stats["sources_kept"] == 0


@pytest.mark.parametrize("fmt", ["zarr", "nc"])
def test_reductions_not_folded_together_stay_correct(tmp_path, fmt):
    shape, chunks = (48, 10, 16), (8, 10, 16)
    lazy, eager = stored(tmp_path, era(shape), chunks, fmt)
    cases = [
        # other axes: no common slabs
        lambda ds: ds.t.mean("time").mean() + ds.t.mean("lon").mean(),
        # other sources: nothing to share
        lambda ds: ds.t.sum("time") + ds.u.sum("time"),
        # the same kind of fold asked for different regions: one folded for the other's
        # region waits unused, the other's own region computed when asked
        lambda ds: ds.t.sum(("lat", "lon"))[:20] + (ds.t * 2).sum(("lat", "lon"))[10:30],
    ]
    for i, f in enumerate(cases):
        got = f(lazy)
        assert isinstance(got.data, bl.Array)
        got = got.data.to_numpy()
        want = f(eager).values
        np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=f"case {i}")
    assert "siblings" not in (lazy.t.sum("time") + lazy.u.sum("time")).data.explain()
    assert "siblings" not in (lazy.t.mean("time").mean() + lazy.t.mean("lon").mean()).data.explain()
