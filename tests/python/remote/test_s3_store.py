"""S3Store (libcurl, SigV4) against moto's S3 server, with boto3 as the oracle: write,
list (every page, keys entity-decoded), read by range, delete, multipart uploads (and their
abort), path- and virtual-hosted addressing, and credentials from storage_options, the
environment and ~/.aws files — checked by a moto server that verifies signatures."""

import numpy as np
import pytest

from b2lazy import _core
from remote_servers import PRIVATE_BUCKET, FaultProxy

# moto verifies a signature over the query as werkzeug re-quotes it: a '/' in a listing
# prefix (%2F, as SigV4 and boto3 send it) fails there for every client, boto3's included.
# The strict server's listings use prefixes without '/'.

MiB = 1 << 20


def rand_bytes(n, seed=0):
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


@pytest.fixture(scope="module")
def bucket(moto_s3):
    return moto_s3.make_bucket("b2lazy-s3-tests")


def test_write_list_read_delete(moto_s3, bucket):
    s = _core.open_store(f"s3://{bucket}/root/", moto_s3.storage_options())
    assert s.root == f"s3://{bucket}/root"
    data = rand_bytes(100_000, 1)
    keys = ["a.bin", "dir/b.bin", "odd & <chars> 'q' \"d\".bin", "ünï cödé/ø.bin", "../up.bin"]
    for k in keys:
        s.write(k, data)
    client = moto_s3.client()
    for k in keys:  # the oracle: boto3 sees exactly these objects and bytes
        assert client.get_object(Bucket=bucket, Key=f"root/{k}")["Body"].read() == data
    listed = s.list("")
    assert sorted(o["key"] for o in listed) == sorted(keys)
    etags = {o["Key"][5:]: o["ETag"] for o in client.list_objects_v2(Bucket=bucket, Prefix="root/")["Contents"]}
    assert {o["key"]: o["version"] for o in listed} == etags
    assert all(o["size"] == len(data) for o in listed)
    assert [o["key"] for o in s.list("dir/")] == ["dir/b.bin"]
    for k in keys:
        assert s.read(k, [(0, 10), (99_990, -1), (500, 1000)]) == [data[:10], data[99_990:], data[500:1500]]
    assert s.stat("a.bin") == {"key": "a.bin", "size": len(data), "version": etags["a.bin"]}
    assert s.read("nope.bin", [(0, 1)]) is None and s.stat("nope.bin") is None
    for k in keys:
        s.remove(k)
    s.remove("never-there.bin")  # missing is not an error
    assert s.list("") == []
    assert "Contents" not in client.list_objects_v2(Bucket=bucket, Prefix="root/")


def test_suffix_ranges(moto_s3, bucket):
    data = rand_bytes(70_000, 7)
    s = _core.open_store(f"s3://{bucket}/suffix/", moto_s3.storage_options())
    s.write("x.bin", data)
    before = s.counters()["requests"]
    assert s.read("x.bin", [(-64, 64), (0, 4)]) == [data[-64:], data[:4]]
    assert s.counters()["requests"] == before + 2  # no HEAD for the size
    assert s.read("nope.bin", [(-64, 64)]) is None
    with pytest.raises(OSError, match=r"x\.bin.*its last 70001 bytes asked, it has 70000"):
        s.read("x.bin", [(-70_001, 70_001)])


def test_object_at_the_root_url(moto_s3, bucket):
    data = rand_bytes(5000, 2)
    moto_s3.client().put_object(Bucket=bucket, Key="files/x.b2nd", Body=data)
    s = _core.open_store(f"s3://{bucket}/files/x.b2nd", moto_s3.storage_options())
    assert s.read("", [(100, 50)]) == [data[100:150]]
    assert s.stat("")["size"] == 5000


def test_listing_pages(moto_s3):
    bucket = moto_s3.make_bucket("b2lazy-s3-pages")
    client = moto_s3.client()
    for i in range(1105):  # moto answers 1000 keys a page
        client.put_object(Bucket=bucket, Key=f"p/{i:05d}", Body=b"x" * (i % 7))
    s = _core.open_store(f"s3://{bucket}/p", moto_s3.storage_options())
    listed = s.list("")
    assert [o["key"] for o in listed] == [f"{i:05d}" for i in range(1105)]
    assert [o["size"] for o in listed] == [i % 7 for i in range(1105)]
    assert s.counters()["requests"] == 2
    assert len(s.list("010")) == 100


