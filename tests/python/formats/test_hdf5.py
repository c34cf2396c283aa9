"""HDF5 files (issue #13 item 5), written by h5py with hdf5plugin's filters and read back by
b2lazy: every filter b2lazy decodes itself (deflate, shuffle, fletcher32, zstd, lz4, blosc,
blosc2), filters it leaves to libhdf5 (scale-offset), contiguous and compact layouts,
big-endian data, fill values of chunks never written, partial reads counted by chunk, and
bad input named."""

import subprocess
import sys

import h5py
import hdf5plugin
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import b2lazy

FILTERS = {
    "none": {},
    "gzip": {"compression": "gzip", "compression_opts": 4},
    "gzip+shuffle+fletcher32": {"compression": "gzip", "shuffle": True, "fletcher32": True},
    "zstd": hdf5plugin.Zstd(clevel=3),
    "lz4": hdf5plugin.LZ4(),
    "blosc-lz4-shuffle": hdf5plugin.Blosc(cname="lz4", clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE),
    "blosc-zstd-bitshuffle": hdf5plugin.Blosc(cname="zstd", clevel=3, shuffle=hdf5plugin.Blosc.BITSHUFFLE),
    "blosc2-zstd": hdf5plugin.Blosc2(cname="zstd", clevel=1, filters=hdf5plugin.Blosc2.SHUFFLE),
    "scaleoffset (through libhdf5)": {"scaleoffset": 0},
}
DTYPES = ["bool", "int8", "uint16", "int32", "int64", "float32", "float64", ">f8", ">i4"]


def values(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(0, 100, shape).astype(dt)
    return (rng.standard_normal(shape) * 10).astype(dt)


@pytest.mark.parametrize("name", list(FILTERS))
def test_every_filter(tmp_path, name):
    path = str(tmp_path / "f.h5")
    dtypes = ["int32", "float64"] if name.startswith("scaleoffset") else ["int16", "float32", "float64"]
    with h5py.File(path, "w") as f:
        for dt in dtypes:
            f.create_dataset(dt, data=values((37, 29), dt), chunks=(10, 8), **FILTERS[name])
    with h5py.File(path, "r") as f:  # the oracle: what h5py reads (scale-offset is lossy)
        ref = {dt: f[dt][...] for dt in dtypes}
    for dt in dtypes:
        a = b2lazy.open(path, dataset="/" + dt)
        np.testing.assert_array_equal(a.to_numpy(), ref[dt], err_msg=name)
        np.testing.assert_array_equal(a[5:30:3, ::-2].to_numpy(), ref[dt][5:30:3, ::-2])


@settings(max_examples=30, deadline=None)
@given(
    shape=st.lists(st.integers(1, 25), min_size=1, max_size=3),
    dtype=st.sampled_from(DTYPES),
    filt=st.sampled_from(["none", "gzip+shuffle+fletcher32", "zstd", "blosc2-zstd", "lz4"]),
    layout=st.sampled_from(["chunked", "contiguous", "compact"]),
    data=st.data(),
)
def test_layouts_dtypes_and_chunks(tmp_path_factory, shape, dtype, filt, layout, data):
    x = values(tuple(shape), dtype, seed=len(shape))
    path = str(tmp_path_factory.mktemp("h") / "f.h5")
    with h5py.File(path, "w") as f:
        if layout == "chunked":
            chunks = tuple(data.draw(st.integers(1, s)) for s in shape)
            f.create_dataset("g/x", data=x, chunks=chunks, **FILTERS[filt])
        elif layout == "contiguous":
            f.create_dataset("g/x", data=x)
        else:  # compact: the data inside the dataset's header (small arrays)
            if x.nbytes > 30000:
                f.create_dataset("g/x", data=x)
            else:
                space = h5py.h5s.create_simple(x.shape)
                dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
                dcpl.set_layout(h5py.h5d.COMPACT)
                f.create_group("g")
                dsid = h5py.h5d.create(f["g"].id, b"x", h5py.h5t.py_create(x.dtype, logical=True), space, dcpl=dcpl)
                dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(x))
    a = b2lazy.open(f"{path}#/g/x")
    assert a.shape == x.shape and a.dtype == x.dtype.newbyteorder("=").name
    np.testing.assert_array_equal(a.to_numpy(), x)
    np.testing.assert_allclose(
        (b2lazy.sum(a, axis=0) + 0).to_numpy(),
        x.sum(axis=0, dtype=np.float64) if x.dtype.kind == "f" else x.sum(axis=0),
        rtol=1e-6,
    )


