"""b2nd files over a ByteStore (src/storage/store_io.cpp): read from nginx (HTTP/HTTPS) and
moto (S3) by range, values against python-blosc2 reading the local file; requests and bytes
counted on the store the array reads (header and index once at open, one batch of reads
for a region over many chunks, only the blocks a slice needs); faults through the proxy;
hostile files served by nginx; compute() to S3 read back by python-blosc2.

Supported: contiguous b2nd files (one object). A sparse directory has no single object:
a remote URL names a file."""

import os
import sys
from pathlib import Path

import blosc2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy as bl
from b2lazy import _core

from conftest import examples

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import corrupt_files  # noqa: E402  (tests/corrupt_files.py)

FAST = {"retry_backoff": "0.001", "retry_backoff_max": "0.01"}  # quick retries in tests


def put_b2nd(server, tmp_path, name, arr, chunks, blocks, **kw):
    """Writes `arr` as a b2nd file with python-blosc2, serves it at `name`; returns (url, local path)."""
    local = str(tmp_path / os.path.basename(name))
    blosc2.asarray(arr, chunks=chunks, blocks=blocks, urlpath=local, mode="w", **kw)
    with open(local, "rb") as f:
        url = server.put(name, f.read())
    return url, local


def oracle(local, key=()):
    return blosc2.open(local, mode="r")[key]


def open_url(url):
    """b2lazy.open's core (the Python layer's URL handling is the python part's work)."""
    return bl.Array(_core.open(url))


def array_of(store):
    """The b2nd array the store's URL names, read through that store (its counters seen)."""
    return bl.Array(_core.open_in_store(store, "b2nd"))


@st.composite
def layouts(draw):
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 30)) for _ in range(nd))
    chunks = tuple(draw(st.integers(1, s)) for s in shape)
    blocks = tuple(draw(st.integers(1, c)) for c in chunks)
    dtype = draw(st.sampled_from(["f8", "i4", "u1", "f4", "i8", "c16", "?"]))
    return shape, chunks, blocks, dtype


@examples(25)
@given(layouts(), st.data())
def test_values_match_python_blosc2(nginx_server, tmp_path_factory, layout, data):
    shape, chunks, blocks, dtype = layout
    rng = np.random.default_rng(abs(hash(layout)) % 2**32)
    arr = (rng.standard_normal(shape) * 100).astype(dtype)
    tmp = tmp_path_factory.mktemp("hyp")
    url, local = put_b2nd(nginx_server, tmp, f"b2nd/hyp/{tmp.name}.b2nd", arr, chunks, blocks)
    a = open_url(url)
    assert a.shape == shape and np.dtype(a.dtype) == np.dtype(dtype)
    np.testing.assert_array_equal(a[...], oracle(local))
    key = tuple(slice(data.draw(st.integers(0, s - 1)), None, data.draw(st.integers(1, 3))) for s in shape)
    np.testing.assert_array_equal(a[key], oracle(local, key))


def test_https_and_special_chunks(nginx_server, tmp_path):
    arr = np.zeros((40, 50))
    arr[10:20] = np.arange(500).reshape(10, 50)  # other chunks all zeros: special chunks
    local = str(tmp_path / "z.b2nd")
    blosc2.asarray(arr, chunks=(10, 50), blocks=(5, 50), urlpath=local, mode="w")
    nginx_server.put("b2nd/z.b2nd", open(local, "rb").read())
    store = _core.open_store(f"{nginx_server.https_url}/b2nd/z.b2nd", {"ca_file": nginx_server.ca_file})
    a = array_of(store)
    np.testing.assert_array_equal(a[...], arr)
    np.testing.assert_array_equal(a[15:35:2, 7], arr[15:35:2, 7])
    np.testing.assert_array_equal(open_url(f"{nginx_server.url}/b2nd/z.b2nd")[...], arr)