def test_multipart_upload(moto_s3, bucket):
    data = rand_bytes(13 * MiB + 123, 3)
    opts = moto_s3.storage_options(multipart_threshold=str(6 * MiB), multipart_chunksize=str(5 * MiB))
    s = _core.open_store(f"s3://{bucket}", opts)
    s.write("mp/big.bin", data)
    head = moto_s3.client().head_object(Bucket=bucket, Key="mp/big.bin")
    assert head["ContentLength"] == len(data) and head["ETag"].endswith('-3"')  # three parts
    assert moto_s3.client().get_object(Bucket=bucket, Key="mp/big.bin")["Body"].read() == data
    assert s.counters()["requests"] == 5  # start, 3 parts, complete
    assert s.counters()["bytes_written"] >= len(data)
    # a read of it in parallel parts of 4 MiB
    s = _core.open_store(f"s3://{bucket}", moto_s3.storage_options(coalesce_max=str(4 * MiB)))
    assert s.read("mp/big.bin", [(0, -1), (7, len(data) - 7)]) == [data, data[7:]]


def test_failed_multipart_upload_is_aborted_and_leaves_nothing(moto_s3, bucket):
    data = rand_bytes(11 * MiB, 4)
    client = moto_s3.client()
    client.put_object(Bucket=bucket, Key="mp/keep.bin", Body=b"old bytes")
    proxy = FaultProxy(moto_s3.port).start()
    try:
        # start and one part go through, the next part fails (no retries), the rest pass
        proxy.set(["ok", "ok", "500"])
        opts = moto_s3.storage_options(
            endpoint_url=proxy.url, multipart_threshold=str(6 * MiB), multipart_chunksize=str(5 * MiB)
        )
        s = _core.open_store(f"s3://{bucket}", opts, max_retries=0)
        with pytest.raises(OSError, match=rf"s3://{bucket}/mp/keep\.bin': HTTP 500.*Injected"):
            s.write("mp/keep.bin", data)
        assert proxy.seen[-1] == "ok"  # ... the abort, after the failure
    finally:
        proxy.stop()
    assert client.get_object(Bucket=bucket, Key="mp/keep.bin")["Body"].read() == b"old bytes"
    assert client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_missing_bucket_is_an_error_not_none(moto_s3):
    s = _core.open_store("s3://no-such-bucket-here/x", moto_s3.storage_options())
    with pytest.raises(OSError, match=r"s3://no-such-bucket-here/x/k': HTTP 404 NoSuchBucket"):
        s.read("k", [(0, 1)])


def test_client_kwargs_and_virtual_hosted_addressing(moto_s3):
    bucket = moto_s3.make_bucket("b2lazy-virtual")
    # curl resolves *.localhost to 127.0.0.1: the bucket is in the host name
    opts = {
        "key": moto_s3.key,
        "secret": moto_s3.secret,
        "addressing_style": "virtual",
        "client_kwargs": {"endpoint_url": f"http://localhost:{moto_s3.port}", "region_name": "eu-west-1"},
    }
    s = _core.open_store(f"s3://{bucket}", opts)
    s.write("v.bin", b"virtually hosted")
    assert moto_s3.client().get_object(Bucket=bucket, Key="v.bin")["Body"].read() == b"virtually hosted"
    assert [o["key"] for o in s.list("")] == ["v.bin"]


# ---- signatures and credentials, checked by the strict server --------------------------


def strict_roundtrip(s, name):
    data = rand_bytes(3000, 5)
    s.write(name, data)
    assert s.read(name, [(1, 2000)]) == [data[1:2001]]
    assert name in [o["key"] for o in s.list(name[:3])]
    s.remove(name)
    assert s.stat(name) is None


def test_signed_with_storage_options(moto_s3_strict):
    s = _core.open_store(f"s3://{PRIVATE_BUCKET}", moto_s3_strict.storage_options())
    strict_roundtrip(s, "opts.bin")
    data = rand_bytes(7 * MiB, 6)  # multipart, signed
    s = _core.open_store(
        f"s3://{PRIVATE_BUCKET}",
        moto_s3_strict.storage_options(multipart_threshold=str(6 * MiB), multipart_chunksize=str(5 * MiB)),
    )
    s.write("signed-mp.bin", data)
    assert s.read("signed-mp.bin", [(0, -1)]) == [data]


def test_signed_with_environment(moto_s3_strict, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", moto_s3_strict.key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", moto_s3_strict.secret)
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", moto_s3_strict.endpoint_url)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    strict_roundtrip(_core.open_store(f"s3://{PRIVATE_BUCKET}", {}), "env.bin")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    with pytest.raises(OSError, match=r"HTTP 403 SignatureDoesNotMatch.*keys from the environment"):
        _core.open_store(f"s3://{PRIVATE_BUCKET}", {}).read("x", [(0, 1)])


