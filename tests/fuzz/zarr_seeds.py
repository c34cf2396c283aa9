"""Seeds for the Zarr and .b2z fuzzers: chunks, shards and zips that zarr-python,
numcodecs, python-blosc2 and Python's zipfile wrote.

    python tests/fuzz/zarr_seeds.py codecs DIR   # fuzz_zarr_codecs: chain byte, geometry byte, chunk
    python tests/fuzz/zarr_seeds.py shards DIR   # fuzz_zarr_shard: layout byte, geometry byte, shard
    python tests/fuzz/zarr_seeds.py b2z DIR      # fuzz_b2z_members, fuzz_b2z_files: zips

The tables below follow those of tests/fuzz/fuzz_zarr_codecs.cpp and fuzz_zarr_shard.cpp
(their order is the choice byte).
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
import zipfile

import numcodecs
import numpy as np
import zarr
from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec, TransposeCodec, ZstdCodec

warnings.simplefilter("ignore")

# fuzz_zarr_codecs.cpp's chains: (compressors, transpose, big-endian); "lz4" is v2's.
CHAINS = [
    [],
    ["blosc"],
    ["zstd"],
    ["gzip"],
    "lz4",
    ["zstd", "crc32c"],
    ["zstd", "blosc"],
    ["blosc", "zstd"],
    ["zstd", "gzip"],
    ["blosc", "zstd", "crc32c"],
    (["blosc"], True, False),
    (["zstd"], False, True),
    (["gzip"], True, True),
]
GEOMETRIES = [
    ((64,), "f8"),
    ((8, 8), "f8"),
    ((1000,), "i4"),
    ((3, 5, 7), "u2"),
    ((16, 16), "u1"),
    ((), "f8"),
    ((4, 4), "c16"),
    ((0,), "f4"),
]
CODECS = {
    "blosc": lambda: BloscCodec(cname="lz4"),
    "zstd": lambda: ZstdCodec(),
    "gzip": lambda: GzipCodec(),
    "crc32c": lambda: Crc32cCodec(),
}

# fuzz_zarr_shard.cpp's layouts: (inner compressors, index at the end, compressors after).
LAYOUTS = [
    ([], True, []),
    (["zstd"], True, []),
    (["blosc"], False, []),
    (["zstd", "blosc"], True, []),
    (["crc32c"], True, []),
    ([], True, ["zstd"]),
    (["blosc"], False, ["gzip"]),
]
SHARD_GEOMETRIES = [((64,), (16,)), ((8, 8), (4, 4)), ((4, 6, 8), (2, 3, 4)), ((1024,), (1,)), ((10,), (10,))]


def values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    x = np.sin(np.arange(n) * 0.1) * 100 + rng.standard_normal(n)
    if seed % 2:
        x = rng.integers(0, 1000, n)
    return x.astype(dtype).reshape(shape)


def one_chunk(tmp, data, **kw):
    """The stored bytes of the single chunk of an array holding `data`."""
    p = os.path.join(tmp, "a.zarr")
    z = zarr.create_array(
        p,
        shape=data.shape,
        chunks=tuple(max(1, s) for s in data.shape),
        dtype=data.dtype,
        overwrite=True,
        fill_value=7,
        **kw,
    )
    z[...] = data
    files = [os.path.join(r, f) for r, _, fs in os.walk(p) for f in fs if f != "zarr.json" and f != ".zarray"]
    return open(files[0], "rb").read() if files else b""


def codecs_seeds(out):
    with tempfile.TemporaryDirectory() as tmp:
        for ci, chain in enumerate(CHAINS):
            for gi, (shape, dtype) in enumerate(GEOMETRIES):
                for seed in range(2):
                    data = values(shape, dtype, seed)
                    if chain == "lz4":
                        body = numcodecs.LZ4().encode(np.ascontiguousarray(data))
                    else:
                        names, transpose, big = chain if isinstance(chain, tuple) else (chain, False, False)
                        dt = data.dtype.newbyteorder(">") if big and data.dtype.itemsize > 1 else data.dtype
                        kw = dict(compressors=[CODECS[n]() for n in names] or None)
                        if transpose and data.ndim > 1:
                            kw["filters"] = [TransposeCodec(order=tuple(reversed(range(data.ndim))))]
                        body = one_chunk(tmp, data.astype(dt), **kw)
                    with open(os.path.join(out, f"c{ci}-g{gi}-{seed}"), "wb") as f:
                        f.write(bytes([ci, gi]) + body)


def shards_seeds(out):
    with tempfile.TemporaryDirectory() as tmp:
        for li, (inner, at_end, outer) in enumerate(LAYOUTS):
            for gi, (shard, chunk) in enumerate(SHARD_GEOMETRIES):
                for seed in range(2):
                    data = values(shard, "f8", seed)
                    if seed:  # some inner chunks missing (the fill value)
                        data.reshape(-1)[: data.size // 2] = 7
                    codec = ShardingCodec(
                        chunk_shape=chunk,
                        codecs=[BytesCodec()] + [CODECS[n]() for n in inner],
                        index_location="end" if at_end else "start",
                    )
                    body = one_chunk(tmp, data, serializer=codec, compressors=[CODECS[n]() for n in outer] or None)
                    with open(os.path.join(out, f"s{li}-g{gi}-{seed}"), "wb") as f:
                        f.write(bytes([li, gi]) + body)


def b2z_seeds(out):
    import blosc2

    with tempfile.TemporaryDirectory() as _tmp:
        stores = {
            "one": {"/x": np.arange(20.0)},
            "two": {"/a": np.arange(12).reshape(3, 4), "/g/b": np.ones(5, dtype="f4")},
            "embedded": {"/small": np.arange(3.0), "/big": np.arange(2000.0)},
        }
        for name, arrays in stores.items():
            p = os.path.join(out, name + ".b2z")
            with blosc2.DictStore(p, mode="w", threshold=100 if name == "embedded" else 0) as ds:
                for k, v in arrays.items():
                    ds[k] = v
        embed = zipfile.ZipFile(os.path.join(out, "one.b2z")).read("embed.b2e")
        frame = blosc2.asarray(np.arange(10.0)).to_cframe()
        for name, members in {
            "long": [("k" * 300 + ".b2nd", frame), ("y.b2nd", frame)],
            "longer": [("d/" + "k" * 4200 + ".b2nd", frame)],
            "dup": [("x.b2nd", frame), ("x.b2nd", blosc2.asarray(np.ones(4)).to_cframe())],
            "deflated": [("x.b2nd", frame)],
        }.items():
            with zipfile.ZipFile(
                os.path.join(out, name + ".b2z"),
                "w",
                zipfile.ZIP_DEFLATED if name == "deflated" else zipfile.ZIP_STORED,
            ) as z:
                z.writestr("embed.b2e", embed)
                for n, b in members:
                    z.writestr(n, b)


def main():
    kind, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    {"codecs": codecs_seeds, "shards": shards_seeds, "b2z": b2z_seeds}[kind](out)


if __name__ == "__main__":
    main()
