"""Zarr v2/v3 read and written through b2lazy's byte stores, against zarr-python reading
the same objects. Every test runs over each store target that exists here: "logging" (a
store over a local directory that records its requests, always there), "http" (nginx;
read-only) and "s3" (moto) when their fixtures and b2lazy's stores for them exist, else
skipped. Requests are counted on the logging target: a region read is one batch, a
shard's index is read once, a Blosc run fetches only its blocks, outputs write their
metadata last and a failing output leaves no array."""

import os
import shutil
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import b2lazy
import zarr
from b2lazy import _core

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "formats"))
from zarr_stores import sharded, values, write  # noqa: E402

LOG_SCHEME = "zarrlog"


class Target:
    """Where arrays live: zarr-python writes `where(name)` (then `publish(name)` puts it in
    the store), b2lazy reads `url(name)`; `local(name)` is what b2lazy wrote there, for
    zarr-python to read."""

    writable = True
    counts = False

    def open(self, name):
        return b2lazy.Array(_core.open(self.url(name)))

    def publish(self, name):
        pass

    def local(self, name):
        return self.where(name)


class LoggingTarget(Target):
    counts = True

    def __init__(self, root):
        self.root = root
        _core._register_logging_store(LOG_SCHEME, str(root))

    def where(self, name):
        return str(self.root / "bucket" / name)

    def url(self, name):
        return f"{LOG_SCHEME}://bucket/{name}"

    def batches(self):
        return _core._logging_store_log(LOG_SCHEME)["batches"]

    def log(self):
        return _core._logging_store_log(LOG_SCHEME)

    def reset(self, fail_writes_after=-1):
        _core._logging_store_reset(LOG_SCHEME, fail_writes_after)


class HttpTarget(Target):
    writable = False

    def __init__(self, nginx):
        self.nginx = nginx

    def where(self, name):
        return str(self.nginx.root / "zarr-store" / name)

    def url(self, name):
        return f"{self.nginx.url}/zarr-store/{name}"


class S3Target(Target):
    """moto's S3 server, reached by b2lazy through the AWS_* variables; zarr-python's
    arrays are written locally and uploaded with boto3 (and b2lazy's downloaded)."""

    def __init__(self, moto, scratch):
        self.client = moto.client()
        self.bucket = "zarr-store"
        self.scratch = scratch
        try:
            self.client.create_bucket(Bucket=self.bucket)
        except Exception:  # noqa: BLE001 - made before
            pass
        self.env = {
            "AWS_ENDPOINT_URL": moto.endpoint_url,
            "AWS_ACCESS_KEY_ID": moto.key,
            "AWS_SECRET_ACCESS_KEY": moto.secret,
            "AWS_DEFAULT_REGION": "us-east-1",
        }

    def where(self, name):
        return str(self.scratch / "up" / name)

    def url(self, name):
        return f"s3://{self.bucket}/{name}"

    def _keys(self, name):
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=name + "/")
        return [o["Key"] for page in pages for o in page.get("Contents", [])]

    def publish(self, name):
        for key in self._keys(name):
            self.client.delete_object(Bucket=self.bucket, Key=key)
        root = self.where(name)
        for d, _, files in os.walk(root):
            for f in files:
                rel = os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
                self.client.upload_file(os.path.join(d, f), self.bucket, f"{name}/{rel}")

    def local(self, name):
        root = str(self.scratch / "down" / name)
        shutil.rmtree(root, ignore_errors=True)
        for key in self._keys(name):
            path = os.path.join(root, key[len(name) + 1 :])
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self.client.download_file(self.bucket, key, path)
        return root


def _b2lazy_has_store(url):
    try:
        _core.open_store(url, {})
    except (AttributeError, ValueError, TypeError):
        return False
    except OSError:
        return True
    return True


@pytest.fixture(scope="module", params=["logging", "http", "s3"])
def target(request, tmp_path_factory):
    if request.param == "logging":
        yield LoggingTarget(tmp_path_factory.mktemp("zarr_store"))
        return
    fixture = {"http": "nginx_server", "s3": "moto_s3"}[request.param]
    try:
        server = request.getfixturevalue(fixture)
    except pytest.FixtureLookupError:
        pytest.skip(f"no {fixture} fixture here")
    if request.param == "http":
        if not _b2lazy_has_store(server.url + "/"):
            pytest.skip("b2lazy has no http store here")
        yield HttpTarget(server)
        return
    if not _b2lazy_has_store("s3://zarr-store/"):
        pytest.skip("b2lazy has no s3 store here")
    t = S3Target(server, tmp_path_factory.mktemp("zarr_s3"))
    saved = {k: os.environ.get(k) for k in t.env}
    os.environ.update(t.env)
    try:
        yield t
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture
def logging_target(target):
    if not target.counts:
        pytest.skip("requests are counted on the logging store")
    target.reset()
    return target


