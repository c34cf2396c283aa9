"""Scans in one pass (issue #12, items 2 and 5): when the output chunks ask a scan for
regions that follow one another along its axis, a run of every task in order passes the
carry from chunk to chunk and the segment totals (a second pass over the input) are not
computed. A run of part of the tasks computes them as a stage, as before.

Checked against NumPy, with the bytes decompressed counted: one pass reads the input
once (before: twice)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import b2lazy as bl
from array_cases import assert_close


def stored(tmp_path, x, chunks, blocks=None, name="a.b2nd"):
    path = tmp_path / name
    bl.asarray(x).compute(urlpath=str(path), chunks=chunks, blocks=blocks or chunks)
    return bl.open(str(path)), str(path)


def once(x, chunks):
    """Bytes of decompressing every (padded) chunk once."""
    return int(np.prod([-(-n // c) * c for n, c in zip(x.shape, chunks)])) * x.itemsize


def scan_ref(x, axis):
    return np.cumsum(x, axis=axis), np.cumsum(np.abs(x), axis=axis)


def carried(plan):
    return [s for s in plan.stages if s["carried_by"]]


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("chunks", [(64, 256), (256, 16), (16, 256), (100, 100)])
def test_full_scan_reads_its_input_once(tmp_path, axis, chunks):
    x = np.random.default_rng(1).standard_normal((256, 256))
    a, path = stored(tmp_path, x, chunks)
    e = bl.cumsum(a, axis=axis)
    p = e.plan(nthreads=2)
    r = e.compute()
    ref, run = scan_ref(x, axis)
    assert_close(r.to_numpy(), ref, 1e-10, 1e-12 * run)
    if carried(p):
        assert r.stats["bytes_decompressed"][path] == once(x, chunks), r.stats["bytes_decompressed"]
        assert "passes its carry from output chunk to output chunk" in e.explain()


def test_default_layouts_are_carried(tmp_path):
    # Row strips (python-blosc2's default for matrices) and tiles: every scan carried.
    x = np.random.default_rng(2).standard_normal((512, 512))
    for chunks in [(64, 512), (128, 128)]:
        a, path = stored(tmp_path, x, chunks, name=f"a{chunks[0]}.b2nd")
        for axis in (None, 0, 1):
            e = bl.cumsum(a, axis=axis)
            p = e.plan(nthreads=2)
            assert carried(p) or not p.stages, (chunks, axis, e.explain())  # (rows whole in a chunk: no carry)
            r = e.compute(nthreads=2)
            assert r.stats["bytes_decompressed"][path] == once(x, chunks)
            ref, run = scan_ref(x, axis)
            assert_close(r.to_numpy(), ref, 1e-10, 1e-12 * run)


def test_part_of_the_tasks_computes_the_totals(tmp_path):
    x = np.random.default_rng(3).standard_normal((300, 200))
    a, path = stored(tmp_path, x, (30, 200))
    e = bl.cumsum(a, axis=0) * 2
    p = e.plan(nthreads=2)
    assert carried(p)
    out = np.zeros(x.shape)
    mid = p.ntasks // 2
    got_hi = p.execute(first_task=mid, last_task=p.ntasks)  # later tasks first: no carry to take
    got_lo = p.execute(first_task=0, last_task=mid)
    for got in (got_hi, got_lo):
        mask = got != 0
        out[mask] = got[mask]
    ref, run = scan_ref(x, 0)
    assert_close(out, 2 * ref, 1e-10, 2e-12 * run)
    # A run of every task afterwards reads the totals kept with the plan: no carries.
    assert_close(p.execute(), 2 * ref, 1e-10, 2e-12 * run)


@pytest.mark.parametrize(
    "expr",
    [
        "cumsum(a)[::-1]",  # chunks ask regions in reverse: no chain
        "cumsum(a, axis=0) - mean(cumsum(a, axis=0), axis=0)",  # a stage pulls the scan
        "cumsum(a, axis=1) + cumsum(a, axis=1)[:, ::-1]",
        "cumsum(a, axis=0)[::3] + 1",
        "cumsum(a + 1, axis=1) * a",
        "cumprod(a / 4 + 1, axis=0)",
    ],
)
def test_compositions(tmp_path, expr):
    x = np.random.default_rng(4).random((240, 180)) - 0.5
    a, _ = stored(tmp_path, x, (40, 60))
    got = bl.evaluate(expr, a=a).compute(nthreads=2).to_numpy()
    ref = eval(
        expr.replace("cumsum", "np.cumsum").replace("cumprod", "np.cumprod").replace("mean", "np.mean"),
        {"np": np, "a": x},
    )
    assert_close(got, ref, 1e-9, 1e-9 * np.abs(ref).max())


def test_float32_and_integers(tmp_path):
    rng = np.random.default_rng(5)
    x32 = rng.standard_normal((200, 300)).astype(np.float32)
    a, _ = stored(tmp_path, x32, (20, 300), name="f.b2nd")
    e = bl.cumsum(a, axis=0)
    assert carried(e.plan(nthreads=2))
    got = e.compute(nthreads=2).to_numpy()
    assert got.dtype == np.float32
    ref = np.cumsum(x32.astype(np.float64), axis=0)
    assert_close(got, ref.astype(np.float32), 1e-6, 1e-6 * np.cumsum(np.abs(x32), axis=0))
    xi = rng.integers(-(2**40), 2**40, (200, 300))
    ai, _ = stored(tmp_path, xi, (20, 300), name="i.b2nd")
    np.testing.assert_array_equal(bl.cumsum(ai).compute(nthreads=2).to_numpy(), np.cumsum(xi))


@settings(max_examples=40, deadline=None)
@given(
    rows=st.integers(1, 90),
    cols=st.integers(1, 70),
    cr=st.integers(1, 40),
    cc=st.integers(1, 40),
    axis=st.sampled_from([None, 0, 1]),
    nthreads=st.sampled_from([1, 2]),
    prod=st.booleans(),
    seed=st.integers(0, 2**31),
)
def test_random_layouts(tmp_path_factory, rows, cols, cr, cc, axis, nthreads, prod, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.9, 1.1, (rows, cols)) if prod else rng.standard_normal((rows, cols))
    a = bl.asarray(x, chunks=(min(cr, rows), min(cc, cols)), blocks=(min(cr, rows), min(cc, cols)))
    f = bl.cumprod if prod else bl.cumsum
    e = f(a, axis=axis)
    chunks = (max(1, cr * cc // 2),) if axis is None else (max(1, cr // 2), cc)
    got = e.compute(nthreads=nthreads, chunks=chunks).to_numpy()
    ref = (np.cumprod if prod else np.cumsum)(x, axis=axis)
    assert_close(got, ref, 1e-10, 1e-12 * np.abs(ref).max() * x.size)


def test_a_failing_chunk_stops_the_run_without_a_hang(tmp_path):
    # Chunks waiting for the carry of one that failed stop too: an error, not a hang, and
    # no output left behind.
    import concurrent.futures
    import os

    x = np.random.default_rng(6).standard_normal((160, 40))
    p = str(tmp_path / "x")  # a sparse directory: one file per chunk
    bl.asarray(x).compute(urlpath=p + "/", chunks=(16, 40), blocks=(8, 40), contiguous=False)
    a = bl.open(p)
    e = bl.cumsum(a, axis=0)
    assert carried(e.plan(nthreads=2))
    files = sorted(f for f in os.listdir(p) if f.endswith(".chunk"))
    with open(os.path.join(p, files[len(files) // 2]), "r+b") as f:
        f.truncate(20)
    out = str(tmp_path / "o.b2nd")
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        run = pool.submit(lambda: e.compute(urlpath=out, nthreads=2))
        with pytest.raises(Exception, match="corrupted"):
            run.result(timeout=120)
    assert not os.path.exists(out)


def test_flattened_scan_chunks_are_whole_block_rows(tmp_path):
    # 1 MiB of the scan is 64 rows of 2048; the blocks are 48 rows deep: chunks of 64 rows
    # would cut every block row, decompressing it for two chunks, and the planner would
    # keep all of `a` dense to avoid that. Chunks of 96 rows cut none.
    x = np.random.default_rng(7).standard_normal((480, 2048))
    a, path = stored(tmp_path, x, (96, 512), (48, 512))
    e = bl.cumsum(a)
    p = e.plan(nthreads=2)
    assert p.chunks[0] % (48 * 2048) == 0, p.chunks
    assert not [s for s in p.stages if s["source"]], str(p)
    r = e.compute(nthreads=2)
    assert r.stats["bytes_decompressed"][path] == x.nbytes
    ref, run = scan_ref(x, None)
    assert_close(r.to_numpy(), ref, 1e-10, 1e-12 * run)


@pytest.mark.parametrize("shape", [(0, 7), (5, 0), (0, 0)])
def test_flattened_scan_of_an_empty_stored_array(tmp_path, shape):
    x = np.zeros(shape)
    a, _ = stored(tmp_path, x, (4, 4), (2, 4))
    assert bl.cumsum(a).compute().to_numpy().shape == (0,)
