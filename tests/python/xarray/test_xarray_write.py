"""Writing b2lazy-backed Datasets (issue #38, item 4): to_zarr through the chunk manager's
store into the arrays xarray created (byte for byte what xarray on Dask writes where the
codecs match: zstd and uncompressed), appends, regions, compute=False, a stored re-chunk,
failures that leave the store as it was, and to_netcdf; values against xarray on NumPy."""

import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import examples

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")
pytest.importorskip("dask")

import b2lazy  # noqa: E402
from b2lazy import _xarray_store  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::RuntimeWarning")


def dataset(shape=(10, 6, 8), nan_rows=(), dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype(dtype)
    for r in nan_rows:
        a[r] = np.nan
    dims = ("time", "lat", "lon")[: len(shape)]
    return xr.Dataset({"t": (dims, a, {"units": "K"})}, coords={"time": np.arange(shape[0])})


def files(root):
    """{relative path: bytes} of every file under root."""
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, root)] = f.read()
    return out


def _linked_zstd_version():
    """libzstd's version in this process (the one b2lazy links), or None."""
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1").ZSTD_versionNumber()
    except (OSError, AttributeError):
        return None


# zarr-python compresses zstd chunks with numcodecs' own libzstd; b2lazy with the system's.
# Two versions may compress the same bytes differently (1.5.4 and 1.5.6 do, on large
# chunks): then chunks are compared by their decompressed bytes (fill-value padding
# included), which must be identical.
ZSTD_SAME = _linked_zstd_version() == getattr(__import__("numcodecs.zstd").zstd, "VERSION_NUMBER", -1)


def _payload(b):
    numcodecs = _numcodecs()
    return numcodecs.Zstd().decode(b) if b[:4] == b"\x28\xb5\x2f\xfd" else b


def assert_same_files(a, b):
    fa, fb = files(a), files(b)
    assert sorted(fa) == sorted(fb)
    for k in fa:
        assert_same_bytes(k, fa[k], fb[k])


def assert_same_bytes(key, x, y):
    if x != y:
        assert x[:4] == b"\x28\xb5\x2f\xfd" and not ZSTD_SAME, key
        assert _payload(x) == _payload(y), key


def write_both(tmp_path, ds, chunks, write):
    """write(ds chunked on Dask / on b2lazy, path) for both; the two store paths."""
    out = []
    for kind in ("dask", "b2lazy"):
        c = ds.chunk(chunks, chunked_array_type=kind)
        if kind == "b2lazy":
            assert isinstance(c.t.data, b2lazy.Array)
        p = str(tmp_path / f"{kind}.zarr")
        write(c, p)
        out.append(p)
    return out


@pytest.mark.parametrize("compressors", ["default", "zstd5", "none", "blosc"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_to_zarr_bytes_equal_dask(tmp_path, fmt, compressors):
    ds = dataset(nan_rows=(4, 5, 6, 7))  # one chunk all NaN (the fill value): left out by both
    enc = {"chunks": (4, 3, 8)}
    if compressors == "zstd5":
        enc["compressors"] = [zarr.codecs.ZstdCodec(level=5) if fmt == 3 else _numcodecs().Zstd(level=5)]
    elif compressors == "none":
        enc["compressors"] = None
    elif compressors == "blosc":  # zstd inside blosc, no shuffle
        enc["compressors"] = [
            zarr.codecs.BloscCodec(cname="zstd", clevel=3, shuffle="noshuffle")
            if fmt == 3
            else _numcodecs().Blosc(cname="zstd", clevel=3, shuffle=0)
        ]
    dk, bk = write_both(
        tmp_path,
        ds,
        {"time": 4, "lat": 3},
        lambda c, p: c.to_zarr(p, mode="w", zarr_format=fmt, encoding={"t": dict(enc)}),
    )
    xr.testing.assert_identical(xr.open_zarr(bk).load(), ds)
    assert_same_files(dk, bk)  # (v2's default: blosc lz4, written as C-Blosc 1.x writes it)


def _numcodecs():
    return pytest.importorskip("numcodecs")


@examples(25)
@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=3), data=st.data())
def test_to_zarr_bytes_equal_dask_hypothesis(tmp_path_factory, shape, data):
    """Random shapes, evaluation chunks = stored chunks, a NaN slab (fill value) sometimes."""
    chunks = tuple(data.draw(st.integers(1, n)) for n in shape)
    nan = data.draw(st.sampled_from([(), (0,), (slice(0, chunks[0]),)]))
    ds = dataset(tuple(shape), nan_rows=nan, dtype=data.draw(st.sampled_from(["float32", "float64"])))
    dims = ds.t.dims
    tmp = tmp_path_factory.mktemp("w")
    dk, bk = write_both(
        tmp, ds, dict(zip(dims, chunks)), lambda c, p: c.to_zarr(p, mode="w", encoding={"t": {"chunks": chunks}})
    )
    assert_same_files(dk, bk)
    np.testing.assert_array_equal(xr.open_zarr(bk).t.values, ds.t.values)


