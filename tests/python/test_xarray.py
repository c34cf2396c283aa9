"""xarray's chunk manager for b2lazy (issue #15, item 6): Datasets whose variables are
b2lazy Arrays, computed lazily and equal to xarray on NumPy."""

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import b2lazy  # noqa: E402


def dataset(nan=False):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((24, 5, 3))
    if nan:
        a[3, 1, 2] = a[10, 0, 0] = np.nan
    return xr.Dataset(
        {"a": (("time", "y", "x"), a), "b": (("time", "y", "x"), rng.uniform(1, 2, (24, 5, 3)))},
        coords={"time": np.arange(24), "y": np.arange(5) * 10},
    )


@pytest.mark.parametrize("nan", [False, True])
def test_anomaly_over_std_is_lazy_and_equal(nan):
    ds = dataset(nan)
    c = ds.chunk({"time": 6}, chunked_array_type="b2lazy")
    assert isinstance(c.a.data, b2lazy.Array) and c.a.chunks == ((6, 6, 6, 6), (5,), (3,))
    e = (c.a - c.a.mean("time")) / c.b.std("time")
    assert isinstance(e.data, b2lazy.Array)  # a b2lazy graph, nothing computed yet
    ref = (ds.a - ds.a.mean("time")) / ds.b.std("time")
    got = e.compute()
    assert isinstance(got.data, np.ndarray)
    xr.testing.assert_allclose(got, ref)
    xr.testing.assert_allclose(c.a.sum(("time", "x")).compute(), ds.a.sum(("time", "x")))


def test_apply_ufunc_elementwise():
    ds = dataset()
    c = ds.chunk({"time": 5}, chunked_array_type="b2lazy")
    f = xr.apply_ufunc(np.hypot, c.a, c.b, dask="parallelized", output_dtypes=[np.float64])
    assert isinstance(f.data, b2lazy.Array)
    xr.testing.assert_allclose(f.compute(), xr.apply_ufunc(np.hypot, ds.a, ds.b))
    g = xr.apply_ufunc(lambda u: u > 0, c.a, dask="parallelized", output_dtypes=[bool])
    xr.testing.assert_equal(g.compute(), ds.a > 0)
    with pytest.raises(NotImplementedError, match="elementwise"):
        xr.apply_ufunc(
            np.sum,
            c.a,
            input_core_dims=[["time"]],
            kwargs={"axis": -1},
            dask="parallelized",
            output_dtypes=[np.float64],
            dask_gufunc_kwargs={"allow_rechunk": True},
        )


def test_to_zarr_and_open_dataset(tmp_path):
    pytest.importorskip("zarr")
    ds = dataset()
    c = ds.chunk({"time": 8}, chunked_array_type="b2lazy")
    e = ((c.a - c.a.mean("time")) * c.b).to_dataset(name="e")
    path = str(tmp_path / "e.zarr")
    e.to_zarr(path)  # written by the chunk manager's store, slab by slab
    ref = (ds.a - ds.a.mean("time")) * ds.b
    xr.testing.assert_allclose(xr.open_dataset(path, engine="zarr").e.load(), ref.rename("e"))
    o = xr.open_dataset(path, engine="zarr", chunked_array_type="b2lazy", chunks={})
    assert isinstance(o.e.data, b2lazy.Array)
    xr.testing.assert_allclose((o.e * 2).compute(), (ref * 2).rename("e"))
