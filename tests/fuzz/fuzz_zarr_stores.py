"""Fuzzes Zarr v2/v3 stores read through b2lazy.open with atheris (libFuzzer for Python).

    python tests/fuzz/fuzz_zarr_stores.py                      # bounded run, what CI does
    python tests/fuzz/fuzz_zarr_stores.py -max_total_time=600  # longer; any libFuzzer flag works
    python tests/fuzz/fuzz_zarr_stores.py CRASH_FILE           # replay one input

An input is a whole store: "ZARR3\\n" (or "ZARR2\\n"), the metadata's JSON text, then per
chunk file SEP, its key, a newline and its bytes. It is written to a directory, opened
with b2lazy.open and read (to_numpy, compute, a corner). The mutator is structure-aware:
it changes the JSON as a tree (a value replaced by one of a palette of types and edge
values, a key or item removed, an item doubled) or a chunk's bytes (libFuzzer's own
mutations, also on the whole input). The run fails on a crash, a hang past -timeout, a
process past -rss_limit_mb, or an exception other than what b2lazy documents for a file:
OSError (which must name the store), TypeError or ValueError. Seeds: stores zarr-python
wrote with every codec chain b2lazy reads (v2 compressors, v3 chains, shards).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import tempfile
import warnings

import atheris

from fuzz_feedback import FILE_ERRORS, feedback, file_error, fuzz, read_every_way

with atheris.instrument_imports():
    import b2lazy

MAX_ITEMS = 1 << 20
MAX_CHUNK_BYTES = 64 << 20  # stores whose metadata asks for larger chunks are only opened
SEP = b"\n\x00--chunk--\x00\n"
STORE = None  # the directory each input is written to (set in main)

PALETTE = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2,
    3,
    7,
    255,
    2**31,
    2**32 + 1,
    2**62,
    2**63 - 1,
    -(2**63),
    2**64,
    1.5,
    -0.0,
    "NaN",
    "Infinity",
    "-Infinity",
    "0x7ff8000000000000",
    "",
    "x",
    "<f8",
    ">i2",
    "|b1",
    "<c16",
    "float64",
    "int8",
    "bool",
    "uint64",
    "complex64",
    "zstd",
    "blosc",
    "gzip",
    "zlib",
    "lz4",
    "crc32c",
    "bytes",
    "transpose",
    "sharding_indexed",
    "regular",
    "default",
    "v2",
    "little",
    "big",
    "C",
    "F",
    "/",
    ".",
    "start",
    "end",
    [],
    {},
    [0],
    [1],
    [2, 2],
    [2**40],
    [1, 0],
    [-1],
    {"name": "bytes"},
    {"name": "zstd", "configuration": {"level": 1}},
    {"id": "zstd"},
    {"id": "blosc", "cname": "lz4"},
    {"name": "crc32c"},
]


def parse(data: bytes):
    """(version, metadata text, [(key, bytes)]) of an input, or None."""
    parts = data.split(SEP)
    head = parts[0]
    if not head.startswith(b"ZARR") or len(head) < 6 or head[4:5] not in (b"2", b"3"):
        return None
    chunks = []
    for p in parts[1:]:
        key, _, body = p.partition(b"\n")
        chunks.append((key, body))
    return int(head[4:5]), head[6:], chunks


def serialize(version, text, chunks):
    return b"ZARR" + str(version).encode() + b"\n" + text + b"".join(SEP + k + b"\n" + b for k, b in chunks)


def _paths(node, at=()):
    yield at
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, at + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, at + (i,))


def _mutate_json(doc, rng):
    paths = list(_paths(doc))
    at = rng.choice(paths)
    if not at:
        return rng.choice(PALETTE) if rng.random() < 0.05 else doc
    parent = doc
    for k in at[:-1]:
        parent = parent[k]
    last = at[-1]
    op = rng.random()
    if op < 0.5:
        parent[last] = rng.choice(PALETTE)
    elif op < 0.65:
        del parent[last]
    elif op < 0.75 and isinstance(parent, list):
        parent.insert(last, parent[last])
    elif op < 0.85 and isinstance(parent[last], int) and not isinstance(parent[last], bool):
        parent[last] = parent[last] + rng.choice([-1, 1, -parent[last] - 1, parent[last], 2**31])
    elif isinstance(parent, dict):
        parent[
            rng.choice(
                [
                    "x",
                    "fill_value",
                    "codecs",
                    "compressor",
                    "filters",
                    "order",
                    "shape",
                    "chunks",
                    "dtype",
                    "data_type",
                    "configuration",
                    "index_location",
                    "dimension_separator",
                ]
            )
        ] = rng.choice(PALETTE)
    else:
        parent[last] = rng.choice(PALETTE)
    return doc


def custom_mutator(data, max_size, seed):
    rng = random.Random(seed)
    store = parse(data)
    if store is None or rng.random() < 0.2:
        return atheris.Mutate(data, max_size)
    version, text, chunks = store
    if rng.random() < 0.5:
        try:
            doc = json.loads(text)
            text = json.dumps(_mutate_json(doc, rng)).encode()
        except (ValueError, RecursionError):
            text = atheris.Mutate(text, max(len(text) * 2, 64))
    elif chunks:
        i = rng.randrange(len(chunks))
        key, body = chunks[i]
        if rng.random() < 0.1:
            chunks[i] = (atheris.Mutate(key, 24), body)
        else:
            chunks[i] = (key, atheris.Mutate(body, max(len(body) * 2, 64)))
    out = serialize(version, text, chunks)
    return out if len(out) <= max_size else atheris.Mutate(data, max_size)


def _safe_key(key: bytes):
    """A chunk key as a relative path inside the store, or None."""
    try:
        k = key.decode("ascii")
    except UnicodeDecodeError:
        return None
    if not k or len(k) > 40 or not set(k) <= set("c0123456789./") or k.startswith("/"):
        return None
    if any(part in ("", ".", "..") for part in k.split("/")) or k in ("zarr.json", ".zarray"):
        return None
    return k


def _chunk_bytes(text):
    """The bytes a chunk of this metadata decodes to, when it says (an estimate)."""
    try:
        m = json.loads(text)
        chunks = m.get("chunks") or m["chunk_grid"]["configuration"]["chunk_shape"]
        n = 16
        for c in chunks:
            n *= max(int(c), 1)
        return n
    except Exception:
        return 0


def write_store(store):
    version, text, chunks = store
    shutil.rmtree(STORE, ignore_errors=True)
    os.makedirs(STORE)
    with open(os.path.join(STORE, "zarr.json" if version == 3 else ".zarray"), "wb") as f:
        f.write(text)
    for key, body in chunks[:32]:
        k = _safe_key(key)
        if k is None:
            continue
        path = os.path.join(STORE, k)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(body)
        except (IsADirectoryError, NotADirectoryError, FileExistsError):
            pass


def TestOneInput(data: bytes):
    store = parse(data)
    if store is None:
        return
    write_store(store)
    try:
        a = b2lazy.open(STORE)
        feedback(f"opened {a.dtype} {a.ndim}")
        if _chunk_bytes(store[1]) > MAX_CHUNK_BYTES:
            return
        read_every_way(a, MAX_ITEMS)
        feedback("read")
    except FILE_ERRORS as err:
        file_error(err, STORE, "store")


def _dictionary(path):
    tokens = [
        '"zarr_format"',
        '"node_type"',
        '"array"',
        '"shape"',
        '"data_type"',
        '"chunk_grid"',
        '"regular"',
        '"chunk_shape"',
        '"chunk_key_encoding"',
        '"codecs"',
        '"fill_value"',
        '"configuration"',
        '"name"',
        '"sharding_indexed"',
        '"index_codecs"',
        '"index_location"',
        '"transpose"',
        '"order"',
        '"bytes"',
        '"endian"',
        '"blosc"',
        '"zstd"',
        '"gzip"',
        '"crc32c"',
        '"cname"',
        '"compressor"',
        '"filters"',
        '"dtype"',
        '"chunks"',
        '"id"',
        '"zlib"',
        '"lz4"',
        "null",
        "true",
        "false",
        "NaN",
        "[",
        "]",
        "{",
        "}",
        ",",
        ":",
        "-1",
        "4294967296",
    ]
    with open(path, "w") as fh:
        for t in tokens:
            fh.write('"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"\n')
        for b in (b"\x28\xb5\x2f\xfd", b"\x02\x01", b"\x1f\x8b\x08", b"\x78\x9c", b"\xff" * 8):
            fh.write('"' + "".join(f"\\x{c:02x}" for c in b) + '"\n')


def _seeds(corpus):
    """Stores zarr-python wrote, each as one input."""
    import numpy as np
    import zarr

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "formats"))
    import zarr_stores

    warnings.simplefilter("ignore")
    tmp = tempfile.mkdtemp(prefix="b2lazy-zarr-seeds-")
    n = 0

    def add(path, version):
        nonlocal n
        meta = "zarr.json" if version == 3 else ".zarray"
        text = open(os.path.join(path, meta), "rb").read()
        chunks = []
        for root, _, files in os.walk(path):
            for f in files:
                rel = os.path.relpath(os.path.join(root, f), path)
                if f not in ("zarr.json", ".zarray", ".zattrs"):
                    chunks.append((rel.encode(), open(os.path.join(root, f), "rb").read()))
        with open(os.path.join(corpus, f"seed{n}"), "wb") as fh:
            fh.write(serialize(version, text, sorted(chunks)))
        n += 1

    data = zarr_stores.values((12, 10), "float64")
    for fmt, table in ((3, zarr_stores.V3_CODECS), (2, zarr_stores.V2_CODECS)):
        for name in table:
            p = os.path.join(tmp, f"{fmt}-{name}.zarr")
            zarr_stores.write(p, data, (5, 4), fmt=fmt, codec=name)
            add(p, fmt)
    for i, (loc, codecs) in enumerate((("end", None), ("start", None))):
        p = os.path.join(tmp, f"shard{i}.zarr")
        zarr_stores.sharded(p, data, (3, 5), (6, 10), inner_codecs=codecs, index_location=loc)
        add(p, 3)
    for dt in ("int16", "uint8", "bool", "complex128", "float16"):
        p = os.path.join(tmp, f"dt-{dt}.zarr")
        z = zarr.create_array(p, shape=(7,), chunks=(3,), dtype=dt, overwrite=True)
        z[...] = np.arange(7).astype(dt)
        add(p, 3)
    shutil.rmtree(tmp, ignore_errors=True)


def main():
    global STORE
    work = tempfile.mkdtemp(prefix="b2lazy-fuzz-zarr-")
    STORE = os.path.join(work, "store.zarr")
    fuzz(TestOneInput, work, _seeds, _dictionary, max_len=65536, custom_mutator=custom_mutator)


if __name__ == "__main__":
    main()
