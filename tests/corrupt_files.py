"""Corrupted b2nd files made from valid ones, for the reliability tests, the file fuzzer's
seeds and the sanitizer CI step.

    python tests/corrupt_files.py DIR          # writes the originals and every case into DIR,
                                               # prints their paths
    python tests/corrupt_files.py --valid DIR  # only the valid contiguous files (fuzz seeds)

From Python: `write_originals(dir)` writes the valid arrays and returns them (`originals(dir)`
only describes them), `cases(originals)` lists the corruptions of each, `case.write(path)`
writes one (a file, or a directory for the sparse form) once its original is written.

Originals: arrays written by python-blosc2 and by b2lazy (when it is importable), as
contiguous files and sparse directories, in a few dtypes and shapes, with and without a
short last chunk (a shape that is not a multiple of the chunks).

Corruptions, named `<original>-<kind>`:
  truncate-*     the frame cut in the header, after it, in a chunk, before and in the chunk
                 index, in the trailer, one byte short, or emptied;
  flip-*         one byte changed in the header's fields (sizes, flags, magic), in the first
                 chunk (header, block offsets, payload), in the chunk index and in the trailer;
  meta-*         the b2nd metalayer patched in place: chunks, blocks, shape (larger and
                 smaller than the data, within and across chunks), ndim and dtype;
  short-chunk-*  a chunk replaced by one that holds fewer bytes than the metalayer says (the
                 "-hidden" forms also patch the frame's total size, so that only reading the
                 chunk can tell);
  claims-*       the first stored chunk's header claiming huge sizes or tiny blocks
                 (CHUNK_CLAIMS);
  sparse-*       (directories) a chunk file deleted, emptied, truncated or changed, an extra
                 chunk file, chunks.b2frame truncated.

Each Case says what is known of its outcome: `must_fail` (the file is inconsistent: a reader
must refuse it) or `harmless` (a reader must give python-blosc2's values); neither for the
rest (an error, or python-blosc2's values when the damage is in padding or unused bytes).
"""

from __future__ import annotations

import os
import shutil
import struct
import sys
from dataclasses import dataclass, field
from typing import Callable

import blosc2
import numpy as np

try:
    import b2lazy
except ImportError:  # the generator works without b2lazy (python-blosc2 originals only)
    b2lazy = None


@dataclass
class Original:
    name: str
    path: str
    writer: str  # "blosc2" or "b2lazy"
    contiguous: bool
    shape: tuple
    chunks: tuple
    blocks: tuple
    dtype: np.dtype
    values: np.ndarray = field(repr=False)

    @property
    def frame_path(self):
        """The file that holds the header, metalayer and chunk index."""
        return self.path if self.contiguous else os.path.join(self.path, "chunks.b2frame")


@dataclass
class Case:
    name: str
    original: Original
    mutate: Callable[[str], None] = field(repr=False)  # applied to a copy of the original
    must_fail: bool = False
    harmless: bool = False

    def write(self, path):
        """Write the corrupted array at `path` (a file, or a directory when sparse)."""
        remove(path)
        if self.original.contiguous:
            shutil.copyfile(self.original.path, path)
        else:
            shutil.copytree(self.original.path, path)
        self.mutate(path)
        return path


# (name, shape, chunks, blocks, dtype): the geometry, short last chunks along one and
# two axes, blocks that do not keep a chunk's C order, an exact fit, bool and uint8.
GEOMETRIES = [
    ("f8-100x100", (100, 100), (50, 100), (10, 100), "f8"),
    ("f8-95", (95,), (50,), (10,), "f8"),
    ("i4-60x70", (60, 70), (25, 30), (5, 7), "i4"),
    ("u1-7x6x5", (7, 6, 5), (4, 3, 5), (2, 3, 5), "u1"),
    ("b1-40", (40,), (16,), (8,), "?"),
    ("f4-4x5", (4, 5), (4, 5), (2, 5), "f4"),
]
# (geometry, writer, contiguous)
ORIGINALS = [
    ("f8-100x100", "blosc2", True),
    ("f8-95", "blosc2", True),
    ("i4-60x70", "blosc2", False),
    ("u1-7x6x5", "blosc2", True),
    ("b1-40", "blosc2", True),
    ("i4-60x70", "b2lazy", True),
    ("f8-95", "b2lazy", False),
    ("f4-4x5", "b2lazy", True),
]


