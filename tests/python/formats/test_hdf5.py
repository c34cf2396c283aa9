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
@given(shape=st.lists(st.integers(1, 25), min_size=1, max_size=3), dtype=st.sampled_from(DTYPES),
       filt=st.sampled_from(["none", "gzip+shuffle+fletcher32", "zstd", "blosc2-zstd", "lz4"]),
       layout=st.sampled_from(["chunked", "contiguous", "compact"]), data=st.data())
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
    np.testing.assert_allclose((b2lazy.sum(a, axis=0) + 0).to_numpy(), x.sum(axis=0, dtype=np.float64) if x.dtype.kind == "f"
                               else x.sum(axis=0), rtol=1e-6)


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
    subprocess.run(["b2lazy", "eval", "a - mean(a, axis=0)", f"a={path}#/g/x", "-o", out], check=True,
                   capture_output=True)
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
        f.create_dataset("x", shape=x.shape, dtype=x.dtype,
                         external=[("a.bin", 16, 1000), ("b.bin", 0, h5py.h5f.UNLIMITED)])
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
for url, n in [({str(tmp_path / 'bad.h5')!r}, 1), ({path + '#/nope'!r}, 1), ({path + '#/lzf'!r}, 2), ({path + '#/lzf'!r}, 4)]:
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
