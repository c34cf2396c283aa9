"""Zarr stores written by zarr-python (the oracle) for the format tests: every codec b2lazy
reads, in v2 and v3, and the NumPy values they hold."""

import numcodecs
import numpy as np
import zarr
from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec, TransposeCodec, ZstdCodec

# Every dtype b2lazy has.
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]


def values(shape, dtype, seed=0):
    """Data that compresses like real data: smooth plus noise (random bits for integers)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dt == np.bool_:
        return rng.random(shape) < 0.3
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    x = np.sin(np.arange(n, dtype=np.float64) * 0.01).reshape(shape) + 0.01 * rng.standard_normal(shape)
    return x.astype(dt)


# v3 codec chains: name -> keyword arguments of zarr.create_array.
V3_CODECS = {
    "bytes": dict(compressors=None),
    "bytes-big": dict(serializer=BytesCodec(endian="big"), compressors=None),
    "blosc-zstd-shuffle": dict(compressors=BloscCodec(cname="zstd", clevel=3, shuffle="shuffle")),
    "blosc-lz4-bitshuffle": dict(compressors=BloscCodec(cname="lz4", clevel=5, shuffle="bitshuffle")),
    "blosc-blosclz-noshuffle": dict(compressors=BloscCodec(cname="blosclz", clevel=5, shuffle="noshuffle")),
    "blosc-zlib": dict(compressors=BloscCodec(cname="zlib", clevel=5, shuffle="shuffle")),
    "zstd": dict(compressors=ZstdCodec(level=3)),
    "zstd-checksum": dict(compressors=ZstdCodec(level=1, checksum=True)),
    "gzip": dict(compressors=GzipCodec(level=5)),
    "crc32c": dict(compressors=[ZstdCodec(level=1), Crc32cCodec()]),
    "transpose-big-gzip": dict(filters="reverse-axes", serializer=BytesCodec(endian="big"), compressors=GzipCodec()),
}

# v2 compressors (and order / byte order): name -> keyword arguments.
V2_CODECS = {
    "none": dict(compressors=None),
    "blosc": dict(compressors=numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.SHUFFLE)),
    "blosc-lz4-bitshuffle": dict(compressors=numcodecs.Blosc(cname="lz4", shuffle=numcodecs.Blosc.BITSHUFFLE)),
    "zstd": dict(compressors=numcodecs.Zstd(level=3)),
    "zlib": dict(compressors=numcodecs.Zlib(level=5)),
    "gzip": dict(compressors=numcodecs.GZip(level=5)),
    "lz4": dict(compressors=numcodecs.LZ4()),
    "order-F-big": dict(compressors=numcodecs.Zstd(level=1), order="F", big=True),
    "nested-keys": dict(compressors=numcodecs.Zlib(), chunk_key_encoding={"name": "v2", "separator": "/"}),
}


def write(path, data, chunks, fmt=3, codec=None, shards=None, fill_value=None, written=None, **kw):
    """A store at `path` holding `data` (chunks, shards, codec by name); with `written`
    (a tuple of slices), only that part is written and the rest stays the fill value.
    Returns what zarr-python reads back (the oracle's own view)."""
    kw = dict(kw)
    kw.update((V3_CODECS if fmt == 3 else V2_CODECS)[codec or ("bytes" if fmt == 3 else "none")])
    dtype = data.dtype
    if kw.pop("big", False) and dtype.itemsize > 1:
        dtype = dtype.newbyteorder(">")
    if kw.get("filters") == "reverse-axes":
        kw["filters"] = [TransposeCodec(order=tuple(reversed(range(data.ndim))))] if data.ndim > 1 else []
    z = zarr.create_array(
        str(path),
        shape=data.shape,
        chunks=chunks,
        shards=shards,
        dtype=dtype,
        fill_value=fill_value,
        zarr_format=fmt,
        overwrite=True,
        **kw,
    )
    if written is None:
        z[...] = data
    else:
        z[written] = data[written]
    return zarr.open_array(str(path), mode="r")[...]


def sharded(path, data, chunks, shards, inner_codecs=None, index_location="end", fill_value=None):
    """A v3 store with sharding_indexed (inner codecs and index location chosen)."""
    codec = ShardingCodec(
        chunk_shape=chunks,
        codecs=inner_codecs or [BytesCodec(), BloscCodec(cname="zstd")],
        index_location=index_location,
    )
    z = zarr.create_array(
        str(path),
        shape=data.shape,
        chunks=shards,
        dtype=data.dtype,
        serializer=codec,
        compressors=None,
        fill_value=fill_value,
        zarr_format=3,
        overwrite=True,
    )
    z[...] = data
    return zarr.open_array(str(path), mode="r")[...]