def values_for(shape, dtype):
    n = int(np.prod(shape))
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        v = np.arange(n) % 3 == 0
    elif dtype.kind == "f":
        v = (np.arange(n) * 0.75 - 3.0).astype(dtype)
    else:
        v = (np.arange(n) * 7 % 251).astype(dtype)
    return v.reshape(shape)


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def originals(directory):
    """The valid arrays, with their paths in `directory` (nothing is written)."""
    geoms = {g[0]: g for g in GEOMETRIES}
    out = []
    for gname, writer, contiguous in ORIGINALS:
        if writer == "b2lazy" and b2lazy is None:
            continue
        _, shape, chunks, blocks, dt = geoms[gname]
        name = f"{writer}-{gname}" + ("" if contiguous else "-sparse")
        v = values_for(shape, dt)
        out.append(
            Original(
                name, os.path.join(directory, name + ".b2nd"), writer, contiguous, shape, chunks, blocks, v.dtype, v
            )
        )
    return out


def write_original(o):
    remove(o.path)
    os.makedirs(os.path.dirname(o.path) or ".", exist_ok=True)
    if o.writer == "blosc2":
        blosc2.asarray(o.values, urlpath=o.path, chunks=o.chunks, blocks=o.blocks, contiguous=o.contiguous, mode="w")
    else:
        b2lazy.asarray(o.values).compute(urlpath=o.path, chunks=o.chunks, blocks=o.blocks, contiguous=o.contiguous)
    return o


def write_originals(directory):
    """Writes the valid arrays into `directory`; returns them as Originals."""
    return [write_original(o) for o in originals(directory)]


# ---------------------------------------------------------------------------------------
# Frame layout (README_CFRAME_FORMAT in C-Blosc2): a msgpack header whose int32 length is
# at byte 11, the chunks (each with its cbytes at byte 12 of its header), the chunk index
# (the last chunk), and a trailer whose uint32 length sits 22 bytes before the end.
# ---------------------------------------------------------------------------------------
HEADER_FIELDS = {  # byte offsets of fields in the frame header (their lowest byte for sizes)
    "magic": 3,
    "header-len": 14,
    "frame-len": 23,
    "general-flags": 25,
    "frame-type": 26,
    "codec-flags": 27,
    "nbytes": 37,
    "cbytes": 46,
    "typesize": 51,
    "blocksize": 56,
    "chunksize": 61,
    "filters": 75,
}
NBYTES_FIELD = slice(30, 38)  # int64, big-endian


def header_len(data):
    return int.from_bytes(data[11:15], "big")


def trailer_len(data):
    return int.from_bytes(data[-22:-18], "big")


def chunk_spans(data):
    """(start, cbytes) of each chunk stored in the frame, the chunk index last."""
    spans, pos, end = [], header_len(data), len(data) - trailer_len(data)
    while pos + 16 <= end:
        cbytes = int.from_bytes(data[pos + 12 : pos + 16], "little")
        if cbytes <= 0:
            break
        spans.append((pos, cbytes))
        pos += cbytes
    return spans


def meta_bytes(shape, chunks, blocks, dtype_str):
    """The b2nd metalayer as C-Blosc2 serialises it (msgpack, big-endian integers)."""
    nd = len(shape)
    b = bytes([0x97, 0, nd, 0x90 + nd]) + b"".join(b"\xd3" + struct.pack(">q", s) for s in shape)
    b += bytes([0x90 + nd]) + b"".join(b"\xd2" + struct.pack(">i", c) for c in chunks)
    b += bytes([0x90 + nd]) + b"".join(b"\xd2" + struct.pack(">i", c) for c in blocks)
    return b + bytes([0, 0xDB]) + struct.pack(">i", len(dtype_str)) + dtype_str.encode()


def read(path):
    with open(path, "rb") as fh:
        return bytearray(fh.read())


def write(path, data):
    with open(path, "wb") as fh:
        fh.write(data)


