"""Opening with xarray reads nothing (issue #38, items 1 and 5): open_dataset /
open_mfdataset with chunked_array_type="b2lazy" over Zarr v2/v3 and netCDF-4 (h5netcdf and
netCDF4 engines) give b2lazy Arrays over the stores themselves, with CF decoding as lazy
elementwise operations; values and dtypes equal xarray's own eager decoding (NumPy).
Reads are counted where xarray and the libraries it calls read (backend wrappers,
zarr.Array, h5py.Dataset); b2lazy's native reads show in an evaluation's stats."""

import collections
import importlib.util
import os
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")
pytest.importorskip("h5netcdf")
if importlib.util.find_spec("netCDF4") is None:  # (imported by xarray's engine, under the fixture below)
    pytest.skip("netCDF4 is not installed", allow_module_level=True)

import b2lazy  # noqa: E402
from b2lazy._xarray import B2lazyManager  # noqa: E402

FORMATS = ["zarr2", "zarr3", "h5netcdf", "netcdf4"]
DIMS = ("time", "y", "x")

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # (zarr's consolidated-metadata note)


def write(ds, path, fmt, encoding=None, **kw):
    """`ds` stored as `fmt` at `path` (no suffix); (path, engine) to open it with."""
    if fmt.startswith("zarr"):
        path = f"{path}.zarr"
        ds.to_zarr(path, mode="w", zarr_format=int(fmt[-1]), encoding=encoding or {}, **kw)
        return path, "zarr"
    path = f"{path}.nc"
    ds.to_netcdf(path, engine=fmt, encoding=encoding or {}, **kw)
    return path, fmt


def open_b2lazy(path, engine, **kw):
    return xr.open_dataset(path, engine=engine, chunks=kw.pop("chunks", {}), chunked_array_type="b2lazy", **kw)


def cf_dataset(shape=(6, 5, 4), seed=0):
    """Variables exercising CF decoding: plain float32, int16 packing to float64 with a
    _FillValue, packing to float32 without one, a fill-only int16, float64 stored as
    float32 with _FillValue and missing_value, bools, a 2-D coordinate and a datetime
    variable that is not an index."""
    rng = np.random.default_rng(seed)
    f = rng.standard_normal(shape).astype("float32")
    f.flat[0] = np.nan
    p = rng.uniform(-50, 50, shape)
    p.flat[min(7, p.size - 1)] = np.nan
    q = rng.uniform(0, 6, shape).astype("float32")
    m = rng.integers(-5, 5, shape).astype("float32")
    m.flat[min(3, m.size - 1)] = np.nan
    g = rng.standard_normal(shape)
    g.flat[-1] = np.nan
    return xr.Dataset(
        {
            "f": (DIMS, f),
            "p": (DIMS, p),
            "q": (DIMS, q),
            "m": (DIMS, m),
            "g": (DIMS, g),
            "b": (DIMS, rng.integers(0, 2, shape).astype(bool)),
            "tt": (("y",), pd.date_range("2001-01-01", periods=shape[1]).values),
        },
        coords={
            "time": pd.date_range("2000-01-01", periods=shape[0]),
            "y": np.arange(shape[1], dtype=float),
            "lat2": (("y", "x"), rng.standard_normal(shape[1:])),
        },
    )


CF_ENCODING = {
    "p": {"dtype": "int16", "scale_factor": 0.01, "add_offset": 2.5, "_FillValue": -32767},
    "q": {"dtype": "int16", "scale_factor": np.float32(0.001), "add_offset": np.float32(1.0)},
    "m": {"dtype": "int16", "_FillValue": -99},
    "g": {"dtype": "float32", "_FillValue": np.float32(-999.0), "missing_value": np.float32(-999.0)},
}
LAZY_VARS = ("f", "p", "q", "m", "g", "b", "lat2")


