"""The `b2lazy` command with URLs (issue #39): `info https://...`, `eval ... -o s3://...`
with --storage-option KEY=VALUE and the AWS_* environment; --help documents them; errors
name the URL and never the secret. Arrays are written by zarr-python and served by nginx
and moto; outputs read back with zarr-python."""

import os
import subprocess
import uuid

import numpy as np
import pytest

from conftest import B2LAZY_COMMAND

zarr = pytest.importorskip("zarr")
EXE = B2LAZY_COMMAND
pytestmark = pytest.mark.skipif(EXE is None, reason="the b2lazy command is not on PATH (pip install .)")
SECRET = "cli-s3cr3t-N0T-SH0WN-91"


def run(*args, env=None, timeout=120):
    e = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    e.update(env or {})
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=timeout, env=e)


def zarr_files(tmp_path, data, chunks):
    path = tmp_path / f"src-{uuid.uuid4().hex[:6]}.zarr"
    z = zarr.create_array(str(path), shape=data.shape, chunks=chunks, dtype=data.dtype)
    z[...] = data
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def remote_zarr_readable():
    import b2lazy

    try:
        b2lazy.open(f"memory://probe-{uuid.uuid4().hex}/p.zarr")
    except OSError as e:
        return "local paths only" not in str(e)
    return True


needs_remote_zarr = pytest.mark.skipif(
    not remote_zarr_readable(), reason="no driver reads Zarr from a byte store yet (wt-zarrremote)"
)


@pytest.fixture
def data():
    return np.random.default_rng(391).standard_normal((40, 30))


@pytest.fixture
def http_zarr(nginx_server, tmp_path, data):
    name = f"cli-{uuid.uuid4().hex[:8]}/x.zarr"
    for key, blob in zarr_files(tmp_path, data, (10, 15)).items():
        nginx_server.put(f"{name}/{key}", blob)
    return f"{nginx_server.url}/{name}"


def test_help_documents_storage_options():
    for cmd in ("eval", "info", "explain"):
        r = run(cmd, "--help")
        assert r.returncode == 0, r.stderr
        assert "--storage-option KEY=VALUE" in r.stdout and "AWS_ACCESS_KEY_ID" in r.stdout
        assert "client_kwargs.endpoint_url" in r.stdout


def test_malformed_storage_option_is_a_usage_error(http_zarr):
    r = run("info", http_zarr, "--storage-option", "no-equals-sign")
    assert r.returncode == 2 and "--storage-option takes KEY=VALUE" in r.stderr


def test_unknown_scheme_names_the_known_ones():
    r = run("info", "nosuchproto://bucket/x.zarr")
    assert r.returncode == 1 and "unknown URL scheme 'nosuchproto'" in r.stderr
    assert "zarr" in r.stderr and "s3" in r.stderr and "https" in r.stderr  # (the command has no fsspec)


@needs_remote_zarr
def test_info_over_https_and_http(http_zarr, nginx_server, data):
    r = run("info", http_zarr)
    assert r.returncode == 0, r.stderr
    assert "shape   (40, 30)" in r.stdout and "chunks  (10, 15)" in r.stdout and "zarr" in r.stdout
    https = http_zarr.replace(nginx_server.url, nginx_server.https_url)
    r = run("info", https, "--storage-option", f"ca_file={nginx_server.ca_file}")
    assert r.returncode == 0, r.stderr


@needs_remote_zarr
def test_missing_remote_array_names_the_url(nginx_server):
    url = f"{nginx_server.url}/nothing-{uuid.uuid4().hex[:6]}/x.zarr"
    r = run("info", url)
    assert r.returncode == 1 and url in r.stderr


@needs_remote_zarr
def test_eval_from_http_to_s3_with_options_and_env(http_zarr, moto_s3, tmp_path, data):
    bucket = moto_s3.make_bucket(f"cli-{uuid.uuid4().hex[:8]}")
    out = f"s3://{bucket}/out/y.zarr"
    r = run(
        "eval",
        "a * 2 + 1",
        f"a={http_zarr}",
        "-o",
        out,
        "--no-progress",
        "--storage-option",
        f"client_kwargs.endpoint_url={moto_s3.endpoint_url}",
        env={"AWS_ACCESS_KEY_ID": moto_s3.key, "AWS_SECRET_ACCESS_KEY": moto_s3.secret, "AWS_REGION": "us-east-1"},
    )
    assert r.returncode == 0, r.stderr
    client = moto_s3.client()
    local = tmp_path / "y.zarr"
    for obj in client.list_objects_v2(Bucket=bucket, Prefix="out/y.zarr/")["Contents"]:
        p = local / obj["Key"][len("out/y.zarr/") :]
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(client.get_object(Bucket=bucket, Key=obj["Key"])["Body"].read())
    np.testing.assert_allclose(zarr.open_array(str(local), mode="r")[...], data * 2 + 1)


@needs_remote_zarr
def test_bad_credentials_error_hides_the_secret(moto_s3_strict, tmp_path, data):
    from remote_servers import PRIVATE_BUCKET

    client = moto_s3_strict.client()
    for key, blob in zarr_files(tmp_path, data, (20, 30)).items():
        client.put_object(Bucket=PRIVATE_BUCKET, Key=f"clicred/x.zarr/{key}", Body=blob)
    url = f"s3://{PRIVATE_BUCKET}/clicred/x.zarr"
    r = run(
        "info",
        url,
        "--storage-option",
        f"key={moto_s3_strict.key}",
        "--storage-option",
        f"secret={SECRET}",
        "--storage-option",
        f"endpoint_url={moto_s3_strict.endpoint_url}",
        "--storage-option",
        "max_retries=1",
    )
    assert r.returncode == 1 and url in r.stderr and SECRET not in r.stderr + r.stdout
    r = run(
        "info",
        url,
        "--storage-option",
        f"endpoint_url={moto_s3_strict.endpoint_url}",
        env={"AWS_ACCESS_KEY_ID": moto_s3_strict.key, "AWS_SECRET_ACCESS_KEY": moto_s3_strict.secret},
    )
    assert r.returncode == 0, r.stderr
    assert "shape   (40, 30)" in r.stdout
