"""Issue #13, item 6 (drivers): one suite every storage driver passes — b2nd (files and
sparse directories, written by python-blosc2), Zarr v2, Zarr v3 and sharded Zarr v3
(written by zarr-python), arrays in python-blosc2 DictStore zips (.b2z), HDF5 datasets
(written by h5py with gzip + shuffle, and with hdf5plugin's zstd) — on
what the format's own library wrote and on what b2lazy
wrote: every dtype, edge chunks, missing chunks, partial reads, round trips, and bad files
refused with an error naming the path.

A driver here is (writer, damage): writer(path, values, chunks, written) stores `values`
(only the part `written` when given; the rest holds the format's fill value 0) and returns
the URL to open; damage(url) spoils what it wrote so that a reader must refuse it.
"""

import os

import blosc2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import b2lazy
from zarr_stores import DTYPES, sharded, values, write


def b2nd_writer(sparse):
    def w(path, x, chunks, written=None):
        url = str(path) + ("/" if sparse else ".b2nd")
        if written is None:
            blosc2.asarray(x, chunks=chunks, urlpath=url, contiguous=not sparse, mode="w")
        else:  # unwritten chunks stay uninitialised: they read as zeros
            a = blosc2.empty(x.shape, dtype=x.dtype, chunks=chunks, urlpath=url, contiguous=not sparse, mode="w")
            a[written] = np.ascontiguousarray(x[written])
        return url

    return w


def zarr_writer(fmt, shards=False):
    def w(path, x, chunks, written=None):
        url = str(path) + ".zarr"
        if shards and x.ndim:
            outer = tuple(2 * c for c in chunks)
            if written is None:
                sharded(url, x, chunks, outer)
            else:
                write(url, x, chunks, fmt=3, shards=outer, written=written, fill_value=0)
            return url
        write(
            url, x, chunks, fmt=fmt, codec="blosc" if fmt == 2 else "blosc-zstd-shuffle", written=written, fill_value=0
        )
        return url

    return w


def b2z_writer(path, x, chunks, written=None):
    """The array at key "/g/a" of a DictStore zip, beside another array (so the key matters)."""
    url = str(path) + ".b2z"
    if written is None:
        a = blosc2.asarray(x, chunks=chunks)
    else:  # unwritten chunks stay uninitialised: they read as zeros
        a = blosc2.empty(x.shape, dtype=x.dtype, chunks=chunks)
        a[written] = np.ascontiguousarray(x[written])
    with blosc2.DictStore(url, mode="w") as ds:
        ds["/other"] = np.arange(10.0)
        ds["/g/a"] = a
    return url + "#/g/a"


def hdf5_writer(filters):
    def w(path, x, chunks, written=None):
        import h5py
        import hdf5plugin  # noqa: F401  (registers the filters with h5py)

        url = str(path) + ".h5"
        with h5py.File(url, "w") as f:
            f.create_dataset("other", data=np.arange(3))
            g = f.create_group("g")
            kw = filters() if callable(filters) else dict(filters)
            d = g.create_dataset(
                "a",
                shape=x.shape,
                dtype=x.dtype,
                chunks=chunks if x.ndim else None,
                fillvalue=0,
                **(kw if x.ndim else {}),
            )
            if written is None:
                d[...] = x
            else:  # unwritten chunks are not allocated: they read as the fill value
                d[written] = x[written]
        return url + "#/g/a"

    return w


def damage_hdf5(url):
    path = url.split("#")[0]
    with open(path, "r+b") as f:  # the superblock at the start
        f.seek(0)
        f.write(b"\0" * 64)


def damage_b2z(url):
    path = url.split("#")[0]
    with open(path, "r+b") as f:  # the zip's central directory is at its end
        f.truncate(os.path.getsize(path) // 2)


def damage_b2nd(url):
    path = url.rstrip("/")
    if os.path.isdir(path):
        with open(os.path.join(path, "chunks.b2frame"), "r+b") as f:
            f.truncate(40)
    else:
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) // 2)