def test_derived_variable_and_groups(tmp_path):
    """The standardised anomaly (stages: mean, std) into a group, with a second variable."""
    ds = dataset((12, 5, 4))
    ref = ((ds.t - ds.t.mean("time")) / ds.t.std("time")).to_dataset(name="z")
    ref["w"] = ds.t * 2

    def write(c, p):
        z = ((c.t - c.t.mean("time")) / c.t.std("time")).to_dataset(name="z")
        z["w"] = c.t * 2
        z.to_zarr(p, mode="w", group="g/h", encoding={"z": {"chunks": (4, 5, 4)}, "w": {"chunks": (4, 5, 4)}})

    dk, bk = write_both(tmp_path, ds, {"time": 4}, write)
    got = xr.open_zarr(bk, group="g/h").load()
    xr.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    assert sorted(files(dk)) == sorted(files(bk))
    w = [k for k in files(dk) if "/w/" in k or k.endswith("zarr.json")]
    for k in w:  # elementwise: bit-equal values, so equal bytes
        assert_same_bytes(k, files(dk)[k], files(bk)[k])


@pytest.mark.parametrize("first", [4, 6])  # an append at a chunk boundary, and inside a chunk
def test_append_dim(tmp_path, first):
    ds = dataset((14, 3, 4))

    def write(c, p):
        c.isel(time=slice(0, first)).to_zarr(p, mode="w", encoding={"t": {"chunks": (4, 3, 4)}})
        c.isel(time=slice(first, 14)).to_zarr(p, mode="a", append_dim="time")

    dk, bk = write_both(tmp_path, ds, {"time": 4}, write)
    xr.testing.assert_identical(xr.open_zarr(bk).load(), ds)
    assert_same_files(dk, bk)


def test_mode_a_adds_a_variable(tmp_path):
    ds = dataset((8, 3, 4))

    def write(c, p):
        c.to_zarr(p, mode="w")
        (c.t + 1).to_dataset(name="u").to_zarr(p, mode="a")

    dk, bk = write_both(tmp_path, ds, {"time": 4}, write)
    got = xr.open_zarr(bk).load()
    np.testing.assert_array_equal(got.u.values, ds.t.values + 1)
    assert_same_files(dk, bk)


def test_region_writes_and_compute_false(tmp_path):
    ds = dataset((12, 3, 4))

    def write(c, p):
        d = c.to_zarr(p, mode="w", compute=False)  # metadata only
        assert type(d).__name__ == "Delayed"
        assert not [k for k in files(p) if k.startswith("t/c")]
        c.isel(time=slice(4, 12)).to_zarr(p, region={"time": slice(4, 12)})
        c.isel(time=slice(0, 4)).to_zarr(p, region="auto")

    dk, bk = write_both(tmp_path, ds, {"time": 4}, write)
    xr.testing.assert_identical(xr.open_zarr(bk).load(), ds)
    assert_same_files(dk, bk)


def test_compute_false_delayed_writes(tmp_path):
    ds = dataset((8, 3, 4))
    dk, bk = write_both(tmp_path, ds, {"time": 4}, lambda c, p: c.to_zarr(p, mode="w", compute=False).compute())
    xr.testing.assert_identical(xr.open_zarr(bk).load(), ds)
    assert_same_files(dk, bk)


def test_misaligned_region_refused_as_xarray_does(tmp_path):
    ds = dataset((12, 3, 4))
    c = ds.chunk({"time": 4}, chunked_array_type="b2lazy")
    p = str(tmp_path / "x.zarr")
    c.to_zarr(p, mode="w", compute=False)
    with pytest.raises(ValueError, match="safe_chunks"):
        c.isel(time=slice(1, 7)).chunk({"time": 3}, chunked_array_type="b2lazy").to_zarr(
            p, region={"time": slice(1, 7)}
        )


