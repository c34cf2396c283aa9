"""HDF5 files (issue #13 item 5), written by h5py with hdf5plugin's filters and read back by
b2lazy: every filter b2lazy decodes itself (deflate, shuffle, fletcher32, zstd, lz4, blosc,
blosc2), filters it leaves to libhdf5 (scale-offset), contiguous and compact layouts,
big-endian data, fill values of chunks never written, partial reads counted by chunk, and
bad input named."""
import subprocess

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