def frame_file(orig, path):
    return path if orig.contiguous else os.path.join(path, "chunks.b2frame")


# ---------------------------------------------------------------------------------------
# Mutations: each returns a function of the copy's path.
# ---------------------------------------------------------------------------------------
def truncate_frame(orig, where):
    def m(path):
        f = frame_file(orig, path)
        data = read(f)
        write(f, data[: where(data)])

    return m


def flip_frame(orig, where, mask):
    def m(path):
        f = frame_file(orig, path)
        data = read(f)
        data[where(data)] ^= mask
        write(f, data)

    return m


def patch_meta(orig, shape=None, chunks=None, blocks=None, dtype=None, ndim=None):
    def m(path):
        f = frame_file(orig, path)
        data = read(f)
        old = meta_bytes(orig.shape, orig.chunks, orig.blocks, orig.dtype.str)
        new = meta_bytes(shape or orig.shape, chunks or orig.chunks, blocks or orig.blocks, dtype or orig.dtype.str)
        assert len(new) == len(old) and data.count(old) == 1, f"metalayer of {orig.name} not found"
        if ndim is not None:
            new = new[:2] + bytes([ndim]) + new[3:]
        i = data.find(old)
        data[i : i + len(old)] = new
        write(f, data)

    return m


def short_chunk(orig, which, hidden):
    """Chunk `which` replaced by one compressed from half the bytes; `hidden` also patches the
    frame's total size so that the frame alone looks consistent."""

    def m(path):
        a = blosc2.open(path, mode="a")
        n = a.schunk.nchunks
        i = which % n
        full = a.schunk.decompress_chunk(i)
        half = full[: len(full) // 2 // orig.dtype.itemsize * orig.dtype.itemsize]
        a.schunk.update_chunk(i, blosc2.compress2(half, typesize=orig.dtype.itemsize))
        del a
        if hidden:
            f = frame_file(orig, path)
            data = read(f)
            data[NBYTES_FIELD] = struct.pack(">q", n * len(full))
            write(f, data)

    return m


def sparse_chunk_file(orig, action, index=0):
    def m(path):
        f = os.path.join(path, f"{index:08d}.chunk")
        if action == "delete":
            os.remove(f)
        elif action == "extra":
            shutil.copyfile(f, os.path.join(path, "00000999.chunk"))
        else:
            data = read(f)
            if action == "empty":
                data = b""
            elif action == "truncate":
                data = data[: len(data) // 2]
            elif action == "flip-nbytes":
                data[4] ^= 0x01
            elif action == "flip-payload":
                data[len(data) // 2] ^= 0xFF
            write(f, data)

    return m


def patch_chunk_header(orig, nbytes=None, cbytes=None, blocksize=None, flags_or=0):
    """The first stored chunk's header patched: int32 nbytes at byte 4, blocksize at 8,
    cbytes at 12 (little-endian), flag bits or-ed into byte 2."""

    def m(path):
        f = path if orig.contiguous else os.path.join(path, "00000000.chunk")
        data = read(f)
        pos = chunk_spans(data)[0][0] if orig.contiguous else 0
        for off, value in ((4, nbytes), (8, blocksize), (12, cbytes)):
            if value is not None:
                data[pos + off : pos + off + 4] = struct.pack("<i", value)
        data[pos + 2] |= flags_or
        write(f, data)

    return m


MEMCPYED = 0x02  # Blosc2 header flag: the chunk's bytes stored as they are
# A chunk header claiming sizes its file cannot hold: C-Blosc2 allocates what it claims
# before anything checks it (gigabytes for a kilobyte file) unless b2lazy's I/O backend
# refuses the header first. (kind, patch, must_fail)
CHUNK_CLAIMS = [
    ("claims-nbytes-huge", dict(nbytes=2_100_000_000), True),
    ("claims-cbytes-huge", dict(cbytes=2_000_000_000), True),
    ("claims-both-huge", dict(nbytes=2_100_000_000, cbytes=2_000_000_000), True),
    # a plain copy of 2 GB in blocks of 16 bytes: C-Blosc2 filled ~1 GB of block offsets
    ("claims-memcpyed-nbytes-huge", dict(nbytes=2_000_000_000, blocksize=16, flags_or=MEMCPYED), True),
    # a block per byte: too many blocks for the chunk's offsets (an error), or values
    ("claims-blocksize-one", dict(blocksize=1), False),
]


def cases(originals):
    """Every corruption of every original, as Cases."""
    out = []
    for o in originals:

        def add(kind, mutate, must_fail=False, harmless=False, o=o):
            out.append(Case(f"{o.name}-{kind}", o, mutate, must_fail, harmless))

        first = lambda d: chunk_spans(d)[0]  # noqa: E731 (the first stored chunk, or the index)
        index = lambda d: chunk_spans(d)[-1]  # noqa: E731
        # Truncations. Cutting into the header or the index loses what the array needs.
        for kind, where, fail in [
            ("empty", lambda d: 0, True),
            ("in-magic", lambda d: 8, True),
            ("in-header", lambda d: header_len(d) // 2, True),
            ("after-header", header_len, True),
            ("in-first-chunk", lambda d: first(d)[0] + first(d)[1] // 2, True),
            ("before-index", lambda d: index(d)[0], True),
            ("in-index", lambda d: index(d)[0] + index(d)[1] // 2, True),
            ("in-trailer", lambda d: len(d) - trailer_len(d) // 2, False),
            ("last-byte", lambda d: len(d) - 1, False),
        ]:
            add(f"truncate-{kind}", truncate_frame(o, where), must_fail=fail)
        # Bytes changed in the header's fields.
        for fname, off in HEADER_FIELDS.items():
            add(
                f"flip-header-{fname}",
                flip_frame(
                    o,
                    lambda d, off=off: off,
                    0x01
                    if fname in ("header-len", "frame-len", "nbytes", "cbytes", "typesize", "blocksize", "chunksize")
                    else 0x80,
                ),
            )
        # ... in the metalayer area (its last bytes: the dtype string).
        add("flip-header-meta-end", flip_frame(o, lambda d: header_len(d) - 1, 0x20))
        # ... in the chunks (for a sparse array, the frame holds only the index).
        if o.contiguous:
            for kind, where, mask in [
                ("version", lambda d: first(d)[0], 0xFF),
                ("flags", lambda d: first(d)[0] + 2, 0x10),
                ("typesize", lambda d: first(d)[0] + 3, 0x03),
                ("nbytes", lambda d: first(d)[0] + 4, 0x08),
                ("blocksize", lambda d: first(d)[0] + 8, 0x01),
                ("cbytes", lambda d: first(d)[0] + 12, 0x04),
                ("special", lambda d: first(d)[0] + 31, 0x10),
                ("bstarts", lambda d: first(d)[0] + 32, 0x01),
                ("payload", lambda d: first(d)[0] + first(d)[1] // 2, 0xFF),
                ("last-byte", lambda d: first(d)[0] + first(d)[1] - 1, 0xFF),
            ]:
                add(f"flip-chunk-{kind}", flip_frame(o, where, mask))
        add("flip-index-nbytes", flip_frame(o, lambda d: index(d)[0] + 4, 0x08))
        add("flip-index-payload", flip_frame(o, lambda d: index(d)[0] + index(d)[1] - 2, 0x55))
        add("flip-trailer-len", flip_frame(o, lambda d: len(d) - 19, 0x01))
        add("flip-trailer-middle", flip_frame(o, lambda d: len(d) - trailer_len(d) // 2, 0xFF))
        # The metalayer patched: geometry and dtype that disagree with the frame.
        c0, b0, s0 = o.chunks[0], o.blocks[0], o.shape[0]
        rest_c, rest_b, rest_s = o.chunks[1:], o.blocks[1:], o.shape[1:]
        add("meta-chunks-double", patch_meta(o, chunks=(2 * c0,) + rest_c), must_fail=True)
        add(
            "meta-chunks-blocks-half",
            patch_meta(o, chunks=(max(1, c0 // 2),) + rest_c, blocks=(max(1, b0 // 2),) + rest_b),
            must_fail=True,
        )
        add("meta-chunks-negative", patch_meta(o, chunks=(-c0,) + rest_c), must_fail=True)
        add("meta-chunks-zero", patch_meta(o, chunks=(0,) + rest_c), must_fail=True)
        add("meta-blocks-larger", patch_meta(o, blocks=(c0 + 1,) + rest_b), must_fail=True)
        add("meta-blocks-zero", patch_meta(o, blocks=(0,) + rest_b), must_fail=True)
        if b0 > 1:
            add("meta-blocks-smaller", patch_meta(o, blocks=(b0 - 1,) + rest_b), must_fail=True)
        # Shapes larger and smaller than the data: within the last chunk they read the
        # stored chunks (python-blosc2 reads the same); across chunks they disagree with the frame.
        grid0 = -(-s0 // c0)
        add("meta-shape-plus-one", patch_meta(o, shape=(s0 + 1,) + rest_s), must_fail=s0 % c0 == 0)
        add("meta-shape-minus-one", patch_meta(o, shape=(s0 - 1,) + rest_s), must_fail=(s0 - 1) % c0 == 0)
        add("meta-shape-plus-chunk", patch_meta(o, shape=(s0 + c0,) + rest_s), must_fail=True)
        if grid0 > 1:
            add("meta-shape-minus-chunk", patch_meta(o, shape=(s0 - c0,) + rest_s), must_fail=True)
        add("meta-shape-huge", patch_meta(o, shape=(2**62,) + rest_s), must_fail=True)
        add("meta-shape-negative", patch_meta(o, shape=(-1,) + rest_s), must_fail=True)
        add("meta-ndim-plus-one", patch_meta(o, ndim=len(o.shape) + 1), must_fail=True)
        same_size = {"f8": "<i8", "f4": "<i4", "i4": "<f4", "u1": "|i1", "b1": "|u1"}
        other_size = {"f8": "<f4", "f4": "<f8", "i4": "<i8", "u1": "<i2", "b1": "<i2"}
        key = o.dtype.str[1:]
        add("meta-dtype-same-size", patch_meta(o, dtype=same_size[key]), harmless=True)
        add("meta-dtype-other-size", patch_meta(o, dtype=other_size[key]), must_fail=True)
        # Chunks that hold fewer bytes than the metalayer says (python-blosc2 writes them).
        add("short-chunk-last", short_chunk(o, -1, hidden=False), must_fail=True)
        add("short-chunk-first", short_chunk(o, 0, hidden=False), must_fail=True)
        if o.contiguous:
            add("short-chunk-last-hidden", short_chunk(o, -1, hidden=True), must_fail=True)
        else:
            add("sparse-chunk-delete", sparse_chunk_file(o, "delete", 1), must_fail=True)
            add("sparse-chunk-empty", sparse_chunk_file(o, "empty"), must_fail=True)
            add("sparse-chunk-truncate", sparse_chunk_file(o, "truncate"), must_fail=True)
            add("sparse-chunk-flip-nbytes", sparse_chunk_file(o, "flip-nbytes"), must_fail=True)
            add("sparse-chunk-flip-payload", sparse_chunk_file(o, "flip-payload"))
            add("sparse-chunk-extra", sparse_chunk_file(o, "extra"), harmless=True)
        for kind, patch, fail in CHUNK_CLAIMS:
            add(kind, patch_chunk_header(o, **patch), must_fail=fail)
    names = [c.name for c in out]
    assert len(names) == len(set(names)), "case names must be unique"
    return out


def write_corpus(directory, valid_only=False):
    """Writes the originals and every case into `directory` (`valid_only`: the contiguous
    originals alone, seeds for a file fuzzer); returns their paths."""
    origs = write_originals(directory)
    if valid_only:
        for o in origs:
            if not o.contiguous:
                remove(o.path)
        return [o.path for o in origs if o.contiguous]
    return [o.path for o in origs] + [c.write(os.path.join(directory, c.name + ".b2nd")) for c in cases(origs)]


def main(argv):
    valid_only = "--valid" in argv
    args = [a for a in argv if a != "--valid"]
    if len(args) != 1 or args[0].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    for p in write_corpus(args[0], valid_only):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