def test_opening_reads_header_and_index_once(nginx_server, tmp_path):
    arr = np.arange(400_000, dtype="f8").reshape(400, 1000)
    url, local = put_b2nd(nginx_server, tmp_path, "b2nd/open.b2nd", arr, (50, 1000), (5, 1000))
    store = _core.open_store(url)
    a = array_of(store)
    c = store.counters()
    # stat, the header (its first 64 KiB), the chunk index and trailer (C-Blosc2's reads at
    # open answered from them); then the recognised format costs nothing more
    assert c["requests"] <= 3, c
    assert c["bytes"] < 70_000
    assert a.shape == (400, 1000)
    before = store.counters()["requests"]
    assert a.shape == (400, 1000) and store.counters()["requests"] == before


def test_slice_reads_only_the_blocks_it_needs(nginx_server, tmp_path):
    rng = np.random.default_rng(1)
    arr = rng.standard_normal((200, 2000))  # incompressible: blocks' bytes ~ their items
    url, local = put_b2nd(nginx_server, tmp_path, "b2nd/blocks.b2nd", arr, (200, 2000), (10, 2000))
    chunk_bytes = os.path.getsize(local)
    store = _core.open_store(url)
    a = array_of(store)
    opened = store.counters()
    got = a[42:45]  # 3 rows, all inside block 4 of 20 (of the one chunk)
    np.testing.assert_array_equal(got, oracle(local, (slice(42, 45),)))
    c = store.counters()
    fetched = c["bytes"] - opened["bytes"]
    block = 10 * 2000 * 8
    # the chunk's header and block table, then one block (python-blosc2 may store a block
    # as a few compressed streams: about one block's bytes)
    assert fetched <= 1.2 * block + 4096, (fetched, chunk_bytes)
    assert fetched < chunk_bytes / 10
    assert c["requests"] - opened["requests"] == 2  # header + table, then the block


def test_region_over_eight_chunks_is_one_batch(nginx_server, faults, tmp_path):
    arr = np.random.default_rng(8).standard_normal((80, 1000))  # chunks of ~80 KB
    url, local = put_b2nd(nginx_server, tmp_path, "b2nd/eight.b2nd", arr, (10, 1000), (10, 1000))
    # adjacent chunks not merged into one request: each its own, counted
    store = _core.open_store(url, {"coalesce_gap": "0", "coalesce_max": "100000"})
    a = array_of(store)
    opened = store.counters()["requests"]
    log_before = len(nginx_server.access_log())
    # an output chunk over the 8 source chunks: one fill of all of them
    np.testing.assert_array_equal((a + 0).compute(chunks=(80, 1000)).to_numpy(), arr)
    assert store.counters()["requests"] - opened == 8  # one range per chunk
    served = [r for r in nginx_server.access_log()[log_before:] if r["uri"].endswith("eight.b2nd")]
    assert len(served) == 8 and all(r["status"] == 206 for r in served)
    # in flight together (the proxy holds each answer 20 ms): not one after the other
    faults.set(latency=0.02)
    store = _core.open_store(url.replace(nginx_server.url, faults.url), {"coalesce_gap": "0", "coalesce_max": "100000"})
    a = array_of(store)
    faults.set(latency=0.02)
    np.testing.assert_array_equal((a + 0).compute(chunks=(80, 1000)).to_numpy(), arr)
    assert len(faults.seen) == 8 and faults.most_in_flight > 1, faults.in_flight_seen
    # with the default coalescing (up to 16 MiB), the adjacent chunks are one request
    store = _core.open_store(url)
    a = array_of(store)
    opened = store.counters()["requests"]
    np.testing.assert_array_equal((a + 0).compute(chunks=(80, 1000)).to_numpy(), arr)
    assert store.counters()["requests"] - opened == 1