def test_unwritten_chunks_read_as_the_fill_value_and_reads_are_counted(tmp_path):
    path = str(tmp_path / "f.h5")
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", shape=(100, 60), dtype="f8", chunks=(10, 20), fillvalue=-1.5, **hdf5plugin.Zstd())
        d[20:40, 0:20] = 7.0
    a = b2lazy.open(path)  # the file's only dataset
    ref = np.full((100, 60), -1.5)
    ref[20:40, 0:20] = 7.0
    np.testing.assert_array_equal(a.to_numpy(), ref)
    r = (a[25:35, 5:15] * 1).compute()
    np.testing.assert_array_equal(r.to_numpy(), ref[25:35, 5:15])
    assert r.stats["chunks_decompressed"]["total"] == 2  # the two chunks it touches (rows 20-29, 30-39)
    r = (a[60:80] * 1).compute()
    np.testing.assert_array_equal(r.to_numpy(), ref[60:80])
    assert r.stats["chunks_decompressed"]["total"] == 0  # never written: nothing read


def test_errors_name_the_file_and_the_dataset(tmp_path):
    path = str(tmp_path / "f.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("a", data=np.zeros(3))
        f.create_dataset("g/b", data=np.zeros(3))
        f.create_dataset("s", data=np.array([b"x", b"y"]))
        f.create_dataset("lzf", data=np.zeros((10, 10)), chunks=(5, 5), compression="lzf")
    with pytest.raises(OSError, match=r"holds 4 datasets \(/a, /g/b, /lzf, /s\): name one"):
        b2lazy.open(path)
    with pytest.raises(OSError, match="has no dataset '/c'"):
        b2lazy.open(path, dataset="/c")
    with pytest.raises(OSError, match="not one b2lazy reads"):
        b2lazy.open(path, dataset="/s")
    with pytest.raises(OSError, match="lzf.*HDF5_PLUGIN_PATH"):
        b2lazy.open(path, dataset="/lzf").to_numpy()  # h5py's own filter: not in libhdf5
    with pytest.raises(OSError, match="nothing.h5"):
        b2lazy.open(str(tmp_path / "nothing.h5"))
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"not hdf5" * 100)
    with pytest.raises(OSError, match="bad.h5"):
        b2lazy.open(str(bad))


def test_the_command_and_info(tmp_path):
    path = str(tmp_path / "f.h5")
    x = values((40, 30), "float64")
    with h5py.File(path, "w") as f:
        f.create_dataset("g/x", data=x, chunks=(10, 30), **hdf5plugin.Blosc2())
    out = str(tmp_path / "o.zarr")
    subprocess.run(
        ["b2lazy", "eval", "a - mean(a, axis=0)", f"a={path}#/g/x", "-o", out], check=True, capture_output=True
    )
    np.testing.assert_allclose(b2lazy.open(out).to_numpy(), x - x.mean(axis=0), rtol=1e-12, atol=1e-12)
    info = subprocess.run(["b2lazy", "info", f"hdf5:{path}#/g/x"], check=True, capture_output=True, text=True).stdout
    assert "(40, 30)" in info and "hdf5" in info.lower()


def test_paths_holding_a_hash(tmp_path):
    d = tmp_path / "runs#3 #x"
    d.mkdir()
    path = str(d / "f#1.h5")
    x = values((6, 5), "int32")
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=x)
    np.testing.assert_array_equal(b2lazy.open(path).to_numpy(), x)  # the file's only dataset
    np.testing.assert_array_equal(b2lazy.open(path + "#/x").to_numpy(), x)
    np.testing.assert_array_equal(b2lazy.open(path, dataset="x").to_numpy(), x)
    assert b2lazy.open(path, dataset="/x").urlpath == path + "#/x"


