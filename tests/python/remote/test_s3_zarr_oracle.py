"""Zarr over S3 (moto's server) with zarr-python over s3fs as the oracle, as the issue asks:
zarr-python writes through s3fs, b2lazy reads the same URL with the same storage_options
(fsspec's names); b2lazy writes (compute(urlpath="s3://...")), zarr-python reads back —
sharded and plain, v2 and v3; values against NumPy."""

import numpy as np
import pytest
import s3fs
import zarr

import b2lazy as bl


@pytest.fixture(scope="module")
def bucket(moto_s3):
    return moto_s3.make_bucket("zarr-oracle")


def zarr_store(moto_s3, path, read_only=False):
    fs = s3fs.S3FileSystem(
        key=moto_s3.key,
        secret=moto_s3.secret,
        asynchronous=True,
        client_kwargs={"endpoint_url": moto_s3.endpoint_url, "region_name": "us-east-1"},
    )
    return zarr.storage.FsspecStore(fs, path=path, read_only=read_only)


@pytest.mark.parametrize("fmt, shards", [(3, None), (3, (40, 60)), (2, None)])
def test_zarr_python_writes_b2lazy_reads(moto_s3, bucket, fmt, shards):
    x = np.random.default_rng(fmt).normal(size=(83, 121)).astype(np.float32)
    name = f"in-{fmt}-{bool(shards)}.zarr"
    kw = {"shards": shards} if shards else {}
    z = zarr.create_array(
        zarr_store(moto_s3, f"{bucket}/{name}"), shape=x.shape, chunks=(20, 30), dtype="f4", zarr_format=fmt, **kw
    )
    z[:] = x
    a = bl.open(f"s3://{bucket}/{name}", storage_options=moto_s3.storage_options())
    np.testing.assert_array_equal(a.to_numpy(), x)
    np.testing.assert_allclose(bl.sum(a, axis=0).to_numpy(), x.sum(axis=0), rtol=1e-5)
    np.testing.assert_array_equal(a[::7, 5:50].to_numpy(), x[::7, 5:50])


def test_b2lazy_writes_zarr_python_reads(moto_s3, bucket):
    x = np.random.default_rng(9).normal(size=(64, 50))
    url = f"s3://{bucket}/out.zarr"
    (bl.asarray(x, chunks=(16, 25)) * 2 + 1).compute(urlpath=url, storage_options=moto_s3.storage_options())
    z = zarr.open_array(zarr_store(moto_s3, f"{bucket}/out.zarr", read_only=True), mode="r")
    np.testing.assert_array_equal(z[:], x * 2 + 1)
    assert z.chunks == (16, 25)
