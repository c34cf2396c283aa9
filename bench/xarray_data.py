"""A reanalysis-like dataset for the xarray benchmarks and tests: float32 variables t, u, v
of shape (time, lat 181, lon 360), daily from 2000-01-01, in Zarr v3 chunked (24, 181, 360)
(zarr-python's default codecs: zstd) and, on request, in netCDF4 (HDF5, zlib level 1, the
same chunks). Written a chunk at a time, so generating the 4.5 GiB one needs little memory.

    python bench/xarray_data.py DIR [--years 4] [--netcdf]   # DIR/era-4y.zarr (and .nc)
"""

from __future__ import annotations

import argparse
import os

import numpy as np

NLAT, NLON, CHUNK = 181, 360, 24


def _field(name, start, n, rng):
    """`n` days from day `start` of variable `name`: a smooth seasonal and spatial pattern
    plus weather noise (so it compresses like real data, not like zeros or pure noise)."""
    day = np.arange(start, start + n, dtype="f4")[:, None, None]
    lat = np.linspace(-90, 90, NLAT, dtype="f4")[None, :, None]
    lon = np.linspace(0, 359, NLON, dtype="f4")[None, None, :]
    season = np.cos(2 * np.pi * day / 365.25)
    base = {
        "t": 288 - 40 * np.abs(np.sin(np.radians(lat))) + 10 * season * np.sin(np.radians(lat)),
        "u": 10 * np.cos(np.radians(2 * lat)) + 3 * season,
        "v": 2 * np.sin(np.radians(lon)) * np.cos(np.radians(lat)),
    }[name]
    noise = rng.standard_normal((n, NLAT, NLON), dtype="f4") * {"t": 2.0, "u": 4.0, "v": 3.0}[name]
    return (base + noise).astype("f4")


def dataset(ntime, chunk=CHUNK):
    """An empty-data xarray Dataset skeleton (coordinates and attributes) of `ntime` days."""
    import pandas as pd
    import xarray as xr

    time = pd.date_range("2000-01-01", periods=ntime, freq="D")
    coords = {"time": time, "lat": np.linspace(-90, 90, NLAT), "lon": np.linspace(0, 359, NLON)}
    import dask.array as da

    vars_ = {
        v: (
            ("time", "lat", "lon"),
            da.zeros((ntime, NLAT, NLON), dtype="f4", chunks=(chunk, NLAT, NLON)),
            {"units": {"t": "K", "u": "m s-1", "v": "m s-1"}[v]},
        )
        for v in "tuv"
    }
    return xr.Dataset(vars_, coords=coords)


def write_zarr(path, ntime, seed=0):
    """DIR/era.zarr: metadata first (xarray, compute=False), then the chunks one by one."""
    import zarr

    dataset(ntime).to_zarr(path, compute=False, zarr_format=3, consolidated=False, mode="w")
    group = zarr.open_group(path, mode="r+")
    rng = np.random.default_rng(seed)
    for v in "tuv":
        arr = group[v]
        for s in range(0, ntime, CHUNK):
            n = min(CHUNK, ntime - s)
            arr[s : s + n] = _field(v, s, n, rng)
    zarr.consolidate_metadata(path)


def write_netcdf(path, ntime, seed=0):
    """The same values in netCDF4 (through netCDF4-python), chunked as the Zarr store, zlib 1."""
    import netCDF4
    import pandas as pd

    rng = np.random.default_rng(seed)
    with netCDF4.Dataset(path, "w") as nc:
        nc.createDimension("time", ntime)
        nc.createDimension("lat", NLAT)
        nc.createDimension("lon", NLON)
        t = nc.createVariable("time", "i8", ("time",))
        t.units = "days since 2000-01-01"
        t.calendar = "proleptic_gregorian"
        t[:] = np.arange(ntime)
        nc.createVariable("lat", "f8", ("lat",))[:] = np.linspace(-90, 90, NLAT)
        nc.createVariable("lon", "f8", ("lon",))[:] = np.linspace(0, 359, NLON)
        for v in "tuv":
            var = nc.createVariable(
                v, "f4", ("time", "lat", "lon"), chunksizes=(CHUNK, NLAT, NLON), zlib=True, complevel=1
            )
            var.units = {"t": "K", "u": "m s-1", "v": "m s-1"}[v]
            for s in range(0, ntime, CHUNK):
                n = min(CHUNK, ntime - s)
                var[s : s + n] = _field(v, s, n, rng)
    del pd


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--years", type=int, default=4)
    ap.add_argument("--netcdf", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    ntime = 365 * args.years
    zpath = os.path.join(args.dir, f"era-{args.years}y.zarr")
    if not os.path.exists(os.path.join(zpath, "zarr.json")):
        write_zarr(zpath, ntime)
    if args.netcdf:
        npath = os.path.join(args.dir, f"era-{args.years}y.nc")
        if not os.path.exists(npath):
            write_netcdf(npath, ntime)


if __name__ == "__main__":
    main()
