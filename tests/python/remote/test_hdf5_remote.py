"""HDF5 (and netCDF-4) files over a ByteStore (src/io/hdf5/h5_store_vfd.cpp,
h5_store_source.cpp): read from nginx (HTTP/HTTPS) and moto (S3), values against h5py
reading the local file; requests counted on the store the array reads (the file's
metadata through pages, each fetched once; a region's chunks in one batch, one range
each; the plan's prefetch fetching them ahead); faults through the proxy; hostile files
served by nginx fail with an error naming the URL."""

import os
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy as bl
from b2lazy import _core

from conftest import examples

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

FAST = {"retry_backoff": "0.001", "retry_backoff_max": "0.01"}  # quick retries in tests


def put_h5(server, tmp_path, name, write):
    """Writes a file with h5py (`write(f)`), serves it at `name`; returns (url, local path)."""
    local = str(tmp_path / os.path.basename(name))
    with h5py.File(local, "w") as f:
        write(f)
    with open(local, "rb") as fh:
        url = server.put(name, fh.read())
    return url, local


def oracle(local, ds, key=()):
    with h5py.File(local, "r") as f:
        return f[ds][key]


def open_url(url):
    return bl.Array(_core.open(url))


def array_of(store, member=""):
    """The dataset read through `store` (its counters seen)."""
    return bl.Array(_core.open_in_store(store, "hdf5", member))


@st.composite
def layouts(draw):
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 24)) for _ in range(nd))
    layout = draw(st.sampled_from(["contiguous", "compact", "chunked"]))
    chunks = tuple(draw(st.integers(1, s)) for s in shape) if layout == "chunked" else None
    comp = draw(st.sampled_from([None, "gzip"])) if layout == "chunked" else None
    shuffle = layout == "chunked" and draw(st.booleans())
    dtype = draw(st.sampled_from(["f8", "<i4", ">i4", "u1", ">f4", "i8", "c16", "?"]))
    if layout == "compact" and int(np.prod(shape)) * np.dtype(dtype).itemsize > 60000:
        layout = "contiguous"  # HDF5 keeps a compact dataset's values in a header of < 64 KiB
    unwritten = layout == "chunked" and draw(st.booleans())  # some chunks never written: the fill value
    return shape, layout, chunks, comp, shuffle, dtype, unwritten


