"""Stored arrays rewritten by another writer while a b2lazy Array over them stays open.
Zarr (zarr-python, the oracle): every read sees the store as it is then; a sharded array's
cached shard index is never applied to a shard file written since (old index + new bytes
= silently wrong values), and metadata that reads the files otherwise is refused by name.
Single files (HDF5, .b2z members): one replaced by rename keeps being read as opened; one
written in place is refused ("changed on disk since it was opened"), as b2nd files are."""

import os
import shutil

import blosc2
import h5py

import numpy as np
import pytest
import zarr
from zarr.codecs import BloscCodec, BytesCodec, ShardingCodec

import b2lazy
from zarr_stores import sharded


def rewrite(path, data):
    """zarr-python writes the whole array again (each shard file replaced by rename)."""
    zarr.open_array(str(path), mode="r+")[...] = data


@pytest.mark.parametrize("location", ["start", "end"])
@pytest.mark.parametrize("inner", ["blosc", "bytes"])
def test_shard_rewritten_under_open_array(tmp_path, location, inner):
    path = tmp_path / "s.zarr"
    codecs = [BytesCodec(), BloscCodec(cname="zstd")] if inner == "blosc" else [BytesCodec()]
    old = np.arange(8, dtype=np.int64) * 7
    sharded(path, old, (2,), (8,), inner_codecs=codecs, index_location=location)
    a = b2lazy.open(str(path))
    np.testing.assert_array_equal(a.to_numpy(), old)  # every inner chunk's index entry cached
    rng = np.random.default_rng(1)
    for k in range(6):  # quick rewrites: an inode number may come back within one mtime tick
        # Random values compress to other sizes than old's: the index moves every chunk.
        new = rng.integers(-(10 ** (3 * k)), 10 ** (3 * k) + 1, size=8, dtype=np.int64)
        rewrite(path, new)
        np.testing.assert_array_equal(a.to_numpy(), zarr.open_array(str(path), mode="r")[...])
        np.testing.assert_array_equal(a[3:7].to_numpy(), new[3:7])
        np.testing.assert_array_equal((a * 2).sum().to_numpy(), new.sum() * 2)


def test_shard_written_after_it_was_missing(tmp_path):
    path = tmp_path / "s.zarr"
    z = zarr.create_array(
        str(path), shape=(12,), chunks=(6,), shards=(12,), dtype="float64", fill_value=-1.0, compressors=None
    )
    a = b2lazy.open(str(path))
    np.testing.assert_array_equal(a.to_numpy(), np.full(12, -1.0))  # no shard file: the fill value
    z[...] = np.arange(12.0)
    np.testing.assert_array_equal(a.to_numpy(), np.arange(12.0))
    os.remove(path / "c" / "0")  # removed again: the fill value again
    np.testing.assert_array_equal(a.to_numpy(), np.full(12, -1.0))


def test_shard_rewritten_between_two_chunks_of_one_evaluation(tmp_path):
    """A lazyudf over the array rewrites the shard when it is called for the first block,
    on one thread: the blocks read after that see the new values."""
    path = tmp_path / "s.zarr"
    old = np.arange(256, dtype=np.int64) * 7  # compresses well
    new = np.random.default_rng(2).integers(-(2**62), 2**62, 256)  # does not: the inner chunks move
    sharded(path, old, (64,), (256,))
    a = b2lazy.open(str(path))
    np.testing.assert_array_equal(a.to_numpy(), old)
    seen = []

    def copy(inputs, output, offset):
        seen.append(offset[0])
        output[...] = inputs[0]
        if len(seen) == 1:
            rewrite(path, new)

    got = b2lazy.lazyudf(copy, (a,), np.int64).compute(chunks=(64,), nthreads=1).to_numpy()
    assert sorted(seen) == [0, 64, 128, 192]
    first = seen[0]
    expected = new.copy()
    expected[first : first + 64] = old[first : first + 64]  # read before the rewrite
    np.testing.assert_array_equal(got, expected)


