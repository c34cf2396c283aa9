"""Issue #37, item 3: b2lazy.asarray / b2lazy.from_array wrap other libraries' arrays
without reading them. Local Zarr and HDF5 files open through b2lazy's own drivers; any
other object with shape, dtype and __getitem__ is a region source, read for exactly the
regions an evaluation pulls, in its own chunks. Counters (a wrapper counting __getitem__
and the boxes asked, a zarr store counting its gets) prove what is read; NumPy, zarr-python
and h5py are the oracles."""

import os
import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy as bl
from conftest import base_shapes, examples, random_values

zarr = pytest.importorskip("zarr")
h5py = pytest.importorskip("h5py")

DTYPES = ["bool", "int8", "uint16", "int32", "int64", "float32", "float64", "complex128"]


class Counting:
    """An array-like over a NumPy array: counts __getitem__ calls and the boxes asked."""

    def __init__(self, values, chunks=None):
        self.values, self.shape, self.dtype = values, values.shape, values.dtype
        if chunks is not None:
            self.chunks = chunks
        self.boxes, self.lock = [], threading.Lock()

    def __getitem__(self, key):
        assert isinstance(key, tuple) and all(isinstance(k, slice) and k.step is None for k in key)
        with self.lock:
            self.boxes.append(tuple((k.start, k.stop) for k in key))
        return self.values[key]


def covered_chunks(region, chunks):
    """The chunk ids (per-axis index tuples) a region of (start, stop) per axis touches."""
    ids = [range(a // c, -(-b // c)) for (a, b), c in zip(region, chunks)]
    import itertools

    return set(itertools.product(*ids))


# --- region sources ---------------------------------------------------------------------------
@given(data=st.data())
@examples(40)
def test_region_source_reads_nothing_at_wrap_and_only_aligned_chunks(data):
    shape = data.draw(base_shapes(max_ndim=3, allow_zero=False))
    dtype = data.draw(st.sampled_from(DTYPES))
    chunks = tuple(data.draw(st.integers(1, s)) for s in shape)
    values = random_values(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))), dtype, shape)
    w = Counting(values, chunks)
    x = bl.asarray(w)
    assert w.boxes == []  # nothing read at wrap time
    assert (x.shape, x.dtype) == (shape, values.dtype)
    np.testing.assert_array_equal(x.to_numpy(), values)
    for box in w.boxes:  # every region read is whole chunks of the object's, started on one
        assert all(a % c == 0 and (b % c == 0 or b == s) for (a, b), c, s in zip(box, chunks, shape)), (box, chunks)
    assert sum(np.prod([b - a for a, b in box]) for box in w.boxes) == values.size  # each element once

    # a reduction reads each element once, in the object's chunks (its slabs follow them)
    if values.dtype.kind in "iuf":
        w.boxes.clear()
        axis = data.draw(st.integers(0, len(shape) - 1))
        np.testing.assert_array_equal(bl.max(x, axis=axis).to_numpy(), np.max(values, axis=axis))
        for box in w.boxes:
            assert all(a % c == 0 and (b % c == 0 or b == s) for (a, b), c, s in zip(box, chunks, shape)), (box, chunks)
        assert sum(np.prod([b - a for a, b in box]) for box in w.boxes) == values.size

    # a slice reads only the chunks it touches
    w.boxes.clear()
    region = tuple(sorted(data.draw(st.lists(st.integers(0, s), min_size=2, max_size=2))) for s in shape)
    key = tuple(slice(a, b) for a, b in region)
    np.testing.assert_array_equal(x[key].to_numpy(), values[key])
    touched = covered_chunks(region, chunks) if all(b > a for a, b in region) else set()
    read = set().union(*[covered_chunks(b, chunks) for b in w.boxes]) if w.boxes else set()
    assert read <= touched


@given(data=st.data())
@examples(25)
def test_region_source_expressions_match_numpy(data):
    shape = data.draw(base_shapes(min_ndim=1, max_ndim=3, allow_zero=False))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a = rng.normal(size=shape)
    chunks = tuple(data.draw(st.integers(1, s)) for s in shape)
    x = bl.from_array(Counting(a, None), chunks=chunks)
    assert x.chunks == bl.asarray(a, chunks=chunks).chunks  # the object's chunks reach the plan
    axis = data.draw(st.integers(0, len(shape) - 1))
    np.testing.assert_allclose(bl.mean(x * 2 + 1, axis=axis).to_numpy(), np.mean(a * 2 + 1, axis=axis))
    np.testing.assert_allclose((x[::-1] - x).to_numpy(), a[::-1] - a)


