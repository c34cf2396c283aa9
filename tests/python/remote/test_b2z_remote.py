""".b2z (python-blosc2 DictStore zips) over byte stores (src/io/b2z/zip_over_pages.cpp,
src/io/store/object_pages.cpp, object_slice_store.cpp): "https://h/s.b2z#/x",
"s3://b/s.b2z#/g/y" read like a local .b2z. Values against python-blosc2 on the local file;
requests counted (the zip's tail in one suffix read, a member's header with its frame's
first and last pages in one batch, then the chunks as a b2nd file's); members found as
locally (last of a name wins, NUL-cut and long names, zip64 extra fields); hostile zips
served by nginx fail with an OSError naming the URL, as they do locally."""

import os
import struct
import warnings
import zipfile

import blosc2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy as bl
from b2lazy import _core

from conftest import examples

FAST = {"retry_backoff": "0.001", "retry_backoff_max": "0.01"}


def dict_store(path, arrays):
    with blosc2.DictStore(str(path), mode="w", threshold=0) as ds:
        for k, v in arrays.items():
            ds[k] = v
    return str(path)


def serve(server, name, local):
    with open(local, "rb") as f:
        return server.put(name, f.read())


def oracle(local, key, index=()):
    return blosc2.DictStore(local, mode="r")[key][index]


def open_url(url):
    return bl.Array(_core.open(url))


def zip_store(path, members, force_zip64=False):
    """A .b2z written by Python's zipfile: `members` (name, array) in this order (stored),
    after the embed.b2e python-blosc2 needs to read it."""
    seed = dict_store(str(path) + ".seed.b2z", {"/seed": np.zeros(2)})
    with (
        zipfile.ZipFile(seed) as zin,
        zipfile.ZipFile(str(path), "w", zipfile.ZIP_STORED) as z,
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")  # "Duplicate name"
        z.writestr("embed.b2e", zin.read("embed.b2e"))
        for name, a in members:
            with z.open(zipfile.ZipInfo(name), "w", force_zip64=force_zip64) as f:
                f.write(blosc2.asarray(a).to_cframe())
    return str(path)


@st.composite
def layouts(draw):
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 40)) for _ in range(nd))
    chunks = tuple(draw(st.integers(1, s)) for s in shape)
    blocks = tuple(draw(st.integers(1, c)) for c in chunks)
    dtype = draw(st.sampled_from(["f8", "i4", "u1", "f4", "i8", "?"]))
    return shape, chunks, blocks, dtype


@examples(20)
@given(layouts(), st.booleans(), st.data())
def test_values_match_python_blosc2(nginx_server, tmp_path_factory, layout, nested, data):
    shape, chunks, blocks, dtype = layout
    rng = np.random.default_rng(abs(hash(layout)) % 2**32)
    x = (rng.standard_normal(shape) * 100).astype(dtype)
    key = "/g/h/x" if nested else "/x"
    tmp = tmp_path_factory.mktemp("b2z")
    local = str(tmp / "s.b2z")
    with blosc2.DictStore(local, mode="w", threshold=0) as ds:
        ds["/before"] = np.arange(1000.0)
        ds[key] = blosc2.asarray(x, chunks=chunks, blocks=blocks)
        ds["/after"] = np.ones(7)
    url = serve(nginx_server, f"b2z/hyp/{tmp.name}.b2z", local)
    a = open_url(f"{url}#{key}")
    assert a.shape == shape and np.dtype(a.dtype) == np.dtype(dtype)
    assert a.urlpath == f"{url}#{key}"
    np.testing.assert_array_equal(a[...], oracle(local, key))
    index = tuple(slice(data.draw(st.integers(0, s - 1)), None, data.draw(st.integers(1, 3))) for s in shape)
    np.testing.assert_array_equal(a[index], oracle(local, key, index))
    np.testing.assert_array_equal(open_url(f"{url}#/after")[...], np.ones(7))