@pytest.fixture
def reads(monkeypatch):
    """Counts reads by variable name: xarray's backend wrappers' [] and the zarr / h5py
    reads a region source makes."""
    import h5py
    import zarr
    from xarray.backends.h5netcdf_ import H5NetCDFArrayWrapper
    from xarray.backends.netCDF4_ import NetCDF4ArrayWrapper
    from xarray.backends.zarr import ZarrArrayWrapper

    counts = collections.Counter()

    def counting(cls, attr, name_of):
        original = getattr(cls, attr)

        def f(self, *args, **kwargs):
            counts[name_of(self)] += 1
            return original(self, *args, **kwargs)

        monkeypatch.setattr(cls, attr, f)

    counting(ZarrArrayWrapper, "__getitem__", lambda w: os.path.basename(w.get_array().path))
    counting(H5NetCDFArrayWrapper, "__getitem__", lambda w: w.variable_name)
    counting(NetCDF4ArrayWrapper, "__getitem__", lambda w: w.variable_name)
    for attr in ("__getitem__", "get_basic_selection", "get_orthogonal_selection"):
        counting(zarr.Array, attr, lambda z: os.path.basename(z.path))
    for attr in ("__getitem__", "read_direct"):
        counting(h5py.Dataset, attr, lambda d: os.path.basename(d.name))
    return counts


def native_sources(a):
    """The stores an evaluation of `a` decompressed chunks of (b2lazy's native drivers)."""
    a.to_numpy()
    return {k for k in a.last_stats["chunks_decompressed"] if k != "total"}