@examples(20)
@given(data=st.data())
def test_region_safe_chunks_false_any_alignment(tmp_path_factory, data):
    """Regions anywhere (safe_chunks=False): partial chunks merged once, values exact,
    the rest of the array kept."""
    n, c = data.draw(st.integers(2, 20)), data.draw(st.integers(1, 6))
    lo = data.draw(st.integers(0, n - 1))
    hi = data.draw(st.integers(lo + 1, n))
    ds = dataset((n, 3, 2))
    p = str(tmp_path_factory.mktemp("r") / "x.zarr")
    ds.chunk({"time": c}, chunked_array_type="b2lazy").to_zarr(p, mode="w")
    piece = (ds.isel(time=slice(lo, hi)) * 10).chunk(
        {"time": data.draw(st.integers(1, 5))}, chunked_array_type="b2lazy"
    )
    piece.drop_vars("time").to_zarr(p, region={"time": slice(lo, hi)}, safe_chunks=False)
    ref = ds.t.values.copy()
    ref[lo:hi] *= 10
    np.testing.assert_array_equal(xr.open_zarr(p).t.values, ref)


@examples(50)
@given(data=st.data())
def test_whole_chunks_box(data):
    """The box written for a region: the region's chunks, whole (the last may end at the
    array's end), nothing more."""
    nd = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.integers(1, 12)) for _ in range(nd))
    chunks = tuple(data.draw(st.integers(1, 5)) for _ in range(nd))
    place = []
    for n in shape:
        lo = data.draw(st.integers(0, n - 1))
        place.append(slice(lo, data.draw(st.integers(lo + 1, n))))
    whole = _xarray_store._whole_chunks(tuple(place), chunks, shape)
    for p, w, c, n in zip(place, whole, chunks, shape):
        assert w.start <= p.start and p.stop <= w.stop
        assert w.start % c == 0 and (w.stop % c == 0 or w.stop == n)
        assert w.start // c == p.start // c and -(-w.stop // c) == -(-p.stop // c)


def test_stored_rechunk_writes_each_chunk_once(tmp_path, monkeypatch):
    """encoding chunks unlike the evaluation's: with safe_chunks=False b2lazy writes each
    stored chunk once (the engine evaluates in the stored chunks), where Dask's
    overlapping writes may lose values."""
    ds = dataset((10, 6, 8))
    c = ds.chunk({"time": 4}, chunked_array_type="b2lazy")
    p = str(tmp_path / "x.zarr")
    seen = []
    orig = _xarray_store._store_one

    def spy(src, tgt, region, *a):
        seen.append(tuple(tgt.chunks))
        return orig(src, tgt, region, *a)

    monkeypatch.setattr(_xarray_store, "_store_one", spy)
    c.to_zarr(p, mode="w", encoding={"t": {"chunks": (3, 4, 8)}}, safe_chunks=False)
    assert seen == [(3, 4, 8)]
    np.testing.assert_array_equal(xr.open_zarr(p).t.values, ds.t.values)
    keys = sorted(k for k in files(p) if k.startswith("t/c/"))
    assert keys == [f"t/c/{i}/{j}/0" for i in range(4) for j in range(2)]


def test_partial_chunks_merged_natively(tmp_path, monkeypatch):
    """An append starting inside a chunk: that chunk is evaluated whole (old values and
    new) by the native writer like the others; nothing goes through zarr-python."""
    ds = dataset((14, 3, 4))
    c = ds.chunk({"time": 4}, chunked_array_type="b2lazy")
    p = str(tmp_path / "x.zarr")
    c.isel(time=slice(0, 6)).to_zarr(p, mode="w", encoding={"t": {"chunks": (4, 3, 4)}})
    writes = []
    orig = zarr.Array.__setitem__

    def spy(self, key, value):
        if self.path == "t":
            writes.append(key)
        return orig(self, key, value)

    monkeypatch.setattr(zarr.Array, "__setitem__", spy)
    c.isel(time=slice(6, 14)).to_zarr(p, mode="a", append_dim="time")
    assert writes == []
    np.testing.assert_array_equal(xr.open_zarr(p).t.values, ds.t.values)