def test_region_source_has_several_regions_in_flight():
    """Two __getitem__ calls wait for each other at a barrier: they can only both pass
    if the engine's workers call them at once (the GIL is free while one waits)."""
    barrier, calls = threading.Barrier(2, timeout=30), []

    class Meeting(Counting):
        def __getitem__(self, key):
            with self.lock:
                calls.append(key)
                first_two = len(calls) <= 2
            if first_two:
                barrier.wait()
            return super().__getitem__(key)

    a = np.arange(64.0).reshape(8, 8)
    x = bl.from_array(Meeting(a, (2, 8)))
    np.testing.assert_array_equal(x.compute(nthreads=2).to_numpy(), a)


def test_region_source_chunks_and_lock_and_getitem():
    a = np.arange(30).reshape(5, 6)
    w = Counting(a)
    x = bl.from_array(w, chunks=(2, -1))
    assert x.chunks == ((2, 2, 1), (6,))
    np.testing.assert_array_equal(x.to_numpy(), a)
    assert sorted(w.boxes) == [((0, 2), (0, 6)), ((2, 4), (0, 6)), ((4, 5), (0, 6))]
    x = bl.from_array(w, chunks=((3, 2), (6,)), lock=True)  # Dask's block lengths, regular
    assert x.chunks == ((3, 2), (6,))
    seen = []
    x = bl.from_array(a, getitem=lambda o, k: seen.append(k) or o[k])  # NumPy: wrapped, getitem unused
    np.testing.assert_array_equal(x.to_numpy(), a)
    x = bl.from_array(w, getitem=lambda o, k: seen.append(k) or o.values[k] * 2)
    np.testing.assert_array_equal(x.to_numpy(), a * 2)
    assert seen


def test_region_source_errors_name_the_function():
    a = Counting(np.zeros((4, 4)))
    with pytest.raises(ValueError, match="from_array: chunks along axis 1"):
        bl.from_array(a, chunks=(2, 0))
    with pytest.raises(ValueError, match="from_array: chunks along axis 0 must be regular"):
        bl.from_array(a, chunks=((1, 3), (4,)))
    with pytest.raises(ValueError, match="from_array: chunks must be an int or one entry per axis"):
        bl.from_array(a, chunks=(2, 2, 2))
    with pytest.raises(TypeError, match="from_array: getitem must be callable"):
        bl.from_array(a, getitem=3)

    class Text:
        shape, dtype = (3,), np.dtype("U4")

        def __getitem__(self, key):
            return np.array(["a", "b", "c"])[key]

    with pytest.raises(TypeError, match="asarray: Text has dtype <U4"):
        bl.asarray(Text())

    class Wrong(Counting):
        def __getitem__(self, key):
            return np.zeros(3)

    with pytest.raises(ValueError, match=r"Wrong\[0:4, 0:4\] gave shape \(3,\)"):
        bl.asarray(Wrong(np.zeros((4, 4)))).to_numpy()


def test_region_source_refuses_to_be_saved_by_name(tmp_path):
    x = bl.asarray(Counting(np.zeros((4, 4))))
    with pytest.raises(
        TypeError, match="cannot save an expression over a test_wrap_objects.Counting read by __getitem__"
    ):
        (x + 1).save(str(tmp_path / "e.b2lazy"))


def test_xarray_lazily_indexed_array():
    xr_indexing = pytest.importorskip("xarray.core.indexing")
    a = np.arange(24.0).reshape(4, 6)
    lazy = xr_indexing.LazilyIndexedArray(a)
    np.testing.assert_array_equal(bl.asarray(lazy)[1:3, ::2].to_numpy(), a[1:3, ::2])


def test_blosc2_lazyudf_is_a_region_source():
    blosc2 = pytest.importorskip("blosc2")

    def f(inputs, output, offset):
        output[:] = inputs[0] * 3 + 1

    a = np.arange(200.0).reshape(10, 20)
    udf = blosc2.lazyudf(f, (blosc2.asarray(a, chunks=(4, 10)),), dtype=np.float64, shape=a.shape)
    x = bl.asarray(udf)
    assert x._a.kind == "udf"
    np.testing.assert_array_equal(x.to_numpy(), a * 3 + 1)
    np.testing.assert_array_equal(x[3:7, 5:15].to_numpy(), a[3:7, 5:15] * 3 + 1)


