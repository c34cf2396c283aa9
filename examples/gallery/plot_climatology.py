"""
A climatology with xarray
=========================

xarray opens a Zarr store with ``chunked_array_type="b2lazy"``; the monthly climatology, the
anomalies against it and a standardised anomaly are one lazy b2lazy graph each, timed
against the same xarray code on Dask. The dataset is generated and small (4 years of daily
values on a 48 x 96 grid, 54 MiB of float32), so the times are short.
"""

import os
import shutil
import tempfile
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import xarray as xr

d = tempfile.mkdtemp()
store = os.path.join(d, "era.zarr")
time_ = pd.date_range("2000-01-01", periods=4 * 365, freq="D")
lat = np.linspace(-60, 60, 48)
lon = np.linspace(0, 356.25, 96)
rng = np.random.default_rng(0)
season = 8 * np.sin(2 * np.pi * time_.dayofyear.values / 365.25)
t = 15 + 10 * np.cos(np.deg2rad(lat))[None, :, None] + season[:, None, None] + rng.normal(0, 1, (len(time_), 48, 96))
coords = {"time": time_, "lat": lat, "lon": lon}
ds = xr.Dataset({"t": (("time", "lat", "lon"), t.astype("float32"))}, coords=coords)
ds.to_zarr(store, encoding={"t": {"chunks": (73, 48, 96)}}, consolidated=False)

ds_bl = xr.open_dataset(store, engine="zarr", chunks={}, chunked_array_type="b2lazy", consolidated=False)
ds_da = xr.open_dataset(store, engine="zarr", chunks={}, consolidated=False)
print(type(ds_bl.t.data).__name__, type(ds_da.t.data).__name__)

# %%
workloads = {
    "monthly climatology": lambda ds: ds.t.groupby("time.month").mean(),
    "anomaly vs climatology": lambda ds: ds.t.groupby("time.month") - ds.t.groupby("time.month").mean(),
    "standardised anomaly": lambda ds: (ds.t - ds.t.mean("time")) / ds.t.std("time"),
    "area-weighted mean": lambda ds: ds.t.weighted(np.cos(np.deg2rad(ds.lat))).mean(("lat", "lon")),
}
results = {}
for label, f in workloads.items():
    times = {}
    values = {}
    for name, ds in (("b2lazy", ds_bl), ("Dask", ds_da)):
        best = float("inf")
        for _ in range(2):
            t0 = time.perf_counter()
            values[name] = f(ds).values
            best = min(best, time.perf_counter() - t0)
        times[name] = best
    same = np.allclose(values["b2lazy"], values["Dask"], rtol=1e-5, atol=1e-4)  # float32 data
    results[label] = times
    print(f"{label:24s} b2lazy {times['b2lazy']:.3f} s  Dask {times['Dask']:.3f} s  same values: {same}")

# %%
clim = ds_bl.t.groupby("time.month").mean()
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.2))
clim.mean("lon").plot(ax=ax1, x="month", y="lat")
ax1.set_title("climatology (zonal mean)")
labels = list(results)
ypos = np.arange(len(labels))
ax2.barh(ypos - 0.2, [results[k]["Dask"] for k in labels], height=0.4, label="xarray on Dask")
ax2.barh(ypos + 0.2, [results[k]["b2lazy"] for k in labels], height=0.4, label="xarray on b2lazy")
ax2.set_yticks(ypos, labels)
ax2.invert_yaxis()
ax2.set_xlabel("seconds (best of 2)")
ax2.legend(fontsize=7)
fig.tight_layout()

shutil.rmtree(d)
