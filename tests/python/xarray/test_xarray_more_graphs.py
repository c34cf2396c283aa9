"""More graphs xarray builds on b2lazy arrays (issue #38): polyfit / polyval (namespace
functions take NumPy's out=None; lstsq of a NumPy matrix against lazy right-hand sides),
encoding to a big-endian dtype (astype(">f4"), files as Dask writes them), ffill / bfill
(a forward-fill scan carried across chunks), idxmin / idxmax, vectorized isel and
weighted(w) with lazy weights (the NaN check deferred). Each against xarray on NumPy (or
NumPy / Dask), lazy where the point is laziness: nothing evaluated before compute."""

import os
import warnings

import numpy as np
import pytest
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")

import b2lazy  # noqa: E402
from b2lazy import _core  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning:zarr")  # (consolidated-metadata notes)

NT, NY, NX = 24, 4, 5


def dataset(seed=0, nan_frac=0.0):
    rng = np.random.default_rng(seed)
    data = {}
    for name, mean in (("t", 280.0), ("u", 0.0)):
        a = (rng.standard_normal((NT, NY, NX)) * 3 + mean).astype("f4")
        if nan_frac:
            a[rng.random(a.shape) < nan_frac] = np.nan
        data[name] = (("time", "lat", "lon"), a)
    coords = {
        "time": pd.date_range("2000-01-01", periods=NT),
        "lat": np.linspace(-60, 60, NY),
        "lon": np.arange(NX) * 60.0,
    }
    return xr.Dataset(data, coords=coords)


@pytest.fixture
def evaluations(monkeypatch):
    """Counts the engine's evaluations (to_numpy, compute, a plan's stages)."""
    count = {"n": 0}
    for name in ("to_numpy", "compute", "compute_plan"):
        original = getattr(_core, name)

        def counting(*args, _original=original, **kwargs):
            count["n"] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(_core, name, counting)
    return count


def lazy_and_equal(graph, ds, chunks, evaluations, rtol=2e-5, atol=1e-4):
    ref = graph(ds)
    c = ds.chunk(chunks, chunked_array_type="b2lazy")
    with warnings.catch_warnings():
        warnings.simplefilter("error", b2lazy.EagerEvaluationWarning)
        before = evaluations["n"]
        got = graph(c)
        assert evaluations["n"] == before  # nothing evaluated while building the graph
        for v in got.data_vars.values() if isinstance(got, xr.Dataset) else [got]:
            if set(v.dims) & {"lat", "lon"}:  # (not polyfit's matrix rank, which xarray takes from NumPy)
                assert isinstance(v.data, b2lazy.Array), v.name
        got = got.compute()
    xr.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)


# --- 1. out=None, lstsq, polyfit --------------------------------------------------------------
def test_out_is_taken_where_numpy_takes_it():
    a = np.random.default_rng(0).standard_normal((4, 6))
    x = b2lazy.asarray(a, chunks=(3, 4))
    for name in ("any", "all", "sum", "mean", "max", "min", "prod", "std", "var", "argmax", "nanmax"):
        np.testing.assert_allclose(
            getattr(b2lazy, name)(x, axis=0, out=None).to_numpy(), getattr(np, name)(a, axis=0, out=None)
        )
        if hasattr(a, name):  # the methods too (NumPy's ndarray methods take out)
            np.testing.assert_allclose(getattr(x, name)(axis=0, out=None).to_numpy(), getattr(a, name)(axis=0))
    np.testing.assert_allclose(b2lazy.cumsum(x, axis=1, out=None).to_numpy(), np.cumsum(a, axis=1))
    np.testing.assert_allclose(b2lazy.add(x, x, out=None).to_numpy(), a + a)
    np.testing.assert_allclose(b2lazy.sin(x, out=None).to_numpy(), np.sin(a))
    np.testing.assert_allclose(b2lazy.clip(x, 0, 1, out=None).to_numpy(), np.clip(a, 0, 1))
    out = np.empty(6)
    assert b2lazy.sum(x, axis=0, out=out) is out  # filled and returned, as NumPy's
    np.testing.assert_allclose(out, a.sum(axis=0))
    with pytest.raises(ValueError, match="out has shape"):
        b2lazy.sum(x, axis=0, out=np.empty(3))
    with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
        b2lazy.flip(x, out=None)  # NumPy's flip takes no out either