# --- nothing read at open; values and dtypes as xarray decodes them ------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("mask_and_scale", [True, False])
@pytest.mark.parametrize("decode_times", [True, False])
def test_open_reads_nothing_and_decodes_as_xarray(tmp_path, reads, fmt, mask_and_scale, decode_times):
    path, engine = write(cf_dataset(), tmp_path / "cf", fmt, CF_ENCODING)
    reads.clear()
    got = open_b2lazy(path, engine, mask_and_scale=mask_and_scale, decode_times=decode_times)
    assert not any(reads[n] for n in LAZY_VARS), dict(reads)
    for n in LAZY_VARS:
        assert isinstance(got[n].data, b2lazy.Array), n
    # (a datetime b2lazy does not hold is read at open and stays NumPy; undecoded, int64 is lazy)
    assert isinstance(got.tt.data, np.ndarray if decode_times else b2lazy.Array)
    ref = xr.open_dataset(path, engine=engine, mask_and_scale=mask_and_scale, decode_times=decode_times).load()
    xr.testing.assert_identical(got.compute(), ref)
    for n in LAZY_VARS:  # bit for bit, in xarray's dtype (decoded arithmetic as NumPy's)
        assert got[n].dtype == ref[n].dtype
        np.testing.assert_array_equal(got[n].values, ref[n].values)
    # read by b2lazy's own Zarr / HDF5 driver from the store
    store = os.path.abspath(path)
    assert native_sources(got.p.data) == {f"{store}/p" if engine == "zarr" else f"{store}#/p"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_native_source_reads_only_the_chunks_needed(tmp_path, fmt):
    ds = cf_dataset((12, 5, 4))
    path, engine = write(
        ds,
        tmp_path / "c",
        fmt,
        {**CF_ENCODING, "f": {"chunksizes" if "net" in fmt or "h5" in fmt else "chunks": (3, 5, 4)}},
    )
    got = open_b2lazy(path, engine)
    assert got.f.chunks == ((3, 3, 3, 3), (5,), (4,))
    part = got.f.isel(time=slice(3, 6)).data
    np.testing.assert_array_equal(part.to_numpy(), ds.f.values[3:6])
    assert part.last_stats["chunks_decompressed"]["total"] == 1


# --- xarray's lazy indexing and wrappers this module does not know -------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
def test_lazily_indexed_key_becomes_b2lazy_indexing(tmp_path, reads, fmt):
    path, engine = write(cf_dataset((8, 5, 4)), tmp_path / "k", fmt, CF_ENCODING)
    lazy = xr.open_dataset(path, engine=engine)  # xarray's lazily indexed arrays, no chunks
    sel = dict(time=[5, 0, 2, 3], y=slice(4, 0, -2), x=1)
    reads.clear()
    got = lazy.isel(sel).chunk(chunked_array_type="b2lazy")
    assert not any(reads[n] for n in LAZY_VARS), dict(reads)
    ref = xr.open_dataset(path, engine=engine).load().isel(sel)
    xr.testing.assert_identical(got.compute(), ref)


def test_unknown_wrapper_becomes_a_region_source_over_it(tmp_path, reads):
    path, engine = write(cf_dataset(), tmp_path / "t", "zarr3", CF_ENCODING)
    lazy = xr.open_dataset(path, engine=engine)
    transposed = lazy.transpose("x", "time", "y")  # LazilyVectorizedIndexedArray: not unwrapped here
    reads.clear()
    got = transposed.chunk(chunked_array_type="b2lazy")
    assert not any(reads[n] for n in LAZY_VARS), dict(reads)
    assert isinstance(got.p.data, b2lazy.Array)
    xr.testing.assert_identical(got.compute(), xr.open_dataset(path, engine=engine).load().transpose("x", "time", "y"))
    assert reads["p"] > 0  # read through xarray's wrappers, when evaluated


def test_custom_backend_array_is_read_when_evaluated():
    from xarray.backends.common import BackendArray
    from xarray.core import indexing

    values = np.arange(60, dtype="int32").reshape(6, 10)
    calls = []

    class Counting(BackendArray):
        shape, dtype = values.shape, values.dtype

        def __getitem__(self, key):
            return indexing.explicit_indexing_adapter(key, self.shape, indexing.IndexingSupport.BASIC, self.raw)

        def raw(self, key):
            calls.append(key)
            return values[key]

    var = xr.Variable(
        ("a", "b"), indexing.LazilyIndexedArray(Counting())[indexing.BasicIndexer((slice(1, 5), slice(None)))]
    )
    c = var.chunk({"a": 2}, chunked_array_type="b2lazy")
    assert calls == [] and isinstance(c.data, b2lazy.Array) and c.chunks == ((2, 2), (10,))
    np.testing.assert_array_equal(c.values, values[1:5])
    assert calls


def test_netcdf3_file_is_read_through_the_backend(tmp_path, reads):
    ds = cf_dataset().drop_vars(["b", "tt"])
    path = str(tmp_path / "classic.nc")
    ds.to_netcdf(path, engine="netcdf4", format="NETCDF3_64BIT", encoding={k: CF_ENCODING[k] for k in ("p", "m")})
    reads.clear()
    got = open_b2lazy(path, "netcdf4")
    assert not any(reads[n] for n in LAZY_VARS), dict(reads)  # (xarray reads its indexes, time and y)
    xr.testing.assert_identical(got.compute(), xr.open_dataset(path, engine="netcdf4").load())
    assert reads["p"] > 0  # not HDF5: no native open, read by netCDF4-python when evaluated


def test_unsigned_and_big_endian_are_decoded_lazily(tmp_path, reads):
    import netCDF4

    raw = np.array([[-1, 0, 5, -128], [127, -2, 3, 4]], dtype="int8")
    path = str(tmp_path / "ub.nc")
    with netCDF4.Dataset(path, "w") as f:  # (xarray does not write non-native byte order)
        f.createDimension("a", 2)
        f.createDimension("b", 4)
        u = f.createVariable("u", "i1", ("a", "b"))
        u.set_auto_maskandscale(False)
        u[:] = raw
        u.setncattr("_Unsigned", "true")
        e = f.createVariable("e", ">f8", ("a", "b"), endian="big")
        e[:] = np.arange(8.0).reshape(2, 4)
    for engine in ("netcdf4", "h5netcdf"):
        reads.clear()
        got = open_b2lazy(path, engine)
        assert not reads["u"] and not reads["e"] and isinstance(got.u.data, b2lazy.Array)
        ref = xr.open_dataset(path, engine=engine).load()
        assert got.u.dtype == ref.u.dtype == np.uint8 and got.e.dtype == ref.e.dtype
        xr.testing.assert_identical(got.compute(), ref)


# --- hypothesis: shapes, chunkings, packings and keys -----------------------------------------
@st.composite
def stores(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=ndim, max_size=ndim)))
    chunks = tuple(draw(st.integers(1, s)) for s in shape)
    fmt = draw(st.sampled_from(FORMATS))
    packing = draw(st.sampled_from([None, "int16-fill", "int16-packed", "uint8-packed-fill"]))
    key = []
    for s in shape:
        kind = draw(st.sampled_from(["all", "slice", "int", "list"]))
        if kind == "slice":
            a, b = sorted(draw(st.lists(st.integers(0, s), min_size=2, max_size=2)))
            key.append(slice(a, b, draw(st.integers(1, 3))))
        elif kind == "int":
            key.append(draw(st.integers(0, s - 1)))
        elif kind == "list":
            key.append(draw(st.lists(st.integers(0, s - 1), min_size=1, max_size=4)))
        else:
            key.append(slice(None))
    return shape, chunks, fmt, packing, tuple(key), draw(st.booleans())