def test_failed_chunk_leaves_the_array_as_it_was(tmp_path):
    """A chunk whose evaluation fails: an error naming the variable, no chunk of that write
    in place, no temporary left behind."""
    ds = dataset((12, 3, 4))
    p = str(tmp_path / "x.zarr")
    ds.chunk({"time": 4}, chunked_array_type="b2lazy").to_zarr(p, mode="w")
    before = files(p)
    src = b2lazy.asarray(ds.t.values)

    def block(inputs, out, offset):
        if offset[0] >= 8:
            raise RuntimeError("bad block")
        out[...] = inputs[0] + 1

    bad = b2lazy.lazyudf(block, [src], src.dtype, shape=src.shape, name="bad")
    d = xr.Dataset({"t": (ds.t.dims, bad)})
    with pytest.raises(Exception, match="'t'") as e:
        d.to_zarr(p, region={"time": slice(0, 12)}, mode="r+")
    assert "bad block" in str(e.value)
    assert files(p) == before


def test_other_stores_and_codecs_fall_back(tmp_path):
    """Targets b2lazy does not write itself (an in-memory store, sharded, gzip): through
    zarr-python, values equal."""
    ds = dataset((10, 6, 8))
    c = ds.chunk({"time": 4}, chunked_array_type="b2lazy")
    m = zarr.storage.MemoryStore()
    c.to_zarr(m, mode="w")
    np.testing.assert_array_equal(xr.open_zarr(m).t.values, ds.t.values)
    p = str(tmp_path / "s.zarr")
    c.to_zarr(p, mode="w", encoding={"t": {"chunks": (2, 3, 8), "shards": (4, 6, 8)}})
    np.testing.assert_array_equal(xr.open_zarr(p).t.values, ds.t.values)
    p = str(tmp_path / "g.zarr")
    c.to_zarr(p, mode="w", encoding={"t": {"compressors": [zarr.codecs.GzipCodec()]}})
    np.testing.assert_array_equal(xr.open_zarr(p).t.values, ds.t.values)


def test_native_target_detection(tmp_path):
    z = zarr.create_array(str(tmp_path / "a.zarr"), shape=(4,), chunks=(2,), dtype="f4")
    assert _xarray_store._native_zarr(z)[1:] == ("zstd:0", False)
    z = zarr.create_array(
        str(tmp_path / "b.zarr"),
        shape=(4,),
        chunks=(2,),
        dtype="f4",
        compressors=[zarr.codecs.ZstdCodec(level=3, checksum=True)],
    )
    assert _xarray_store._native_zarr(z) is None
    assert _xarray_store._native_zarr(np.zeros(3)) is None


def test_fill_value_zero_and_integers(tmp_path):
    """Chunks equal to the fill value (0, or an integer's) are left out as zarr-python does."""
    a = np.zeros((8, 4), "int16")
    a[4:] = 3
    ds = xr.Dataset({"t": (("time", "x"), a)})
    dk, bk = write_both(
        tmp_path, ds, {"time": 2}, lambda c, p: c.to_zarr(p, mode="w", encoding={"t": {"fill_value": 3}})
    )
    assert_same_files(dk, bk)
    f = dataset((8, 2)).t.values * 0
    f[:2] = -0.0  # not the fill value 0.0, bit for bit: written
    ds = xr.Dataset({"t": (("time", "x"), f)})
    dk, bk = write_both(
        tmp_path / "f", ds, {"time": 2}, lambda c, p: c.to_zarr(p, mode="w", encoding={"t": {"fill_value": 0.0}})
    )
    assert_same_files(dk, bk)


def test_store_options(tmp_path):
    ds = dataset((8, 3, 4))
    c = ds.chunk({"time": 4}, chunked_array_type="b2lazy")
    c.to_zarr(str(tmp_path / "a.zarr"), chunkmanager_store_kwargs={"max_memory": 64 << 20, "nthreads": 1})
    np.testing.assert_array_equal(xr.open_zarr(str(tmp_path / "a.zarr")).t.values, ds.t.values)
    with pytest.raises(TypeError, match="unsupported options"):
        c.to_zarr(str(tmp_path / "b.zarr"), chunkmanager_store_kwargs={"bogus": 1})


