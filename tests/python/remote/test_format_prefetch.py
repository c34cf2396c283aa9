"""The plan's prefetch on the formats' own store sources (exec/prefetcher.hpp): a Zarr
array (whole chunks, Blosc runs of whole chunks, sharded with indexes read by suffix
ranges) and a b2nd file over HTTP (nginx behind the fault proxy, a few ms added per
request) read by 2 workers have their reads fetched ahead and found there: no read made
by a worker itself (prefetch_misses 0), each chunk fetched once, values exact against
NumPy. A reduction to one output chunk (one task) reads ahead too, and a whole b2nd chunk
fetched ahead serves every slab of it. Asserted by counting requests, never by timing."""

import os

import blosc2
import numpy as np
import pytest
import zarr

import b2lazy as bl

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

ROWS, COLS = 512, 384


@pytest.fixture(scope="module")
def data():
    return np.random.default_rng(39).normal(size=(ROWS, COLS)).round(2)


def serve_dir(server, local, name):
    for dirpath, _, files in os.walk(local):
        for f in files:
            path = os.path.join(dirpath, f)
            with open(path, "rb") as fh:
                server.put(f"fmtprefetch/{name}/{os.path.relpath(path, local)}", fh.read())


@pytest.fixture(scope="module")
def served(nginx_server, data, tmp_path_factory):
    root = tmp_path_factory.mktemp("fmtprefetch")
    z = zarr.create_array(
        str(root / "a.zarr"),
        shape=data.shape,
        chunks=(64, 128),
        dtype="f8",
        compressors=zarr.codecs.BloscCodec(cname="zstd", clevel=1),
    )
    z[:] = data
    serve_dir(nginx_server, root / "a.zarr", "a.zarr")
    s = zarr.create_array(str(root / "s.zarr"), shape=data.shape, shards=(128, 384), chunks=(32, 128), dtype="f8")
    s[:] = data
    serve_dir(nginx_server, root / "s.zarr", "s.zarr")
    big = zarr.create_array(
        str(root / "big.zarr"),
        shape=(1024, 512),
        chunks=(256, 512),
        dtype="f8",
        compressors=zarr.codecs.BloscCodec(cname="zstd", clevel=1),
    )
    big[:] = np.random.default_rng(3).normal(size=(1024, 512))
    serve_dir(nginx_server, root / "big.zarr", "big.zarr")
    sb = zarr.create_array(
        str(root / "sb.zarr"),
        shape=(1024, 512),
        shards=(512, 512),
        chunks=(256, 512),
        dtype="f8",
        compressors=zarr.codecs.BloscCodec(cname="zstd", clevel=1),
    )
    sb[:] = np.random.default_rng(4).normal(size=(1024, 512))
    serve_dir(nginx_server, root / "sb.zarr", "sb.zarr")
    many = zarr.create_array(
        str(root / "many.zarr"),
        shape=(1024, 384),
        shards=(64, 384),
        chunks=(16, 128),
        dtype="f8",
        compressors=zarr.codecs.BloscCodec(cname="zstd", clevel=1),
    )
    many[:] = np.random.default_rng(5).normal(size=(1024, 384))
    serve_dir(nginx_server, root / "many.zarr", "many.zarr")
    blosc2.asarray(data, chunks=(128, 384), blocks=(16, 384), urlpath=str(root / "b.b2nd"), mode="w")
    with open(root / "b.b2nd", "rb") as f:
        nginx_server.put("fmtprefetch/b.b2nd", f.read())
    return root


def url(faults, name):
    return f"{faults.url}/fmtprefetch/{name}"


def check_counts(stats, requests):
    assert stats["store_requests"] == requests, stats  # each chunk once, whole
    assert stats["prefetch_reads"] > 0, stats
    assert stats["prefetch_hits"] + stats["prefetch_misses"] >= requests, stats