def test_strided_region_fetches_blocks_of_each_chunk_at_once(nginx_server, tmp_path):
    rng = np.random.default_rng(2)
    arr = rng.standard_normal((400, 1000))
    url, local = put_b2nd(nginx_server, tmp_path, "b2nd/strided.b2nd", arr, (100, 1000), (10, 1000))
    store = _core.open_store(url, {"coalesce_gap": "0"})
    a = array_of(store)
    opened = store.counters()
    got = a[5::100, 3:7]  # one row in each of 4 chunks: one block of each
    np.testing.assert_array_equal(got, arr[5::100, 3:7])
    c = store.counters()
    assert c["requests"] - opened["requests"] == 8  # 4 headers + tables, then 4 blocks
    assert c["bytes"] - opened["bytes"] < 4 * (10 * 1000 * 8 * 1.2 + 4096)


def test_strided_slice_fetches_the_touched_blocks_only(nginx_server, tmp_path):
    # the benchmark's a[::97, 100:200]: rows 97 apart touch one block in ~5 of each chunk
    arr = np.random.default_rng(4).standard_normal((1000, 500))
    url, local = put_b2nd(nginx_server, tmp_path, "b2nd/bench.b2nd", arr, (250, 500), (10, 500))
    data = open(local, "rb").read()
    store = _core.open_store(url, {"coalesce_gap": "0"})  # (the store's gap would read small holes too)
    a = array_of(store)
    opened = store.counters()["bytes"]
    np.testing.assert_array_equal(a[::97, 100:200], arr[::97, 100:200])
    # the compressed bytes of the blocks holding rows 0, 97, 194, ...: each chunk's block
    # table tells where its blocks lie
    spans = corrupt_files.chunk_spans(data)
    need = 0
    for r in range(0, 1000, 97):
        start, cbytes = spans[r // 250]
        table = np.frombuffer(data[start + 32 : start + 32 + 4 * 25], "<i4")
        b = (r % 250) // 10
        ends = sorted(set(table.tolist()) | {cbytes})
        need += ends[ends.index(table[b]) + 1] - table[b]
    fetched = store.counters()["bytes"] - opened
    assert need <= fetched <= 1.2 * need, (fetched, need)


@pytest.mark.parametrize("fault", ["503", "reset", "truncate"])
def test_faults_are_retried_and_values_exact(faults, nginx_server, tmp_path, fault):
    arr = np.arange(60 * 500, dtype="i8").reshape(60, 500)
    _, local = put_b2nd(nginx_server, tmp_path, f"b2nd/f-{fault}.b2nd", arr, (10, 500), (5, 500))
    faults.set([fault] * 3)
    store = _core.open_store(f"{faults.url}/b2nd/f-{fault}.b2nd", FAST)
    a = array_of(store)
    faults.set([fault, "ok", fault, "ok", fault])
    np.testing.assert_array_equal(a[...], arr)
    np.testing.assert_array_equal(a[13:27:3, 100:400], arr[13:27:3, 100:400])
    if fault != "reset":  # (libcurl resends reset requests itself, uncounted, as many as it lost)
        assert store.counters()["retries"] >= 2


def test_persistent_faults_are_errors_naming_the_url(faults, nginx_server, tmp_path):
    arr = np.arange(1000.0)
    put_b2nd(nginx_server, tmp_path, "b2nd/persist.b2nd", arr, (100,), (10,))
    url = f"{faults.url}/b2nd/persist.b2nd"
    store = _core.open_store(url, FAST, max_retries=2)
    a = array_of(store)
    faults.set(then="503")
    with pytest.raises(OSError, match=rf"'{url}'.*503"):
        np.asarray(a[...])
    with pytest.raises(OSError, match=rf"'{url}'.*503"):  # opening, too
        array_of(_core.open_store(url, FAST, max_retries=2))


def test_missing_object_names_the_url(nginx_server):
    url = f"{nginx_server.url}/b2nd/nope.b2nd"
    with pytest.raises(OSError, match=rf"'{url}'"):
        open_url(url)


def hostile(nginx_server, tmp_path, name, mutate):
    arr = np.random.default_rng(3).standard_normal((100, 100))
    local = str(tmp_path / "h.b2nd")
    blosc2.asarray(arr, chunks=(50, 100), blocks=(10, 100), urlpath=local, mode="w")
    data = bytearray(open(local, "rb").read())
    data = mutate(data, local)
    return nginx_server.put(f"b2nd/{name}", bytes(data))


def chunk_start(local, nchunk):
    """Where chunk `nchunk` starts in the file (chunks are stored in order)."""
    return corrupt_files.chunk_spans(open(local, "rb").read())[nchunk][0]


def test_truncated_file_is_a_clear_error(nginx_server, tmp_path):
    url = hostile(nginx_server, tmp_path, "trunc.b2nd", lambda d, _: d[: len(d) // 2])
    with pytest.raises(OSError, match=rf"'{url}'.*(truncated|frame|b2nd)"):
        np.asarray(open_url(url)[...])


def test_chunk_header_claiming_gigabytes_is_refused_before_allocation(nginx_server, tmp_path):
    def mutate(d, local):
        at = chunk_start(local, 1)
        d[at + 12 : at + 16] = (2**31 - 1).to_bytes(4, "little")  # cbytes: 2 GiB
        return d

    url = hostile(nginx_server, tmp_path, "bigclaim.b2nd", mutate)
    a = open_url(url)
    np.testing.assert_array_equal(a[:50].shape, (50, 100))  # chunk 0 is fine
    with pytest.raises(OSError, match=rf"'{url}': chunk 1 .*(claims|corrupted)"):
        np.asarray(a[60:70])
    with pytest.raises(OSError, match=rf"'{url}': chunk 1 "):
        np.asarray(a[...])


def test_corrupted_block_table_is_a_clear_error(nginx_server, tmp_path):
    def mutate(d, local):
        at = chunk_start(local, 0)
        d[at + 32 + 4 * 2 : at + 32 + 4 * 3] = (10**8).to_bytes(4, "little")  # block 2 starts far away
        return d

    url = hostile(nginx_server, tmp_path, "badtable.b2nd", mutate)
    a = open_url(url)
    with pytest.raises(OSError, match=rf"'{url}.*block 2 starts outside"):
        np.asarray(a[20:25])


def test_compute_to_s3_then_python_blosc2_reads_it(moto_s3, monkeypatch, tmp_path):
    bucket = moto_s3.make_bucket("b2nd-out")
    moto_s3.set_env(monkeypatch)
    x = np.arange(300 * 700, dtype="f8").reshape(300, 700)
    out = (bl.asarray(x) * 2 + 1).compute(urlpath=f"s3://{bucket}/dir/out.b2nd", chunks=(100, 350), blocks=(20, 350))
    np.testing.assert_array_equal(out[...], x * 2 + 1)  # the result, read back from S3
    body = moto_s3.client().get_object(Bucket=bucket, Key="dir/out.b2nd")["Body"].read()
    local = tmp_path / "down.b2nd"
    local.write_bytes(body)
    b = blosc2.open(str(local), mode="r")
    assert b.chunks == (100, 350) and b.blocks == (20, 350)
    np.testing.assert_array_equal(b[...], x * 2 + 1)
    # and b2lazy reads it from the bucket
    np.testing.assert_array_equal(open_url(f"s3://{bucket}/dir/out.b2nd")[100:200:7, ::3], (x * 2 + 1)[100:200:7, ::3])


def test_read_from_s3_written_by_python_blosc2(moto_s3, monkeypatch, tmp_path):
    bucket = moto_s3.make_bucket("b2nd-in")
    moto_s3.set_env(monkeypatch)
    arr = np.random.default_rng(5).integers(-1000, 1000, (90, 70, 11)).astype("i2")
    local = str(tmp_path / "in.b2nd")
    blosc2.asarray(
        arr,
        chunks=(30, 35, 11),
        blocks=(7, 35, 11),
        urlpath=local,
        mode="w",
        cparams={"codec": blosc2.Codec.LZ4, "filters": [blosc2.Filter.BITSHUFFLE]},
    )
    moto_s3.client().put_object(Bucket=bucket, Key="a/in.b2nd", Body=open(local, "rb").read())
    a = open_url(f"s3://{bucket}/a/in.b2nd")
    np.testing.assert_array_equal(a[...], arr)
    np.testing.assert_array_equal(a[3:80:9, ::-4, 5], arr[3:80:9, ::-4, 5])
    # no suffix: recognised as a Blosc2 frame by its first bytes
    moto_s3.client().put_object(Bucket=bucket, Key="a/noext", Body=open(local, "rb").read())
    np.testing.assert_array_equal(open_url(f"s3://{bucket}/a/noext")[10:20], arr[10:20])


def test_a_failed_computation_leaves_no_object(moto_s3, monkeypatch):
    bucket = moto_s3.make_bucket("b2nd-fail")
    moto_s3.set_env(monkeypatch)
    with pytest.raises(ValueError, match="sparse"):
        bl.asarray(np.arange(10.0)).compute(urlpath=f"s3://{bucket}/x.b2nd", contiguous=False)
    assert "Contents" not in moto_s3.client().list_objects_v2(Bucket=bucket)


# --- an object replaced while it is read -------------------------------------------------
# A b2nd file is read by range: its header and chunk offsets at open, its chunks later.
# Replaced in between, its chunks would be another file's bytes read at this file's
# offsets: the store pins each object's first ETag and refuses another.
def test_a_file_replaced_after_open_is_an_error_not_mixed_bytes(nginx_server, tmp_path):
    x = np.arange(200 * 50, dtype="f8").reshape(200, 50)
    url, _ = put_b2nd(nginx_server, tmp_path, "pinned/a.b2nd", x, (50, 50), (10, 50))
    a = open_url(url)
    np.testing.assert_array_equal(a[:10], x[:10])
    put_b2nd(nginx_server, tmp_path, "pinned/a.b2nd", x[:150] * 3, (30, 50), (10, 50))  # another size
    with pytest.raises(OSError, match=r"a\.b2nd' changed while it was read"):
        np.asarray(a[100:])
    np.testing.assert_array_equal(open_url(url)[...], x[:150] * 3)  # opened again: the new file


def test_an_s3_object_replaced_after_open_is_an_error(moto_s3, monkeypatch, tmp_path):
    bucket = moto_s3.make_bucket("b2nd-pinned")
    moto_s3.set_env(monkeypatch)
    x = np.arange(120 * 40, dtype="i4").reshape(120, 40)
    for name, arr in [("one", x), ("two", -x)]:  # (uncompressed: the same offsets, other values)
        blosc2.asarray(
            arr,
            chunks=(40, 40),
            blocks=(8, 40),
            urlpath=str(tmp_path / f"{name}.b2nd"),
            mode="w",
            cparams={"clevel": 0},
        )
    s3 = moto_s3.client()
    s3.put_object(Bucket=bucket, Key="p.b2nd", Body=(tmp_path / "one.b2nd").read_bytes())
    a = open_url(f"s3://{bucket}/p.b2nd")
    s3.put_object(Bucket=bucket, Key="p.b2nd", Body=(tmp_path / "two.b2nd").read_bytes())
    with pytest.raises(OSError, match="changed while it was read"):
        np.asarray(a[...])
    # check_versions=false: the caller's choice (here the same offsets: the new values read)
    b = bl.open(f"s3://{bucket}/p.b2nd", storage_options={"check_versions": "false"})
    s3.put_object(Bucket=bucket, Key="p.b2nd", Body=(tmp_path / "one.b2nd").read_bytes())
    np.testing.assert_array_equal(np.asarray(b[...]), x)
    np.testing.assert_array_equal(np.asarray(open_url(f"s3://{bucket}/p.b2nd")[...]), x)