@pytest.mark.parametrize("engine", ["h5netcdf", "netcdf4"])
def test_to_netcdf(tmp_path, engine):
    pytest.importorskip(engine if engine == "h5netcdf" else "netCDF4")
    ds = dataset((12, 5, 4), nan_rows=(3,))
    ref = ((ds.t - ds.t.mean("time")) / ds.t.std("time")).to_dataset(name="z")
    c = ds.chunk({"time": 4}, chunked_array_type="b2lazy")
    z = ((c.t - c.t.mean("time")) / c.t.std("time")).to_dataset(name="z")
    assert isinstance(z.z.data, b2lazy.Array)
    enc = {
        "z": {"chunksizes": (4, 5, 4), "zlib": True}
        if engine == "netcdf4"
        else {"chunksizes": (4, 5, 4), "compression": "gzip"}
    }
    p = str(tmp_path / "z.nc")
    z.to_netcdf(p, engine=engine, encoding=enc)
    with xr.open_dataset(p, engine=engine) as got:
        xr.testing.assert_allclose(got.load(), ref, rtol=1e-5, atol=1e-6)


def test_cf_encoded_int16_bytes_equal_dask(tmp_path):
    """scale_factor / add_offset / _FillValue packing (xarray encodes the b2lazy variable
    lazily before store): the same int16 chunks as Dask's."""
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((12, 4)) * 10 + 280).astype("float32")
    a[2, 1] = np.nan
    ds = xr.Dataset(
        {"t": (("time", "x"), a)}, coords={"time": np.datetime64("2000-01-01") + np.arange(12).astype("timedelta64[D]")}
    )
    enc = {"t": {"dtype": "int16", "scale_factor": 0.01, "add_offset": 280.0, "_FillValue": -32768}}
    dk, bk = write_both(tmp_path, ds, {"time": 4}, lambda c, p: c.to_zarr(p, mode="w", encoding=enc))
    assert_same_files(dk, bk)
    np.testing.assert_allclose(xr.open_zarr(bk).t.values, a, atol=0.006)


def test_write_empty_chunks(tmp_path):
    ds = dataset((8, 3, 4), nan_rows=(0, 1, 2, 3))
    dk, bk = write_both(tmp_path, ds, {"time": 4}, lambda c, p: c.to_zarr(p, mode="w", write_empty_chunks=True))
    assert "t/c/0/0/0" in files(bk)
    assert_same_files(dk, bk)


def test_region_sink_refuses_bad_regions(tmp_path):
    z = zarr.create_array(str(tmp_path / "a.zarr"), shape=(10, 4), chunks=(4, 4), dtype="f4")
    d = os.path.abspath(str(tmp_path / "a.zarr"))
    x = b2lazy.ones((4, 4), dtype="float32")
    for url, words in [
        (f"{d}?offset=2,0&codec=zstd:0&empty=0", ["whole chunks", "(2, 0)"]),
        (f"{d}?offset=8,0&codec=zstd:0&empty=0", ["whole chunks"]),
        (f"{d}?offset=0,0&codec=blosc:lz4:5:1&empty=0", ["zstd"]),
        (f"{d}?offset=0&codec=zstd:0&empty=0", ["does not match"]),
    ]:
        with pytest.raises(ValueError) as e:
            x.compute(urlpath="zarr-region:" + url, chunks=(4, 4))
        for w in words:
            assert w in str(e.value), (w, str(e.value))
    with pytest.raises(ValueError, match="float64 values into a float32 array"):
        b2lazy.ones((4, 4)).compute(urlpath=f"zarr-region:{d}?offset=0,0&codec=zstd:0&empty=0", chunks=(4, 4))
    assert sorted(os.listdir(d)) == ["zarr.json"]
    assert z[:].sum() == 0


def test_partial_region_reads_only_the_chunks_it_covers_in_part(tmp_path):
    """What an unaligned append evaluates (the source laid over the array's old values):
    only the chunk the region covers in part is read back."""
    p = str(tmp_path / "o.zarr")
    z = zarr.create_array(p, shape=(40, 10, 10), chunks=(4, 10, 10), dtype="f4", fill_value=np.nan)
    z[:] = 1
    old = b2lazy.open("zarr:" + p)[4:40]
    new = b2lazy._assigned(old, (slice(1, 36),), b2lazy.full((35, 10, 10), 2, dtype="float32"))
    r = new.compute(urlpath=f"zarr-region:{os.path.abspath(p)}?offset=4,0,0&codec=zstd:0&empty=0", chunks=(4, 10, 10))
    assert r.stats["chunks_decompressed"]["total"] == 1
    np.testing.assert_array_equal(z[:, 0, 0], [1] * 5 + [2] * 35)