def test_https_with_a_private_ca_and_s3(nginx_server, moto_s3, monkeypatch, tmp_path):
    x = np.arange(60000, dtype="i8").reshape(300, 200)
    local = dict_store(tmp_path / "s.b2z", {"/x": x, "/g/y": np.linspace(0, 1, 999)})
    serve(nginx_server, "b2z/tls/s.b2z", local)
    store = _core.open_store(f"{nginx_server.https_url}/b2z/tls/s.b2z", {"ca_file": nginx_server.ca_file})
    np.testing.assert_array_equal(bl.Array(_core.open_in_store(store, "b2z", "/x"))[5:250:3, ::7], x[5:250:3, ::7])
    bucket = moto_s3.make_bucket("b2z-in")
    moto_s3.set_env(monkeypatch)
    moto_s3.client().put_object(Bucket=bucket, Key="d/s.b2z", Body=open(local, "rb").read())
    y = bl.open(f"s3://{bucket}/d/s.b2z#/g/y")
    np.testing.assert_array_equal(y.to_numpy(), oracle(local, "/g/y"))
    np.testing.assert_array_equal((bl.open(f"s3://{bucket}/d/s.b2z", key="/x") * 2).sum().to_numpy(), x.sum() * 2)
    with pytest.raises(OSError, match=r"holds 2 arrays \(/g/y, /x\)"):
        bl.open(f"s3://{bucket}/d/s.b2z")
    with pytest.raises(OSError, match=f"s3://{bucket}/d/s.b2z' has no array '/z'"):
        bl.open(f"s3://{bucket}/d/s.b2z#/z")


def big_store(tmp_path, nmembers=3):
    """A .b2z of 1+ MB: /x (80 x 1000 f8: 8 chunks of ~80 KB, 2 blocks each) among other members."""
    x = np.random.default_rng(1).standard_normal((80, 1000))
    arrays = {f"/m{i}": np.full(20000, float(i)) for i in range(nmembers)}
    local = str(tmp_path / "big.b2z")
    with blosc2.DictStore(local, mode="w", threshold=0) as ds:
        for k, v in arrays.items():
            ds[k] = v
        ds["/x"] = blosc2.asarray(x, chunks=(10, 1000), blocks=(5, 1000))
        ds["/tail"] = np.arange(5.0)
    return local, x


def test_open_is_two_round_trips_and_a_region_one_batch(nginx_server, tmp_path):
    local, x = big_store(tmp_path)
    url = serve(nginx_server, "b2z/count/big.b2z", local)
    store = _core.open_store(url, {"coalesce_gap": "0", "coalesce_max": "100000"})
    a = bl.Array(_core.open_in_store(store, "b2z", "/x"))
    c = store.counters()
    # A stat beside the tail's suffix read, then the member's header with its frame's first
    # and last pages (two ranges): the frame's header and chunk index come from those.
    assert c["requests"] <= 4, c
    assert c["bytes"] < 300_000, c  # the zip's tail and a few pages, not the 4 MB
    opened = c["requests"]
    # An output chunk over the 8 chunks: one fill, one range per chunk, as a b2nd file's.
    # (The first chunk lies in the pages read with the member's header: not fetched again.)
    np.testing.assert_array_equal((a + 0).compute(chunks=(80, 1000)).to_numpy(), x)
    assert 7 <= store.counters()["requests"] - opened <= 8
    opened = store.counters()["requests"]
    np.testing.assert_array_equal(a[55, 600], x[55, 600])  # a chunk's header + table, then the block
    assert store.counters()["requests"] - opened == 2
    # With the default coalescing the adjacent chunks are one request.
    store = _core.open_store(url)
    a = bl.Array(_core.open_in_store(store, "b2z", "/x"))
    opened = store.counters()["requests"]
    np.testing.assert_array_equal((a + 0).compute(chunks=(80, 1000)).to_numpy(), x)
    assert store.counters()["requests"] - opened <= 1


def test_reads_through_the_logging_store_in_few_batches(tmp_path):
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    local, x = big_store(root / "d")
    _core._register_logging_store("logb2z", str(root))
    a = open_url("logb2z://d/big.b2z#/x")
    batches = _core._logging_store_log("logb2z")["batches"]
    assert len(batches) == 2, batches  # the tail (a suffix range), the member's ends
    assert batches[0] == [("", [(-(64 << 10) - 2048, -1)])]
    assert len(batches[1]) == 1 and len(batches[1][0][1]) <= 2  # (its end may lie in the zip's tail, held)
    np.testing.assert_array_equal(a[...], x)
    assert len(_core._logging_store_log("logb2z")["batches"]) == 3  # all 8 chunks: one batch