@pytest.mark.parametrize("dtype", ["float16", ">f2", "complex64", "complex128", ">c16"])
@pytest.mark.parametrize("filt", ["none", "contiguous", "gzip+shuffle+fletcher32", "blosc2-zstd"])
def test_float16_and_h5pys_complex(tmp_path, dtype, filt):
    """h5py stores complex numbers as a compound of two floats named r and i, float16 as a
    2-byte IEEE float; both read as b2lazy's complex64/128 and float16, either byte order."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((21, 13)) * 10
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal((21, 13))
    x = x.astype(dtype)
    path = str(tmp_path / "f.h5")
    with h5py.File(path, "w") as f:
        if filt == "contiguous":
            f.create_dataset("x", data=x)
        else:
            f.create_dataset("x", data=x, chunks=(8, 5), **FILTERS[filt])
    a = b2lazy.open(path, dataset="/x")
    assert a.dtype == x.dtype.newbyteorder("=")
    np.testing.assert_array_equal(a.to_numpy(), x)
    np.testing.assert_array_equal(a[3:17:2, ::-3].to_numpy(), x[3:17:2, ::-3])


# Issue #36 item 5: nothing missing reads as zeros or as the fill value.


def test_external_storage_is_read_from_its_files(tmp_path, monkeypatch):
    """A dataset whose bytes lie in other files (h5py's external=) reads them, relative names
    taken relative to the HDF5 file's directory (so the working directory does not matter);
    before the fix it read as zeros."""
    x = values((30, 7), "float64")
    y = values((5, 6), ">i4")
    raw = x.tobytes()
    (tmp_path / "a.bin").write_bytes(b"\xff" * 16 + raw[:1000])
    (tmp_path / "b.bin").write_bytes(raw[1000:] + b"\xee" * 8)
    (tmp_path / "c.bin").write_bytes(y.tobytes())
    path = str(tmp_path / "f.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset(
            "x", shape=x.shape, dtype=x.dtype, external=[("a.bin", 16, 1000), ("b.bin", 0, h5py.h5f.UNLIMITED)]
        )
        f.create_dataset("y", shape=y.shape, dtype=y.dtype, external=[(str(tmp_path / "c.bin"), 0, y.nbytes)])
    monkeypatch.chdir(tmp_path)  # the oracle: h5py takes relative names from the working directory
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(f["x"][...], x)
    monkeypatch.chdir("/")
    a = b2lazy.open(path, dataset="x")
    np.testing.assert_array_equal(a.to_numpy(), x)
    np.testing.assert_array_equal(a[3:29:4, ::-2].to_numpy(), x[3:29:4, ::-2])
    np.testing.assert_array_equal(b2lazy.open(path, dataset="y").to_numpy(), y)


def test_external_storage_missing_or_short_is_an_error(tmp_path):
    import os

    x = values((10, 10), "int64")
    (tmp_path / "e.bin").write_bytes(x.tobytes())
    path = str(tmp_path / "f.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("x", shape=x.shape, dtype=x.dtype, external=[("e.bin", 0, x.nbytes)])
    np.testing.assert_array_equal(b2lazy.open(path).to_numpy(), x)
    (tmp_path / "e.bin").write_bytes(x.tobytes()[:-8])  # libhdf5 would read the missing bytes as zeros
    with pytest.raises(OSError, match=r"f.h5#/x.*e.bin' holds 792 bytes, fewer than the 800"):
        b2lazy.open(path)
    (tmp_path / "e.bin").unlink()
    with pytest.raises(OSError, match=r"f.h5#/x.*e.bin' is missing"):
        b2lazy.open(path)
    os.mkfifo(tmp_path / "e.bin")  # would block a reader: refused without opening it
    with pytest.raises(OSError, match=r"e.bin' is not a regular file"):
        b2lazy.open(path)


def write_vds(tmp_path, name="v.h5"):
    """A VDS over two other files and a dataset of its own file, with a row mapped by no
    source (the fill value, -1): returns its path and what h5py reads."""
    x = values((4, 6), "float64", seed=1)
    y = values((4, 6), "float64", seed=2)
    with h5py.File(tmp_path / "s1.h5", "w") as f:
        f["x"] = x
    (tmp_path / "sub").mkdir(exist_ok=True)
    with h5py.File(tmp_path / "sub" / "s2.h5", "w") as f:
        f.create_dataset("g/y", data=y, chunks=(2, 3), compression="gzip")
    lay = h5py.VirtualLayout(shape=(13, 6), dtype="f8")
    lay[0:4] = h5py.VirtualSource("s1.h5", "x", shape=(4, 6))
    lay[4:8] = h5py.VirtualSource("sub/s2.h5", "g/y", shape=(4, 6))
    lay[8:12, 0:3] = h5py.VirtualSource(".", "own", shape=(4, 6))[:, 3:6]
    path = tmp_path / name
    with h5py.File(path, "w") as f:
        f["own"] = x * 10
        f.create_virtual_dataset("v", lay, fillvalue=-1)
    with h5py.File(path, "r") as f:
        ref = f["v"][...]
    assert (ref[12] == -1).all() and (ref[0:4] == x).all()
    return str(path), ref


def test_virtual_datasets_read_their_sources(tmp_path, monkeypatch):
    """A VDS reads its sources' values through libhdf5 (before the fix: all fill value),
    wherever the working directory is (sources are found beside the VDS file)."""
    path, ref = write_vds(tmp_path)
    monkeypatch.chdir("/")
    a = b2lazy.open(path, dataset="/v")
    np.testing.assert_array_equal(a.to_numpy(), ref)
    np.testing.assert_array_equal(a[1:12:2, ::-1].to_numpy(), ref[1:12:2, ::-1])
    np.testing.assert_allclose(b2lazy.sum(a, axis=0).to_numpy(), ref.sum(axis=0))
    # A VDS whose source is a VDS itself.
    lay = h5py.VirtualLayout(shape=(13, 6), dtype="f8")
    lay[:] = h5py.VirtualSource("v.h5", "v", shape=(13, 6))
    with h5py.File(tmp_path / "vv.h5", "w") as f:
        f.create_virtual_dataset("w", lay, fillvalue=0)
    np.testing.assert_array_equal(b2lazy.open(str(tmp_path / "vv.h5")).to_numpy(), ref)
    # Sources are read by libhdf5, which has no plugin filters (HDF5_PLUGIN_PATH): said so.
    with h5py.File(tmp_path / "z.h5", "w") as f:
        f.create_dataset("z", data=np.ones((4, 6)), chunks=(2, 3), **hdf5plugin.Zstd())
    lay = h5py.VirtualLayout(shape=(4, 6), dtype="f8")
    lay[:] = h5py.VirtualSource("z.h5", "z", shape=(4, 6))
    with h5py.File(tmp_path / "vz.h5", "w") as f:
        f.create_virtual_dataset("v", lay, fillvalue=0)
    with pytest.raises(OSError, match=r"vz.h5#/v': libhdf5 cannot read its virtual data.*zstd.* is not registered"):
        b2lazy.open(str(tmp_path / "vz.h5")).to_numpy()


def test_virtual_datasets_with_missing_sources_are_errors(tmp_path):
    """libhdf5 reads a missing source's region as the fill value, silently: b2lazy refuses
    the VDS and names the source."""
    path, _ = write_vds(tmp_path)
    (tmp_path / "sub" / "s2.h5").rename(tmp_path / "sub" / "gone.h5")
    with pytest.raises(OSError, match=r"v.h5#/v': its virtual source file 'sub/s2.h5' is missing"):
        b2lazy.open(path, dataset="v")
    (tmp_path / "sub" / "gone.h5").rename(tmp_path / "sub" / "s2.h5")
    with h5py.File(tmp_path / "s1.h5", "a") as f:  # the dataset gone from its file
        f.move("x", "x2")
    with pytest.raises(OSError, match=r"its virtual source file '.*s1.h5' has no dataset 'x'"):
        b2lazy.open(path, dataset="v")
    with h5py.File(tmp_path / "s1.h5", "a") as f:  # a smaller dataset than the region mapped from it
        f["x"] = np.zeros((3, 6))
    with pytest.raises(OSError, match=r"its virtual source '.*s1.h5#x' is smaller than the region"):
        b2lazy.open(path, dataset="v")
    # A VDS that is its own source: refused, not followed forever.
    lay = h5py.VirtualLayout(shape=(4,), dtype="f8")
    lay[:] = h5py.VirtualSource(".", "loop", shape=(4,))
    with h5py.File(tmp_path / "loop.h5", "w") as f:
        f.create_virtual_dataset("loop", lay, fillvalue=0)
    with pytest.raises(OSError, match=r"loop.h5#/loop.*nested more than"):
        b2lazy.open(str(tmp_path / "loop.h5"))


def test_null_dataspace_is_refused_and_a_scalar_is_0d(tmp_path):
    path = str(tmp_path / "f.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("empty", data=h5py.Empty("f8"))  # before the fix: a 0-d 0.0
        f["scalar"] = np.float32(2.5)
        f["iscalar"] = np.int64(-7)
    with pytest.raises(OSError, match=r"f.h5#/empty': a null dataspace"):
        b2lazy.open(path, dataset="empty")
    s = b2lazy.open(path, dataset="scalar")
    assert s.shape == () and s.dtype == np.float32 and s.to_numpy() == np.float32(2.5)
    assert b2lazy.open(path, dataset="iscalar").to_numpy() == -7
    assert (s * 2).to_numpy() == 5.0


def test_libhdf5_errors_are_not_printed_but_carried(tmp_path):
    """libhdf5 prints its error stacks to stderr, per thread (Debian's build is thread-safe):
    no thread of ours lets it, and its innermost message goes into the exception."""
    path = str(tmp_path / "f.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("lzf", data=np.zeros((40, 40)), chunks=(5, 5), compression="lzf")
    (tmp_path / "bad.h5").write_bytes(b"not hdf5" * 100)
    code = f"""
import b2lazy
cases = [({str(tmp_path / "bad.h5")!r}, 1), ({path + "#/nope"!r}, 1), ({path + "#/lzf"!r}, 2)]
cases.append(({path + "#/lzf"!r}, 4))
for url, n in cases:
    try:
        b2lazy.open(url).to_numpy(nthreads=n)
    except OSError as e:
        print(e)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    lines = r.stdout.splitlines()
    assert len(lines) == 4
    assert "bad.h5" in lines[0] and "libhdf5: file signature not found" in lines[0]
    assert "f.h5" in lines[1] and "no dataset '/nope'" in lines[1] and "libhdf5: " in lines[1]
    assert "f.h5#/lzf" in lines[2] and "libhdf5: required filter 'lzf' is not registered" in lines[2]


# Damaged files (found by tests/fuzz/fuzz_hdf5_files.py): a clear error, never a crash, a
# hang or a wrong value.


def test_fletcher32_checksums_are_verified(tmp_path):
    path = str(tmp_path / "f.h5")
    x = np.arange(64, dtype="i4").reshape(8, 8)
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", data=x, chunks=(4, 4), fletcher32=True)
        at = d.id.get_chunk_info(1).byte_offset
    np.testing.assert_array_equal(b2lazy.open(path).to_numpy(), x)
    with open(path, "r+b") as fh:  # one value of chunk (0, 1) changed: its checksum no longer holds
        fh.seek(at + 4)
        fh.write(b"\x63")
    with h5py.File(path, "r") as f, pytest.raises(OSError):  # the oracle refuses it too
        f["x"][...]
    with pytest.raises(OSError, match=r"f.h5#/x \(chunk \(0, 1\)\).*fletcher32: checksum mismatch"):
        b2lazy.open(path).to_numpy()


def patch(path, old, new):
    raw = open(path, "rb").read()
    assert raw.count(old) >= 1, old
    open(path, "wb").write(raw.replace(old, new))


def test_damaged_headers_are_errors(tmp_path):
    """A dimension past its maximum or past 2**63 bytes (the source's shape check raised
    with libhdf5's handles still open under the lock: a deadlock); a compact dataset whose
    buffer is shorter than its shape (libhdf5 1.10 reads past it); contiguous data shorter
    than its shape; each in a subprocess, so that a hang fails the test."""
    big = str(tmp_path / "big.h5")
    with h5py.File(big, "w") as f:
        f.create_dataset("x", data=np.zeros((12, 10)), chunks=(6, 5), maxshape=(None, 10))
    patch(
        big,
        (12).to_bytes(8, "little") + (10).to_bytes(8, "little"),
        (2**60).to_bytes(8, "little") + (10).to_bytes(8, "little"),
    )
    over = str(tmp_path / "over.h5")
    with h5py.File(over, "w") as f:
        f.create_dataset("x", data=np.zeros((12, 10)), chunks=(6, 5), maxshape=(20, 10))
    patch(
        over,
        (12).to_bytes(8, "little") + (10).to_bytes(8, "little"),
        (21).to_bytes(8, "little") + (10).to_bytes(8, "little"),
    )
    compact = str(tmp_path / "compact.h5")
    with h5py.File(compact, "w") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        v = np.arange(30, dtype="i2")
        d = h5py.h5d.create(f.id, b"x", h5py.h5t.py_create(v.dtype), h5py.h5s.create_simple((30,)), dcpl=dcpl)
        d.write(h5py.h5s.ALL, h5py.h5s.ALL, v)
    patch(compact, (30).to_bytes(8, "little") * 2, (3000).to_bytes(8, "little") * 2)  # dims and max dims
    contiguous = str(tmp_path / "contiguous.h5")  # a larger shape would read the next dataset's values
    with h5py.File(contiguous, "w") as f:
        f["x"] = np.arange(21.0)
        f["y"] = np.ones(50)
    patch(contiguous, (21).to_bytes(8, "little") * 2, (30).to_bytes(8, "little") * 2)
    code = f"""
import b2lazy
for p in [{big!r}, {over!r}, {compact!r}, {contiguous + "#/x"!r}]:
    try:
        b2lazy.open(p).to_numpy()
        print("read", p)
    except OSError as e:
        print(e)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    lines = r.stdout.splitlines()
    assert "big.h5#/x': a dataspace of more than 2**63 bytes" in lines[0]
    assert "over.h5#/x': its dimension 0 of 21 exceeds its maximum 20" in lines[1]
    assert "compact.h5#/x': its compact data holds 60 bytes, not the 6000" in lines[2]
    assert "contiguous.h5#/x': its contiguous data holds 168 bytes, not the 240" in lines[3]


def _index_record(raw, addr, ndim):
    """Where the chunk index record of the chunk stored at `addr` starts: its size (4 bytes),
    filter mask (4), offsets (8 per dimension, and one for the item), then the address."""
    at = raw.find(addr.to_bytes(8, "little"))
    return at - 8 - 8 * (ndim + 1), at


def test_a_damaged_chunk_index_reads_as_libhdf5_does(tmp_path):
    """Chunks are found as H5Dread finds them (a search of the index), not by a walk over
    it (fuzzer findings): a record the search passes by is not stored (the fill value), and of
    two records naming one chunk, the one the search finds is read — what both Debian's
    libhdf5 and h5py's read."""
    x = np.arange(120, dtype="u2").reshape(12, 10)
    passed_by, twice = str(tmp_path / "passed-by.h5"), str(tmp_path / "twice.h5")
    for path in (passed_by, twice):
        with h5py.File(path, "w") as f:
            d = f.create_dataset("x", data=x, chunks=(6, 5))
            addr = d.id.get_chunk_info(0).byte_offset
        raw = bytearray(open(path, "rb").read())
        key, at = _index_record(raw, addr, 2)
        assert raw[key : key + 4] == (30 * 2).to_bytes(4, "little")  # its size (6 x 5 uint16)
        if path == passed_by:
            raw[at - 8 + 3] = 199  # the item's offset, always 0: the search passes the chunk by
        else:
            raw[key + 8 : key + 16] = (6).to_bytes(8, "little")  # chunk (0, 0) now says (6, 0)
        open(path, "wb").write(raw)
        with h5py.File(path, "r") as f:
            expected = f["x"][()]
        assert not np.array_equal(expected, x)
        np.testing.assert_array_equal(b2lazy.open(path).to_numpy(), expected)


def test_many_chunks_are_found_without_walking_the_index(tmp_path):
    """16384 chunks: each found by the index search (a walk per chunk made reading them
    quadratic); values as written."""
    path = str(tmp_path / "many.h5")
    x = np.arange(512 * 512, dtype="f4").reshape(512, 512)
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=x, chunks=(4, 4))
    a = b2lazy.open(path)
    np.testing.assert_array_equal(a.to_numpy(), x)
    np.testing.assert_array_equal(a[100:300:7, 3:500:11].to_numpy(), x[100:300:7, 3:500:11])


MAKE_HOSTILE_CHUNKS = """
import sys, zlib
import h5py, hdf5plugin, numpy as np
d = sys.argv[1]
def case(name, make, chunk_of):
    with h5py.File(f"{d}/{name}.h5", "w") as f:
        ds = make(f)
        fm, raw = ds.id.read_direct_chunk((0,) * ds.ndim)
        ds.id.write_direct_chunk((0,) * ds.ndim, chunk_of(raw), fm)
x = np.arange(1000.)
bomb = zlib.compress(bytes(1 << 30), 9)  # 1 GiB of zeros in about 1 MB
case("gzip-bomb", lambda f: f.create_dataset("x", data=x, chunks=(1000,), compression="gzip"), lambda r: bomb)
case("shuffle-gzip-bomb", lambda f: f.create_dataset("x", data=x, chunks=(1000,), compression="gzip", shuffle=True),
     lambda r: bomb)
case("blosc-claims-2GiB", lambda f: f.create_dataset("x", data=x, chunks=(1000,), shuffle=True,
                                                      **hdf5plugin.Blosc(shuffle=0)),
     lambda r: r[:4] + (0x7ffffff0).to_bytes(4, "little") + r[8:])
case("lz4-claims-512GiB", lambda f: f.create_dataset("x", data=x, chunks=(1000,), shuffle=True, **hdf5plugin.LZ4()),
     lambda r: (1 << 39).to_bytes(8, "big") + r[8:])
case("chunk-of-200MB", lambda f: f.create_dataset("x", data=x, chunks=(1000,), compression="gzip"),
     lambda r: r + bytes(200 << 20))
with h5py.File(f"{d}/huge.h5", "w") as f:  # 2**60 items in chunks of one
    f.create_dataset("x", shape=(2**30, 2**30), dtype="u1", chunks=(1, 1), fillvalue=7)
"""

READ_HOSTILE_CHUNKS = """
import resource, sys
import b2lazy, numpy as np
d = sys.argv[1]
def peak():
    return int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) // 1024
    # (VmHWM: ru_maxrss survives exec, the forking parent's size)
(b2lazy.asarray(np.arange(10.)) + 1).to_numpy(nthreads=2)  # (warm up: the extension and its pools)
base = peak()
for name in ["gzip-bomb", "shuffle-gzip-bomb", "blosc-claims-2GiB", "lz4-claims-512GiB", "chunk-of-200MB"]:
    try:
        b2lazy.open(f"{d}/{name}.h5").to_numpy(nthreads=2)
        print(name, "read")
    except OSError as e:
        print(name, "refused:", e)
a = b2lazy.open(f"{d}/huge.h5")  # opened, a corner read and described without a pass over it
print("huge", a.shape, int(a[:3, :3].to_numpy().sum()), "hdf5" in repr(a))
print("grew", peak() - base)
"""


def test_hostile_chunks_cannot_make_the_reader_allocate_much(tmp_path):
    """Decoding a chunk allocates at most its values plus its stored bytes, which must lie
    in the file and be at most 1.5 times its values plus 1 MiB (h5_filters.hpp,
    max_stored); every step of a pipeline knows its output size before decoding it. Peak
    RSS, in a subprocess, grows by less than 50 MB over five hostile chunks (a 1 GiB
    deflate bomb, alone and before a shuffle; Blosc and LZ4 headers claiming 2 and 512 GiB;
    a 200 MB chunk for 8 kB of values) and a dataspace of 2**60 one-item chunks."""
    subprocess.run([sys.executable, "-c", MAKE_HOSTILE_CHUNKS, str(tmp_path)], check=True, timeout=300)
    r = subprocess.run(
        [sys.executable, "-c", READ_HOSTILE_CHUNKS, str(tmp_path)], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    out = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert "gzip-bomb.h5#/x (chunk (0,))': deflate: holds more than the 8000 bytes" in out["gzip-bomb"]
    assert "holds more than" in out["shuffle-gzip-bomb"]
    assert "refused:" in out["blosc-claims-2GiB"] and "blosc-claims-2GiB.h5#/x" in out["blosc-claims-2GiB"]
    assert "lz4: decodes to 549755813888 bytes, expected 8000" in out["lz4-claims-512GiB"]
    assert "claims 209716551 stored bytes" in out["chunk-of-200MB"] and "more than 1060576" in out["chunk-of-200MB"]
    assert out["huge"] == "(1073741824, 1073741824) 63 True"
    assert int(out["grew"]) < 50, r.stdout


def test_blosc2_chunks_whose_metalayer_disagrees_are_errors(tmp_path):
    """A Blosc2 chunk whose b2nd metalayer claims blocks wider than the chunk: h5py's
    plugin reads uninitialised memory, b2lazy read zeros; now an error (fuzzer finding)."""
    import blosc2

    path = str(tmp_path / "f.h5")
    x = values((12, 10), "float64")
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", data=x, chunks=(6, 10), **hdf5plugin.Blosc2(cname="lz4"))
        fm, raw = d.id.read_direct_chunk((0, 0))
        arr = blosc2.ndarray_from_cframe(raw)
        block = b"".join(b"\xd2" + int(n).to_bytes(4, "big") for n in arr.blocks)
        at = raw.rfind(block)  # the metalayer's block shape (after the shape and the chunk shape)
        wide = block[:-5] + b"\xd2" + (arr.chunks[-1] + 7).to_bytes(4, "big")
        d.id.write_direct_chunk((0, 0), raw[:at] + wide + raw[at + len(block) :], fm)
    np.testing.assert_array_equal(b2lazy.open(path)[6:].to_numpy(), x[6:])  # the other chunk is sound
    with pytest.raises(OSError, match=r"f.h5#/x \(chunk \(0, 0\)\)': HDF5 filter blosc2: its b2nd metalayer disagrees"):
        b2lazy.open(path).to_numpy()


def test_blosc2_chunks_of_uninitialised_values_are_errors(tmp_path):
    """A Blosc2 chunk whose header declares its values uninitialised: C-Blosc2 decodes it by
    writing nothing, so b2lazy handed out what its buffer held (different values from run
    to run, fuzzer finding); now an error."""
    import blosc2

    path = str(tmp_path / "f.h5")
    x = values((12, 10), "float64")
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", data=x, chunks=(6, 10), **hdf5plugin.Blosc2(cname="lz4"))
        fm, raw = d.id.read_direct_chunk((0, 0))
        arr = blosc2.ndarray_from_cframe(raw, copy=True)
        chunk = arr.schunk.get_chunk(0)
        at = raw.find(chunk)
        flags = raw[at + 31] | 0x40  # special values: 4, uninitialised
        d.id.write_direct_chunk((0, 0), raw[: at + 31] + bytes([flags]) + raw[at + 32 :], fm)
    with pytest.raises(
        OSError, match=r"f.h5#/x \(chunk \(0, 0\)\)': HDF5 filter blosc2: chunk 0 of its frame declares"
    ):
        b2lazy.open(path).to_numpy()


@pytest.mark.parametrize("layout", ["chunked", "contiguous"])
def test_enums_read_as_their_integers_and_bool_only_as_h5py_writes_it(tmp_path, layout):
    """h5py's bool is an enum of FALSE = 0 and TRUE = 1; any other enum (even of two members
    over a byte) h5py reads as its integers: so does b2lazy (it read every two-member byte
    enum as bool: 5 became True; fuzzer finding)."""
    path = str(tmp_path / "f.h5")
    chunks = {"chunks": (2, 3)} if layout == "chunked" else {}
    with h5py.File(path, "w") as f:
        f.create_dataset(
            "onoff",
            data=np.array([[0, 5, 5], [5, 0, 0]], "i1"),
            dtype=h5py.enum_dtype({"OFF": 0, "ON": 5}, basetype="i1"),
            **chunks,
        )
        f.create_dataset(
            "rgb",
            data=np.array([[0, 1, 2], [2, 1, 0]], "u2"),
            dtype=h5py.enum_dtype({"R": 0, "G": 1, "B": 2}, basetype="<u2"),
            **chunks,
        )
        f.create_dataset("bool", data=np.array([[True, False, True]] * 2), **chunks)
    with h5py.File(path, "r") as f:
        for name in ["onoff", "rgb", "bool"]:
            ref = f[name][...]
            got = b2lazy.open(path, dataset=name).to_numpy()
            assert got.dtype == ref.dtype and np.array_equal(got, ref), (name, got, ref)