@examples(20)
@given(data=st.data())
def test_stored_rechunk_bytes_equal_dask_on_the_stored_chunks(tmp_path_factory, data):
    """Evaluation chunks unlike the stored ones (safe_chunks=False; align_chunks=True
    rechunks first): the store equals what Dask writes when its chunks are the stored ones."""
    shape = tuple(data.draw(st.integers(1, 10)) for _ in range(2))
    enc = tuple(data.draw(st.integers(1, n)) for n in shape)
    ev = tuple(data.draw(st.integers(1, n)) for n in shape)
    ds = dataset(shape)
    tmp = tmp_path_factory.mktemp("rc")
    ref = str(tmp / "dask.zarr")
    ds.chunk(dict(zip(ds.t.dims, enc))).to_zarr(ref, mode="w", encoding={"t": {"chunks": enc}})
    how = data.draw(st.sampled_from([{"safe_chunks": False}, {"align_chunks": True}]))
    got = str(tmp / "b2lazy.zarr")
    # (align_chunks rechunks with Variable.chunk(), which takes xarray's default chunk
    # manager, Dask, unless the option names b2lazy)
    with xr.set_options(chunk_manager="b2lazy"):
        ds.chunk(dict(zip(ds.t.dims, ev)), chunked_array_type="b2lazy").to_zarr(
            got, mode="w", encoding={"t": {"chunks": enc}}, **how
        )
    assert_same_files(ref, got)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float16", "complex64", "complex128"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_dtypes_bytes_equal_dask(tmp_path, dtype, fmt):
    """Every dtype, a chunk of zeros (the fill value, or v2's null one): the same files."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((9, 5)) * 3
    a = a > 0 if dtype == "bool" else (a + 1j * a if dtype.startswith("complex") else a).astype(dtype)
    a[0:4] = 0
    ds = xr.Dataset({"t": (("time", "x"), a)})
    comp = [zarr.codecs.ZstdCodec(level=1) if fmt == 3 else _numcodecs().Zstd(level=1)]
    dk, bk = write_both(
        tmp_path,
        ds,
        {"time": 4},
        lambda c, p: c.to_zarr(p, mode="w", zarr_format=fmt, encoding={"t": {"compressors": comp}}),
    )
    np.testing.assert_array_equal(xr.open_zarr(bk).t.values, a)
    assert_same_files(dk, bk)


def test_rewrite_in_place_reads_the_old_values(tmp_path):
    """A variable rewritten from its own stored values (reversed along time): every chunk
    is evaluated from the old values, as the new ones replace them only at the end."""
    ds = dataset((16, 3, 4))
    p = str(tmp_path / "x.zarr")
    ds.chunk({"time": 4}, chunked_array_type="b2lazy").to_zarr(p, mode="w")
    t = b2lazy.open("zarr:" + os.path.join(p, "t"))
    rev = xr.Dataset({"t": (ds.t.dims, t[::-1] + 1)})
    rev.to_zarr(p, mode="r+", region={"time": slice(0, 16)})
    np.testing.assert_array_equal(xr.open_zarr(p).t.values, ds.t.values[::-1] + 1)


def test_datatree_and_chunks_larger_than_the_array(tmp_path):
    ds = xr.Dataset({"t": (("time", "x"), np.arange(50, dtype="f4").reshape(10, 5))})
    tree = xr.DataTree.from_dict({"/a": ds, "/b/c": ds * 2})
    out = []
    for kind in ("dask", "b2lazy"):
        p = str(tmp_path / f"{kind}.zarr")
        tree.chunk({"time": 5}, chunked_array_type=kind).to_zarr(p, mode="w")
        ds.chunk({"time": 10}, chunked_array_type=kind).to_zarr(p, group="big", encoding={"t": {"chunks": (16, 8)}})
        out.append(p)
    assert_same_files(*out)
    xr.testing.assert_identical(xr.open_datatree(out[1], engine="zarr")["b/c"].to_dataset().load(), ds * 2)


@examples(40)
@given(data=st.data())
def test_blosc_chunks_as_c_blosc_writes_them(tmp_path_factory, data):
    """b2lazy's Blosc1 writer against numcodecs (C-Blosc 1.x): byte for byte at xarray's v2
    default (lz4, clevel 5) with and without shuffle — block sizes, split streams, leftover
    blocks, incompressible chunks copied; at other settings (compressor library versions
    may differ) the values numcodecs decodes."""
    numcodecs = _numcodecs()
    dtype = np.dtype(data.draw(st.sampled_from(["u1", "i2", "f4", "f8", "c16", "bool"])))
    n = data.draw(st.integers(1, 70000))
    kind = data.draw(st.sampled_from(["noise", "smooth", "zeros"]))
    rng = np.random.default_rng(n)
    a = {"noise": rng.standard_normal(n) * 100, "smooth": np.sin(np.arange(n) / 50) * 100, "zeros": np.zeros(n)}[
        kind
    ].astype(dtype)
    cname, clevel = data.draw(
        st.sampled_from([("lz4", 5), ("lz4", 5), ("lz4", 0), ("zstd", 3), ("zlib", 6), ("lz4hc", 9)])
    )
    shuffle = data.draw(st.booleans())
    p = str(tmp_path_factory.mktemp("bl") / "a.zarr")
    b2lazy.asarray(a).compute(
        urlpath="zarr:" + p,
        chunks=(n,),
        cparams={
            "compressor": "blosc",
            "codec": cname,
            "clevel": clevel,
            "filter": "shuffle" if shuffle else "nofilter",
        },
    )
    key = os.path.join(p, "c", "0")
    if not os.path.exists(key):  # all fill value: left out
        assert not a.any()
        return
    got = open(key, "rb").read()
    codec = numcodecs.Blosc(cname=cname, clevel=clevel, shuffle=int(shuffle))
    np.testing.assert_array_equal(np.frombuffer(codec.decode(got), dtype), a)
    if (cname, clevel) in (("lz4", 5), ("lz4", 0)):
        assert got == codec.encode(a)


@examples(15)
@given(data=st.data())
def test_to_netcdf_by_small_slabs(tmp_path_factory, data):
    """Sources with stages (anomalies) written to netCDF by many small slabs (the plan's
    stages computed once, the pages of written slabs given back): values as xarray on NumPy."""
    pytest.importorskip("h5netcdf")
    from b2lazy import _store

    shape = (data.draw(st.integers(1, 30)), data.draw(st.integers(1, 40)), data.draw(st.integers(1, 5)))
    ds = dataset(shape)
    chunk = tuple(data.draw(st.integers(1, n)) for n in shape)
    slab = data.draw(st.sampled_from([1, 4096, 10000]))
    ref = (ds.t - ds.t.mean("time")).to_dataset(name="z")
    c = ds.chunk({"time": max(1, shape[0] // 2)}, chunked_array_type="b2lazy")
    z = (c.t - c.t.mean("time")).to_dataset(name="z")
    p = str(tmp_path_factory.mktemp("nc") / "z.nc")
    old = _store.SLAB_BYTES
    _store.SLAB_BYTES = slab
    try:
        z.to_netcdf(p, engine="h5netcdf", encoding={"z": {"chunksizes": chunk}})
    finally:
        _store.SLAB_BYTES = old
    with xr.open_dataset(p, engine="h5netcdf") as got:
        np.testing.assert_allclose(got.z.values, ref.z.values, rtol=1e-5, atol=1e-5)


def test_blosc_with_a_forced_blocksize_falls_back(tmp_path):
    z = zarr.create_array(
        str(tmp_path / "a.zarr"),
        shape=(4,),
        chunks=(2,),
        dtype="f4",
        compressors=[zarr.codecs.BloscCodec(cname="lz4", clevel=5, shuffle="shuffle", blocksize=4096)],
    )
    assert _xarray_store._native_zarr(z) is None
    z = zarr.create_array(
        str(tmp_path / "b.zarr"),
        shape=(4,),
        chunks=(2,),
        dtype="f4",
        compressors=[zarr.codecs.BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")],
    )
    assert _xarray_store._native_zarr(z)[1] == "blosc:lz4:5:1"