# --- zarr -----------------------------------------------------------------------------------
class CountingStore(zarr.storage.MemoryStore):
    """A MemoryStore counting the keys read (chunks, shards, metadata)."""

    gets: list

    async def get(self, key, prototype, byte_range=None):
        self.gets.append(key)
        return await super().get(key, prototype, byte_range)


def _chunk_keys(gets):
    return [k for k in gets if not k.endswith(("zarr.json", ".zarray", ".zattrs", ".zgroup"))]


@given(data=st.data())
@examples(25)
def test_zarr_in_memory_is_a_region_source_reading_only_needed_chunks(data):
    shape = data.draw(base_shapes(max_ndim=3, allow_zero=False))
    dtype = data.draw(st.sampled_from(["int16", "uint32", "float32", "float64"]))
    chunks = tuple(data.draw(st.integers(1, s)) for s in shape)
    values = random_values(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))), dtype, shape)
    store = CountingStore()
    store.gets = []
    z = zarr.create_array(store, shape=shape, chunks=chunks, dtype=dtype)
    z[...] = values
    store.gets.clear()
    x = bl.asarray(z)
    assert _chunk_keys(store.gets) == []  # no chunk read at wrap time
    region = tuple(sorted(data.draw(st.lists(st.integers(0, s), min_size=2, max_size=2))) for s in shape)
    key = tuple(slice(a, b) for a, b in region)
    np.testing.assert_array_equal(x[key].to_numpy(), values[key])
    want = covered_chunks(region, chunks) if all(b > a for a, b in region) else set()
    got = {tuple(int(i) for i in k.split("/")[1:]) for k in _chunk_keys(store.gets)}
    assert got == want  # exactly the chunks the slice touches, each once
    assert len(_chunk_keys(store.gets)) == len(want)


@given(data=st.data())
@examples(20)
def test_zarr_local_opens_natively(data, tmp_path_factory):
    shape = data.draw(base_shapes(max_ndim=3, allow_zero=False))
    dtype = data.draw(st.sampled_from(["int8", "uint16", "int64", "float32", "float64"]))
    chunks = tuple(data.draw(st.integers(1, s)) for s in shape)
    fmt = data.draw(st.sampled_from([2, 3]))
    sharded = fmt == 3 and data.draw(st.booleans())
    values = random_values(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))), dtype, shape)
    root = tmp_path_factory.mktemp("z") / "g.zarr"
    g = zarr.open_group(str(root), mode="w", zarr_format=fmt)
    kw = {"shards": tuple(c * 2 for c in chunks)} if sharded else {}
    z = g.create_array("inner/x", shape=shape, chunks=chunks, dtype=dtype, **kw)
    z[...] = values
    x = bl.asarray(z)
    assert x._a.kind == "zarr" and x.urlpath.endswith(os.path.join("g.zarr", "inner", "x"))
    np.testing.assert_array_equal(x.to_numpy(), values)
    if not sharded:  # (the native driver keeps a shard's index once read: rewrites are not seen)
        y = bl.asarray(z)
        z[...] = values[::-1]  # written after the wrap: read then, not before
        np.testing.assert_array_equal(y.to_numpy(), z[...])


def test_zarr_local_native_false_and_save(tmp_path):
    z = zarr.create_array(str(tmp_path / "a.zarr"), shape=(6, 4), chunks=(3, 2), dtype="f8")
    z[...] = np.arange(24.0).reshape(6, 4)
    x = bl.from_array(z, native=False)
    assert x._a.kind == "udf" and x.chunks == ((3, 3), (2, 2))
    np.testing.assert_array_equal(x.to_numpy(), z[...])
    y = bl.asarray(z) * 2  # native: saved by its path, reopened equal
    y.save(str(tmp_path / "e.b2lazy"))
    np.testing.assert_array_equal(bl.open(str(tmp_path / "e.b2lazy")).to_numpy(), z[...] * 2)


