"""xarray's groupby, resample, groupby arithmetic and coarsen on b2lazy-backed objects:
plain xarray code, lazy results, one segment_reduce node per reduction, values equal to
xarray on NumPy (float32 tolerance), over random chunkings and group layouts."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

xr = pytest.importorskip("xarray")
import b2lazy as bl  # noqa: E402


def arrays(n, chunks, nan=0.1, seed=0, start="2000-01-01", freq="D", ny=4, nx=3):
    """(numpy-backed, b2lazy-backed) DataArrays t(time, lat, lon), float32 with NaNs."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((n, ny, nx)) * 5 + 280).astype(np.float32)
    x[rng.random(x.shape) < nan] = np.nan
    coords = {
        "time": pd.date_range(start, periods=n, freq=freq),
        "lat": np.linspace(-60, 60, ny),
        "lon": np.arange(nx) * 10.0,
        "aux": ("time", np.arange(n)),
    }
    tn = xr.DataArray(x, dims=("time", "lat", "lon"), coords=coords, name="t", attrs={"units": "K"})
    return tn, tn.copy(data=bl.asarray(x, chunks=chunks))


def same(got, want):
    assert isinstance(got.data, bl.Array), type(got.data)  # still lazy
    xr.testing.assert_allclose(got.compute(), want, rtol=2e-5, atol=1e-4)
    assert got.dims == want.dims and got.dtype == want.dtype, (got.dims, want.dims, got.dtype, want.dtype)
    assert got.attrs == want.attrs


def segment_nodes(a):
    """segment_reduce nodes in the plan's tree."""
    return a.data.explain().split("tree (")[1].split("computed once (several")[0].count("segment_reduce(")


GROUPINGS = [
    lambda a: a.groupby("time.month"),
    lambda a: a.groupby("time.season"),
    lambda a: a.groupby("time.dayofyear"),
    lambda a: a.resample(time="1D"),
    lambda a: a.resample(time="1MS"),
    lambda a: a.resample(time="7D"),
    lambda a: a.resample(time="3D"),
    lambda a: a.groupby_bins("aux", [5, 40, 41, 60, 200]),
]  # aux <= 5: dropped (-1); (41, 60] sometimes empty
REDUCTIONS = [
    lambda g: g.mean(),
    lambda g: g.sum(),
    lambda g: g.min(),
    lambda g: g.max(),
    lambda g: g.std(),
    lambda g: g.var(ddof=1),
    lambda g: g.count(),
    lambda g: g.prod(),
    lambda g: g.median(),
    lambda g: g.first(),
    lambda g: g.last(),
    lambda g: g.mean(skipna=False),
    lambda g: g.sum(min_count=3),
    lambda g: g.first(skipna=False),
    lambda g: g.any(),
    lambda g: g.all(),
]


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 120),
    start=st.sampled_from(["2000-01-01", "2001-02-27", "2003-12-30"]),
    freq=st.sampled_from(["D", "6h", "2D"]),
    tchunk=st.integers(1, 40),
    ychunk=st.integers(1, 4),
    grouping=st.integers(0, len(GROUPINGS) - 1),
    reduction=st.integers(0, len(REDUCTIONS) - 1),
    nan=st.sampled_from([0.0, 0.2]),
)
def test_groupby_reductions_equal_xarray_on_numpy(n, start, freq, tchunk, ychunk, grouping, reduction, nan):
    tn, tb = arrays(n, (tchunk, ychunk, 3), nan=nan, start=start, freq=freq)
    g, r = GROUPINGS[grouping], REDUCTIONS[reduction]
    if reduction in (14, 15):  # any / all of bool data
        tn, tb = tn > 280, tb > 280
    try:
        want = r(g(tn))
    except Exception as e:  # what xarray refuses, b2lazy refuses too
        with pytest.raises(type(e)):
            r(g(tb))
        return
    same(r(g(tb)), want)


def test_one_segment_node_per_reduction():
    tn, tb = arrays(400, (24, 4, 3))
    for g in GROUPINGS[:-1]:
        got = g(tb).mean()
        assert segment_nodes(got) == 1, got.data.explain()
        same(got, g(tn).mean())


@pytest.mark.parametrize("grouping", ["time.month", "time.season"])
def test_anomaly_is_one_lazy_plan(grouping):
    tn, tb = arrays(400, (24, 4, 3))
    got = tb.groupby(grouping) - tb.groupby(grouping).mean()
    want = tn.groupby(grouping) - tn.groupby(grouping).mean()
    same(got, want)
    text = got.data.explain()
    assert segment_nodes(got) == 1  # one plan: t - take(clim, codes), the climatology kept once
    assert "segment_reduce(nanmean" in text.split("computed once (several")[1]
    standardized = (tb.groupby(grouping) - tb.groupby(grouping).mean()).groupby(grouping) / tb.groupby(grouping).std()
    same(
        standardized,
        (tn.groupby(grouping) - tn.groupby(grouping).mean()).groupby(grouping) / tn.groupby(grouping).std(),
    )


