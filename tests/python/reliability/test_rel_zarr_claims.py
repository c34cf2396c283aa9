"""Zarr chunks that claim huge sizes: no decoder may allocate more than the chunk's size.

A 50-byte chunk whose Blosc header claimed 2 GiB, with codecs [bytes, zstd, blosc] (Blosc
not the last codec undone, so its result's size was not checked against the chunk's), was
zero-filled to 2 GiB before decoding failed (2.1 GB peak). Each codec's result may now hold
at most what the next codec to undo can take (the chunk's bytes for the last one, what
encoding those can grow to before it): a header, a frame's content size or a stream
(zstd without a content size, Deflate) that gives more is a damaged chunk, an OSError naming
the array and the chunk key. A chunk file larger than its chunk can be stored in (a sparse
file, an inner chunk of a shard) is refused before it is read.

Each case is read in a fresh interpreter, whose peak RSS is measured.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import zlib

import numcodecs
import numpy as np
import pytest
import zarr
from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec, TransposeCodec, ZstdCodec

import b2lazy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..")]
from conftest import B2LAZY_COMMAND  # noqa: E402

RSS_LIMIT = 200 * 2**20  # a Python with NumPy and b2lazy imported takes ~60 MiB
HUGE = 2**31 - 64  # what the hostile chunks claim or unpack to


# --- hostile bytes --------------------------------------------------------------------


def blosc_claiming(size=HUGE):
    """A real Blosc1 buffer (as numcodecs writes it) whose header claims `size` bytes."""
    b = bytearray(numcodecs.Blosc(cname="lz4").encode(np.arange(64.0)))
    b[4:8] = struct.pack("<i", size)
    return bytes(b)


def blosc2_claiming(size=HUGE):
    """A Blosc2-format buffer (the 32-byte extended header, as python-blosc2 writes it)
    whose header claims `size` bytes."""
    import blosc2

    b = bytearray(blosc2.compress2(np.arange(64.0).tobytes(), typesize=8))
    b[4:8] = struct.pack("<i", size)
    return bytes(b)


def zstd_claiming(size=HUGE):
    """A zstd frame whose header's content size is `size`, holding one byte."""
    return b"\x28\xb5\x2f\xfd" + bytes([0xA0]) + struct.pack("<I", size) + bytes([9, 0, 0, 0])