def test_a_directory_bigger_than_the_tail_is_read_ahead(tmp_path):
    """1500 members: a 100+ KB central directory, past the tail's 66 KB: one more read."""
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    local = zip_store(root / "d" / "many.b2z", [(f"k{i:05d}.b2nd", np.arange(3) + i) for i in range(1500)])
    _core._register_logging_store("logmany", str(root))
    a = open_url("logmany://d/many.b2z#/k01234")
    np.testing.assert_array_equal(a[...], np.arange(3) + 1234)
    assert len(_core._logging_store_log("logmany")["batches"]) <= 4  # tail, directory, member
    np.testing.assert_array_equal(a[...], oracle(local, "/k01234"))


def test_zip64_end_records_and_a_big_directory(tmp_path):
    """65,600 entries: zipfile writes zip64 end records (and a 3.5 MB central directory,
    read ahead 1, 2 then 4 MiB at a time); found through the store as locally."""
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    path = root / "d" / "z64.b2z"
    frame = blosc2.asarray(np.arange(9.0)).to_cframe()
    seed = dict_store(str(path) + ".seed.b2z", {"/seed": np.zeros(2)})
    with zipfile.ZipFile(seed) as zin, zipfile.ZipFile(str(path), "w", zipfile.ZIP_STORED) as z:
        z.writestr("embed.b2e", zin.read("embed.b2e"))
        z.writestr("first.b2nd", frame)
        for i in range(65600):
            z.writestr(f"e{i}", b"")
        z.writestr("last.b2nd", frame)
    data = path.read_bytes()
    assert b"PK\x06\x06" in data[-200:]  # the zip64 end of central directory record
    _core._register_logging_store("logz64", str(root))
    for key in ("/first", "/last"):
        np.testing.assert_array_equal(open_url(f"logz64://d/z64.b2z#{key}")[...], np.arange(9.0))
        np.testing.assert_array_equal(bl.open(str(path), key=key).to_numpy(), np.arange(9.0))
    batches = _core._logging_store_log("logz64")["batches"]
    assert len(batches) <= 2 * 5, batches  # per open: the tail, 3 read-aheads, the member


def test_members_found_as_python_blosc2_finds_them(nginx_server, tmp_path):
    """The last of a name wins; a name ends at a NUL; long names; zip64 extra fields."""
    long = "d/" + "k" * 5000
    local = zip_store(
        tmp_path / "n.b2z",
        [
            ("x.b2nd", np.arange(64.0)),
            ("y.b2nd", np.ones(3)),
            ("x.b2nd", np.full(64, 9.0)),
            ("z.b2nd\0junk", np.arange(4)),
            (long + ".b2nd", np.arange(6.0)),
        ],
    )
    url = serve(nginx_server, "b2z/names/n.b2z", local)
    ds = blosc2.DictStore(local, mode="r")
    for key in ("/x", "/y", "/z", "/" + long):
        np.testing.assert_array_equal(open_url(f"{url}#{key}")[...], ds[key][:])
        np.testing.assert_array_equal(bl.open(local, key=key).to_numpy(), ds[key][:])  # the local driver agrees
    z64 = zip_store(tmp_path / "z64.b2z", [("a.b2nd", np.arange(1000.0)), ("b.b2nd", np.arange(7))], force_zip64=True)
    url = serve(nginx_server, "b2z/names/z64.b2z", z64)
    np.testing.assert_array_equal(open_url(f"{url}#/a")[...], np.arange(1000.0))
    np.testing.assert_array_equal(open_url(f"{url}#/b")[...], np.arange(7))