def damage_zarr(url):
    for root, _, files in os.walk(url):
        for f in files:
            p = os.path.join(root, f)
            if f in ("zarr.json", ".zarray"):
                continue
            with open(p, "r+b") as fh:
                fh.truncate(max(1, os.path.getsize(p) // 3))
            return
    raise AssertionError("no chunk to damage")


DRIVERS = {
    "b2nd-file": (b2nd_writer(False), damage_b2nd),
    "b2nd-sparse": (b2nd_writer(True), damage_b2nd),
    "zarr-v2": (zarr_writer(2), damage_zarr),
    "zarr-v3": (zarr_writer(3), damage_zarr),
    "zarr-v3-sharded": (zarr_writer(3, shards=True), damage_zarr),
    "b2z": (b2z_writer, damage_b2z),
    "hdf5-gzip-shuffle": (hdf5_writer({"compression": "gzip", "shuffle": True}), damage_hdf5),
    "hdf5-zstd": (hdf5_writer(lambda: __import__("hdf5plugin").Zstd()), damage_hdf5),
}
# What b2lazy writes for each (the same format), and how compute() is asked for it.
OWN = {
    "b2nd-file": lambda p: dict(urlpath=str(p) + ".b2nd"),
    "b2nd-sparse": lambda p: dict(urlpath=str(p) + "/"),
    "zarr-v2": None,  # b2lazy writes Zarr v3 only
    "zarr-v3": lambda p: dict(urlpath=str(p) + ".zarr"),
    "zarr-v3-sharded": lambda p: dict(urlpath=str(p) + ".zarr", shards=True),
    "b2z": None,  # b2lazy reads DictStore zips; python-blosc2 writes them
    "hdf5-gzip-shuffle": None,  # b2lazy reads HDF5
    "hdf5-zstd": None,
}


def own_write(driver, path, x, chunks):
    kw = OWN[driver](path)
    if kw.pop("shards", False):
        kw["shards"] = tuple(2 * c for c in chunks)
    b2lazy.asarray(x).compute(chunks=chunks, **kw)
    return kw["urlpath"]


def read_with_owner(driver, url):
    if driver.startswith("b2nd"):
        return blosc2.open(url)[...]
    if driver == "b2z":
        path, key = url.split("#")
        return blosc2.DictStore(path, mode="r")[key][...]
    import zarr

    return zarr.open_array(url, mode="r")[...]


drivers = pytest.mark.parametrize("driver", sorted(DRIVERS))


@drivers
@pytest.mark.parametrize("dtype", DTYPES)
def test_dtypes_and_edge_chunks(tmp_path, driver, dtype):
    x = values((21, 13), dtype, seed=3)
    url = DRIVERS[driver][0](tmp_path / "a", x, (8, 5))
    a = b2lazy.open(url)
    assert a.shape == x.shape and a.dtype == x.dtype.name
    np.testing.assert_array_equal(a.to_numpy(), x)


@drivers
def test_round_trip_through_b2lazy(tmp_path, driver):
    if OWN[driver] is None:
        pytest.skip("b2lazy does not write this format")
    for dtype in ("bool", "int16", "uint64", "float32", "float64"):
        x = values((19, 7, 3), dtype)
        url = own_write(driver, tmp_path / dtype, x, (4, 3, 2))
        np.testing.assert_array_equal(read_with_owner(driver, url), x)
        np.testing.assert_array_equal(b2lazy.open(url).to_numpy(), x)


@drivers
def test_missing_chunks(tmp_path, driver):
    x = values((30, 24), "float64") + 2
    written = (slice(0, 7), slice(5, 13))
    url = DRIVERS[driver][0](tmp_path / "a", x, (6, 6), written=written)
    expected = np.zeros_like(x)
    expected[written] = x[written]
    a = b2lazy.open(url)
    np.testing.assert_array_equal(a.to_numpy(), expected)
    np.testing.assert_array_equal(a[20:, 3:17].to_numpy(), expected[20:, 3:17])


@drivers
@settings(max_examples=15)
@given(data=st.data())
def test_partial_reads(tmp_path_factory, driver, data):
    shape = tuple(data.draw(st.lists(st.integers(1, 20), min_size=1, max_size=3)))
    chunks = tuple(data.draw(st.integers(1, s)) for s in shape)
    x = values(shape, "int32", seed=len(shape))
    url = DRIVERS[driver][0](tmp_path_factory.mktemp("p") / "a", x, chunks)
    a = b2lazy.open(url)
    key = tuple(
        slice(data.draw(st.integers(0, s - 1)), data.draw(st.integers(0, s)), data.draw(st.sampled_from([1, 2, 3, -1])))
        for s in shape
    )
    np.testing.assert_array_equal(a[key].to_numpy(), x[key])
    r = (a[key] + 0).compute()
    touched = np.prod(
        [
            len(range(*k.indices(s))) and len({i // c for i in range(*k.indices(s))})
            for k, s, c in zip(key, shape, chunks)
        ]
    )
    assert r.stats["chunks_decompressed"]["total"] <= max(touched, 1)


@drivers
def test_bad_files_name_the_path(tmp_path, driver):
    x = values((40, 30), "float64")
    writer, damage = DRIVERS[driver]
    url = writer(tmp_path / "a", x, (10, 10))
    damage(url)
    with pytest.raises(OSError) as e:
        b2lazy.open(url).to_numpy()
    assert str(tmp_path / "a") in str(e.value)
    missing = str(tmp_path / "nothing") + (
        ".zarr" if "zarr" in driver else ".b2z" if driver == "b2z" else ".h5" if "hdf5" in driver else ".b2nd"
    )
    with pytest.raises(OSError, match="nothing"):
        b2lazy.open(missing)


@drivers
def test_stored_arrays_know_their_path(tmp_path, driver):
    x = values((9, 9), "uint8")
    url = DRIVERS[driver][0](tmp_path / "a", x, (4, 4))
    assert b2lazy.open(url).urlpath.rstrip("/") == url.rstrip("/")