def test_anomaly_from_an_in_memory_climatology():
    """xarray chunks an in-memory `other` with its default chunk manager (Dask); for a
    b2lazy-backed object it becomes a b2lazy array: one lazy b2lazy graph, both ways."""
    tn, tb = arrays(100, (10, 4, 3))
    clim = tn.groupby("time.month").mean()
    same(tb.groupby("time.month") - clim, tn.groupby("time.month") - clim)
    same(clim - tb.groupby("time.month"), clim - tn.groupby("time.month"))


def test_climatology_reads_each_chunk_once(tmp_path):
    tn, _ = arrays(730, (24, 4, 3), nan=0.0)
    p = tmp_path / "t.b2nd"
    bl.asarray(tn.values).compute(urlpath=str(p), chunks=(24, 4, 3), blocks=(24, 4, 3))
    tb = tn.copy(data=bl.open(p))
    clim = tb.groupby("time.month").mean()
    r = clim.data.compute()
    assert r.stats["chunks_decompressed"]["total"] == -(-730 // 24)
    np.testing.assert_allclose(r.to_numpy(), tn.groupby("time.month").mean().values, rtol=1e-5)
    anom = (tb.groupby("time.month") - clim).data.compute()
    assert anom.stats["chunks_decompressed"]["total"] <= 2 * -(-730 // 24)


def test_coarsen_stays_lazy():
    tn, tb = arrays(50, (8, 2, 3))
    same(tb.coarsen(time=4, lat=2, boundary="trim").mean(), tn.coarsen(time=4, lat=2, boundary="trim").mean())
    same(tb.coarsen(time=5).max(), tn.coarsen(time=5).max())


def test_dataset_and_other_dims():
    tn, tb = arrays(100, (10, 4, 3))
    dsn, dsb = xr.Dataset({"t": tn, "u": tn * 2}), xr.Dataset({"t": tb, "u": tb * 2})
    got, want = dsb.groupby("time.month").mean(), dsn.groupby("time.month").mean()
    assert all(segment_nodes(v) == 1 for v in got.data_vars.values())
    xr.testing.assert_allclose(got.compute(), want, rtol=2e-5)
    xr.testing.assert_allclose(dsb.resample(time="1MS").max().compute(), dsn.resample(time="1MS").max())
    label = xr.DataArray(np.array(["a", "b"] * 50), dims="time")  # non-numeric: dropped by mean
    got = dsb.assign(label=label).groupby("time.month").mean()
    assert segment_nodes(got.t) == 1
    xr.testing.assert_allclose(got.compute(), dsn.assign(label=label).groupby("time.month").mean(), rtol=2e-5)
    # the grouped dimension not first
    tbt, tnt = tb.transpose("lat", "time", "lon"), tn.transpose("lat", "time", "lon")
    same(tbt.groupby("time.month").var(ddof=1), tnt.groupby("time.month").var(ddof=1))
    same(tbt.resample(time="5D").last(), tnt.resample(time="5D").last())
    # reductions over more than the grouped dimension: xarray's own per-group path
    xr.testing.assert_allclose(
        tb.groupby("time.month").mean(["time", "lat"]).compute(),
        tn.groupby("time.month").mean(["time", "lat"]),
        rtol=2e-5,
    )
    xr.testing.assert_allclose(tb.groupby("lat").mean().compute(), tn.groupby("lat").mean(), rtol=2e-5)


def test_other_array_types_keep_xarray_reduce():
    """The hook sends only b2lazy-backed objects to segment_reduce."""
    from xarray.core.groupby import DataArrayGroupByBase

    tn, tb = arrays(60, (10, 4, 3))
    tb.groupby("time.month").mean()  # (the hook is installed by now)
    calls = []
    original = DataArrayGroupByBase.reduce.__wrapped__

    def spy(self, *a, **k):
        calls.append(type(self._obj.data).__name__)
        return original(self, *a, **k)

    try:
        import b2lazy._groupby as G

        wrapper = DataArrayGroupByBase.reduce
        assert wrapper.__kwdefaults__["_original"] is original
        wrapper.__kwdefaults__["_original"] = spy
        tn.groupby("time.month").mean()
        tb.groupby("time.month").mean()
        assert calls == ["ndarray"]
        dask = pytest.importorskip("dask.array")
        td = tn.chunk({"time": 10})
        got = td.groupby("time.month").mean()
        assert isinstance(got.data, dask.Array) and calls == ["ndarray", "Array"]
        xr.testing.assert_allclose(got.compute(), tn.groupby("time.month").mean())
        assert G._installed
    finally:
        wrapper.__kwdefaults__["_original"] = original


@pytest.mark.parametrize("first", ["b2lazy", "xarray"])
def test_hook_whatever_the_import_order(first):
    """b2lazy imported before xarray (the chunk manager never loaded) or after it."""
    import subprocess
    import sys

    other = "xarray" if first == "b2lazy" else "b2lazy"
    code = (
        f"import {first}, {other}\nimport numpy as np, pandas as pd, xarray as xr, b2lazy as bl\n"
        "t = xr.DataArray(bl.asarray(np.ones((60, 3), np.float32)), dims=('time', 'x'),\n"
        "                 coords={'time': pd.date_range('2000-01-01', periods=60)})\n"
        "m = t.groupby('time.month').mean()\n"
        "assert 'segment_reduce(' in m.data.explain(), m.data.explain()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