def test_zarr_sum_reads_each_chunk_once_ahead(faults, served, data):
    faults.set(latency=0.005)
    a = bl.open(url(faults, "a.zarr"))
    r = bl.sum(a).compute(nthreads=2)  # one task: the walk lists every chunk, in order
    np.testing.assert_allclose(r.to_numpy(), data.sum(), rtol=1e-12)
    check_counts(r.stats, (ROWS // 64) * (COLS // 128))
    assert faults.most_in_flight > 2


def test_zarr_partial_chunks_run_reads_whole_chunks(faults, served, data):
    # Output chunks of half a Zarr chunk's rows: each a Blosc run of half the chunk, read as
    # the whole chunk (one request, the second half found in the cache).
    faults.set(latency=0.002)
    a = bl.open(url(faults, "a.zarr"))
    r = (a * 2).compute(nthreads=2, chunks=(32, 128))
    np.testing.assert_array_equal(r.to_numpy(), data * 2)
    check_counts(r.stats, (ROWS // 64) * (COLS // 128))


def test_zarr_sharded_indexes_by_suffix(faults, served, data):
    faults.set(latency=0.002)
    a = bl.open(url(faults, "s.zarr"))
    r = bl.sum(a, axis=1).compute(nthreads=2)
    np.testing.assert_allclose(r.to_numpy(), data.sum(axis=1), rtol=1e-12)
    s = r.stats
    nshards = ROWS // 128
    # each shard's index once (its last bytes: no HEAD first), then its inner chunks
    assert s["store_requests"] <= nshards + nshards * (128 // 32) * (384 // 128), s
    assert s["prefetch_hits"] > 0


def test_zarr_shards_ahead_index_then_inner_chunks(faults, served):
    # 16 shards, a task each, reading a third of each shard (its first column of inner
    # chunks): the prefetch reads a shard's index, then (once it is here, StoreRead::then)
    # the inner chunks the task needs, ahead of the workers — not the index alone, leaving
    # every inner chunk to a worker's own round trip.
    faults.set(latency=0.005)
    a = bl.open(url(faults, "many.zarr"))
    ref = zarr.open_array(str(served / "many.zarr"))[:, :128]
    r = (a[:, :128] * 2).compute(nthreads=2)
    np.testing.assert_array_equal(r.to_numpy(), ref * 2)
    s = r.stats
    nshards, inner = 16, 16 * 4
    # The index alone would be nshards reads. The workers race the prefetch for the first
    # tasks' inner chunks, and on a loaded machine for more of them: ask for inner chunks
    # read ahead for at least a few tasks' worth (a margin of 4x).
    assert s["prefetch_reads"] > nshards + inner // 8, s


def test_zarr_shards_a_task_reads_whole_are_one_request_each(faults, served, nginx_server):
    # Tasks that read every inner chunk of their shard read the shard whole: one request,
    # no index round trip first (zarr-python reads a shard a selection covers the same
    # way). The workers' fills, pieces of a task, are served from the shard held.
    faults.set(latency=0.005)
    a = bl.open(url(faults, "many.zarr"))
    ref = zarr.open_array(str(served / "many.zarr"))[:]
    r = (a * 2).compute(nthreads=2)
    np.testing.assert_array_equal(r.to_numpy(), ref * 2)
    s = r.stats
    nshards, per_shard = 16, 4 * 3
    log = [e for e in nginx_server.access_log() if e["uri"].startswith("/fmtprefetch/many.zarr/c/")][
        -s["store_requests"] :
    ]
    whole = [e for e in log if e["status"] == 200]
    # (a worker that reaches a task before the prefetch reads its piece itself: the index
    # and its inner chunks, for the first task of each of the 2 workers at most)
    assert len(whole) >= nshards - 2, log
    assert s["store_requests"] <= nshards + 2 * (1 + per_shard), s


def test_b2nd_sum_whole_chunks_serve_every_slab(faults, served, data):
    faults.set(latency=0.005)
    a = bl.open(url(faults, "b.b2nd"))
    r = bl.sum(a).compute(nthreads=2, max_memory=8 << 20)  # slabs of less than a chunk
    np.testing.assert_allclose(r.to_numpy(), data.sum(), rtol=1e-12)
    s = r.stats  # every chunk once, whole (adjacent in the file: coalesced into fewer requests),
    # but for the first chunks of the two workers, which may read their blocks before the
    # prefetch is there (a loaded machine): at most two of the four chunks' bytes more.
    assert s["store_bytes"] <= 1.5 * os.path.getsize(served / "b.b2nd"), s
    # (a worker ahead of the prefetch reads its chunk's header and blocks itself: two
    # requests, and that chunk is then not fetched whole for the task)
    assert s["store_requests"] <= ROWS // 128 + 2 * 2 and s["prefetch_reads"] > 0, s
    assert s["prefetch_hits"] > ROWS // 128, s  # several slabs found the same whole chunk


def test_b2nd_slice_and_product(faults, served, data):
    faults.set(latency=0.002)
    a = bl.open(url(faults, "b.b2nd"))
    np.testing.assert_array_equal(a[::7, 10:20].compute(nthreads=2).to_numpy(), data[::7, 10:20])
    r = bl.matmul(bl.matrix_transpose(a), a[:, :16]).compute(nthreads=2)
    np.testing.assert_allclose(r.to_numpy(), data.T @ data[:, :16], rtol=1e-10, atol=1e-9)
    assert r.stats["prefetch_reads"] > 0, r.stats


@pytest.mark.parametrize("name, objects", [("big.zarr", 4), ("sb.zarr", 2)])
def test_zarr_stepped_slice_reads_runs_not_chunks(faults, served, name, objects):
    # a[::97, 10:20]: two or three rows of each (inner) chunk of 256 rows, each row a run of
    # 10 items in one Blosc block: the runs are read (header, block starts, the block), not
    # the chunks — over 4 chunk objects, or 2 shards (each shard's index first, a suffix range).
    faults.set(latency=0.002)
    a = bl.open(url(faults, name))
    ref = zarr.open_array(str(served / name))[:]
    r = a[::97, 10:20].compute(nthreads=2)
    np.testing.assert_array_equal(r.to_numpy(), ref[::97, 10:20])
    stored = sum(os.path.getsize(served / name / "c" / str(i) / "0") for i in range(objects))
    assert r.stats["store_bytes"] < stored / 2, (r.stats["store_bytes"], stored)
    assert r.stats["chunks_decompressed"]["total"] == 4  # (the runs of a chunk: one read of it)
    # a sum reads the chunks whole, each once
    s = bl.sum(a).compute(nthreads=2)
    np.testing.assert_allclose(s.to_numpy(), ref.sum(), rtol=1e-12)
    assert s.stats["store_bytes"] <= stored, (s.stats, stored)


def test_two_passes_fetch_once(tmp_path):
    # a - mean(a, 0): the mean's pass and the output pass both read `a` (5.7 MB stored, 8 MiB
    # decoded). At max_memory 24 MiB its stored bytes fit in half the budget beside the
    # rest: the fetch cache keeps them between the passes, each chunk fetched once. At 16
    # MiB they do not: fetched twice (an eighth of the budget holds the reads ahead only).
    from b2lazy import _core

    x = np.random.default_rng(1).normal(size=(2048, 512)).round(2)
    z = zarr.create_array(
        str(tmp_path / "bucket" / "m.zarr"),
        shape=x.shape,
        chunks=(128, 512),
        dtype="f8",
        compressors=zarr.codecs.BloscCodec(cname="zstd", clevel=1),
    )
    z[:] = x
    stored = sum(
        os.path.getsize(os.path.join(d, f))
        for d, _, fs in os.walk(tmp_path / "bucket" / "m.zarr")
        for f in fs
        if not f.endswith(".json")
    )
    _core._register_logging_store("twopass", str(tmp_path))
    a = bl.open("twopass://bucket/m.zarr")
    e = a - bl.mean(a, axis=0)
    r = e.compute(nthreads=2, chunks=(128, 512), max_memory=24 << 20)
    np.testing.assert_allclose(r.to_numpy(), x - x.mean(axis=0), rtol=1e-12, atol=1e-12)
    assert r.stats["store_requests"] == 16 and r.stats["store_bytes"] == stored, r.stats
    r = e.compute(nthreads=2, chunks=(128, 512), max_memory=16 << 20)
    np.testing.assert_allclose(r.to_numpy(), x - x.mean(axis=0), rtol=1e-12, atol=1e-12)
    assert r.stats["store_bytes"] > stored
