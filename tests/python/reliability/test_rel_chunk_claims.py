"""Chunk headers that claim huge sizes (a fuzzer's find).

C-Blosc2 allocates the compressed size (cbytes) a stored chunk's header claims, and block
offset tables for the blocks its uncompressed size (nbytes) makes, before checking either:
`b2lazy eval` on a 4 KiB file whose chunk claimed ~2 GB peaked at ~1-2 GB of RSS. b2lazy's
I/O backend checks each chunk header as C-Blosc2 reads it (at open and at every chunk
fetch) and refuses one that claims more than is stored or than the array's chunks hold:
an OSError naming the path and what the header claims, with no large allocation.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys

import blosc2
import numpy as np
import pytest

import b2lazy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", ".."), os.path.join(HERE, "..")]
import corrupt_files  # noqa: E402  (tests/corrupt_files.py)
from conftest import B2LAZY_COMMAND  # noqa: E402

SHAPE, CHUNKS, BLOCKS = (200, 100), (50, 100), (10, 100)  # 4 chunks of 40 000 bytes
CHUNK_BYTES = 50 * 100 * 8
HUGE_C, HUGE_N = 2_000_000_000, 2_100_000_000
RSS_LIMIT = 200 * 2**20


def write_claiming(path, contiguous, chunk, nbytes=None, cbytes=None, blocksize=None, flags_or=0):
    """An array whose stored chunk `chunk` has its header patched; returns its values."""
    ref = np.arange(float(np.prod(SHAPE))).reshape(SHAPE)
    blosc2.asarray(ref, urlpath=path, chunks=CHUNKS, blocks=BLOCKS, contiguous=contiguous, mode="w")
    if contiguous:
        f = path
        data = corrupt_files.read(f)
        pos = corrupt_files.chunk_spans(data)[chunk][0]  # (the index is the last span)
    else:
        f = os.path.join(path, f"{chunk:08d}.chunk")
        data, pos = corrupt_files.read(f), 0
    for off, value in ((4, nbytes), (8, blocksize), (12, cbytes)):
        if value is not None:
            data[pos + off : pos + off + 4] = struct.pack("<i", value)
    data[pos + 2] |= flags_or
    corrupt_files.write(f, data)
    return ref


CLAIMS = {
    "both-huge": dict(nbytes=HUGE_N, cbytes=HUGE_C),
    "cbytes-huge": dict(cbytes=HUGE_C),
    "nbytes-huge": dict(nbytes=HUGE_N),
    "memcpyed-nbytes-huge": dict(nbytes=HUGE_N, blocksize=16, flags_or=corrupt_files.MEMCPYED),
}


@pytest.mark.parametrize("contiguous", [True, False], ids=["file", "sparse"])
@pytest.mark.parametrize("claim", sorted(CLAIMS))
def test_first_chunk_claims_refused_at_open(tmp_path, contiguous, claim):
    """C-Blosc2 reads the first chunk's header while opening: the open fails."""
    path = str(tmp_path / "a.b2nd")
    write_claiming(path, contiguous, 0, **CLAIMS[claim])
    with pytest.raises(OSError, match=r"a\.b2nd.*a chunk (claims|has|is stored)") as e:
        b2lazy.open(path).to_numpy()
    assert path in str(e.value)


@pytest.mark.parametrize("contiguous", [True, False], ids=["file", "sparse"])
@pytest.mark.parametrize("claim", sorted(CLAIMS))
def test_last_chunk_claims_refused_when_read(tmp_path, contiguous, claim):
    """A later chunk is read only when needed: every read of it fails (whole chunks, a
    few items, several threads), the intact chunks still read."""
    path = str(tmp_path / "a.b2nd")
    ref = write_claiming(path, contiguous, 3, **CLAIMS[claim])
    a = b2lazy.open(path)
    np.testing.assert_array_equal(a[:150].to_numpy(), ref[:150])
    said = (
        "holds 2100000000 bytes where the array's chunks hold 40000"
        if "nbytes" in CLAIMS[claim]
        else "claims 2000000000 compressed bytes"
    )
    for read in (
        a.to_numpy,
        lambda: (a + 1).compute(),
        lambda: a[160, 3:5].to_numpy(),
        lambda: (a * 2).sum().to_numpy(),
    ):
        with pytest.raises(OSError) as e:
            read()
        assert f"'{path}': chunk 3 {said}" in str(e.value)


def test_blocksize_one_refused(tmp_path):
    """A chunk of 40 000 bytes in blocks of one byte has more blocks than its bytes index."""
    path = str(tmp_path / "a.b2nd")
    write_claiming(path, True, 3, blocksize=1)
    with pytest.raises(OSError, match=r"chunk 3 has 40000 blocks, more than its \d+ bytes can index"):
        b2lazy.open(path).to_numpy()


def test_valid_files_unaffected(tmp_path):
    """Specials, short last chunks, plain copies (incompressible data) and sparse chunk
    files read as python-blosc2 reads them."""
    rng = np.random.default_rng(1)
    arrays = {
        "zeros": np.zeros((100, 30)),
        "short": np.arange(95.0),
        "random": rng.random((120, 50)),
        "bytes": rng.integers(0, 256, 3000, dtype=np.uint8),
    }
    for name, ref in arrays.items():
        for contiguous in (True, False):
            p = str(tmp_path / f"{name}-{contiguous}.b2nd")
            extra = {"cparams": {"clevel": 0}} if name == "bytes" else {}  # plain copies
            nd = blosc2.asarray(
                ref,
                urlpath=p,
                chunks=(40,) + ref.shape[1:],
                blocks=(8,) + ref.shape[1:],
                contiguous=contiguous,
                mode="w",
                **extra,
            )
            want = nd[...]
            a = b2lazy.open(p)
            np.testing.assert_array_equal(a.to_numpy(), want)
            np.testing.assert_array_equal((a + 1).compute().to_numpy(), want + 1)
            np.testing.assert_array_equal(a[3:5].to_numpy(), want[3:5])


def _eval_peak_rss(args):
    """`b2lazy ARGS...` run from a fresh interpreter: (returncode, stderr, the child's peak RSS)."""
    code = (
        "import resource, subprocess, sys\n"
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=300)\n"
        "sys.stderr.write(r.stderr)\n"
        "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    r = subprocess.run([sys.executable, "-c", code, B2LAZY_COMMAND, *args], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rc, kib = map(int, r.stdout.split())
    return rc, r.stderr, kib * 1024


@pytest.mark.skipif(not B2LAZY_COMMAND, reason="the b2lazy command is not installed")
@pytest.mark.parametrize("contiguous", [True, False], ids=["file", "sparse"])
@pytest.mark.parametrize("chunk", [0, 3])
@pytest.mark.parametrize("claim", ["both-huge", "memcpyed-nbytes-huge"])
def test_eval_stays_small(tmp_path, contiguous, chunk, claim):
    """`b2lazy eval` exits 1 naming the path, without allocating what the header claims."""
    path = str(tmp_path / "a.b2nd")
    write_claiming(path, contiguous, chunk, **CLAIMS[claim])
    out = str(tmp_path / "o.b2nd")
    rc, err, peak = _eval_peak_rss(["eval", "a + 1", f"a={path}", "-o", out, "--no-progress"])
    assert rc == 1 and "error" in err and path in err, err
    assert ("a chunk" if chunk == 0 else "chunk 3") in err, err
    assert peak < RSS_LIMIT, f"b2lazy eval peaked at {peak / 2**20:.0f} MiB"
    assert not os.path.exists(out)