ENCODINGS = {
    None: {},
    "int16-fill": {"dtype": "int16", "_FillValue": -7},
    "int16-packed": {"dtype": "int16", "scale_factor": 0.5, "add_offset": -3.0},
    "uint8-packed-fill": {"dtype": "uint8", "scale_factor": 2.0, "_FillValue": 255},
}


@settings(max_examples=30, deadline=None)
@given(stores())
def test_hypothesis_stores_chunkings_and_keys(tmp_path_factory, case):
    shape, chunks, fmt, packing, key, mask_and_scale = case
    dims = DIMS[: len(shape)]
    values = np.random.default_rng(len(shape)).integers(0, 40, shape).astype("float64") * 0.5
    values.flat[0] = np.nan if packing and "fill" in packing else values.flat[0]
    enc = dict(ENCODINGS[packing])
    enc["chunks" if fmt.startswith("zarr") else "chunksizes"] = chunks
    path, engine = write(xr.Dataset({"v": (dims, values)}), tmp_path_factory.mktemp("h") / "s", fmt, {"v": enc})
    got = open_b2lazy(path, engine, mask_and_scale=mask_and_scale)
    assert got.v.chunks == tuple(tuple([c] * (s // c) + ([s % c] if s % c else [])) for c, s in zip(chunks, shape))
    ref = xr.open_dataset(path, engine=engine, mask_and_scale=mask_and_scale).load()
    xr.testing.assert_identical(got.compute(), ref)
    sel = dict(zip(dims, key))
    lazy = xr.open_dataset(path, engine=engine, mask_and_scale=mask_and_scale).isel(sel)
    xr.testing.assert_identical(lazy.chunk(chunked_array_type="b2lazy").compute(), ref.isel(sel))
    xr.testing.assert_identical(got.isel(sel).compute(), ref.isel(sel))


# --- open_mfdataset: a lazy concatenation of native sources ----------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
def test_open_mfdataset_concatenates_native_sources(tmp_path, reads, fmt):
    full = cf_dataset((12, 5, 4)).drop_vars("tt")
    paths = []
    for i in range(3):
        path, engine = write(full.isel(time=slice(4 * i, 4 * i + 4)), tmp_path / f"part{i}", fmt, CF_ENCODING)
        paths.append(path)
    reads.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = xr.open_mfdataset(paths, engine=engine, chunks={}, chunked_array_type="b2lazy")
    assert not any(reads[n] for n in LAZY_VARS), dict(reads)
    assert isinstance(got.p.data, b2lazy.Array)
    ref = xr.concat([xr.open_dataset(p, engine=engine).load() for p in paths], "time", data_vars="all")
    xr.testing.assert_identical(got.compute(), ref)
    assert len(native_sources(got.p.data)) == 3  # each file read by b2lazy's driver
    mean = got.p.mean("time")
    assert isinstance(mean.data, b2lazy.Array)
    xr.testing.assert_allclose(mean.compute(), ref.p.mean("time"))


# --- chunks, chunksizes, rechunk, normalize_chunks (item 5) --------------------------------------
@pytest.mark.parametrize("fmt", ["zarr3", "h5netcdf"])
def test_open_with_chunks_and_rechunk(tmp_path, fmt):
    ds = cf_dataset((10, 5, 4)).drop_vars("tt")
    path, engine = write(ds, tmp_path / "r", fmt, CF_ENCODING)
    ref = xr.open_dataset(path, engine=engine).load()
    got = open_b2lazy(path, engine, chunks={"time": 3})
    assert got.chunksizes["time"] == (3, 3, 3, 1) and got.p.chunks[0] == (3, 3, 3, 1)
    assert got.p.data.chunks == got.p.chunks  # what xarray reports is what b2lazy evaluates in
    re = got.chunk({"time": 4, "x": 2}, chunked_array_type="b2lazy")
    assert re.p.chunks == ((4, 4, 2), (5,), (2, 2))
    assert re.p.data.plan().chunks == (4, 5, 2)
    xr.testing.assert_identical(re.compute(), ref)
    whole = got.chunk({"time": -1}, chunked_array_type="b2lazy")
    assert whole.p.chunks[0] == (10,)
    assert got.chunk({"time": (4, 4, 2)}, chunked_array_type="b2lazy").p.chunks[0] == (4, 4, 2)
    assert got.chunk({"time": (2, 4, 4)}, chunked_array_type="b2lazy").p.chunks[0] == (
        4,
        4,
        2,
    )  # irregular: regular, the largest block
    same = got.chunk({"time": 3}, chunked_array_type="b2lazy")
    assert same.p.data is got.p.data  # nothing added when the chunks do not change


@pytest.mark.parametrize(
    "chunks, previous, expected",
    [
        ("auto", None, ((10,), (6,))),
        ("auto", (4, 6), ((4, 4, 2), (6,))),
        ({}, (4, None), ((4, 4, 2), (6,))),
        ((None, 2), (4, 6), ((4, 4, 2), (2, 2, 2))),
        ((-1, 5), None, ((10,), (5, 1))),
        (3, None, ((3, 3, 3, 1), (3, 3))),
        ({0: 5}, None, ((5, 5), (6,))),
        ({1: (2, 2, 2)}, (4, 6), ((4, 4, 2), (2, 2, 2))),
        (((3, 3, 4), -1), None, ((4, 4, 2), (6,))),
        ((20, 20), None, ((10,), (6,))),
    ],
)
def test_normalize_chunks_forms(chunks, previous, expected):
    got = B2lazyManager().normalize_chunks(chunks, shape=(10, 6), dtype=np.float32, previous_chunks=previous)
    assert got == expected


@pytest.mark.parametrize(
    "chunks, match",
    [
        ((0, 2), "int >= 1"),
        (("x", 2), "'auto' or block lengths"),
        ((2,), "names 1 axes"),
        ({5: 2}, "not an axis"),
        (((3, 3), 2), "do not sum"),
    ],
)
def test_normalize_chunks_refuses_bad_chunks(chunks, match):
    with pytest.raises(ValueError, match="normalize_chunks.*" + match.replace("(", r"\(")):
        B2lazyManager().normalize_chunks(chunks, shape=(10, 6))


def test_rechunk_refuses_bad_chunks_by_name():
    a = xr.DataArray(np.zeros((6, 4)), dims=("a", "b")).chunk(chunked_array_type="b2lazy")
    with pytest.raises(ValueError, match="rechunk"):
        a.chunk({"a": 0}, chunked_array_type="b2lazy")


def test_chunks_of_a_rechunked_array_need_no_plan(tmp_path, monkeypatch):
    """Array.chunks of a rechunk (and of elementwise expressions over it) is what the plan
    takes, known without building a plan that lists every task (1.5 s for the 264,000
    chunks of era-4y's t in (1, 1, 360))."""
    ds = cf_dataset((12, 5, 4)).drop_vars("tt")
    path, engine = write(ds, tmp_path / "n", "zarr3", CF_ENCODING)
    got = open_b2lazy(path, engine, chunks={"time": 1, "y": 1})
    anomaly = got.p - got.p.mean("time")
    expected = [a.data.plan().chunks for a in (got.p, got.f, anomaly)]

    def no_plan(self, *args, **kwargs):
        raise AssertionError("Array.chunks built a plan")

    monkeypatch.setattr(b2lazy.Array, "plan", no_plan)
    fresh = open_b2lazy(path, engine, chunks={"time": 1, "y": 1})
    assert fresh.chunksizes["time"] == (1,) * 12 and fresh.chunksizes["y"] == (1,) * 5
    anomaly = fresh.p - fresh.p.mean("time")
    for a, plan_chunks in zip((fresh.p, fresh.f, anomaly), expected):
        assert tuple(b[0] for b in a.chunks) == plan_chunks


@pytest.mark.parametrize("engine", ["h5netcdf", "netcdf4"])
def test_netcdf4_groups_open_natively(tmp_path, reads, engine):
    path = str(tmp_path / "groups.nc")
    inner = cf_dataset((6, 5, 4), seed=3).drop_vars("tt")
    xr.Dataset({"top": (("a",), np.arange(3.0))}).to_netcdf(path, engine=engine)
    inner.to_netcdf(path, engine=engine, group="g1/g2", mode="a", encoding=CF_ENCODING)
    reads.clear()
    got = open_b2lazy(path, engine, group="g1/g2")
    assert not any(reads[n] for n in LAZY_VARS), dict(reads)
    xr.testing.assert_identical(got.compute(), xr.open_dataset(path, engine=engine, group="g1/g2").load())
    assert native_sources(got.p.data) == {f"{path}#/g1/g2/p"}


def test_b2lazy_opens_netcdf4_but_refuses_netcdf3_clearly(tmp_path):
    ds = xr.Dataset({"v": (("a",), np.arange(5.0))})
    ds.to_netcdf(tmp_path / "four.nc", engine="netcdf4")
    np.testing.assert_array_equal(b2lazy.open(str(tmp_path / "four.nc#/v")).to_numpy(), np.arange(5.0))
    ds.to_netcdf(tmp_path / "three.nc", engine="netcdf4", format="NETCDF3_CLASSIC")
    with pytest.raises(OSError, match="HDF5"):
        b2lazy.open(str(tmp_path / "three.nc#/v"))


def test_zarr_in_memory_store_is_a_region_source(reads):
    from zarr.storage import MemoryStore

    store = MemoryStore()
    ds = cf_dataset().drop_vars("tt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(store, encoding=CF_ENCODING, zarr_format=3)
    reads.clear()
    got = xr.open_dataset(store, engine="zarr", chunks={}, chunked_array_type="b2lazy")
    assert not any(reads[n] for n in LAZY_VARS), dict(reads)
    xr.testing.assert_identical(got.compute(), xr.open_dataset(store, engine="zarr").load())
    assert reads["p"] > 0  # no directory for b2lazy's driver: zarr-python reads the regions


@pytest.mark.parametrize("engine", ["h5netcdf", "netcdf4"])
def test_netcdf4_file_without_an_hdf5_suffix_opens_natively(tmp_path, engine):
    ds = cf_dataset().drop_vars("tt")
    path = str(tmp_path / "run.cdf")
    ds.to_netcdf(path, engine=engine, encoding=CF_ENCODING)
    got = xr.open_dataset(path, engine=engine, chunks={}, chunked_array_type="b2lazy")
    xr.testing.assert_identical(got.compute(), xr.open_dataset(path, engine=engine).load())
    assert native_sources(got.p.data) == {f"{path}#/p"}