def test_through_latency_many_chunks_in_flight(faults, nginx_server, tmp_path):
    local, x = big_store(tmp_path)
    serve(nginx_server, "b2z/lat/big.b2z", local)
    faults.set(latency=0.02)
    store = _core.open_store(f"{faults.url}/b2z/lat/big.b2z", {"coalesce_gap": "0", "coalesce_max": "100000"})
    a = bl.Array(_core.open_in_store(store, "b2z", "/x"))
    assert len(faults.seen) <= 4, faults.seen  # a stat beside the tail, then the member's pages
    faults.set(latency=0.02)
    np.testing.assert_array_equal((a + 0).compute(chunks=(80, 1000)).to_numpy(), x)
    assert 7 <= len(faults.seen) <= 8 and faults.most_in_flight > 1, faults.in_flight_seen


@pytest.mark.parametrize("fault", ["503", "reset", "truncate", "short_range", "ignore_range"])
def test_faults_are_retried(faults, nginx_server, tmp_path, fault):
    """Each of the open's requests and the first reads meets the fault: the values are exact."""
    local, x = big_store(tmp_path)
    serve(nginx_server, "b2z/flt/big.b2z", local)
    faults.set([fault, "ok", fault, "ok", fault, "ok", fault])
    store = _core.open_store(f"{faults.url}/b2z/flt/big.b2z", FAST)
    np.testing.assert_array_equal(bl.Array(_core.open_in_store(store, "b2z", "/x"))[...], x)
    faults.set(then="503")
    with pytest.raises(OSError, match="b2z/flt/big.b2z"):
        _core.open_in_store(_core.open_store(f"{faults.url}/b2z/flt/big.b2z", FAST, max_retries=1), "b2z", "/x")


# --- hostile zips: an OSError naming the URL, as the local driver fails ------------------


def eocd_at(data):
    return data.rindex(b"PK\x05\x06")


def entry_at(data, name):
    """Where the central directory entry of member `name` starts."""
    i = data.find(b"PK\x01\x02")
    while i >= 0:
        if data[i + 46 : i + 46 + struct.unpack_from("<H", data, i + 28)[0]] == name:
            return i
        i = data.find(b"PK\x01\x02", i + 1)
    raise KeyError(name)


def patched(data, at, fmt, value):
    out = bytearray(data)
    struct.pack_into(fmt, out, at, value)
    return bytes(out)