def writable(target):
    if not target.writable:
        pytest.skip(f"{type(target).__name__} is read-only")
    return target


# --- values ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fmt,codec",
    [
        (3, "bytes"),
        (3, "blosc-zstd-shuffle"),
        (3, "zstd"),
        (3, "gzip"),
        (3, "transpose-big-gzip"),
        (2, "none"),
        (2, "blosc"),
        (2, "zstd"),
        (2, "nested-keys"),
        (2, "order-F-big"),
    ],
)
def test_values_equal_zarr_python(target, fmt, codec):
    data = values((37, 23), "float64", seed=fmt)
    name = f"v{fmt}-{codec}.zarr"
    want = write(target.where(name), data, chunks=(8, 10), fmt=fmt, codec=codec)
    target.publish(name)
    a = target.open(name)
    assert a.shape == want.shape and a.dtype == want.dtype.newbyteorder("=")
    np.testing.assert_array_equal(a.to_numpy(), want)
    np.testing.assert_array_equal(a[3:30:4, 1:22:3].to_numpy(), want[3:30:4, 1:22:3])
    np.testing.assert_array_equal(a[11, 2:9].to_numpy(), want[11, 2:9])
    assert float(a.sum().to_numpy()) == pytest.approx(float(want.sum()), rel=1e-12)


@pytest.mark.parametrize("index_location", ["end", "start"])
def test_sharded_values_and_missing_inner_chunks(target, index_location):
    data = values((30, 26), "int32", seed=3)
    name = f"sharded-{index_location}.zarr"
    want = sharded(
        target.where(name), data, chunks=(5, 4), shards=(10, 8), index_location=index_location, fill_value=-1
    )
    target.publish(name)
    a = target.open(name)
    np.testing.assert_array_equal(a.to_numpy(), want)
    np.testing.assert_array_equal(a[7:23, 3:21].to_numpy(), want[7:23, 3:21])
    # Part of the array written: absent inner chunks and absent shards read as the fill value.
    z = zarr.open_array(target.where(name), mode="r+")
    z[...] = np.full(z.shape, -1, dtype="int32")
    z[0:5, 0:4] = 9
    z[12:14, 17:20] = 8
    want = z[...]
    target.publish(name)
    np.testing.assert_array_equal(target.open(name).to_numpy(), want)


@pytest.mark.parametrize("fmt", [2, 3])
def test_missing_chunks_are_the_fill_value(target, fmt):
    data = values((20, 18), "float32", seed=5)
    name = f"missing-v{fmt}.zarr"
    want = write(
        target.where(name),
        data,
        chunks=(6, 5),
        fmt=fmt,
        codec="zstd",
        fill_value=np.float32(-2.5),
        written=(slice(6, 12), slice(5, 15)),
    )
    assert (want == -2.5).sum() > 0
    target.publish(name)
    np.testing.assert_array_equal(target.open(name).to_numpy(), want)


@pytest.mark.parametrize("fmt", [2, 3])
def test_arrays_of_a_consolidated_group(target, fmt):
    where = target.where(f"group-v{fmt}.zarr")
    g = zarr.open_group(where, mode="w", zarr_format=fmt)
    x = g.create_array("x", shape=(12, 9), chunks=(5, 4), dtype="int16", fill_value=0)
    x[...] = np.arange(108, dtype="int16").reshape(12, 9)
    g.create_array("sub/y", shape=(7,), chunks=(3,), dtype="float64", fill_value=0)[...] = np.linspace(0, 1, 7)
    zarr.consolidate_metadata(where)
    target.publish(f"group-v{fmt}.zarr")
    np.testing.assert_array_equal(target.open(f"group-v{fmt}.zarr/x").to_numpy(), x[...])
    np.testing.assert_array_equal(target.open(f"group-v{fmt}.zarr/sub/y").to_numpy(), np.linspace(0, 1, 7))
    with pytest.raises(OSError, match="group"):
        target.open(f"group-v{fmt}.zarr")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_any_chunking_reads_as_zarr_python_does(target, data):
    ndim = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.integers(0, 13)) for _ in range(ndim))
    chunks = tuple(data.draw(st.integers(1, 6)) for _ in range(ndim))
    shard = data.draw(st.booleans())
    codec = data.draw(st.sampled_from(["bytes", "zstd", "blosc-zstd-shuffle"]))
    arr = values(shape, "float64", seed=len(shape))
    name = f"hyp-{ndim}-{shard}-{codec}.zarr"
    shards = tuple(c * data.draw(st.integers(1, 3)) for c in chunks) if shard else None
    want = write(target.where(name), arr, chunks=chunks, shards=shards, fmt=3, codec=codec)
    target.publish(name)
    a = target.open(name)
    np.testing.assert_array_equal(a.to_numpy(), want)
    sl = tuple(slice(data.draw(st.integers(0, max(s, 1))), None, data.draw(st.integers(1, 3))) for s in shape)
    np.testing.assert_array_equal(a[sl].to_numpy(), want[sl])


