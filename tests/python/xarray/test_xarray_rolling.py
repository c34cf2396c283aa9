"""xarray's rolling on b2lazy-backed data (plain xarray code: ``da.rolling(time=8).mean()``),
against xarray on NumPy. xarray pads, takes a sliding_window_view and reduces its window
axis through the array namespace; b2lazy builds that reduction as one moving node (no
hook into xarray), which the plans checked here show."""

import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

from conftest import examples

xr = pytest.importorskip("xarray")

import b2lazy  # noqa: E402

FUNCS = ["mean", "sum", "max", "min", "std", "var", "count"]


def dataarray(shape, dtype, seed, nan=True):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        a = rng.integers(-50, 50, shape).astype(dtype)
    else:
        a = (rng.standard_normal(shape) * 5 + 1).astype(dtype)
        if nan and a.size:
            a.flat[rng.integers(a.size, size=max(1, a.size // 6))] = np.nan
    dims = ("time", "lat", "lon")[: len(shape)]
    return xr.DataArray(a, dims=dims, coords={"time": np.arange(shape[0])}, name="t", attrs={"units": "K"})


def b2(da, chunks):
    return da.chunk(dict(zip(da.dims, chunks)), chunked_array_type="b2lazy")


def check(got, ref, dtype):
    assert isinstance(got.data, b2lazy.Array)
    out = got.compute()
    assert out.dtype == ref.dtype
    rtol = 1e-5 if ref.dtype == np.float32 else 1e-10
    xr.testing.assert_allclose(out, ref, rtol=rtol, atol=rtol * 50)


@st.composite
def cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, {1: 30, 2: 12, 3: 6}[ndim])) for _ in range(ndim))
    chunks = tuple(draw(st.sampled_from([1, 2, max(1, s // 3), s])) for s in shape)
    dim = draw(st.sampled_from(("time", "lat", "lon")[:ndim]))
    n = shape[("time", "lat", "lon").index(dim)]
    w = draw(st.sampled_from([1, 2, 3, max(1, n // 2), n, n + 2]))
    mp = draw(st.one_of(st.none(), st.integers(1, w)))
    return dict(
        shape=shape,
        chunks=chunks,
        dim=dim,
        w=w,
        center=draw(st.booleans()),
        min_periods=mp,
        func=draw(st.sampled_from(FUNCS)),
        dtype=draw(st.sampled_from([np.float32, np.float64, np.int32])),
        seed=draw(st.integers(0, 2**32 - 1)),
    )


@examples(120)
@given(cases())
def test_rolling_reductions_equal_xarray_on_numpy(c):
    da = dataarray(c["shape"], c["dtype"], c["seed"])
    kw = dict(center=c["center"], min_periods=c["min_periods"])
    ref = getattr(da.rolling({c["dim"]: c["w"]}, **kw), c["func"])()
    got = getattr(b2(da, c["chunks"]).rolling({c["dim"]: c["w"]}, **kw), c["func"])()
    check(got, ref, c["dtype"])
    assert got.attrs == ref.attrs and got.name == ref.name


@pytest.mark.parametrize("func", FUNCS)
def test_rolling_plans_moving_nodes_not_shifted_copies(func):
    da = dataarray((40, 4, 3), np.float32, 1)
    got = getattr(b2(da, (8, 4, 3)).rolling(time=8), func)()
    plan = got.data.explain()
    assert "moving" in plan
    assert "sliding_window" not in plan and "stack" not in plan  # nothing of w shifted copies left
    check(got, getattr(da.rolling(time=8), func)(), np.float32)


def test_rolling_with_ddof_and_min_periods_and_center():
    da = dataarray((33, 5), np.float64, 2)
    c = b2(da, (4, 5))
    for kw in (dict(center=True), dict(min_periods=1), dict(center=True, min_periods=3)):
        check(c.rolling(time=6, **kw).std(ddof=1), da.rolling(time=6, **kw).std(ddof=1), np.float64)
        check(c.rolling(lat=3, **kw).mean(), da.rolling(lat=3, **kw).mean(), np.float64)


def test_construct_and_reduce_still_work():
    da = dataarray((20, 3, 4), np.float32, 3)
    c = b2(da, (6, 3, 4))
    got = c.rolling(time=5).construct("w")
    assert isinstance(got.data, b2lazy.Array) and got.dims == ("time", "lat", "lon", "w")
    xr.testing.assert_identical(got.compute(), da.rolling(time=5).construct("w"))
    got = c.rolling(time=5, center=True).construct("w", stride=3, fill_value=0.0)
    xr.testing.assert_identical(got.compute(), da.rolling(time=5, center=True).construct("w", stride=3, fill_value=0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        xr.testing.assert_allclose(c.rolling(time=4).reduce(np.nanmax).compute(), da.rolling(time=4).reduce(np.nanmax))


def test_two_dimensional_rolling_and_datasets():
    da = dataarray((12, 7, 5), np.float64, 4)
    c = b2(da, (5, 7, 5))
    check(c.rolling(time=3, lat=2).mean(), da.rolling(time=3, lat=2).mean(), np.float64)
    ds = xr.Dataset({"t": da, "u": da * 2 + 1})
    got = ds.chunk({"time": 4}, chunked_array_type="b2lazy").rolling(time=4, center=True).max()
    ref = ds.rolling(time=4, center=True).max()
    assert all(isinstance(v.data, b2lazy.Array) for v in got.data_vars.values())
    xr.testing.assert_allclose(got.compute(), ref)


def test_dask_and_numpy_rolling_unchanged():
    # b2lazy hooks nothing in xarray: NumPy and Dask rolling go their own ways.
    import xarray.computation.rolling as rolling

    before = {k: v for k, v in vars(rolling.DataArrayRolling).items() if callable(v)}
    import b2lazy._xarray  # noqa: F401  (the chunk manager; importing it patches nothing)

    after = {k: v for k, v in vars(rolling.DataArrayRolling).items() if callable(v)}
    assert before == after
    da = dataarray((16, 3), np.float64, 5)
    dask = pytest.importorskip("dask")  # noqa: F841
    xr.testing.assert_allclose(da.chunk(time=4).rolling(time=3).mean().compute(), da.rolling(time=3).mean())


def test_rolling_over_a_zarr_store_reads_each_chunk_about_once(tmp_path):
    zarr = pytest.importorskip("zarr")
    da = dataarray((96, 6, 5), np.float32, 6)
    z = zarr.create_array(str(tmp_path / "t.zarr"), shape=da.shape, chunks=(8, 6, 5), dtype="f4")
    z[...] = da.values
    t = xr.DataArray(b2lazy.open(str(tmp_path / "t.zarr")), dims=da.dims, coords=da.coords)
    got = t.rolling(time=8).mean()
    r = got.data.compute()  # the b2lazy Array evaluated: its run's counters
    xr.testing.assert_allclose(
        got.copy(data=r.to_numpy()), da.rolling(time=8).mean().drop_attrs(), rtol=1e-5, atol=1e-5
    )
    # 12 storage chunks; xarray's mean is three moving sums (sum, count, count) over the
    # same data, and each region also reads the chunk before it (the window's halo): all
    # of it decompressed at most 1.5 times, not 3 x 2 times
    assert r.stats["chunks_decompressed"]["total"] <= 18


def test_rolling_through_open_dataset_with_the_b2lazy_chunk_manager(tmp_path):
    pytest.importorskip("zarr")
    ds = xr.Dataset({"t": dataarray((30, 4, 3), np.float32, 7)})
    ds.to_zarr(str(tmp_path / "d.zarr"))
    o = xr.open_dataset(str(tmp_path / "d.zarr"), engine="zarr", chunks={}, chunked_array_type="b2lazy")
    got = o.t.rolling(time=5, center=True, min_periods=2).std()
    assert isinstance(got.data, b2lazy.Array)
    xr.testing.assert_allclose(
        got.compute(), ds.t.rolling(time=5, center=True, min_periods=2).std(), rtol=1e-5, atol=1e-5
    )
