"""xarray's path over remote data: a Dataset opened with chunked_array_type="b2lazy" from a
Zarr store on S3 (moto), computed, and written back to S3 with Dataset.to_zarr (zarr-python
over s3fs, the chunk manager's store) — values against xarray on NumPy."""

import numpy as np
import pytest
import xarray as xr

import b2lazy as bl

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::RuntimeWarning")


@pytest.fixture(scope="module")
def bucket(moto_s3):
    return moto_s3.make_bucket("xarray-remote")


def test_open_compute_and_to_zarr_on_s3(moto_s3, bucket):
    so = {
        "key": moto_s3.key,
        "secret": moto_s3.secret,
        "client_kwargs": {"endpoint_url": moto_s3.endpoint_url, "region_name": "us-east-1"},
    }
    rng = np.random.default_rng(39)
    ds = xr.Dataset(
        {"t": (("time", "x"), rng.normal(size=(48, 30)).astype("f4"))},
        coords={"time": np.arange(48), "x": np.arange(30)},
    )
    ds.chunk({"time": 12}).to_zarr(f"s3://{bucket}/in.zarr", storage_options=so, zarr_format=3, consolidated=False)
    got = xr.open_dataset(
        f"s3://{bucket}/in.zarr",
        engine="zarr",
        chunks={},
        chunked_array_type="b2lazy",
        storage_options=so,
        consolidated=False,
    )
    assert isinstance(got.t.data, bl.Array)
    anom = got.t - got.t.mean("time")
    assert isinstance(anom.data, bl.Array)
    np.testing.assert_allclose(anom.values, (ds.t - ds.t.mean("time")).values, rtol=1e-5, atol=1e-6)
    anom.to_dataset(name="a").to_zarr(f"s3://{bucket}/out.zarr", storage_options=so, zarr_format=3, consolidated=False)
    back = xr.open_dataset(f"s3://{bucket}/out.zarr", engine="zarr", storage_options=so, consolidated=False)
    np.testing.assert_allclose(back.a.values, (ds.t - ds.t.mean("time")).values, rtol=1e-5, atol=1e-6)