@examples(40)
@given(
    m=st.integers(1, 9),
    n=st.integers(1, 4),
    k=st.sampled_from([None, 1, 3, (2, 3)]),
    seed=st.integers(0, 2**16),
    dtype=st.sampled_from(["f4", "f8"]),
    rcond=st.sampled_from([None, 1e-3]),
    rank_deficient=st.booleans(),
)
def test_lstsq_numpy_matrix_lazy_rhs_as_numpy(m, n, k, seed, dtype, rcond, rank_deficient):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, n))
    if rank_deficient and n > 1:
        a[:, -1] = a[:, 0]
    nd = isinstance(k, tuple)  # b flattened from an N-d array, as xarray's polyfit does
    b = rng.standard_normal((m,) if k is None else (m, *k) if nd else (m, k)).astype(dtype)
    lazy_b = b2lazy.asarray(b, chunks=(max(1, m // 2),) + b.shape[1:])
    if nd:
        b, lazy_b = b.reshape(m, -1), lazy_b.reshape(m, -1)
    ref = np.linalg.lstsq(a, b, rcond=rcond)
    with warnings.catch_warnings():
        warnings.simplefilter("error", b2lazy.EagerEvaluationWarning)
        got = np.linalg.lstsq(a, lazy_b, rcond=rcond)
    assert isinstance(got[0], b2lazy.Array) and got[0].dtype == ref[0].dtype and got[0].shape == ref[0].shape
    np.testing.assert_allclose(got[0].to_numpy(), ref[0], rtol=1e-6, atol=1e-8)
    resid = got[1].to_numpy() if isinstance(got[1], b2lazy.Array) else got[1]
    assert resid.shape == ref[1].shape and resid.dtype == ref[1].dtype
    np.testing.assert_allclose(resid, ref[1], rtol=1e-6, atol=1e-8)
    assert got[2] == ref[2]
    np.testing.assert_allclose(got[3], ref[3], rtol=1e-7, atol=1e-12 * (ref[3].max() if ref[3].size else 1))


POLY = {
    "polyfit": lambda d: d.t.polyfit("time", 2, skipna=False),
    "polyfit-lat": lambda d: d.u.polyfit("lat", 1, skipna=False),
    "polyfit-full": lambda d: d.t.polyfit("time", 1, full=True, skipna=False),
    "polyfit-cov": lambda d: d.t.polyfit("lat", 1, cov=True, skipna=False),
    "polyfit-dataset": lambda d: d.polyfit("lat", 2, skipna=False),
    "polyval": lambda d: xr.polyval(d.lat, d.t.polyfit("lat", 2, skipna=False).polyfit_coefficients),
}


@pytest.mark.parametrize("name", list(POLY))
def test_polyfit_polyval_lazy_and_equal(name, evaluations):
    # (polyfit over time scales the datetime coordinate: coefficients per nanosecond)
    lazy_and_equal(POLY[name], dataset(1), {"time": 5}, evaluations, rtol=1e-4, atol=1e-12)


def test_polyfit_with_nans_equal_to_numpy():
    """skipna=None (the default) makes xarray evaluate np.any(isnull) for any non-Dask array,
    and with NaNs it fits the NaN columns one by one into a NumPy array: equal, not lazy
    (xarray's own path; skipna=False above stays lazy)."""
    ds = dataset(2, nan_frac=0.1)
    ref = ds.t.polyfit("time", 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", b2lazy.EagerEvaluationWarning)
        got = ds.chunk({"time": 7}, chunked_array_type="b2lazy").t.polyfit("time", 1).compute()
    xr.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-12)


# --- 2. non-native byte order -----------------------------------------------------------------
def test_astype_big_endian_reports_it_and_holds_the_values():
    a = np.array([[1.5, -2.0, np.nan], [4.25, 5.0, 6.0]], dtype="f8")
    x = b2lazy.asarray(a, chunks=(1, 3))
    for dt in (">f4", ">f8", ">i4", ">u2"):
        ref = a.astype(dt) if dt[1] == "f" else np.nan_to_num(a).astype(dt)
        y = (x if dt[1] == "f" else b2lazy.asarray(np.nan_to_num(a))).astype(dt)
        assert y.dtype == np.dtype(dt)
        got = y.to_numpy()
        assert got.dtype == np.dtype(dt)
        np.testing.assert_array_equal(got, ref)
        np.testing.assert_array_equal(np.asarray(y), ref)
        np.testing.assert_array_equal((y * 2).to_numpy(), ref * 2)  # arithmetic: native, as NumPy's
        assert (y * 2).dtype == (ref * 2).dtype
    big = np.arange(6, dtype=">i4").reshape(2, 3)
    np.testing.assert_array_equal(b2lazy.asarray(big).to_numpy(), big)
    np.testing.assert_array_equal(b2lazy.asarray(big, chunks=(1, 2)).to_numpy(), big)
    with pytest.raises(ValueError, match="copy=False"):
        b2lazy.asarray(big, copy=False)


def _files(root):
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, root)] = f.read()
    return out


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("dtype", [">f4", ">f8", "<f4"])
def test_to_zarr_big_endian_as_dask_writes_it(tmp_path, zarr_format, dtype):
    pytest.importorskip("dask")
    ds = dataset(3, nan_frac=0.05)[["t"]]
    enc = {"t": {"dtype": dtype}}
    paths = {}
    for manager in ("dask", "b2lazy"):
        paths[manager] = tmp_path / f"{manager}.zarr"
        ds.chunk({"time": 5}, chunked_array_type=manager).to_zarr(
            paths[manager], encoding=enc, zarr_format=zarr_format, consolidated=False
        )
    assert _files(paths["b2lazy"]) == _files(paths["dask"])  # metadata and chunks byte for byte
    back = xr.open_zarr(paths["b2lazy"], consolidated=False)
    xr.testing.assert_equal(back.t.load(), ds.t.astype(dtype).astype("f4"))


def test_to_netcdf_big_endian_values(tmp_path):
    pytest.importorskip("netCDF4")
    ds = dataset(4)[["t"]]
    for manager in ("dask", "b2lazy"):
        pytest.importorskip(manager)
        p = tmp_path / f"{manager}.nc"
        ds.chunk({"time": 5}, chunked_array_type=manager).to_netcdf(p, encoding={"t": {"dtype": ">f4"}})
        with xr.open_dataset(p) as back:
            xr.testing.assert_equal(back.t.load(), ds.t)


# --- 4. ffill / bfill --------------------------------------------------------------------------
def _bottleneck():
    """xarray's NumPy ffill (the oracle): bottleneck 1.x."""
    return pytest.importorskip("bottleneck")


@examples(60)
@given(
    shape=st.lists(st.integers(1, 9), min_size=1, max_size=3),
    seed=st.integers(0, 2**16),
    nan_frac=st.sampled_from([0.0, 0.3, 0.8, 1.0]),
    limit=st.sampled_from([None, 0, 1, 2, 5]),
    dtype=st.sampled_from(["f4", "f8", "f2"]),
    data=st.data(),
)
def test_forward_fill_as_bottleneck_push(shape, seed, nan_frac, limit, dtype, data):
    from b2lazy._xarray_fill import forward_fill

    bn = _bottleneck()
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype(dtype)
    a[rng.random(a.shape) < nan_frac] = np.nan
    chunks = tuple(data.draw(st.integers(1, n)) for n in shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    ref = bn.push(a, n=a.shape[axis] if limit is None else limit, axis=axis)
    got = forward_fill(b2lazy.asarray(a, chunks=chunks), axis, limit)
    assert got.dtype == a.dtype
    np.testing.assert_array_equal(got.to_numpy(), ref)


def test_forward_fill_integers_and_bad_input():
    from b2lazy._xarray_fill import forward_fill

    i = b2lazy.asarray(np.arange(6))
    assert forward_fill(i, 0) is i  # nothing to fill
    with pytest.raises(ValueError, match="ffill: axis 1"):
        forward_fill(b2lazy.asarray(np.ones(3)), 1)
    with pytest.raises(ValueError, match="ffill: limit"):
        forward_fill(b2lazy.asarray(np.ones(3)), 0, -1)
    with pytest.raises(TypeError, match="complex"):
        forward_fill(b2lazy.asarray(np.ones(3, "c8")), 0)


FILLS = {
    "ffill": lambda d: d.t.ffill("time"),
    "bfill": lambda d: d.t.bfill("time"),
    "ffill-limit": lambda d: d.t.ffill("time", limit=2),
    "bfill-limit": lambda d: d.u.bfill("time", limit=1),
    "ffill-lon": lambda d: d.t.ffill("lon"),
    "dataset-ffill": lambda d: d.ffill("time", limit=3),
}


@examples(30)
@given(
    name=st.sampled_from(sorted(FILLS)),
    chunk=st.integers(1, NT),
    seed=st.integers(0, 2**16),
    nan_frac=st.sampled_from([0.1, 0.6, 0.95]),
)
def test_ffill_bfill_over_chunkings(name, chunk, seed, nan_frac, evaluations):
    _bottleneck()
    lazy_and_equal(FILLS[name], dataset(seed, nan_frac), {"time": chunk, "lon": 2}, evaluations, rtol=0, atol=0)


# --- 3. idxmin / idxmax -----------------------------------------------------------------------
IDX = {
    "idxmax-lat": lambda d: d.t.idxmax("lat"),
    "idxmin-lon": lambda d: d.t.idxmin("lon"),
    "idxmin-lon-fill": lambda d: d.u.idxmin("lon", fill_value=-1.0),
    "idxmax-lat-noskip": lambda d: d.t.idxmax("lat", skipna=False),
    "dataset-idxmax": lambda d: d.idxmax("lon"),
}


@pytest.mark.parametrize("name", list(IDX))
@pytest.mark.parametrize("chunk", [1, 5, NT])
def test_idxmin_idxmax_numeric_coordinate_lazy_and_equal(name, chunk, evaluations):
    ds = dataset(5, nan_frac=0.2)
    ds["t"][:, :, 1] = np.nan  # all-NaN lines along lat
    ds["u"][:, 2, :] = np.nan  # and along lon
    lazy_and_equal(IDX[name], ds, {"time": chunk, "lat": 3}, evaluations, rtol=0, atol=0)


@pytest.mark.parametrize(
    "graph",
    [
        lambda d: d.t.idxmax("time"),
        lambda d: d.t.idxmin("time", skipna=False),
        lambda d: d.t.idxmax("time", fill_value=np.datetime64("1999-01-01")),
    ],
)
def test_idxmax_over_datetimes_evaluates_the_argmax_only(graph):
    ds = dataset(6, nan_frac=0.2)
    ds["t"][:, 0, 0] = np.nan
    c = ds.chunk({"time": 5}, chunked_array_type="b2lazy")
    with pytest.warns(b2lazy.EagerEvaluationWarning, match="coordinate 'time' has dtype datetime64"):
        got = graph(c)
    xr.testing.assert_identical(got, graph(ds))


# --- 5. vectorized isel -----------------------------------------------------------------------
def _pts(v):
    return xr.DataArray(v, dims="pts")


VINDEX = {
    "time-lat": lambda d: d.t.isel(time=_pts([1, 5, 20, 5]), lat=_pts([0, 3, 1, 1])),
    "lat-lon": lambda d: d.t.isel(lat=_pts([0, 2, 1]), lon=_pts([4, 4, 0])),
    "2-d-indexer": lambda d: d.t.isel(
        time=xr.DataArray([[1, 2], [23, 0]], dims=("p", "q")), lon=xr.DataArray([0, 3], dims="q")
    ),
    "sel-nearest": lambda d: d.t.sel(lat=_pts([-50.0, 55.0]), lon=_pts([10.0, 170.0]), method="nearest"),
    "dataset": lambda d: d.isel(time=_pts([3, 4]), lon=_pts([1, 2])),
    "then-reduce": lambda d: d.t.isel(lat=_pts([0, 3]), lon=_pts([1, 2])).mean("time"),
}


@pytest.mark.parametrize("name", list(VINDEX))
@pytest.mark.parametrize("chunk", [1, 7, NT])
def test_vectorized_isel_lazy_and_equal(name, chunk, evaluations):
    lazy_and_equal(VINDEX[name], dataset(7), {"time": chunk, "lon": 2}, evaluations, rtol=1e-6, atol=0)


def test_vectorized_isel_by_lazy_indexers_says_what_to_do():
    c = dataset(8).chunk({"time": 5}, chunked_array_type="b2lazy")
    lazy = c.t.isel(time=0, lat=slice(0, 2)).argmax("lon").rename(lat="pts")
    with pytest.raises(TypeError, match=r"call \.compute\(\) on the indexers"):
        c.t.isel(lat=_pts([0, 1]), lon=lazy)


# --- 6. weighted with lazy weights ------------------------------------------------------------
WEIGHTED = {
    "mean": lambda d: d.t.weighted(abs(d.u)).mean(("lat", "lon")),
    "sum-time": lambda d: d.t.weighted(abs(d.u.isel(lat=0))).sum("time"),
    "std": lambda d: d.u.weighted(abs(d.t.fillna(281) - 280)).std("time"),
    "dataset": lambda d: d.weighted(abs(d.u.isel(time=0))).mean("lat"),
}


@pytest.mark.parametrize("name", list(WEIGHTED))
def test_weighted_lazy_weights_not_evaluated_until_compute(name, evaluations):
    lazy_and_equal(WEIGHTED[name], dataset(9, nan_frac=0.05).fillna({"u": 0.5}), {"time": 5}, evaluations)


def test_weighted_nan_in_lazy_weights_raises_at_compute(evaluations):
    ds = dataset(10)
    w = ds.u.isel(time=0).where(ds.u.isel(time=0) > 0)  # NaN where u <= 0
    with pytest.raises(ValueError, match="weights` cannot contain missing values"):
        ds.t.weighted(w)
    c = ds.chunk({"time": 5}, chunked_array_type="b2lazy")
    cw = c.u.isel(time=0).where(c.u.isel(time=0) > 0)
    before = evaluations["n"]
    lazy = c.t.weighted(cw).mean("lat")  # deferred, as with Dask
    assert evaluations["n"] == before
    with pytest.raises(ValueError, match="weights` cannot contain missing values"):
        lazy.compute()
    ok = c.t.weighted(cw.fillna(0)).mean("lat").compute()
    xr.testing.assert_allclose(ok, ds.t.weighted(w.fillna(0)).mean("lat"), rtol=2e-5)
