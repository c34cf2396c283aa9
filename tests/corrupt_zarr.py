"""Damaged Zarr stores made from valid ones written by zarr-python, for the format tests
and the sanitizer CI step (which runs the command over each).

    python tests/corrupt_zarr.py DIR   # writes the originals and every case into DIR

From Python: `write_corpus(dir)` returns the cases written. Each Case has the store's path,
`must_fail` (a reader must refuse it: OSError or TypeError) and `names` (a text the error
must contain: the file or key at fault), or `harmless` (the values must be zarr-python's).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import sys
from dataclasses import dataclass

import numpy as np

import numcodecs
import zarr
from zarr.codecs import BloscCodec, Crc32cCodec, ZstdCodec


@dataclass
class Case:
    name: str
    path: str
    must_fail: bool = False
    names: str = ""  # a text the error message must hold (a key, a file)
    harmless: bool = False
    original: str = ""


DATA = np.sin(np.arange(24 * 20, dtype=np.float64) * 0.1).reshape(24, 20)


def originals(d):
    """name -> (writer, chunk key of the first chunk)."""

    def v3_blosc(p):
        z = zarr.create_array(
            p,
            shape=DATA.shape,
            chunks=(8, 8),
            dtype="f8",
            zarr_format=3,
            compressors=BloscCodec(cname="zstd", shuffle="shuffle"),
        )
        z[...] = DATA

    def v3_crc(p):
        z = zarr.create_array(
            p,
            shape=DATA.shape,
            chunks=(8, 8),
            dtype="f8",
            zarr_format=3,
            compressors=[ZstdCodec(level=1), Crc32cCodec()],
        )
        z[...] = DATA

    def v3_shard(p):
        z = zarr.create_array(
            p,
            shape=DATA.shape,
            chunks=(4, 4),
            shards=(8, 8),
            dtype="f8",
            zarr_format=3,
            compressors=BloscCodec(cname="lz4"),
        )
        z[...] = DATA

    def v2_zstd(p):
        z = zarr.create_array(
            p, shape=DATA.shape, chunks=(8, 8), dtype="<f8", zarr_format=2, compressors=numcodecs.Zstd(level=1)
        )
        z[...] = DATA

    def v2_lz4(p):
        z = zarr.create_array(
            p, shape=DATA.shape, chunks=(8, 8), dtype="<i4", zarr_format=2, compressors=numcodecs.LZ4()
        )
        z[...] = (DATA * 1000).astype("i4")

    return {
        "v3-blosc": (v3_blosc, "c/0/0"),
        "v3-crc": (v3_crc, "c/0/0"),
        "v3-shard": (v3_shard, "c/0/0"),
        "v2-zstd": (v2_zstd, "0.0"),
        "v2-lz4": (v2_lz4, "0.0"),
    }


def meta_file(path):
    return os.path.join(path, "zarr.json" if os.path.exists(os.path.join(path, "zarr.json")) else ".zarray")


def edit_meta(path, fn):
    f = meta_file(path)
    m = json.load(open(f))
    fn(m)
    with open(f, "w") as out:
        json.dump(m, out)


def write_text(path, text):
    with open(path, "w") as f:
        f.write(text)


def patch_bytes(path, fn):
    with open(path, "rb") as f:
        b = bytearray(f.read())
    b = fn(b)
    with open(path, "wb") as f:
        f.write(bytes(b))


def flip(at):
    def fn(b):
        i = at if at >= 0 else len(b) + at
        b[i] ^= 0x5A
        return b

    return fn


def cases_for(name, key, v3):
    """(case name, mutation of the store at its path, must_fail, names, harmless)."""
    mf = "zarr.json" if v3 else ".zarray"
    c = []
    add = lambda n, fn, fail=True, names="", harmless=False: c.append((n, fn, fail, names, harmless))
    chunk = lambda p: os.path.join(p, key)
    add("meta-not-json", lambda p: write_text(meta_file(p), "{not json"), names=mf)
    add("meta-empty", lambda p: write_text(meta_file(p), ""), names=mf)
    add("meta-list", lambda p: write_text(meta_file(p), "[1, 2]"), names=mf)
    add("meta-no-shape", lambda p: edit_meta(p, lambda m: m.pop("shape")), names="shape")
    add("meta-shape-text", lambda p: edit_meta(p, lambda m: m.update(shape="24")), names="shape")
    add("meta-shape-negative", lambda p: edit_meta(p, lambda m: m.update(shape=[-24, 20])), names="shape")
    add("meta-shape-huge", lambda p: edit_meta(p, lambda m: m.update(shape=[2**62, 2**62])), names="shape")
    add("meta-shape-larger", lambda p: edit_meta(p, lambda m: m.update(shape=[30, 20])), fail=False)
    add("meta-fill-text", lambda p: edit_meta(p, lambda m: m.update(fill_value="abc")), names="fill_value")
    add(
        "meta-dtype-unknown",
        lambda p: edit_meta(
            p, lambda m: m.update({"data_type" if v3 else "dtype": "<c16" if not v3 else "complex128"})
        ),
        names=mf,
    )
    if v3:

        def chunks(v):
            return lambda p: edit_meta(p, lambda m: m["chunk_grid"]["configuration"].update(chunk_shape=v))

        add("meta-chunks-zero", chunks([0, 8]), names="chunk_shape")
        add("meta-chunks-smaller", chunks([4, 8]), names=key if name != "v3-shard" else "shard")
        add("meta-chunks-huge", chunks([2**31, 2**31]), names=mf)
        add("meta-ndim", chunks([8, 8, 8]), names="chunk_shape")
        add("meta-codec-unknown", lambda p: edit_meta(p, lambda m: m["codecs"].append({"name": "lzma"})), names="lzma")
        add("meta-no-codecs", lambda p: edit_meta(p, lambda m: m.update(codecs=[])), names="codecs")
        add("meta-group", lambda p: edit_meta(p, lambda m: m.update(node_type="group")), names="node_type")
        add(
            "meta-key-encoding",
            lambda p: edit_meta(p, lambda m: m.update(chunk_key_encoding={"name": "odd"})),
            names="chunk_key_encoding",
        )
        add(
            "meta-transpose-bad",
            lambda p: edit_meta(
                p, lambda m: m["codecs"].insert(0, {"name": "transpose", "configuration": {"order": [0, 0]}})
            ),
            names="transpose",
        )
    else:
        add("meta-chunks-smaller", lambda p: edit_meta(p, lambda m: m.update(chunks=[4, 8])), names=key)
        add(
            "meta-compressor-unknown", lambda p: edit_meta(p, lambda m: m.update(compressor={"id": "bz2"})), names="bz2"
        )
        add(
            "meta-filters",
            lambda p: edit_meta(p, lambda m: m.update(filters=[{"id": "delta", "dtype": "<f8"}])),
            names="filters",
        )
        add("meta-order", lambda p: edit_meta(p, lambda m: m.update(order="K")), names="order")
        add("meta-structured", lambda p: edit_meta(p, lambda m: m.update(dtype=[["a", "<f8"]])), names="dtype")
    add("chunk-empty", lambda p: write_text(chunk(p), ""), names=key)
    add("chunk-truncated", lambda p: patch_bytes(chunk(p), lambda b: b[: len(b) // 2]), names=key)
    add("chunk-one-short", lambda p: patch_bytes(chunk(p), lambda b: b[:-1]), names=key)
    add(
        "chunk-garbage",
        lambda p: patch_bytes(chunk(p), lambda b: bytearray(os.urandom(len(b)))),
        fail=name in ("v3-crc", "v2-zstd"),
    )
    add("chunk-flip-header", lambda p: patch_bytes(chunk(p), flip(3)), fail=False)
    # Without a checksum a changed payload byte may decode (to other values); with one it
    # may not. The end of a shard is its checksummed index.
    add(
        "chunk-flip-middle",
        lambda p: patch_bytes(chunk(p), flip(len(open(chunk(p), "rb").read()) // 2)),
        fail=name == "v3-crc",
    )
    add("chunk-flip-last", lambda p: patch_bytes(chunk(p), flip(-1)), fail=name in ("v3-crc", "v3-shard"))
    add("chunk-directory", lambda p: (os.remove(chunk(p)), os.makedirs(chunk(p))), names=key)
    add("chunk-missing", lambda p: os.remove(chunk(p)), fail=False)
    add("no-metadata", lambda p: os.remove(meta_file(p)), names="no zarr.json or .zarray")
    if name == "v3-shard":

        def index_entry(b, off, size):  # inner chunk 0 of the index at the end, crc recomputed
            import google_crc32c

            n = 4
            idx = bytearray(b[-(16 * n + 4) : -4])
            struct.pack_into("<QQ", idx, 0, off, size)
            return b[: -(16 * n + 4)] + idx + struct.pack("<I", google_crc32c.value(bytes(idx)))

        add(
            "shard-index-outside",
            lambda p: patch_bytes(chunk(p), lambda b: index_entry(b, len(b) * 2, 10)),
            names="outside",
        )
        add("shard-index-huge", lambda p: patch_bytes(chunk(p), lambda b: index_entry(b, 0, 2**63)), names="outside")
        add("shard-index-overlap", lambda p: patch_bytes(chunk(p), lambda b: index_entry(b, 3, 40)), names=key)
    return c


def write_corpus(directory):
    out = []
    for name, (writer, key) in originals(directory).items():
        base = os.path.join(directory, name + ".zarr")
        shutil.rmtree(base, ignore_errors=True)
        writer(base)
        out.append(Case(name, base, harmless=True, original=name))
        for cname, fn, fail, names, harmless in cases_for(name, key, name.startswith("v3")):
            p = os.path.join(directory, f"{name}-{cname}.zarr")
            shutil.rmtree(p, ignore_errors=True)
            shutil.copytree(base, p)
            fn(p)
            out.append(Case(f"{name}-{cname}", p, must_fail=fail, names=names, harmless=harmless, original=name))
    # Not stores at all.
    for n, make in [("empty-dir", lambda p: os.makedirs(p)), ("a-file", lambda p: write_text(p, "zarr"))]:
        p = os.path.join(directory, n + ".zarr")
        shutil.rmtree(p, ignore_errors=True)
        make(p)
        out.append(Case(n, p, must_fail=True, names=p))
    return out


if __name__ == "__main__":
    for c in write_corpus(sys.argv[1]):
        print(c.path)