def hostile_cases(data):
    e = eocd_at(data)
    x = entry_at(data, b"x.b2nd")
    local_x = struct.unpack_from("<I", data, x + 42)[0]
    frame_x = (
        local_x + 30 + struct.unpack_from("<H", data, local_x + 26)[0] + struct.unpack_from("<H", data, local_x + 28)[0]
    )
    return {
        "empty": b"",
        "not-a-zip": os.urandom(5000),
        "truncated-tail": data[:-10],
        "truncated-half": data[: len(data) // 2],
        "directory-past-end": patched(data, e + 16, "<I", len(data) * 4),
        "directory-size-huge": patched(data, e + 12, "<I", 0xFFFFFFF0),
        "entries-claimed-huge": patched(patched(data, e + 8, "<H", 0xFFFF), e + 10, "<H", 0xFFFF),
        "local-header-past-end": patched(data, x + 42, "<I", len(data) + 100),
        "member-size-past-end": patched(patched(data, x + 20, "<I", 0x7FFFFFF0), x + 24, "<I", 0x7FFFFFF0),
        "member-deflated": patched(data, x + 10, "<H", 8),
        # Both headers agree on a size past the zip's end (minizip opens it; the slice is refused).
        "member-sizes-past-end": patched(
            patched(
                patched(patched(data, x + 20, "<I", 0x7FFFFFF0), x + 24, "<I", 0x7FFFFFF0),
                local_x + 18,
                "<I",
                0x7FFFFFF0,
            ),
            local_x + 22,
            "<I",
            0x7FFFFFF0,
        ),
        "frame-header-flipped": patched(data, frame_x + 10, "<B", 0x00),
        "frame-lengths-huge": patched(data, frame_x + 39, ">Q", 2**62),
    }


def test_hostile_zips_fail_cleanly(nginx_server, tmp_path):
    local = dict_store(tmp_path / "ok.b2z", {"/x": np.arange(5000.0).reshape(50, 100), "/y": np.ones(10)})
    data = open(local, "rb").read()
    for name, bad in hostile_cases(data).items():
        url = nginx_server.put(f"b2z/bad/{name}.b2z", bad)
        path = tmp_path / f"{name}.b2z"
        path.write_bytes(bad)
        local_failed = False
        try:
            bl.open(str(path), key="/x").to_numpy()
        except OSError:
            local_failed = True
        try:
            got = open_url(f"{url}#/x")[...]
        except OSError as err:
            assert f"b2z/bad/{name}.b2z" in str(err), (name, str(err))
            continue
        assert not local_failed, f"{name}: the local driver refuses it, the store path read it"
        np.testing.assert_array_equal(got, np.arange(5000.0).reshape(50, 100), err_msg=name)


def test_missing_object_names_the_url(nginx_server):
    with pytest.raises(OSError, match="b2z/nothing/here.b2z"):
        open_url(f"{nginx_server.url}/b2z/nothing/here.b2z#/x")


def test_the_plan_prefetches_a_members_chunks(faults, nginx_server, tmp_path):
    """As a b2nd file's (test_format_prefetch.py): a member's chunks are listed by the source
    and fetched ahead of 2 workers, each once; slabs of a chunk find it in the cache."""
    rows, cols = 512, 384
    x = np.random.default_rng(39).normal(size=(rows, cols)).round(2)
    local = str(tmp_path / "p.b2z")
    with blosc2.DictStore(local, mode="w", threshold=0) as ds:
        ds["/other"] = np.arange(3000.0)
        ds["/x"] = blosc2.asarray(x, chunks=(128, 384), blocks=(16, 384))
    serve(nginx_server, "b2z/prefetch/p.b2z", local)
    faults.set(latency=0.005)
    a = bl.open(f"{faults.url}/b2z/prefetch/p.b2z#/x")
    r = bl.sum(a).compute(nthreads=2, max_memory=8 << 20)  # slabs of less than a chunk
    np.testing.assert_allclose(r.to_numpy(), x.sum(), rtol=1e-12)
    s = r.stats
    # (as the b2nd test: a worker ahead of the prefetch reads its first chunk's header and
    # blocks itself, and that chunk is not then fetched whole for the task: two chunks at most)
    assert s["store_bytes"] <= 1.5 * os.path.getsize(local), s
    assert s["store_requests"] <= rows // 128 + 2 * 2 and s["prefetch_reads"] > 0, s
    assert s["prefetch_hits"] > rows // 128, s


def test_fsspec_memory_store_and_the_command(nginx_server, tmp_path):
    """Any byte store: fsspec's memory:// (through the Python store); the b2lazy command."""
    import subprocess
    import fsspec
    from conftest import B2LAZY_COMMAND

    x = np.arange(3000.0).reshape(30, 100)
    local = dict_store(tmp_path / "s.b2z", {"/x": x, "/g/y": np.arange(5)})
    fs = fsspec.filesystem("memory")
    with fs.open("/b2zmem/s.b2z", "wb") as f:
        f.write(open(local, "rb").read())
    np.testing.assert_array_equal(bl.open("memory://b2zmem/s.b2z#/x")[3:7].to_numpy(), x[3:7])
    np.testing.assert_array_equal(bl.open("memory://b2zmem/s.b2z", key="g/y").to_numpy(), np.arange(5))
    if B2LAZY_COMMAND:
        url = serve(nginx_server, "b2z/cli/s.b2z", local)
        info = subprocess.run([B2LAZY_COMMAND, "info", f"{url}#/x"], capture_output=True, text=True, timeout=60)
        assert info.returncode == 0 and "(30, 100)" in info.stdout, info.stderr


def test_member_of_a_url_with_a_query_string(nginx_server, tmp_path):
    # A presigned URL's query follows the container's suffix: "https://h/s.b2z?sig=..#/x".
    x = np.arange(600.0).reshape(20, 30)
    local = dict_store(tmp_path / "q.b2z", {"/x": x, "/g/y": x + 1})
    url = serve(nginx_server, "b2z/q/q.b2z", local)
    np.testing.assert_array_equal(open_url(f"{url}?X-Amz-Signature=abc&e=1#/g/y").to_numpy(), x + 1)
    np.testing.assert_array_equal(bl.open(f"{url}?sig=1#/x")[3:5].to_numpy(), x[3:5])