# --- h5py -----------------------------------------------------------------------------------
@given(data=st.data())
@examples(20)
def test_h5py_dataset_of_a_file_opens_natively(data, tmp_path_factory):
    shape = data.draw(base_shapes(max_ndim=3, allow_zero=False))
    dtype = data.draw(st.sampled_from(["int8", "uint16", "int64", "float32", "float64"]))
    chunked = data.draw(st.booleans())
    chunks = tuple(data.draw(st.integers(1, s)) for s in shape) if chunked else None
    comp = data.draw(st.sampled_from([None, "gzip"])) if chunked else None
    values = random_values(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))), dtype, shape)
    path = str(tmp_path_factory.mktemp("h") / "f.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("grp/x", data=values, chunks=chunks, compression=comp)
        w = bl.asarray(f["grp/x"])  # a file open for writing: read through h5py
        assert w._a.kind == "udf"
        np.testing.assert_array_equal(w.to_numpy(), values)
    with h5py.File(path, "r") as f:
        x = bl.asarray(f["grp/x"])
        assert x._a.kind == "hdf5"
        np.testing.assert_array_equal(x.to_numpy(), values)
        if chunked:
            assert x.chunks == bl.asarray(values, chunks=chunks).chunks


def test_h5py_in_memory_file_is_a_region_source():
    with h5py.File("mem.h5", "w", driver="core", backing_store=False) as f:
        d = f.create_dataset("x", data=np.arange(50.0).reshape(5, 10), chunks=(2, 5))
        x = bl.asarray(d)
        assert x._a.kind == "udf" and x.chunks == ((2, 2, 1), (5, 5))
        np.testing.assert_array_equal((x + 1).to_numpy(), d[...] + 1)
    assert not os.path.exists("mem.h5")


# --- NumPy memmaps and blosc2 NDArrays -------------------------------------------------------
def test_memmap_is_wrapped_without_copy(tmp_path):
    path = tmp_path / "m.dat"
    m = np.memmap(path, dtype="f8", mode="w+", shape=(1000, 10))
    m[:] = 1.0
    a = np.array(m, copy=None)
    assert np.shares_memory(a, m)  # what asarray does: no copy, so no read
    x = bl.asarray(m)
    m[3, 4] = 42.0  # written after the wrap: seen, so nothing was copied
    assert float(x[3, 4].to_numpy()) == 42.0
    assert float(bl.sum(x).to_numpy()) == 10000 - 1 + 42


@pytest.mark.parametrize("where", ["memory", "disk", "b2z"])
def test_blosc2_ndarray(where, tmp_path):
    blosc2 = pytest.importorskip("blosc2")
    a = np.arange(300.0).reshape(15, 20)
    if where == "memory":
        nd = blosc2.asarray(a, chunks=(5, 10), blocks=(5, 5))
    elif where == "disk":
        nd = blosc2.asarray(a, chunks=(5, 10), blocks=(5, 5), urlpath=str(tmp_path / "a.b2nd"), mode="w")
    else:
        with blosc2.DictStore(str(tmp_path / "s.b2z"), mode="w") as ds:
            ds["/x"] = blosc2.asarray(a, chunks=(5, 10), blocks=(5, 5))
        nd = blosc2.DictStore(str(tmp_path / "s.b2z"), mode="r")["/x"]
    x = bl.asarray(nd)
    assert x.chunks == ((5, 5, 5), (10, 10))
    np.testing.assert_array_equal((x * 2).to_numpy(), a * 2)


def test_dask_array_is_a_region_source_in_its_chunks_and_pandas_goes_through_numpy():
    da = pytest.importorskip("dask.array")
    d = da.arange(20, chunks=6).reshape(4, 5)
    x = bl.asarray(d)
    assert x._a.kind == "udf"  # nothing computed until b2lazy pulls a region
    np.testing.assert_array_equal((x * 2).to_numpy(), np.arange(20).reshape(4, 5) * 2)
    pd = pytest.importorskip("pandas")
    s = pd.Series([3.0, 1.0, 2.0], index=[10, 20, 30])  # [] takes labels: converted by NumPy as before
    np.testing.assert_array_equal(bl.asarray(s).to_numpy(), [3.0, 1.0, 2.0])


@pytest.mark.parametrize("what", ["numpy", "zarr", "list"])
def test_from_array_chunks_on_arrays_read_natively(what, tmp_path):
    """chunks= re-chunks (b2lazy.rechunk where the build has it, else regions of x)."""
    a = np.arange(48.0).reshape(6, 8)
    if what == "zarr":
        x = zarr.create_array(str(tmp_path / "a.zarr"), shape=a.shape, chunks=(6, 8), dtype="f8")
        x[...] = a
    else:
        x = a if what == "numpy" else a.tolist()
    y = bl.from_array(x, chunks=(4, 3))
    assert y.chunks == ((4, 2), (3, 3, 2))
    np.testing.assert_array_equal((y + 1).to_numpy(), a + 1)
    assert bl.from_array(x).chunks != y.chunks