def test_signed_with_profile_files(moto_s3_strict, monkeypatch, tmp_path):
    (tmp_path / "credentials").write_text(
        f"[default]\naws_access_key_id = WRONG\naws_secret_access_key = WRONG\n\n"
        f"[tests]\naws_access_key_id = {moto_s3_strict.key}\naws_secret_access_key = {moto_s3_strict.secret}\n"
    )
    (tmp_path / "config").write_text(
        f"[profile tests]\nregion = us-east-1\nendpoint_url = {moto_s3_strict.endpoint_url}\n"
    )
    for v in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_S3",
    ):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_PROFILE", "tests")
    strict_roundtrip(_core.open_store(f"s3://{PRIVATE_BUCKET}", {}), "profile.bin")
    monkeypatch.delenv("AWS_PROFILE")
    # the same profile named in storage_options
    strict_roundtrip(_core.open_store(f"s3://{PRIVATE_BUCKET}", {"profile": "tests"}), "profile2.bin")
    with pytest.raises(OSError, match="profile='nope'"):
        _core.open_store(f"s3://{PRIVATE_BUCKET}", {"profile": "nope"})


def test_anonymous_refused_on_a_private_bucket(moto_s3_strict):
    s = _core.open_store(f"s3://{PRIVATE_BUCKET}", moto_s3_strict.storage_options())
    s.write("private.bin", b"not for everyone")
    anon = _core.open_store(f"s3://{PRIVATE_BUCKET}", {"anon": True, "endpoint_url": moto_s3_strict.endpoint_url})
    with pytest.raises(OSError, match=rf"s3://{PRIVATE_BUCKET}/private\.bin': HTTP 403.*unsigned: anon=true"):
        anon.read("private.bin", [(0, 4)])
    assert anon.counters()["retries"] == 0  # a 403 is not retried


def test_not_permitted_bucket_names_the_code(moto_s3_strict):
    s = _core.open_store("s3://someone-elses", moto_s3_strict.storage_options())
    with pytest.raises(OSError, match=r"s3://someone-elses/k': HTTP 403 AccessDenied"):
        s.write("k", b"x")


def test_bad_s3_options(moto_s3):
    with pytest.raises(OSError, match="addressing_style"):
        _core.open_store("s3://b/x", {"addressing_style": "sideways"})
    with pytest.raises(OSError, match="no secret"):
        _core.open_store("s3://b/x", {"key": "AKIA"})
    with pytest.raises(ValueError, match="no bucket"):
        _core.open_store("s3:///x", {})


def test_signed_with_a_session_token(moto_s3_strict):
    creds = moto_s3_strict.client("sts").assume_role(RoleArn=moto_s3_strict.role_arn, RoleSessionName="b2lazy")[
        "Credentials"
    ]
    opts = {
        "key": creds["AccessKeyId"],
        "secret": creds["SecretAccessKey"],
        "token": creds["SessionToken"],
        "endpoint_url": moto_s3_strict.endpoint_url,
    }
    strict_roundtrip(_core.open_store(f"s3://{PRIVATE_BUCKET}", opts), "token.bin")
    with pytest.raises(OSError, match=r"HTTP 400 InvalidToken"):
        _core.open_store(f"s3://{PRIVATE_BUCKET}", {**opts, "token": "not-the-token"}).read("x", [(0, 1)])


def test_read_many_across_objects_exact_and_coalesced(moto_s3, bucket):
    objs = {f"many/{i}": rand_bytes(200_000 + i, 10 + i) for i in range(5)}
    client = moto_s3.client()
    for k, v in objs.items():
        client.put_object(Bucket=bucket, Key=k, Body=v)
    rng = np.random.default_rng(5)
    reqs = []
    for _ in range(60):
        k = f"many/{int(rng.integers(0, 5))}"
        o = int(rng.integers(0, 190_000))
        reqs.append((k, [(o, int(rng.integers(0, 10_000))), (o // 2, -1)]))
    reqs.append(("many/none", [(0, 5)]))
    s = _core.open_store(f"s3://{bucket}", {**moto_s3.storage_options(), "coalesce_waste": "100"})
    got = s.read_many(reqs)
    assert got[-1] is None
    assert got[:-1] == [[objs[k][o : o + n] if n >= 0 else objs[k][o:] for o, n in r] for k, r in reqs[:-1]]
    # the sized ranges of each object are one request (1 MiB gap, any share of gaps); each
    # to-the-end range one
    assert s.counters()["requests"] == 5 + 60 + 1