# --- requests counted --------------------------------------------------------------------
def test_a_region_read_is_one_batch(logging_target):
    t = logging_target
    want = write(t.where("batch.zarr"), values((64, 64), "float64"), chunks=(8, 8), fmt=3, codec="zstd")
    a = t.open("batch.zarr")
    t.reset()
    np.testing.assert_array_equal(a[4:28, 2:30].to_numpy(), want[4:28, 2:30])  # 4 x 4 chunks
    batches = t.batches()
    assert len(batches) == 1
    assert sorted(key for key, _ in batches[0]) == sorted(f"c/{i}/{j}" for i in range(4) for j in range(4))


def test_a_shard_index_is_read_once(logging_target):
    t = logging_target
    want = sharded(t.where("once.zarr"), values((40, 40), "float64"), chunks=(5, 5), shards=(20, 20))
    a = t.open("once.zarr")

    def index_reads():
        return [key for b in t.batches() for key, ranges in b for off, _ in ranges if off < 0]

    t.reset()
    np.testing.assert_array_equal(a[3:17, 22:39].to_numpy(), want[3:17, 22:39])
    np.testing.assert_array_equal(a[1:9, 21:30].to_numpy(), want[1:9, 21:30])
    assert index_reads() == ["c/0/1"]  # (the index is at the end: its last bytes)
    # Reading every inner chunk of a shard reads the shard whole (no index read first),
    # and keeps its index for the partial reads after.
    t.reset()
    np.testing.assert_array_equal(a.to_numpy(), want)
    assert float(a.sum().to_numpy()) == pytest.approx(float(want.sum()))
    np.testing.assert_array_equal(a[23:37, 2:19].to_numpy(), want[23:37, 2:19])
    assert index_reads() == []
    whole = sorted({key for b in t.batches() for key, ranges in b if ranges == [(0, -1)]})
    assert whole == ["c/0/0", "c/0/1", "c/1/0", "c/1/1"]


def test_a_blosc_run_fetches_only_its_blocks(logging_target):
    t = logging_target
    from zarr.codecs import BloscCodec

    data = values((64, 8192), "float64")
    z = zarr.create_array(
        t.where("runs.zarr"),
        shape=data.shape,
        chunks=data.shape,
        dtype="float64",
        compressors=BloscCodec(cname="zstd", clevel=1, shuffle="shuffle", blocksize=65536),
    )
    z[...] = data
    a = t.open("runs.zarr")
    t.reset()
    np.testing.assert_array_equal(a[50, 100:900].to_numpy(), data[50, 100:900])
    fetched = sum(n for b in t.batches() for _, ranges in b for _, n in ranges)
    assert len(t.batches()) == 3  # header, block starts, the blocks
    assert fetched < os.path.getsize(os.path.join(t.where("runs.zarr"), "c", "0", "0")) / 10


# --- writes ------------------------------------------------------------------------------
@pytest.mark.parametrize("shards", [None, (10, 12)])
def test_outputs_are_read_by_zarr_python(target, shards):
    t = writable(target)
    x = b2lazy.asarray(values((23, 36), "float64"))
    kw = dict(chunks=(5, 6), shards=shards) if shards else dict(chunks=(5, 6))
    name = f"out-{bool(shards)}.zarr"
    (x * 3 - 1).compute(urlpath=t.url(name), **kw)
    z = zarr.open_array(t.local(name), mode="r")
    np.testing.assert_array_equal(z[...], x.to_numpy() * 3 - 1)
    if shards:
        assert z.shards == shards and z.chunks == (5, 6)
    np.testing.assert_array_equal(t.open(name).to_numpy(), z[...])


def test_outputs_write_the_metadata_last(logging_target):
    t = logging_target
    b2lazy.asarray(values((30, 30), "float32")).compute(urlpath=t.url("last.zarr"), chunks=(7, 7))
    writes = t.log()["writes"]
    assert writes[-1] == "zarr.json" and writes.count("zarr.json") == 1
    assert len(writes) == 1 + 25


def test_a_failing_output_leaves_no_array(logging_target):
    t = logging_target
    t.reset(fail_writes_after=4)
    with pytest.raises(OSError, match="write refused"):
        b2lazy.asarray(values((40, 40), "float64")).compute(urlpath=t.url("failed.zarr"), chunks=(5, 5))
    t.reset()
    where = t.where("failed.zarr")
    assert not os.path.exists(os.path.join(where, "zarr.json"))
    left = [f for _, _, files in os.walk(where) for f in files] if os.path.exists(where) else []
    assert left == []
    with pytest.raises(Exception):  # noqa: B017 - zarr-python finds no array either
        zarr.open_array(where, mode="r")
