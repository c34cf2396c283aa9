"""Issue #13, item 4: compute() (and `b2lazy eval -o`) writes Zarr v3 — blosc or zstd,
the chunks asked for, optionally shards — that zarr-python (the oracle) reads equal to
NumPy; atomically, replacing only a Zarr array, as b2nd outputs replace only b2nd."""

import json
import os
import subprocess

import numpy as np
import pytest
import zarr

import b2lazy
from conftest import B2LAZY_COMMAND
from zarr_stores import DTYPES, values, write

needs_command = pytest.mark.skipif(B2LAZY_COMMAND is None, reason="the b2lazy command is not on PATH")


def read_back(path):
    return zarr.open_array(str(path), mode="r")[...]


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_every_dtype(tmp_path, dtype):
    x = values((33, 21), dtype)
    r = b2lazy.asarray(x).compute(urlpath=str(tmp_path / "o.zarr"), chunks=(10, 8))
    got = read_back(tmp_path / "o.zarr")
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, x)
    np.testing.assert_array_equal(r.to_numpy(), x)  # the result, read by b2lazy
    meta = json.loads((tmp_path / "o.zarr" / "zarr.json").read_text())
    assert meta["chunk_grid"]["configuration"]["chunk_shape"] == [10, 8]


@pytest.mark.parametrize(
    "cparams",
    [
        {},  # blosc(zstd, clevel 1, shuffle)
        {"codec": "lz4", "clevel": 5, "filter": "nofilter"},
        {"codec": "lz4hc", "clevel": 9},
        {"codec": "zlib", "clevel": 3},
        {"compressor": "zstd", "clevel": 3},
    ],
)
def test_compressors(tmp_path, cparams):
    x = values((50, 40), "float64")
    b2lazy.asarray(x).compute(urlpath=str(tmp_path / "o.zarr"), chunks=(16, 16), cparams=cparams)
    np.testing.assert_array_equal(read_back(tmp_path / "o.zarr"), x)
    codecs = json.loads((tmp_path / "o.zarr" / "zarr.json").read_text())["codecs"]
    assert codecs[-1]["name"] == cparams.get("compressor", "blosc")


def test_incompressible_and_tiny_chunks(tmp_path):
    x = np.random.default_rng(1).random((40, 3))  # white noise; chunks of 8 bytes
    b2lazy.asarray(x).compute(urlpath=str(tmp_path / "n.zarr"), chunks=(40, 3))
    b2lazy.asarray(x).compute(urlpath=str(tmp_path / "t.zarr"), chunks=(1, 1))
    np.testing.assert_array_equal(read_back(tmp_path / "n.zarr"), x)
    np.testing.assert_array_equal(read_back(tmp_path / "t.zarr"), x)


