"""Issue #13, item 4: Zarr v2 and v3 arrays written by zarr-python (the oracle) read by
b2lazy equal to NumPy — every codec, both byte orders, transposes, shards (index at the
start or the end), missing chunks (the fill value), edge chunks, every dtype — and read
partially: a slice decodes only the chunks (inner chunks of a shard) it touches."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import b2lazy
import numcodecs
import zarr
from zarr_stores import DTYPES, V2_CODECS, V3_CODECS, sharded, values, write
from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, TransposeCodec, ZstdCodec


def check(path, expected):
    a = b2lazy.open(str(path))
    assert a.shape == expected.shape and a.dtype == expected.dtype.newbyteorder("=").name
    np.testing.assert_array_equal(a.to_numpy(), expected, strict=False)
    return a


@pytest.mark.parametrize("codec", sorted(V3_CODECS))
def test_v3_codecs(tmp_path, codec):
    data = values((37, 23), "float64")
    check(tmp_path / "a.zarr", write(tmp_path / "a.zarr", data, (10, 7), fmt=3, codec=codec))


@pytest.mark.parametrize("codec", sorted(V2_CODECS))
def test_v2_compressors(tmp_path, codec):
    data = values((37, 23), "int32")
    check(tmp_path / "a.zarr", write(tmp_path / "a.zarr", data, (10, 7), fmt=2, codec=codec))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fmt", [2, 3])
def test_every_dtype(tmp_path, dtype, fmt):
    data = values((19, 5), dtype, seed=len(dtype))
    codec = "blosc" if fmt == 2 else "blosc-zstd-shuffle"
    check(tmp_path / "a.zarr", write(tmp_path / "a.zarr", data, (8, 3), fmt=fmt, codec=codec))
    big = "order-F-big" if fmt == 2 else "bytes-big"
    check(tmp_path / "b.zarr", write(tmp_path / "b.zarr", data, (8, 3), fmt=fmt, codec=big))


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("fill", [0, 7.5, np.nan, None])
def test_missing_chunks_read_as_the_fill_value(tmp_path, fmt, fill):
    data = values((30, 20), "float64")
    expected = write(tmp_path / "a.zarr", data, (8, 6), fmt=fmt, fill_value=fill, written=(slice(3, 12), slice(0, 5)))
    a = check(tmp_path / "a.zarr", expected)
    r = (a + 0).compute()
    assert r.stats["chunks_decompressed"][str(tmp_path / "a.zarr")] == 2  # the chunks written; the rest: fill


@pytest.mark.parametrize("location", ["start", "end"])
def test_shards_index_start_or_end(tmp_path, location):
    data = values((45, 33), "float32")
    expected = sharded(tmp_path / "s.zarr", data, (5, 4), (15, 12), index_location=location)
    check(tmp_path / "s.zarr", expected)


def test_shards_with_checksums_transposes_and_edges(tmp_path):
    data = values((23, 17, 5), "int16")
    inner = [TransposeCodec(order=(2, 0, 1)), BytesCodec(endian="big"), GzipCodec(), Crc32cCodec()]
    check(tmp_path / "s.zarr", sharded(tmp_path / "s.zarr", data, (4, 3, 5), (8, 9, 5), inner_codecs=inner))


def test_shards_with_missing_inner_chunks_and_fill(tmp_path):
    data = np.full((40, 40), 3.0)
    data[4:8, 29:32] = np.arange(12.0).reshape(4, 3)  # one inner chunk of one shard differs
    expected = sharded(tmp_path / "s.zarr", data, (4, 4), (20, 20), fill_value=3.0)
    a = check(tmp_path / "s.zarr", expected)
    stats = (a * 1).compute().stats
    assert stats["chunks_decompressed"][str(tmp_path / "s.zarr")] == 1  # the rest is absent: fill


def test_a_slice_reads_only_the_inner_chunks_it_touches(tmp_path):
    data = values((64, 64), "float64")
    sharded(tmp_path / "s.zarr", data, (8, 8), (32, 32))
    a = b2lazy.open(str(tmp_path / "s.zarr"))
    part = a[9:15, 40:47]
    np.testing.assert_array_equal(part.to_numpy(), data[9:15, 40:47])
    r = part.compute()
    assert r.stats["chunks_decompressed"][str(tmp_path / "s.zarr")] == 1
    # Strided and negative steps across chunks.
    np.testing.assert_array_equal(a[::-7, 3::5].to_numpy(), data[::-7, 3::5])


def test_zero_dimensional_and_empty(tmp_path):
    for fmt in (2, 3):
        data = np.array(2.5, dtype="float32")
        check(tmp_path / f"s{fmt}.zarr", write(tmp_path / f"s{fmt}.zarr", data, (), fmt=fmt))
        empty = np.zeros((0, 4), dtype="int64")
        check(tmp_path / f"e{fmt}.zarr", write(tmp_path / f"e{fmt}.zarr", empty, (2, 2), fmt=fmt))


def test_expressions_and_reductions_over_zarr(tmp_path):
    x = values((300, 200), "float64")
    write(tmp_path / "x.zarr", x, (64, 64), fmt=3, codec="blosc-zstd-shuffle")
    write(tmp_path / "y.zarr", x[::-1].copy(), (50, 50), fmt=2, codec="zstd")
    a, b = b2lazy.open(str(tmp_path / "x.zarr")), b2lazy.open(str(tmp_path / "y.zarr"))
    np.testing.assert_allclose(
        (b2lazy.sin(a) ** 2 + b2lazy.cos(b) ** 2).to_numpy(), np.sin(x) ** 2 + np.cos(x[::-1]) ** 2, rtol=1e-14
    )
    np.testing.assert_allclose((a - b2lazy.mean(a, axis=0)).to_numpy(), x - x.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(float(b2lazy.sum(a).to_numpy()), x.sum(), rtol=1e-12)
    assert "zarr v3" in a.explain() and "blosc(zstd)" in a.explain()


def test_urls_and_recognition(tmp_path):
    data = values((10, 10), "int64")
    write(tmp_path / "plain", data, (4, 4), fmt=3)  # no suffix: recognised by its zarr.json
    for url in [
        str(tmp_path / "plain"),
        "zarr:" + str(tmp_path / "plain"),
        "zarr://" + str(tmp_path / "plain"),
        "file://" + str(tmp_path / "plain"),
        str(tmp_path / "plain") + "/",
    ]:
        np.testing.assert_array_equal(b2lazy.open(url).to_numpy(), data)
    assert b2lazy.open(str(tmp_path / "plain")).urlpath == str(tmp_path / "plain")


@settings(max_examples=25)
@given(
    shape=st.lists(st.integers(1, 13), min_size=1, max_size=3),
    data=st.data(),
    dtype=st.sampled_from(DTYPES),
    fmt=st.sampled_from([2, 3]),
)
def test_hypothesis_shapes_chunks_shards_codecs(tmp_path_factory, shape, data, dtype, fmt):
    chunks = tuple(data.draw(st.integers(1, s + 2)) for s in shape)
    x = values(tuple(shape), dtype, seed=data.draw(st.integers(0, 99)))
    path = tmp_path_factory.mktemp("h") / "a.zarr"
    if fmt == 3 and data.draw(st.booleans()):
        shards = tuple(c * data.draw(st.integers(1, 3)) for c in chunks)
        inner = data.draw(
            st.sampled_from([None, [BytesCodec(), ZstdCodec()], [BytesCodec(endian="big"), Crc32cCodec()]])
        )
        expected = sharded(
            path, x, chunks, shards, inner_codecs=inner, index_location=data.draw(st.sampled_from(["start", "end"]))
        )
    else:
        codec = data.draw(st.sampled_from(sorted(V3_CODECS if fmt == 3 else V2_CODECS)))
        expected = write(path, x, chunks, fmt=fmt, codec=codec)
    a = check(path, expected)
    sl = tuple(slice(data.draw(st.integers(0, s - 1)), None, data.draw(st.sampled_from([1, 2, -1]))) for s in shape)
    np.testing.assert_array_equal(a[sl].to_numpy(), expected[sl])


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(1, 300),
    m=st.integers(1, 300),
    cr=st.integers(8, 128),
    cc=st.integers(8, 128),
    axis=st.sampled_from([0, 1]),
)
def test_a_scan_decompresses_each_zarr_chunk_at_most_twice(tmp_path_factory, n, m, cr, cc, axis):
    """Zarr chunks decompress whole: a scan's pieces are whole chunks deep (its segment
    totals once, then the output), not thinner slabs that read a chunk again each."""
    x = values((n, m), "float64")
    path = tmp_path_factory.mktemp("s") / "a.zarr"
    write(path, x, (cr, cc), fmt=3, codec="zstd")
    r = b2lazy.cumsum(b2lazy.open(str(path)), axis=axis).compute(chunks=(cr, cc))
    np.testing.assert_allclose(r.to_numpy(), np.cumsum(x, axis=axis), rtol=1e-12, atol=1e-12)
    assert max(r.stats["max_decompressions_per_chunk"].values()) <= 2, r.stats


@settings(max_examples=30, deadline=None)
@given(
    shape=st.lists(st.integers(1, 40), min_size=1, max_size=3),
    data=st.data(),
    dtype=st.sampled_from(["bool", "int16", "uint32", "float32", "float64"]),
    fmt=st.sampled_from([2, 3]),
    shuffle=st.sampled_from(["noshuffle", "shuffle", "bitshuffle"]),
    blocksize=st.sampled_from([0, 64, 256, 4096]),
    incompressible=st.booleans(),
)
def test_runs_of_blosc_chunks_decode_only_their_blocks(
    tmp_path_factory, shape, data, dtype, fmt, shuffle, blocksize, incompressible
):
    """A Zarr chunk that is one Blosc buffer (numcodecs' Blosc, v2 or v3; any shuffle and
    block size; stored uncompressed when incompressible) is read in runs of its C order:
    every region equals NumPy's, and a run of part of a chunk decodes less than the chunk."""
    chunks = tuple(data.draw(st.integers(1, s)) for s in shape)
    x = values(tuple(shape), dtype, seed=len(shape))
    if incompressible and x.dtype != np.bool_:
        x = np.random.default_rng(1).integers(0, 255, size=x.nbytes, dtype=np.uint8).view(x.dtype).reshape(x.shape)
    codes = {
        "noshuffle": numcodecs.Blosc.NOSHUFFLE,
        "shuffle": numcodecs.Blosc.SHUFFLE,
        "bitshuffle": numcodecs.Blosc.BITSHUFFLE,
    }
    path = tmp_path_factory.mktemp("runs") / "a.zarr"
    if fmt == 2:
        comp = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=codes[shuffle], blocksize=blocksize)
    else:
        comp = BloscCodec(cname="lz4", clevel=5, shuffle=shuffle, typesize=x.dtype.itemsize, blocksize=blocksize)
    zarr.create_array(
        str(path), shape=x.shape, chunks=chunks, dtype=x.dtype, zarr_format=fmt, compressors=comp, overwrite=True
    )[...] = x
    a = b2lazy.open(str(path))
    # Runs: a few rows, part of one row, one item; any region too.
    key = tuple(slice(data.draw(st.integers(0, s - 1)), None) for s in shape)
    row = tuple(
        [data.draw(st.integers(0, s - 1)) for s in shape[:-1]] + [slice(data.draw(st.integers(0, shape[-1] - 1)), None)]
    )
    for k in [key, row, (slice(0, 1),) + (slice(None),) * (len(shape) - 1)]:
        np.testing.assert_array_equal(a[k].to_numpy(), x[k])
    np.testing.assert_array_equal(b2lazy.max(a, axis=0).to_numpy(), x.max(axis=0))  # (exact in any order)
    # The first chunk's Blosc header says its real block size (Blosc may change the one asked).
    first = path / (".".join(["0"] * len(shape)) if fmt == 2 else "/".join(["c"] + ["0"] * len(shape)))
    if first.exists():
        head = first.read_bytes()[:16]
        nbytes, real_block = int.from_bytes(head[4:8], "little"), int.from_bytes(head[8:12], "little")
        row_bytes = int(np.prod(chunks[1:], dtype=np.int64)) * x.dtype.itemsize
        if not head[2] & 0x2 and row_bytes <= real_block and nbytes >= 2 * real_block:
            part = a[(slice(0, 1),) + tuple(slice(0, c) for c in chunks[1:])].compute()
            assert part.stats["bytes_decompressed"][str(path)] < nbytes