@examples(25)
@given(layouts(), st.data())
def test_values_match_h5py(nginx_server, tmp_path_factory, layout, data):
    shape, kind, chunks, comp, shuffle, dtype, unwritten = layout
    rng = np.random.default_rng(abs(hash(layout)) % 2**32)
    arr = (rng.standard_normal(shape) * 100).astype(dtype)
    tmp = tmp_path_factory.mktemp("h5hyp")

    def write(f):
        if kind == "compact":  # the values inside the dataset's header
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_layout(h5py.h5d.COMPACT)
            dsid = h5py.h5d.create(
                f.create_group("g").id,
                b"x",
                h5py.h5t.py_create(arr.dtype, logical=True),
                h5py.h5s.create_simple(shape),
                dcpl=dcpl,
            )
            dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(arr))
            return
        d = f.create_dataset(
            "g/x",
            shape=shape,
            dtype=dtype,
            chunks=chunks,
            compression=comp,
            shuffle=shuffle,
            fillvalue=np.array(7, dtype=dtype) if unwritten else None,
        )
        if unwritten:
            half = tuple(slice(0, (s + 1) // 2) for s in shape)
            d[half] = arr[half]
        else:
            d[...] = arr
        f.create_dataset("other", data=np.arange(3))

    url, local = put_h5(nginx_server, tmp, f"h5/hyp/{tmp.name}.h5", write)
    a = open_url(url + "#/g/x")
    assert a.shape == shape and np.dtype(a.dtype) == np.dtype(dtype).newbyteorder("=")
    np.testing.assert_array_equal(a[...], oracle(local, "g/x"))
    key = tuple(slice(data.draw(st.integers(0, s - 1)), None, data.draw(st.integers(1, 3))) for s in shape)
    np.testing.assert_array_equal(a[key], oracle(local, "g/x", key))


def test_https_with_private_ca_and_member_urls(nginx_server, tmp_path):
    arr = np.arange(40 * 50, dtype="f4").reshape(40, 50)
    url, local = put_h5(
        nginx_server,
        tmp_path,
        "h5/https.h5",
        lambda f: f.create_dataset("g/x", data=arr, chunks=(10, 25), compression="gzip"),
    )
    store = _core.open_store(f"{nginx_server.https_url}/h5/https.h5", {"ca_file": nginx_server.ca_file})
    a = array_of(store, "/g/x")
    np.testing.assert_array_equal(a[...], arr)
    np.testing.assert_array_equal(a[15:35:2, 7], arr[15:35:2, 7])
    np.testing.assert_array_equal(bl.open(url, dataset="/g/x")[...], arr)  # b2lazy.open's dataset=
    np.testing.assert_array_equal(bl.open(url)[...], arr)  # the file's only dataset


def test_netcdf4_from_h5netcdf_over_s3(moto_s3, tmp_path, monkeypatch):
    h5netcdf = pytest.importorskip("h5netcdf")
    t = np.random.default_rng(5).standard_normal((30, 20, 10)).astype("f4")
    local = str(tmp_path / "f.nc")
    with h5netcdf.File(local, "w") as f:
        f.dimensions = {"time": 30, "lat": 20, "lon": 10}
        v = f.create_variable("/t", ("time", "lat", "lon"), "f4", chunks=(8, 20, 10), compression="gzip")
        v[...] = t
        f.create_variable("/lat", ("lat",), "f8", data=np.linspace(-90, 90, 20))
    bucket = "h5remote"
    moto_s3.client().create_bucket(Bucket=bucket)
    moto_s3.client().upload_file(local, bucket, "run/f.nc")
    moto_s3.set_env(monkeypatch)
    a = bl.open(f"s3://{bucket}/run/f.nc#/t")
    np.testing.assert_array_equal(a[...], t)
    np.testing.assert_array_equal(bl.open(f"s3://{bucket}/run/f.nc", dataset="lat")[...], np.linspace(-90, 90, 20))
    r = bl.mean(a, axis=0).compute(nthreads=2)
    np.testing.assert_allclose(r.to_numpy(), t.mean(axis=0), rtol=1e-5)


def test_opening_costs_few_requests_and_chunks_come_in_one_batch(nginx_server, tmp_path):
    arr = np.arange(400 * 1000, dtype="f8").reshape(400, 1000)
    url, local = put_h5(
        nginx_server,
        tmp_path,
        "h5/count.h5",
        lambda f: f.create_dataset("x", data=arr, chunks=(50, 250), compression="gzip"),
    )
    with h5py.File(local, "r") as f:  # the 2 x 3 chunks the region touches
        need = sum(f["x"].id.get_chunk_info_by_coord((r, c)).size for r in (100, 150) for c in (0, 250, 500))
    store = _core.open_store(url)
    a = array_of(store, "/x")
    c = store.counters()
    # a stat beside the file's last 64 KiB, then the superblock's page: libhdf5's reads at
    # open answered from pages
    assert c["requests"] <= 4, c
    assert a.shape == (400, 1000)
    opened = c["requests"]
    np.testing.assert_array_equal(a[100:200, 100:600], arr[100:200, 100:600])
    first = store.counters()["requests"] - opened
    assert first <= 6 + 2, first  # the chunks at once (the B-tree's pages held, or one more read)
    again = store.counters()
    np.testing.assert_array_equal(a[100:200, 100:600], arr[100:200, 100:600])
    c = store.counters()
    assert c["bytes"] - again["bytes"] == need  # places cached: the chunks only, once each
    assert c["requests"] - again["requests"] <= 2  # (adjacent chunks merged into one request)


def test_contiguous_reads_only_its_ranges(nginx_server, tmp_path):
    arr = np.random.default_rng(2).standard_normal((300, 500))
    url, local = put_h5(nginx_server, tmp_path, "h5/contig.h5", lambda f: f.create_dataset("x", data=arr))
    store = _core.open_store(url)
    a = array_of(store)
    opened = store.counters()
    np.testing.assert_array_equal(a[10:20], arr[10:20])
    c = store.counters()
    assert c["bytes"] - opened["bytes"] == arr[10:20].nbytes  # those rows' bytes only
    assert c["requests"] - opened["requests"] == 1
    np.testing.assert_array_equal(a[::7, 3:9], arr[::7, 3:9])
    np.testing.assert_array_equal(a[290:], arr[290:])
    be = put_h5(nginx_server, tmp_path, "h5/contig-be.h5", lambda f: f.create_dataset("x", data=arr.astype(">f4")))[0]
    np.testing.assert_array_equal(open_url(be)[5:9, 1:400], arr.astype(">f4")[5:9, 1:400])


def test_user_block_file(nginx_server, tmp_path):
    arr = np.arange(1000, dtype="i4")
    local = str(tmp_path / "ub.h5")
    with h5py.File(local, "w", userblock_size=512) as f:
        f.create_dataset("c", data=arr)
        f.create_dataset("k", data=arr * 2, chunks=(100,), compression="gzip")
    url = nginx_server.put("h5/ub.h5", open(local, "rb").read())
    np.testing.assert_array_equal(open_url(url + "#/c")[...], arr)
    np.testing.assert_array_equal(open_url(url + "#/k")[...], arr * 2)


def test_sum_fetches_chunks_ahead(faults, nginx_server, tmp_path):
    arr = np.random.default_rng(4).standard_normal((512, 384)).round(2)
    _, local = put_h5(
        nginx_server,
        tmp_path,
        "h5/ahead.h5",
        lambda f: f.create_dataset("x", data=arr, chunks=(64, 128), compression="gzip", shuffle=True),
    )
    faults.set(latency=0.005)
    a = bl.open(f"{faults.url}/h5/ahead.h5#/x")
    r = bl.sum(a).compute(nthreads=2)
    np.testing.assert_allclose(r.to_numpy(), arr.sum(), rtol=1e-12)
    s = r.stats
    nchunks = (512 // 64) * (384 // 128)
    assert s["prefetch_reads"] > 0, s
    assert s["store_requests"] <= nchunks, s  # each chunk once (metadata held since open)
    assert s["store_bytes"] <= os.path.getsize(local), s  # (adjacent chunks merged into fewer requests)
    assert s["prefetch_hits"] >= s["prefetch_reads"] > 0, s


@pytest.mark.parametrize("fault", ["503", "reset", "truncate"])
def test_faults_are_retried_and_values_exact(faults, nginx_server, tmp_path, fault):
    arr = np.arange(60 * 500, dtype="i8").reshape(60, 500)
    put_h5(
        nginx_server,
        tmp_path,
        f"h5/f-{fault}.h5",
        lambda f: f.create_dataset("x", data=arr, chunks=(10, 500), compression="gzip"),
    )
    faults.set([fault] * 3)
    store = _core.open_store(f"{faults.url}/h5/f-{fault}.h5", FAST)
    a = array_of(store, "/x")
    faults.set([fault, "ok", fault, "ok", fault])
    np.testing.assert_array_equal(a[...], arr)
    np.testing.assert_array_equal(a[13:27:3, 100:400], arr[13:27:3, 100:400])


def test_persistent_faults_are_errors_naming_the_url(faults, nginx_server, tmp_path):
    arr = np.arange(1000.0)
    put_h5(nginx_server, tmp_path, "h5/persist.h5", lambda f: f.create_dataset("x", data=arr, chunks=(100,)))
    url = f"{faults.url}/h5/persist.h5"
    store = _core.open_store(url, FAST, max_retries=2)
    a = array_of(store, "/x")
    faults.set(then="503")
    with pytest.raises(OSError, match=rf"'{url}'.*503"):
        np.asarray(a[...])
    with pytest.raises(OSError, match=rf"'{url}'.*503"):  # opening, too
        array_of(_core.open_store(url, FAST, max_retries=2), "/x")


def test_missing_object_and_dataset_name_the_url(nginx_server, tmp_path):
    url = f"{nginx_server.url}/h5/nope.h5"
    with pytest.raises(OSError, match=rf"'{url}'"):
        open_url(url + "#/x")
    url, _ = put_h5(
        nginx_server,
        tmp_path,
        "h5/two.h5",
        lambda f: (f.create_dataset("a", data=[1]), f.create_dataset("b", data=[2])),
    )
    with pytest.raises(OSError, match=rf"'{url}' has no dataset '/c' \(datasets: /a, /b\)"):
        open_url(url + "#/c")
    with pytest.raises(OSError, match=rf"'{url}' holds 2 datasets"):
        open_url(url)


def test_other_files_are_refused_over_a_store(nginx_server, tmp_path):
    ext = tmp_path / "ext.bin"
    np.arange(10, dtype="<i4").tofile(ext)

    def write(f):
        f.create_dataset("e", shape=(10,), dtype="<i4", external=[(str(ext), 0, 40)])
        layout = h5py.VirtualLayout(shape=(10,), dtype="<i4")
        layout[:] = h5py.VirtualSource(str(tmp_path / "src.h5"), "s", shape=(10,))
        f.create_virtual_dataset("v", layout)

    url, _ = put_h5(nginx_server, tmp_path, "h5/others.h5", write)
    with pytest.raises(OSError, match=rf"'{url}#/e': external storage .*not read over a store"):
        open_url(url + "#/e")
    with pytest.raises(OSError, match=rf"'{url}#/v': a virtual dataset .*not read over a store"):
        open_url(url + "#/v")


def test_filter_read_through_libhdf5_over_the_driver(nginx_server, tmp_path):
    # scale-offset: decoded by libhdf5 (H5Dread), its chunks read through the driver's pages
    arr = np.arange(3000, dtype="i4").reshape(30, 100)
    url, local = put_h5(
        nginx_server, tmp_path, "h5/so.h5", lambda f: f.create_dataset("x", data=arr, chunks=(10, 50), scaleoffset=0)
    )
    np.testing.assert_array_equal(
        open_url(url + "#/x")[5:25, ::3], oracle(local, "x", (slice(5, 25), slice(None, None, 3)))
    )


# ---- hostile files served by nginx: a clear error naming the URL, never a crash or zeros ----


def _chunked_file(tmp_path):
    arr = np.random.default_rng(3).standard_normal((100, 100))
    local = str(tmp_path / "h.h5")
    with h5py.File(local, "w") as f:
        f.create_dataset("x", data=arr, chunks=(50, 100), compression="gzip")
        return arr, local, f["x"].id.get_chunk_info(1)


def test_truncated_file_is_a_clear_error(nginx_server, tmp_path):
    _, local, _ = _chunked_file(tmp_path)
    data = open(local, "rb").read()
    url = nginx_server.put("h5/trunc.h5", data[: len(data) // 2])
    with pytest.raises(OSError, match=rf"'{url}'"):
        np.asarray(open_url(url + "#/x")[...])


def test_not_hdf5_is_a_clear_error(nginx_server):
    url = nginx_server.put("h5/garbage.h5", b"not an HDF5 file at all" * 100)
    with pytest.raises(OSError, match=rf"cannot open '{url}' as an HDF5 file"):
        open_url(url + "#/x")


def test_damaged_chunk_bytes_name_the_chunk(nginx_server, tmp_path):
    arr, local, info = _chunked_file(tmp_path)
    data = bytearray(open(local, "rb").read())
    data[info.byte_offset : info.byte_offset + info.size] = b"\xff" * info.size  # chunk 1: not deflate
    url = nginx_server.put("h5/badchunk.h5", bytes(data))
    a = open_url(url + "#/x")
    np.testing.assert_array_equal(a[:50], arr[:50])
    with pytest.raises(OSError, match=rf"'{url}#/x \(chunk \(1, 0\)\)'"):
        np.asarray(a[...])


@pytest.mark.parametrize("seed", range(12))
def test_flipped_metadata_bytes_fail_cleanly_or_read_what_h5py_reads(nginx_server, tmp_path, seed):
    arr, local, info = _chunked_file(tmp_path)
    data = bytearray(open(local, "rb").read())
    rng = np.random.default_rng(seed)
    first_chunk = min(info.byte_offset, 4096)
    for at in rng.integers(0, first_chunk, 4):  # the metadata before the chunks
        data[at] ^= int(rng.integers(1, 256))
    url = nginx_server.put(f"h5/flip{seed}.h5", bytes(data))
    try:
        got = np.asarray(open_url(url + "#/x")[...])
    except (OSError, ValueError, TypeError) as e:
        assert url in str(e) or "HDF5" in str(e), e
        return
    flipped = tmp_path / "flipped.h5"
    flipped.write_bytes(bytes(data))
    try:
        with h5py.File(flipped, "r") as f:
            want = f["x"][...]
    except Exception:  # noqa: BLE001 - h5py refuses what b2lazy read: no oracle
        return
    np.testing.assert_array_equal(got, want)


def test_chunk_index_claiming_gigabytes_is_refused_before_fetching(nginx_server, tmp_path):
    arr, local, info = _chunked_file(tmp_path)
    data = bytearray(open(local, "rb").read())
    # chunk 1's key in the v1 B-tree: its size, filter mask, offsets (50, 0) and the item axis
    key = info.size.to_bytes(4, "little") + bytes(4) + (50).to_bytes(8, "little") + bytes(16)
    at = data.find(key)
    assert at > 0 and data.find(key, at + 1) < 0
    data[at : at + 4] = (2**31 - 1).to_bytes(4, "little")
    url = nginx_server.put("h5/bigclaim.h5", bytes(data))
    store = _core.open_store(url)
    a = array_of(store, "/x")
    np.testing.assert_array_equal(a[:50], arr[:50])
    before = store.counters()["bytes"]
    with pytest.raises(OSError, match=rf"'{url}#/x \(chunk \(1, 0\)\)': its chunk claims 2147483647 stored bytes"):
        np.asarray(a[60:70])
    assert store.counters()["bytes"] - before < 1 << 20  # refused before any fetch of it


LOG_SCHEME = "h5log"


def test_logging_store_sees_each_chunk_once_at_its_place(tmp_path):
    """The logging store (src/io/store/logging_store.hpp) records every batch: a region's
    chunks are one batch of one range each, at the offsets and sizes h5py reports; a sum
    with the plan's prefetch asks every chunk exactly once."""
    _core._register_logging_store(LOG_SCHEME, str(tmp_path))
    arr = np.random.default_rng(6).standard_normal((120, 90))
    os.makedirs(tmp_path / "bucket")
    local = str(tmp_path / "bucket" / "f.h5")
    with h5py.File(local, "w") as f:
        f.create_dataset("x", data=arr, chunks=(30, 45), compression="gzip", shuffle=True)
        places = {(r, c): f["x"].id.get_chunk_info_by_coord((r, c)) for r in range(0, 120, 30) for c in (0, 45)}
    a = bl.open(f"{LOG_SCHEME}://bucket/f.h5#/x")
    _core._logging_store_reset(LOG_SCHEME)
    np.testing.assert_array_equal(a[40:70, 10:60], arr[40:70, 10:60])  # chunks (1|2, 0|1)
    batches = _core._logging_store_log(LOG_SCHEME)["batches"]
    data = [b for b in batches if all(ranges != [] for _, ranges in b)]
    want = sorted((places[(r, c)].byte_offset, places[(r, c)].size) for r in (30, 60) for c in (0, 45))
    assert sorted(rg for _, ranges in data[-1] for rg in ranges) == want, batches
    _core._logging_store_reset(LOG_SCHEME)
    a = bl.open(f"{LOG_SCHEME}://bucket/f.h5#/x")
    r = bl.sum(a, axis=0).compute(nthreads=2, chunks=(90,))
    np.testing.assert_allclose(r.to_numpy(), arr.sum(axis=0), rtol=1e-12)
    asked = [rg for b in _core._logging_store_log(LOG_SCHEME)["batches"] for _, ranges in b for rg in ranges]
    chunk_ranges = [rg for rg in asked if rg in {(p.byte_offset, p.size) for p in places.values()}]
    assert sorted(chunk_ranges) == sorted((p.byte_offset, p.size) for p in places.values())  # each once
    assert r.stats["prefetch_reads"] > 0, r.stats


def test_saved_expression_and_pickle_reopen_a_remote_dataset(nginx_server, tmp_path):
    import pickle

    arr = np.arange(600, dtype="f8").reshape(20, 30)
    url, _ = put_h5(
        nginx_server,
        tmp_path,
        "h5/saved.h5",
        lambda f: (f.create_dataset("g/x", data=arr, chunks=(5, 30)), f.create_dataset("y", data=[1])),
    )
    e = bl.sum(bl.open(url + "#/g/x") * 2, axis=0)
    saved = tmp_path / "e.b2lazy"
    e.save(saved)
    np.testing.assert_array_equal(bl.open(saved).to_numpy(), (arr * 2).sum(axis=0))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(e)).to_numpy(), (arr * 2).sum(axis=0))


def test_command_info_and_eval_over_https(nginx_server, tmp_path):
    import subprocess

    from conftest import B2LAZY_COMMAND

    if B2LAZY_COMMAND is None:
        pytest.skip("the b2lazy command is not on PATH (pip install .)")
    arr = np.arange(1200, dtype="i4").reshape(40, 30)
    url, _ = put_h5(nginx_server, tmp_path, "h5/cli.h5", lambda f: f.create_dataset("g/x", data=arr, chunks=(10, 15)))
    https = url.replace(nginx_server.url, nginx_server.https_url) + "#/g/x"
    ca = ["--storage-option", f"ca_file={nginx_server.ca_file}"]
    r = subprocess.run([B2LAZY_COMMAND, "info", https, *ca], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "hdf5" in r.stdout and "(40, 30)" in r.stdout and "(10, 15)" in r.stdout, r.stdout
    r = subprocess.run([B2LAZY_COMMAND, "info", url + "#/nope"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and f"'{url}' has no dataset '/nope'" in r.stderr, r.stderr


def test_recognized_without_a_suffix(nginx_server, tmp_path):
    arr = np.arange(50, dtype="u2")
    _, local = put_h5(nginx_server, tmp_path, "h5/plain.h5", lambda f: f.create_dataset("x", data=arr))
    url = nginx_server.put("h5/data.bin", open(local, "rb").read())  # the signature decides
    np.testing.assert_array_equal(open_url(url)[...], arr)


def test_index_unreadable_is_an_error_not_the_fill_value(faults, nginx_server, tmp_path):
    # 4000 chunks: B-tree nodes spread over the file, most not in the pages read at open.
    # A failing store while libhdf5 searches them must fail the read, not read as unwritten.
    arr = np.random.default_rng(7).standard_normal(400_000)
    put_h5(nginx_server, tmp_path, "h5/btree.h5", lambda f: f.create_dataset("x", data=arr, chunks=(100,), fillvalue=0))
    url = f"{faults.url}/h5/btree.h5"
    a = array_of(_core.open_store(url, FAST, max_retries=1), "/x")
    faults.set(then="503")
    with pytest.raises(OSError, match=rf"'{url}'.*503"):
        np.asarray(a[200_000:200_050])
    faults.set()
    np.testing.assert_array_equal(a[200_000:200_050], arr[200_000:200_050])  # (the failure was not cached)


def test_fsspec_memory_store(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    arr = np.arange(3000.0).reshape(30, 100)
    local = str(tmp_path / "m.h5")
    with h5py.File(local, "w") as f:
        f.create_dataset("g/x", data=arr, chunks=(10, 50), compression="gzip")
    fsspec.filesystem("memory").pipe("/h5remote/m.h5", open(local, "rb").read())
    a = bl.open("memory://h5remote/m.h5#/g/x")  # (fsspec's store: Python called from libhdf5's reads)
    np.testing.assert_array_equal(a.to_numpy(nthreads=2), arr)
    assert bl.sum(a).compute(nthreads=2).to_numpy() == arr.sum()


@pytest.mark.parametrize("index", ["fixed array", "extensible array", "v2 b-tree", "single chunk", "implicit"])
def test_every_chunk_index_of_hdf5_1_10(nginx_server, tmp_path, index):
    arr = np.random.default_rng(8).standard_normal((60, 40))
    kw = {
        "fixed array": dict(chunks=(16, 16), compression="gzip"),
        "extensible array": dict(chunks=(16, 16), maxshape=(None, 40), compression="gzip"),
        "v2 b-tree": dict(chunks=(16, 16), maxshape=(None, None), compression="gzip"),
        "single chunk": dict(chunks=(60, 40), compression="gzip"),
        "implicit": dict(chunks=(16, 16)),
    }[index]
    local = str(tmp_path / "idx.h5")
    with h5py.File(local, "w", libver=("v110", "v110")) as f:  # (the 1.10 format: Debian's libhdf5 reads it)
        if index == "implicit":  # early allocation, no filters: chunk places computed, no index
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_chunk((16, 16))
            dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
            dsid = h5py.h5d.create(f.id, b"x", h5py.h5t.IEEE_F64LE, h5py.h5s.create_simple(arr.shape), dcpl=dcpl)
            dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, arr)
        else:
            f.create_dataset("x", data=arr, **kw)
    url = nginx_server.put(f"h5/idx-{index.replace(' ', '-')}.h5", open(local, "rb").read())
    a = open_url(url + "#/x")
    np.testing.assert_array_equal(a[...], arr)
    np.testing.assert_array_equal(a[5:50:3, 7:33], arr[5:50:3, 7:33])
