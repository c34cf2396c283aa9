"""The graphs xarray builds on b2lazy arrays (issue #38, item 3): where, isnull/notnull
masks, astype, transpose, isel/sel, concat/stack/broadcast_like, weighted, std/var/mean as
xarray emits them (skipna, ddof), quantile (q by keyword), differentiate (gradient),
cov/corr, round, real/imag/conj — each stays a lazy b2lazy graph (no
EagerEvaluationWarning: made an error here) and equals xarray on NumPy, over random time
chunkings and NaN layouts."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")

import b2lazy  # noqa: E402

NT, NY, NX = 40, 5, 6


def dataset(seed=0, nan_frac=0.0, dtype="f4"):
    rng = np.random.default_rng(seed)
    data = {}
    for name, mean in (("t", 280.0), ("u", 0.0), ("v", 1.0)):
        a = (rng.standard_normal((NT, NY, NX)) * 3 + mean).astype(dtype)
        if nan_frac:
            a[rng.random(a.shape) < nan_frac] = np.nan
        data[name] = (("time", "lat", "lon"), a)
    coords = {
        "time": pd.date_range("2000-01-01", periods=NT),
        "lat": np.linspace(-60, 60, NY),
        "lon": np.arange(NX) * 60.0,
    }
    return xr.Dataset(data, coords=coords)


GRAPHS = {
    "where": lambda d: d.t.where(d.t > 280),
    "where-other": lambda d: d.t.where(d.t > 280, 0.0),
    "xr.where": lambda d: xr.where(d.u > 0, d.u, d.v),
    "isnull-sum": lambda d: d.t.isnull().sum("time"),
    "notnull": lambda d: d.t.notnull(),
    "count": lambda d: d.t.count("time"),
    "fillna": lambda d: d.t.fillna(0),
    "astype": lambda d: d.t.astype("f8"),
    "transpose": lambda d: d.t.transpose("lon", "lat", "time"),
    "isel-slices": lambda d: d.t.isel(time=slice(3, 35, 2), lat=slice(1, 4)),
    "isel-int-array": lambda d: d.t.isel(time=[1, 5, 30, 3]),
    "isel-two-arrays": lambda d: d.t.isel(time=[1, 5, 30], lon=[0, 3]),
    "sel-slices": lambda d: d.t.sel(lat=slice(-30, 30), lon=slice(0, 180)),
    "concat": lambda d: xr.concat([d.t.isel(time=slice(0, 17)), d.t.isel(time=slice(17, None))], "time"),
    "stack": lambda d: d.t.stack(space=("lat", "lon")),
    "unstack": lambda d: d.u.stack(space=("lat", "lon")).unstack("space"),
    "broadcast_like": lambda d: d.t.mean("time").broadcast_like(d.t),
    "weighted-mean": lambda d: d.t.weighted(np.cos(np.deg2rad(d.lat))).mean(("lat", "lon")),
    "weighted-sum-time": lambda d: d.u.weighted(abs(d.v).fillna(0)).sum("time"),
    "std": lambda d: d.t.std("time"),
    "std-ddof1": lambda d: d.t.std("time", ddof=1),
    "var-noskip": lambda d: d.t.var("time", skipna=False),
    "mean-skipna": lambda d: d.t.mean("time", skipna=True),
    "mean-noskip": lambda d: d.t.mean("time", skipna=False),
    "sum-min_count": lambda d: d.t.sum("time", min_count=30),
    "anomaly-std": lambda d: (d.t - d.t.mean("time")).std("time"),
    "covariance": lambda d: ((d.u - d.u.mean("time")) * (d.v - d.v.mean("time"))).mean("time"),
    "xr.cov": lambda d: xr.cov(d.u, d.v, dim="time"),
    "xr.corr": lambda d: xr.corr(d.u, d.v, dim="time"),
    "quantile": lambda d: d.t.quantile([0.1, 0.5], dim="time"),
    "quantile-noskip": lambda d: d.u.quantile(0.9, dim="time", skipna=False),
    "differentiate-lat": lambda d: d.t.differentiate("lat"),
    "differentiate-time": lambda d: d.u.differentiate("time", edge_order=2),
    "round": lambda d: d.t.round(1),
    "round-negative": lambda d: d.t.round(-1),
    "conj": lambda d: d.u.conj(),
    "real-imag": lambda d: d.u.real + d.u.imag,
}


def check(graph, ds, chunk):
    ref = graph(ds)
    c = ds.chunk({"time": chunk}, chunked_array_type="b2lazy")
    with warnings.catch_warnings():
        warnings.simplefilter("error", b2lazy.EagerEvaluationWarning)
        got = graph(c)
        assert isinstance(got.data, b2lazy.Array)  # lazy: a b2lazy graph, nothing computed
        got = got.compute()
    assert isinstance(got.data, np.ndarray)
    xr.testing.assert_allclose(got, ref, rtol=2e-5, atol=1e-4)


@pytest.mark.parametrize("name", list(GRAPHS))
def test_graph_lazy_and_equal(name):
    check(GRAPHS[name], dataset(nan_frac=0.05), chunk=8)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(GRAPHS)),
    chunk=st.integers(1, NT),
    seed=st.integers(0, 2**16),
    nan_frac=st.sampled_from([0.0, 0.02, 0.5]),
)
def test_graph_over_chunkings_and_nans(name, chunk, seed, nan_frac):
    check(GRAPHS[name], dataset(seed, nan_frac), chunk)


def test_round_as_numpy():
    a = np.array([1.25, -0.35, 1234.5, 2.5, -2.5, 0.125, 1e20, np.nan, np.inf], dtype="f8")
    x = b2lazy.asarray(a)
    for d in (-3, -1, 0, 1, 2, 3):
        np.testing.assert_array_equal(x.round(d).to_numpy(), a.round(d))  # bit for bit, NaN/inf kept
    f = a.astype("f4")
    np.testing.assert_array_equal(b2lazy.asarray(f).round(2).to_numpy(), f.round(2))
    assert b2lazy.asarray(f).round(2).dtype == np.float32
    i = np.array([15, -25, 7])
    np.testing.assert_array_equal(b2lazy.asarray(i).round(2).to_numpy(), i.round(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", b2lazy.EagerEvaluationWarning)
        np.testing.assert_array_equal(np.round(b2lazy.asarray(i), 2).to_numpy(), np.round(i, 2))
        np.testing.assert_array_equal(np.round(x, 1).to_numpy(), np.round(a, 1))
    with pytest.raises(NotImplementedError, match="Array.round: decimals=-1 on int64"):
        b2lazy.asarray(i).round(-1)
    with pytest.raises(TypeError, match="Array.round: decimals must be an int"):
        x.round(1.5)
    with pytest.raises(TypeError, match="Array.round: out="):
        x.round(1, out=np.empty(9))


def test_complex_parts_and_conjugate():
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((6, 4)) + 1j * rng.standard_normal((6, 4))).astype("c8")
    x = b2lazy.asarray(a, chunks=(2, 4))
    np.testing.assert_array_equal(x.real.to_numpy(), a.real)
    np.testing.assert_array_equal(x.imag.to_numpy(), a.imag)
    np.testing.assert_array_equal(x.conj().to_numpy(), a.conj())
    np.testing.assert_array_equal(x.conjugate().to_numpy(), a.conjugate())
    da = xr.DataArray(a, dims=("time", "x"))
    c = da.chunk({"time": 2}, chunked_array_type="b2lazy")
    xr.testing.assert_allclose(xr.cov(c, c.conj(), dim="time").compute(), xr.cov(da, da.conj(), dim="time"))


def test_argsort_as_numpy():
    a = np.array([[3, 1, 2, 1], [0, 0, -1, 5]])
    x = b2lazy.asarray(a)
    np.testing.assert_array_equal(x.argsort().to_numpy(), a.argsort(kind="stable"))
    np.testing.assert_array_equal(x.argsort(axis=0).to_numpy(), a.argsort(axis=0, kind="stable"))
    np.testing.assert_array_equal(x.argsort(axis=None).to_numpy(), a.argsort(axis=None, kind="stable"))
    da = xr.DataArray(a[0], dims="x")
    xr.testing.assert_equal(da.chunk(chunked_array_type="b2lazy").argsort().compute(), da.argsort())
    with pytest.raises(ValueError, match="Array.argsort: kind"):
        x.argsort(kind="bogus")


def test_quantile_q_by_keyword_as_numpy():
    a = np.random.default_rng(2).standard_normal((9, 4))
    a[1, 2] = np.nan
    x = b2lazy.asarray(a, chunks=(3, 4))
    for name in ("quantile", "nanquantile", "percentile", "nanpercentile"):
        q = [10, 50] if "percentile" in name else [0.1, 0.5]
        got = getattr(b2lazy, name)(x, q=q, axis=0).to_numpy()
        np.testing.assert_allclose(got, getattr(np, name)(a, q=q, axis=0), equal_nan=True)
        np.testing.assert_allclose(
            getattr(b2lazy, name)(x, q, 0).to_numpy(), getattr(np, name)(a, q, 0), equal_nan=True
        )


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 7), min_size=1, max_size=3),
    seed=st.integers(0, 2**16),
    edge_order=st.sampled_from([1, 2]),
    dtype=st.sampled_from(["f8", "f4", "i8"]),
    spacing=st.sampled_from(["none", "scalar", "coords", "uniform-coords"]),
    data=st.data(),
)
def test_gradient_as_numpy(shape, seed, edge_order, dtype, spacing, data):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * 10).astype(dtype)
    chunks = tuple(data.draw(st.integers(1, n)) for n in shape)
    x = b2lazy.asarray(a, chunks=chunks)
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    axes = list(range(len(shape))) if axis is None else [axis % len(shape)]
    args = {
        "none": [],
        "scalar": [0.5],
        "coords": [np.cumsum(rng.uniform(0.1, 2.0, shape[ax])) for ax in axes],
        "uniform-coords": [np.arange(shape[ax]) * 3.0 for ax in axes],
    }[spacing]
    if min(shape[ax] for ax in axes) < edge_order + 1:
        with pytest.raises((ValueError, IndexError)):  # NumPy's IndexError on 1 coordinate
            np.gradient(a, *args, axis=axis, edge_order=edge_order)
        with pytest.raises(ValueError, match="gradient: axis"):
            b2lazy.gradient(x, *args, axis=axis, edge_order=edge_order)
        return
    ref = np.gradient(a, *args, axis=axis, edge_order=edge_order)
    got = b2lazy.gradient(x, *args, axis=axis, edge_order=edge_order)
    via_numpy = np.gradient(x, *args, axis=axis, edge_order=edge_order)  # the protocol, lazy too
    ref = list(ref) if isinstance(ref, (list, tuple)) else [ref]
    for g in (got, via_numpy):
        g = list(g) if isinstance(g, tuple) else [g]
        assert len(g) == len(ref)
        for gi, ri in zip(g, ref):
            assert isinstance(gi, b2lazy.Array) and gi.dtype == ri.dtype
            tol = 1e-4 if dtype == "f4" else 1e-10
            np.testing.assert_allclose(gi.to_numpy(), ri, rtol=tol, atol=tol * 10)


def test_gradient_bad_input():
    x = b2lazy.asarray(np.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError, match="gradient: edge_order"):
        b2lazy.gradient(x, edge_order=3)
    with pytest.raises(ValueError, match="gradient: axis 2 is out of bounds"):
        b2lazy.gradient(x, axis=2)
    with pytest.raises(TypeError, match="gradient: give no spacing, one scalar, or one per axis"):
        b2lazy.gradient(x, [0, 1], [0, 1, 2], [1])
    with pytest.raises(ValueError, match="gradient: coordinates of length 2 for axis 1"):
        b2lazy.gradient(x, [0.0, 1.0], axis=1)
    with pytest.raises(ValueError, match="at least one dimension"):
        b2lazy.gradient(b2lazy.asarray(1.0))