def zstd_bomb(total=HUGE):
    """A zstd frame without a content size that unpacks to `total` zero bytes (RLE blocks)."""
    blk = 1 << 17
    n = -(-total // blk)
    out = bytearray(b"\x28\xb5\x2f\xfd" + bytes([0x00, 7 << 3]))  # window 128 KiB
    for i in range(n):
        out += struct.pack("<I", (blk << 3) | (1 << 1) | (i == n - 1))[:3] + b"\x00"
    return bytes(out)


def deflate_bomb(total=HUGE, gzip=False):
    """A zlib (or gzip) stream of `total` zero bytes, ~2 MB."""
    piece = 64 << 20
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = c.compress(bytes(piece)) + c.flush(zlib.Z_FULL_FLUSH)
    head = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" if gzip else b"\x78\x01"
    return head + body * -(-total // piece) + b"\x03\x00"


def lz4_claiming(size=HUGE):
    """numcodecs' LZ4: a uint32 size, then an LZ4 block."""
    return struct.pack("<I", size) + b"\x10\x00"


def _crc32c(data):
    """CRC-32C (Castagnoli), as Zarr's crc32c codec stores it."""
    crc = 0xFFFFFFFF
    table = _crc32c.table
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return struct.pack("<I", crc ^ 0xFFFFFFFF)


def _table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_crc32c.table = _table()


# --- stores ---------------------------------------------------------------------------

DATA1 = np.arange(64.0)
DATA2 = np.arange(64.0).reshape(8, 8)
# Chunks of 2 MiB: a stream that unpacks to 2 GiB (64 KiB of zstd, 2 MB of Deflate) fits the
# most such a chunk may be stored in, so the decoder itself has to stop it.
BIG = np.arange(2.0**18)
BIG2 = BIG.reshape(512, 512)


def v3(path, data, chunks, **kw):
    z = zarr.create_array(str(path), shape=data.shape, chunks=chunks, dtype=data.dtype, overwrite=True, **kw)
    z[...] = data
    return z


def v2(path, data, chunks, **kw):
    z = zarr.create_array(
        str(path), shape=data.shape, chunks=chunks, dtype=data.dtype, zarr_format=2, overwrite=True, **kw
    )
    z[...] = data
    return z


def put(path, key, data):
    with open(os.path.join(str(path), key), "wb") as f:
        f.write(data)


def sparse(path, key, size):
    """A chunk file of `size` bytes that takes no room (a hole)."""
    with open(os.path.join(str(path), key), "wb") as f:
        f.truncate(size)


def shard_with(inner_bytes, n=4, index_at_end=True):
    """A shard of `n` inner chunks, the first stored as `inner_bytes`, the rest missing."""
    index = struct.pack("<QQ", 0, len(inner_bytes)) + b"\xff" * 16 * (n - 1)
    index += _crc32c(index)
    return inner_bytes + index


def case_blosc_inside(p):  # the issue's: [bytes, zstd, blosc]
    v3(p, DATA1, (64,), compressors=[ZstdCodec(), BloscCodec(cname="lz4")])
    put(p, "c/0", blosc_claiming())
    return "c/0"


def case_blosc2_inside(p):  # the same with a Blosc2-format header
    v3(p, DATA1, (64,), compressors=[ZstdCodec(), BloscCodec(cname="lz4")])
    put(p, "c/0", blosc2_claiming())
    return "c/0"


def case_zstd_claim_inside(p):  # [bytes, blosc, zstd]: zstd's content size
    v3(p, DATA1, (64,), compressors=[BloscCodec(cname="lz4"), ZstdCodec()])
    put(p, "c/0", zstd_claiming())
    return "c/0"


def case_zstd_bomb_inside(p):  # [bytes, blosc, zstd]: zstd without a content size
    v3(p, BIG, (len(BIG),), compressors=[BloscCodec(cname="lz4"), ZstdCodec()])
    put(p, "c/0", zstd_bomb())
    return "c/0"


def case_zstd_bomb_last(p):  # [bytes, zstd]: streamed into a growing buffer, then copied
    v3(p, BIG, (len(BIG),), compressors=[ZstdCodec()])
    put(p, "c/0", zstd_bomb())
    return "c/0"


def case_gzip_bomb_inside(p):  # [bytes, zstd, gzip]
    v3(p, BIG, (len(BIG),), compressors=[ZstdCodec(), GzipCodec()])
    put(p, "c/0", deflate_bomb(gzip=True))
    return "c/0"


def case_crc32c_zstd_bomb(p):  # [bytes, zstd, crc32c]
    v3(p, BIG, (len(BIG),), compressors=[ZstdCodec(), Crc32cCodec()])
    b = zstd_bomb()
    put(p, "c/0", b + _crc32c(b))
    return "c/0"


def case_transpose_blosc(p):  # [transpose, bytes, blosc]: the result is transposed after
    v3(p, DATA2, (8, 8), filters=[TransposeCodec(order=(1, 0))], compressors=[BloscCodec(cname="lz4")])
    put(p, "c/0/0", blosc_claiming())
    return "c/0/0"


def case_v2_order_f(compressor, chunk, data=DATA2):
    def make(p):
        v2(p, data, data.shape, compressors=compressor, order="F")
        put(p, "0.0", chunk())
        return "0.0"

    return make


def case_shard_inner(p):  # a shard's inner chunk with [bytes, zstd, blosc]
    v3(
        p,
        DATA1,
        (64,),
        compressors=None,
        serializer=ShardingCodec(chunk_shape=(16,), codecs=[BytesCodec(), ZstdCodec(), BloscCodec(cname="lz4")]),
    )
    put(p, "c/0", shard_with(blosc_claiming()))
    return "c/0"


def case_shard_then_zstd(p):  # [sharding_indexed, zstd]: the shard itself unpacks to 2 GiB
    v3(p, BIG, (len(BIG),), serializer=ShardingCodec(chunk_shape=(len(BIG) // 4,)), compressors=[ZstdCodec()])
    put(p, "c/0", zstd_bomb())
    return "c/0"


def case_shard_index_huge(p):  # the index points at 2 GiB of a sparse shard file
    v3(
        p,
        DATA1,
        (64,),
        compressors=None,
        serializer=ShardingCodec(chunk_shape=(16,), codecs=[BytesCodec(), ZstdCodec()]),
    )
    sparse(p, "c/0", HUGE)
    with open(os.path.join(str(p), "c/0"), "r+b") as f:
        index = struct.pack("<QQ", 0, HUGE - 1000) + b"\xff" * 48
        f.seek(HUGE - 68)
        f.write(index + _crc32c(index))
    return "c/0"


def case_zstd_bomb_small_chunk(p):  # 64 KiB of zstd cannot hold a chunk of 512 bytes
    v3(p, DATA1, (64,), compressors=[ZstdCodec()])
    put(p, "c/0", zstd_bomb())
    return "c/0"


def case_sparse_chunk(p):  # a 2 GiB chunk file with a hole
    v3(p, DATA1, (64,), compressors=[ZstdCodec()])
    sparse(p, "c/0", HUGE)
    return "c/0"


CASES = {
    "bytes-zstd-blosc": case_blosc_inside,
    "bytes-zstd-blosc2-header": case_blosc2_inside,
    "bytes-blosc-zstd(claim)": case_zstd_claim_inside,
    "bytes-blosc-zstd(stream)": case_zstd_bomb_inside,
    "bytes-zstd(stream)": case_zstd_bomb_last,
    "bytes-zstd-gzip": case_gzip_bomb_inside,
    "bytes-zstd-crc32c": case_crc32c_zstd_bomb,
    "transpose-bytes-blosc": case_transpose_blosc,
    "v2-F-blosc": case_v2_order_f(numcodecs.Blosc(cname="lz4"), blosc_claiming),
    "v2-F-zstd": case_v2_order_f(numcodecs.Zstd(), zstd_claiming),
    "v2-F-zstd(stream)": case_v2_order_f(numcodecs.Zstd(), zstd_bomb, BIG2),
    "v2-F-zlib": case_v2_order_f(numcodecs.Zlib(), deflate_bomb, BIG2),
    "v2-F-gzip": case_v2_order_f(numcodecs.GZip(), lambda: deflate_bomb(gzip=True), BIG2),
    "v2-F-lz4": case_v2_order_f(numcodecs.LZ4(), lz4_claiming),
    "shard-inner-bytes-zstd-blosc": case_shard_inner,
    "sharding-zstd": case_shard_then_zstd,
    "shard-index-2GiB": case_shard_index_huge,
    "sparse-chunk-file": case_sparse_chunk,
    "zstd-bomb-small-chunk": case_zstd_bomb_small_chunk,
}

READ_IN_CHILD = """
import resource, sys
import b2lazy
try:
    a = b2lazy.open(sys.argv[1])
    if len(sys.argv) > 2:  # a few items: the reads of a part of a chunk
        a = a[tuple(slice(1, 3) for _ in a.shape)]
    a.to_numpy()
    print("read")
except OSError as e:
    print("OSError:", e)
# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so a child forked from a
# large pytest process would report the parent's size.
print(int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]))
"""


def read_in_child(path, part=False):
    """(what reading the whole array (or a few items) in a fresh interpreter said, its peak
    RSS in bytes)."""
    args = [sys.executable, "-c", READ_IN_CHILD, str(path)] + (["part"] if part else [])
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    said, kib = r.stdout.strip().rsplit("\n", 1)
    return said, int(kib) * 1024


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_chunk_stays_small(tmp_path, case):
    p = tmp_path / "a.zarr"
    key = CASES[case](p)
    said, peak = read_in_child(p)
    assert said.startswith("OSError:"), said
    assert f"{p}/{key}" in said, said  # names the array and the chunk
    assert peak < RSS_LIMIT, f"{case}: peaked at {peak / 2**20:.0f} MiB ({said})"


def blosc_patched(offset, value):
    """A Blosc chunk of 1000 doubles (numcodecs, blocks of 2000 bytes) with a header field set."""
    b = bytearray(numcodecs.Blosc(cname="lz4", blocksize=2000).encode(np.sin(np.arange(1000.0))))
    b[offset : offset + 4] = struct.pack("<i", value)
    return bytes(b)


RANGE_CASES = {"nbytes": (4, HUGE), "blocksize-huge": (8, HUGE), "blocksize-1": (8, 1), "cbytes": (12, HUGE)}


@pytest.mark.parametrize("case", sorted(RANGE_CASES))
@pytest.mark.parametrize("part", [False, True], ids=["whole", "part"])
def test_blosc_header_claims_whole_and_part(tmp_path, case, part):
    """[bytes, blosc] chunks are read by parts (storage/blosc_range: the header, the block
    starts, the blocks touched) or whole: a header claiming 2 GiB, blocks of 2 GiB or of
    one byte is refused either way without allocating what it claims."""
    p = tmp_path / "a.zarr"
    v3(p, np.arange(1000.0), (1000,), compressors=[BloscCodec(cname="lz4")])
    put(p, "c/0", blosc_patched(*RANGE_CASES[case]))
    said, peak = read_in_child(p, part)
    assert said.startswith("OSError:") and f"{p}/c/0" in said, said
    assert peak < RSS_LIMIT, f"{case}: peaked at {peak / 2**20:.0f} MiB ({said})"


def test_claims_name_the_size(tmp_path):
    """What the message says: the claim and the most the chunk can hold."""
    p = tmp_path / "a.zarr"
    case_blosc_inside(p)
    said, _ = read_in_child(p)
    assert f"claims {HUGE} bytes, more than the" in said and "this chunk can hold" in said, said


@pytest.mark.parametrize(
    "case",
    [
        "bytes-zstd-blosc",
        "bytes-blosc-zstd(claim)",
        "transpose-bytes-blosc",
        "v2-F-blosc",
        "v2-F-zstd",
        "v2-F-lz4",
        "shard-inner-bytes-zstd-blosc",
    ],
)
def test_zarr_python_refuses_too(tmp_path, case):
    """The oracle: zarr-python cannot read these chunks either (the ones it does not unpack
    whole first)."""
    p = tmp_path / "a.zarr"
    CASES[case](p)
    with pytest.raises(Exception):
        zarr.open_array(str(p), mode="r")[...]


def test_valid_chains_still_read(tmp_path):
    """The same chains over real data (incompressible too) read as zarr-python reads them."""
    rng = np.random.default_rng(0)
    for name, data in (("smooth", np.sin(np.arange(4096.0)).reshape(64, 64)), ("noise", rng.random((64, 64)))):
        for i, kw in enumerate(
            (
                dict(compressors=[ZstdCodec(), BloscCodec(cname="lz4")]),
                dict(compressors=[BloscCodec(cname="zstd"), ZstdCodec()]),
                dict(compressors=[ZstdCodec(), GzipCodec(), Crc32cCodec()]),
                dict(filters=[TransposeCodec(order=(1, 0))], compressors=[BloscCodec(), ZstdCodec()]),
                dict(shards=(64, 64), compressors=[ZstdCodec()]),
                dict(
                    shards=(64, 64),
                    compressors=None,
                    serializer=ShardingCodec(chunk_shape=(16, 16), codecs=[BytesCodec(), ZstdCodec(), BloscCodec()]),
                ),
            )
        ):
            p = tmp_path / f"{name}{i}.zarr"
            chunks = (16, 16)
            z = zarr.create_array(str(p), shape=data.shape, chunks=chunks, dtype=data.dtype, overwrite=True, **kw)
            z[...] = data
            np.testing.assert_array_equal(b2lazy.open(str(p)).to_numpy(), zarr.open_array(str(p), mode="r")[...])


def test_zstd_stream_of_exact_size_reads(tmp_path):
    """A zstd frame without a content size whose stream holds exactly the chunk reads."""
    p = tmp_path / "a.zarr"
    v3(p, np.ones(2**17 // 8), (2**17 // 8,), compressors=[ZstdCodec()])
    put(p, "c/0", zstd_bomb(2**17))
    np.testing.assert_array_equal(b2lazy.open(str(p)).to_numpy(), zarr.open_array(str(p), mode="r")[...])
    put(p, "c/0", zstd_bomb(2**18))
    with pytest.raises(OSError, match=r"c/0': zstd: holds more than the 131072 bytes expected"):
        b2lazy.open(str(p)).to_numpy()


@pytest.mark.skipif(not B2LAZY_COMMAND, reason="the b2lazy command is not installed")
def test_eval_four_hostile_chunks_two_threads(tmp_path):
    """The issue's second measure: four such chunks read by two threads (14 GB before)."""
    p = tmp_path / "a.zarr"
    v3(p, np.arange(256.0), (64,), compressors=[ZstdCodec(), BloscCodec(cname="lz4")])
    for k in range(4):
        put(p, f"c/{k}", blosc_claiming())
    out = tmp_path / "o.b2nd"
    code = (
        "import resource, subprocess, sys\n"
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=300)\n"
        "sys.stderr.write(r.stderr)\n"
        "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            B2LAZY_COMMAND,
            "eval",
            "a + 1",
            f"a={p}",
            "-o",
            str(out),
            "--threads",
            "2",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    rc, kib = map(int, r.stdout.split())
    assert rc == 1 and f"{p}/c/" in r.stderr, r.stderr
    assert kib * 1024 < RSS_LIMIT, f"b2lazy eval peaked at {kib / 1024:.0f} MiB"
    assert not out.exists()