@pytest.mark.parametrize(
    "shape,chunks,shards", [((100, 70), (10, 7), (30, 14)), ((9,), (2,), (8,)), ((5, 6, 7), (2, 3, 4), (4, 6, 8))]
)
def test_shards(tmp_path, shape, chunks, shards):
    x = values(shape, "int32")
    a = b2lazy.asarray(x)
    r = (a * 2).compute(urlpath=str(tmp_path / "s.zarr"), chunks=chunks, shards=shards)
    np.testing.assert_array_equal(read_back(tmp_path / "s.zarr"), x * 2)
    assert r.stats["output_chunks"] == np.prod([-(-s // c) for s, c in zip(shape, shards)])
    z = zarr.open_array(str(tmp_path / "s.zarr"), mode="r")
    assert z.shards == shards and z.chunks == chunks
    key = (slice(1, None),) + (slice(None, None, 2),) * (len(shape) - 1)
    np.testing.assert_array_equal(b2lazy.open(str(tmp_path / "s.zarr"))[key].to_numpy(), (x * 2)[key])


def test_chunks_of_the_fill_value_are_left_out(tmp_path):
    x = np.zeros((40, 40))
    x[:10, :10] = 1
    b2lazy.asarray(x).compute(urlpath=str(tmp_path / "o.zarr"), chunks=(10, 10))
    files = [f for _, _, fs in os.walk(tmp_path / "o.zarr" / "c") for f in fs]
    assert len(files) == 1
    np.testing.assert_array_equal(read_back(tmp_path / "o.zarr"), x)
    b2lazy.asarray(x).compute(urlpath=str(tmp_path / "s.zarr"), chunks=(10, 10), shards=(20, 20))
    np.testing.assert_array_equal(read_back(tmp_path / "s.zarr"), x)


def test_zarr_to_zarr_expression(tmp_path):
    x = values((120, 90), "float64")
    write(tmp_path / "a.zarr", x, (32, 32), fmt=2, codec="blosc")
    a = b2lazy.open(str(tmp_path / "a.zarr"))
    r = (b2lazy.sin(a) ** 2 + b2lazy.cos(a) ** 2).compute(urlpath="zarr:" + str(tmp_path / "r"))
    np.testing.assert_allclose(read_back(tmp_path / "r"), np.ones_like(x), rtol=1e-14)
    assert r.urlpath == str(tmp_path / "r")
    # Default chunks follow the operand's.
    assert zarr.open_array(str(tmp_path / "r"), mode="r").chunks == (32, 32)


def test_replaces_only_a_zarr_array(tmp_path):
    x = np.arange(12.0)
    out = tmp_path / "o.zarr"
    b2lazy.asarray(x).compute(urlpath=str(out), chunks=(5,))
    b2lazy.asarray(x + 1).compute(urlpath=str(out), chunks=(4,))  # a Zarr array: replaced
    np.testing.assert_array_equal(read_back(out), x + 1)
    write(tmp_path / "v2.zarr", x, (3,), fmt=2)
    b2lazy.asarray(x + 2).compute(urlpath=str(tmp_path / "v2.zarr"))  # v2 replaced by v3
    np.testing.assert_array_equal(read_back(tmp_path / "v2.zarr"), x + 2)
    assert not (tmp_path / "v2.zarr" / ".zarray").exists()
    zarr.open_group(str(tmp_path / "g.zarr"), mode="w")
    (tmp_path / "d.zarr").mkdir()
    (tmp_path / "d.zarr" / "keep.txt").write_text("mine")
    (tmp_path / "f.zarr").write_text("a file")
    for target in ["g.zarr", "d.zarr", "f.zarr"]:
        with pytest.raises(OSError, match="not a Zarr array is there"):
            b2lazy.asarray(x).compute(urlpath=str(tmp_path / target))
    assert (tmp_path / "d.zarr" / "keep.txt").read_text() == "mine"
    assert (tmp_path / "f.zarr").read_text() == "a file"
    assert sorted(os.listdir(tmp_path)) == ["d.zarr", "f.zarr", "g.zarr", "o.zarr", "v2.zarr"]  # no temporaries


def test_a_failed_compute_leaves_nothing(tmp_path):
    x = np.arange(10.0)
    b2lazy.asarray(x).compute(urlpath=str(tmp_path / "o.zarr"))
    bad = b2lazy.asarray(np.zeros(3)) + b2lazy.open(str(tmp_path / "o.zarr"))[:3]
    with pytest.raises(ValueError, match="multiples"):
        bad.compute(urlpath=str(tmp_path / "o.zarr"), chunks=(2,), shards=(3,))
    with pytest.raises(ValueError, match="blosclz"):
        bad.compute(urlpath=str(tmp_path / "o.zarr"), cparams={"codec": "blosclz"})
    with pytest.raises(ValueError, match="compressor"):
        bad.compute(urlpath=str(tmp_path / "o.zarr"), cparams={"compressor": "lzma"})
    with pytest.raises(ValueError, match="shards apply to Zarr"):
        bad.compute(urlpath=str(tmp_path / "o.b2nd"), chunks=(1,), shards=(2,))
    np.testing.assert_array_equal(read_back(tmp_path / "o.zarr"), x)
    assert sorted(os.listdir(tmp_path)) == ["o.zarr"]


@needs_command
def test_command_reads_and_writes_zarr(tmp_path):
    x = values((64, 48), "float64")
    write(tmp_path / "a.zarr", x, (16, 16), fmt=3, codec="blosc-lz4-bitshuffle")
    write(tmp_path / "b.zarr", x.T.copy(), (10, 10), fmt=2, codec="zlib")
    run = lambda *args: subprocess.run([B2LAZY_COMMAND, *args], capture_output=True, text=True, cwd=tmp_path)
    p = run(
        "eval",
        "a + b.T",
        "a=a.zarr",
        "b=zarr:b.zarr",
        "-o",
        "out.zarr",
        "--chunks",
        "16,16",
        "--shards",
        "32,48",
        "--compressor",
        "zstd",
        "--clevel",
        "3",
        "--no-progress",
    )
    assert p.returncode == 0, p.stderr
    assert "wrote out.zarr" in p.stdout
    np.testing.assert_array_equal(read_back(tmp_path / "out.zarr"), 2 * x)
    p = run("eval", "sum(a, axis=0)", "a=out.zarr", "-o", "s.b2nd", "--no-progress")
    assert p.returncode == 0, p.stderr
    np.testing.assert_allclose(b2lazy.open(str(tmp_path / "s.b2nd")).to_numpy(), (2 * x).sum(axis=0))
    p = run("info", "out.zarr")
    assert p.returncode == 0 and "zarr" in p.stdout and "shards  (32, 48)" in p.stdout, p.stdout
    p = run("eval", "a", "a=missing.zarr", "-o", "x.zarr")
    assert p.returncode == 1 and "missing.zarr" in p.stderr


def test_zero_dimensional_and_empty_outputs(tmp_path):
    b2lazy.asarray(np.array(3.5)).compute(urlpath=str(tmp_path / "s.zarr"))
    assert read_back(tmp_path / "s.zarr")[()] == 3.5
    b2lazy.asarray(np.zeros((0, 5), dtype="int16")).compute(urlpath=str(tmp_path / "e.zarr"))
    got = read_back(tmp_path / "e.zarr")
    assert got.shape == (0, 5) and got.dtype == np.int16
    assert b2lazy.open(str(tmp_path / "e.zarr")).shape == (0, 5)