def test_shard_rewritten_in_place_with_the_same_stamp(tmp_path):
    """A writer in place that keeps size, inode and mtime (a rewrite within one tick of the
    clock) but moves the inner chunks: the cached index entry is checked against the file."""
    path = tmp_path / "s.zarr"
    codec = ShardingCodec(chunk_shape=(2,), codecs=[BytesCodec()], index_codecs=[BytesCodec()])
    zarr.create_array(
        str(path), shape=(8,), chunks=(8,), dtype="int64", serializer=codec, compressors=None, zarr_format=3
    )[...] = np.arange(8) * 7
    a = b2lazy.open(str(path))
    np.testing.assert_array_equal(a.to_numpy(), np.arange(8) * 7)
    shard = path / "c" / "0"
    st = os.stat(shard)
    # Inner chunks stored in reverse order (16 bytes each), index (offset, size) at the end.
    new = np.arange(8, dtype="<i8") * -5
    body = b"".join(new[2 * k : 2 * k + 2].tobytes() for k in reversed(range(4)))
    index = np.array([[16 * (3 - k), 16] for k in range(4)], dtype="<u8").tobytes()
    assert len(body + index) == st.st_size
    with open(shard, "r+b") as f:
        f.write(body + index)
    os.utime(shard, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(shard).st_mtime_ns == st.st_mtime_ns and os.stat(shard).st_ino == st.st_ino
    np.testing.assert_array_equal(zarr.open_array(str(path), mode="r")[...], new)  # the oracle agrees
    np.testing.assert_array_equal(a.to_numpy(), new)


def test_chunk_rewritten_under_open_unsharded_array(tmp_path):
    path = tmp_path / "a.zarr"
    z = zarr.create_array(str(path), shape=(10,), chunks=(4,), dtype="int32")
    z[...] = np.arange(10)
    a = b2lazy.open(str(path))
    np.testing.assert_array_equal(a.to_numpy(), np.arange(10))
    z[...] = np.arange(10) ** 3
    np.testing.assert_array_equal(a.to_numpy(), np.arange(10) ** 3)


@pytest.mark.parametrize("fmt", [2, 3])
def test_attributes_rewritten_under_open_array(tmp_path, fmt):
    """zarr-python rewrites the metadata file for attributes: reads go on."""
    path = tmp_path / "a.zarr"
    z = zarr.create_array(
        str(path), shape=(8,), chunks=(4,), shards=(8,) if fmt == 3 else None, dtype="float64", zarr_format=fmt
    )
    z[...] = np.arange(8.0)
    a = b2lazy.open(str(path))
    z.attrs["units"] = "m"
    z[...] = np.arange(8.0) + 1
    np.testing.assert_array_equal(a.to_numpy(), np.arange(8.0) + 1)


def test_metadata_rewritten_under_open_array(tmp_path):
    """The array resized, or made anew with another dtype (same shape and chunk files):
    a clear error naming the metadata file, never the new files decoded the old way."""
    path = tmp_path / "a.zarr"
    z = zarr.create_array(str(path), shape=(8,), chunks=(4,), shards=(8,), dtype="float64", compressors=None)
    z[...] = np.arange(8.0)
    a = b2lazy.open(str(path))
    z.resize((12,))
    with pytest.raises(
        OSError, match=r"zarr\.json' changed since the array was opened \(its shape \(8,\) is now \(12,\)"
    ):
        a.to_numpy()
    b = b2lazy.open(str(path))
    other = tmp_path / "b.zarr"  # int64 in the same files: read as float64, values nobody wrote
    zarr.create_array(str(other), shape=(12,), chunks=(4,), shards=(8,), dtype="int64", compressors=None)[...] = (
        np.arange(12)
    )
    for name in ["c/0", "c/1", "zarr.json"]:
        os.replace(other / name, path / name)
    with pytest.raises(
        OSError, match=r"zarr\.json' changed since the array was opened \(its data type float64 is now int64"
    ):
        b.to_numpy()
    zarr.create_array(
        str(path), shape=(12,), chunks=(4,), shards=(8,), dtype="int64", compressors=None, overwrite=True
    )[...] = np.arange(12)  # the store made anew (its directory replaced)
    with pytest.raises(OSError, match="the Zarr array was removed or replaced while open"):
        b.to_numpy()
    np.testing.assert_array_equal(b2lazy.open(str(path)).to_numpy(), np.arange(12))


def h5_file(path, data, **kw):
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=data, chunks=(4,), **kw)


def b2z_file(path, data):
    with blosc2.DictStore(str(path), mode="w") as ds:
        ds["/a"] = blosc2.asarray(data, chunks=(4,), blocks=(2,))


@pytest.mark.parametrize("fmt", ["hdf5", "b2z"])
def test_single_file_replaced_or_written_in_place(tmp_path, fmt):
    path = tmp_path / ("f.h5" if fmt == "hdf5" else "f.b2z")
    url = str(path) + ("#/x" if fmt == "hdf5" else "#/a")
    old = np.arange(16, dtype=np.int64) * 7
    new = (np.arange(16, dtype=np.int64) * 1000003) ** 3
    write = (lambda p, d: h5_file(p, d, compression="gzip")) if fmt == "hdf5" else b2z_file
    write(path, old)
    a = b2lazy.open(url)
    np.testing.assert_array_equal(a.to_numpy(), old)
    write(tmp_path / ("other" + path.suffix), new)
    os.replace(tmp_path / ("other" + path.suffix), path)  # renamed over: the open array reads what it opened
    np.testing.assert_array_equal(a.to_numpy(), old)
    np.testing.assert_array_equal(b2lazy.open(url).to_numpy(), new)
    b = b2lazy.open(url)
    write(tmp_path / ("third" + path.suffix), old * 3)
    shutil.copyfile(tmp_path / ("third" + path.suffix), path)  # written in place (as cp does)
    with pytest.raises(OSError, match="changed on disk since it was opened"):
        b.to_numpy()
