"""GcsStore (GCS's XML API over libcurl). No real GCS is reachable here: HMAC-key access is
checked against moto (GCS's XML API speaks S3's protocol and takes AWS-style SigV4 with
HMAC keys; the strict moto server verifies the signatures), bearer tokens against nginx,
whose /bearer-bucket/ answers 401 without "Authorization: Bearer good-token"."""

import numpy as np
import pytest

from b2lazy import _core
from remote_servers import PRIVATE_BUCKET


def rand_bytes(n, seed=0):
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


@pytest.mark.parametrize("scheme", ["gs", "gcs"])
def test_hmac_keys_roundtrip(moto_s3, scheme):
    bucket = moto_s3.make_bucket(f"b2lazy-gcs-{scheme}")
    opts = {"key": moto_s3.key, "secret": moto_s3.secret, "endpoint_url": moto_s3.endpoint_url}
    s = _core.open_store(f"{scheme}://{bucket}/pre", opts)
    assert s.root == f"{scheme}://{bucket}/pre"
    data = rand_bytes(50_000, 1)
    s.write("z/c/0/0", data)
    assert moto_s3.client().get_object(Bucket=bucket, Key="pre/z/c/0/0")["Body"].read() == data
    assert s.read("z/c/0/0", [(0, 100), (49_000, -1)]) == [data[:100], data[49_000:]]
    assert [o["key"] for o in s.list("z/")] == ["z/c/0/0"]
    s.remove("z/c/0/0")
    assert s.read("z/c/0/0", [(0, 1)]) is None


def test_hmac_signatures_verified(moto_s3_strict):
    opts = {
        "hmac_key": moto_s3_strict.key,
        "hmac_secret": moto_s3_strict.secret,
        "endpoint_url": moto_s3_strict.endpoint_url,
    }
    s = _core.open_store(f"gs://{PRIVATE_BUCKET}", opts)
    s.write("gcs-hmac.bin", b"signed for gcs")
    assert s.read("gcs-hmac.bin", [(0, -1)]) == [b"signed for gcs"]
    assert "gcs-hmac.bin" in [o["key"] for o in s.list("gcs")]
    bad = _core.open_store(f"gs://{PRIVATE_BUCKET}", {**opts, "hmac_secret": "wrong"})
    with pytest.raises(OSError, match=r"gs://private-bucket/gcs-hmac\.bin': HTTP 403 SignatureDoesNotMatch.*HMAC key"):
        bad.read("gcs-hmac.bin", [(0, 1)])


@pytest.fixture(scope="module")
def bearer_blob(nginx_server):
    data = rand_bytes(100_000, 2)
    nginx_server.put("bearer-bucket/arr/c/0", data)
    return data


def test_bearer_token_option(nginx_server, bearer_blob):
    s = _core.open_store("gs://bearer-bucket/arr", {"token": "good-token", "endpoint_url": nginx_server.url})
    assert s.read("c/0", [(10, 90), (99_000, -1)]) == [bearer_blob[10:100], bearer_blob[99_000:]]
    assert s.stat("c/0")["size"] == 100_000
    assert s.read("c/1", [(0, 1)]) is None


def test_bearer_token_from_environment(nginx_server, bearer_blob, monkeypatch):
    monkeypatch.setenv("GOOGLE_OAUTH_ACCESS_TOKEN", "good-token")
    s = _core.open_store("gcs://bearer-bucket/arr", {"endpoint_url": nginx_server.url})
    assert s.read("c/0", [(0, 5)]) == [bearer_blob[:5]]


def test_wrong_or_no_token_is_refused(nginx_server, bearer_blob, monkeypatch):
    monkeypatch.delenv("GOOGLE_OAUTH_ACCESS_TOKEN", raising=False)
    bad = _core.open_store("gs://bearer-bucket/arr", {"token": "bad-token", "endpoint_url": nginx_server.url})
    with pytest.raises(OSError, match=r"gs://bearer-bucket/arr/c/0': HTTP 401 \(with a bearer token\)"):
        bad.read("c/0", [(0, 5)])
    anon = _core.open_store("gs://bearer-bucket/arr", {"anon": True, "endpoint_url": nginx_server.url})
    with pytest.raises(OSError, match=r"HTTP 401 \(the request was unsigned: anon=true\)"):
        anon.read("c/0", [(0, 5)])
    assert anon.counters()["retries"] == 0


def test_credential_files_are_refused_with_a_hint(tmp_path):
    f = tmp_path / "service-account.json"
    f.write_text("{}")
    with pytest.raises(OSError, match="OAuth2 access token.*gcsfs"):
        _core.open_store("gs://b/x", {"token": str(f)})
    with pytest.raises(OSError, match="OAuth2 access token"):
        _core.open_store("gs://b/x", {"token": "google_default"})
