"""Issue #12, items 3 and 5: max_memory is a limit, not a hint; scans hold a few pieces.

* Every evaluation projects its peak memory before any work (`stats["projected_peak_bytes"]`,
  src/plan/memory.cpp: output chunk and writer buffers and each node's `fill_bytes` per
  worker, plus what is computed once). compute() and to_numpy() shrink output chunks until
  the projection fits `max_memory`; when even the smallest do not fit (storage chunks that
  must be decompressed whole), they refuse with a ValueError naming the smallest budget
  that works — and that budget does work.
* The projection is an upper bound of what the workers' scratch arenas reached
  (`stats["peak_scratch_bytes"]`) and not far above it.
* A scan pulls its input in pieces: cumsum of an array many storage chunks large keeps a
  few pieces of scratch per worker, not chunk-sized buffers of input, accumulator and result.

Peak RSS is measured by bench/bench_max_memory.py (bench/RESULTS.md); here only counters
and projections are asserted, with one generous RSS upper bound in a subprocess.
"""

import os
import re
import subprocess
import sys
import textwrap

import blosc2
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import b2lazy

MiB = 1 << 20
REFUSAL = re.compile(
    r"max_memory of [0-9.]+ MiB is too small for this evaluation: its projected peak is "
    r"[0-9.]+ MiB \(.*\) with output chunks \([0-9, ]+\); the smallest budget that works is "
    r"(\d+) MiB \(or use fewer threads, or smaller storage chunks\)$"
)


def smooth(shape, seed=0):
    rng = np.random.default_rng(seed)
    x = np.linspace(0, 1, shape[0])[:, None] + np.linspace(0, 2, shape[1])[None, :]
    return np.sin(37 * x) + 1e-3 * rng.standard_normal(shape)


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """512 x 1024 float64 (4 MiB) on disk in row strips of 1 MiB (C-order blocks), and the
    same values in square tiles with square blocks (whole-chunk reads only)."""
    d = tmp_path_factory.mktemp("mem")
    x = smooth((512, 1024))
    rows = str(d / "rows.b2nd")
    tiles = str(d / "tiles.b2nd")
    blosc2.asarray(x, urlpath=rows, mode="w", chunks=(128, 1024), blocks=(16, 1024))
    blosc2.asarray(x, urlpath=tiles, mode="w", chunks=(256, 512), blocks=(64, 64))
    return x, rows, tiles


WORKLOADS = {
    "cumsum(a)": (lambda a: b2lazy.cumsum(a), lambda x: np.cumsum(x)),
    "a - mean(a, 0)": (lambda a: a - b2lazy.mean(a, axis=0), lambda x: x - x.mean(axis=0)),
    "sum(a) + a": (lambda a: b2lazy.sum(a) + a, lambda x: x.sum() + x),
    "sum(a, axis=0)": (lambda a: b2lazy.sum(a, axis=0), lambda x: x.sum(axis=0)),
    "sum(a, axis=1)": (lambda a: b2lazy.sum(a, axis=1), lambda x: x.sum(axis=1)),
    "matmul(a, a.T) + 1": (lambda a: b2lazy.matmul(a[:256], a[:256].T) + 1, lambda x: x[:256] @ x[:256].T + 1),
}


@pytest.mark.parametrize("name", list(WORKLOADS))
@pytest.mark.parametrize("budget", [4 * MiB, 16 * MiB, 64 * MiB, None])
@pytest.mark.parametrize("layout", ["rows", "tiles"])
def test_projection_fits_the_budget_and_bounds_the_scratch(stored, tmp_path, name, budget, layout):
    x, rows, tiles = stored
    a = b2lazy.open(rows if layout == "rows" else tiles)
    lazy, ref = WORKLOADS[name]
    kw = {} if budget is None else {"max_memory": budget}
    try:
        r = lazy(a).compute(urlpath=str(tmp_path / "out.b2nd"), nthreads=2, **kw)
    except ValueError as e:  # only when the storage chunks cannot be read within the budget
        m = REFUSAL.match(str(e))
        assert m and budget is not None and int(m.group(1)) * MiB > budget, str(e)
        r = lazy(a).compute(urlpath=str(tmp_path / "out.b2nd"), nthreads=2, max_memory=int(m.group(1)) * MiB)
        budget = int(m.group(1)) * MiB
    np.testing.assert_allclose(r[...], ref(x), rtol=1e-10, atol=1e-9)
    projected = r.stats["projected_peak_bytes"]
    assert 0 < projected <= (budget or 1 << 30)
    # An upper bound of the workers' scratch (arenas grow in blocks of at least 1 MiB).
    assert r.stats["peak_scratch_bytes"] <= projected + 2 * MiB, r.stats
    assert projected <= 2.5 * r.stats["peak_scratch_bytes"] + 8 * MiB, r.stats


def test_a_reduction_forked_over_the_workers_is_projected_on_each(stored):
    # Regression: a single-chunk reduction spreads its slabs over both workers (each holds
    # an arena of its own) while the model counted one slab, on the calling thread:
    # peak_scratch_bytes came out 3 MiB against a projection of 0.6 MiB, now and then.
    x, rows, _ = stored
    a = b2lazy.open(rows)
    for _ in range(5):
        r = b2lazy.sum(a, axis=0).compute(max_memory=4 * MiB, nthreads=2)
        np.testing.assert_allclose(r[...], x.sum(axis=0), rtol=1e-10)
        assert 0 < r.stats["peak_scratch_bytes"] <= r.stats["projected_peak_bytes"] <= 4 * MiB, r.stats


def test_partial_chunk_reads_hold_their_item_range_not_the_chunk(stored, tmp_path):
    # Regression: a read of part of a row-strip chunk decompressed its item range into a
    # chunk-sized scratch buffer, beyond the projection (a matmul's K-panels across chunk
    # boundaries held a whole 8 MiB storage chunk per worker).
    x, rows, _ = stored
    a = b2lazy.open(rows)  # chunks of 128 x 1024 (1 MiB), C-order blocks
    for e, want in ((a[120:136] * 2, x[120:136] * 2), (a.T + 1, x.T + 1)):  # 8 rows of two chunks; columns
        for nthreads in (1, 2):
            r = e.compute(urlpath=str(tmp_path / "t.b2nd"), max_memory=4 * MiB, nthreads=nthreads)
            np.testing.assert_array_equal(r[...], want)
            assert r.stats["peak_scratch_bytes"] <= r.stats["projected_peak_bytes"] <= 4 * MiB, r.stats
    r = (a[120:136] * 2).compute(nthreads=1)
    assert r.stats["peak_scratch_bytes"] < MiB, r.stats  # not a 1 MiB chunk buffer


def test_a_budget_the_storage_chunks_cannot_meet_is_refused_before_any_work(stored, tmp_path):
    x, _, tiles = stored
    a = b2lazy.open(tiles)  # square blocks: a chunk (1 MiB) is decompressed whole
    out = tmp_path / "never.b2nd"
    with pytest.raises(ValueError) as e:
        (a + 1).compute(urlpath=str(out), max_memory=MiB, nthreads=2)
    m = REFUSAL.match(str(e.value))
    assert m, str(e.value)
    assert str(e.value).startswith("max_memory of 1.0 MiB is too small for this evaluation: its projected peak is ")
    assert not out.exists() and os.listdir(tmp_path) == []  # nothing written, no temporary
    need = int(m.group(1)) * MiB
    r = (a + 1).compute(urlpath=str(out), max_memory=need, nthreads=2)
    assert r.stats["projected_peak_bytes"] <= need
    np.testing.assert_array_equal(r[...], x + 1)
    with pytest.raises(ValueError, match=REFUSAL):
        (a + 1).to_numpy(max_memory=MiB)


def test_smaller_output_chunks_keep_row_strip_reads_within_a_small_budget(stored, tmp_path):
    x, rows, _ = stored
    a = b2lazy.open(rows)
    r = (b2lazy.sum(a) + a).compute(urlpath=str(tmp_path / "o.b2nd"), max_memory=2 * MiB, nthreads=2)
    assert r.to_blosc2().chunks[0] < 128  # below the storage chunks: rows are read by blocks
    assert r.stats["projected_peak_bytes"] <= 2 * MiB
    np.testing.assert_allclose(r[...], x.sum() + x, rtol=1e-12)


def test_a_scan_holds_pieces_not_chunks(tmp_path):
    # 32 MiB in 4 MiB storage chunks: the scan's workers hold about a chunk of scratch each.
    x = smooth((4096, 1024), seed=3)
    p = str(tmp_path / "a.b2nd")
    blosc2.asarray(x, urlpath=p, mode="w", chunks=(512, 1024), blocks=(32, 1024))
    a = b2lazy.open(p)
    for e, ref in (
        (b2lazy.cumsum(a), np.cumsum(x)),
        (b2lazy.cumulative_sum(a, axis=0), np.cumsum(x, axis=0)),
        (b2lazy.cumulative_sum(a, axis=1), np.cumsum(x, axis=1)),
    ):
        r = e.compute(urlpath=str(tmp_path / "o.b2nd"), nthreads=2)
        np.testing.assert_allclose(r[...], ref, rtol=1e-9, atol=1e-6)
        # 2 workers, a few chunks' worth each (it was input, accumulator, result and the
        # writer's buffers of a whole chunk each: about 5 chunks per worker).
        assert r.stats["peak_scratch_bytes"] <= 2 * 2.5 * 4 * MiB, r.stats
        assert r.stats["projected_peak_bytes"] <= 5 * 4 * MiB, r.stats
        # Segments are cut smaller than storage chunks, yet each chunk is read about twice
        # (totals, then the scan), never once per segment.
        assert r.stats["max_decompressions_per_chunk"][p] <= 16, r.stats


def test_explain_prints_the_projection(stored):
    _, rows, _ = stored
    a = b2lazy.open(rows)
    text = b2lazy.cumsum(a).explain()
    assert re.search(r"peak memory: at most about [0-9.]+ MiB \(.*workers? x .*\), max_memory 1.00 GiB", text), text
    r = b2lazy.cumsum(a).compute()
    assert "(projected peak " in r.explain()


# ---------------------------------------------------------------------------------------
# 64 MiB storage chunks (python-blosc2's default for 4096 x 4096 float64 on a large L3)
@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """4096 x 4096 float64 (128 MiB) in two 64 MiB chunks of C-order blocks (4, 4096)."""
    x = smooth((4096, 4096), seed=4)
    p = str(tmp_path_factory.mktemp("big") / "big.b2nd")
    blosc2.asarray(x, urlpath=p, mode="w", chunks=(2048, 4096), blocks=(4, 4096))
    return x, p


@pytest.mark.parametrize("name", ["sum(a, 0)", "mean(a, 0)", "a - mean(a, 0)"])
def test_reductions_over_64_mib_chunks_fit_64_mib_and_read_the_array_about_once(big, name):
    # Slabs thinner than a chunk are one C-order range of it, read alone: not refused at a
    # budget of one chunk, and the array is decompressed once per reduction (it was 16x:
    # 128-column pieces each decompressing most of a chunk).
    x, p = big
    a = b2lazy.open(p)
    lazy, ref = {
        "sum(a, 0)": (b2lazy.sum(a, axis=0), lambda: x.sum(axis=0)),
        "mean(a, 0)": (b2lazy.mean(a, axis=0), lambda: x.mean(axis=0)),
        "a - mean(a, 0)": (a - b2lazy.mean(a, axis=0), lambda: x - x.mean(axis=0)),
    }[name]
    r = lazy.compute(max_memory=64 * MiB, nthreads=2)
    np.testing.assert_allclose(r[...], ref(), rtol=1e-10, atol=1e-9)
    assert 0 < r.stats["projected_peak_bytes"] <= 64 * MiB, r.stats
    assert r.stats["peak_scratch_bytes"] <= r.stats["projected_peak_bytes"] + 2 * MiB, r.stats
    assert r.stats["bytes_decompressed"][p] <= 2 * x.nbytes, r.stats


def test_elementwise_over_64_mib_chunks_writes_chunks_of_at_most_8_mib(big, tmp_path):
    # Output chunks were the operand's 64 MiB chunks: each worker held several of them
    # (operands, result, writer), 384 MiB of scratch for sin(a)**2 + cos(b)**2.
    x, p = big
    a = b2lazy.open(p)
    r = (b2lazy.sin(a) ** 2 + b2lazy.cos(a) ** 2).compute(urlpath=str(tmp_path / "o.b2nd"), nthreads=2)
    chunks, blocks = r.to_blosc2().chunks, r.to_blosc2().blocks
    assert np.prod(chunks) * 8 <= 8 * MiB and chunks[1] == 4096, chunks  # rows of the operand's chunks
    assert blocks == (4, 4096), blocks  # the operand's blocks still fit
    np.testing.assert_allclose(r[...], np.sin(x) ** 2 + np.cos(x) ** 2, rtol=1e-15, atol=1e-15)
    assert r.stats["peak_scratch_bytes"] <= r.stats["projected_peak_bytes"] + 2 * MiB, r.stats
    assert r.stats["projected_peak_bytes"] <= 64 * MiB, r.stats
    assert r.stats["bytes_decompressed"][p] <= 2 * x.nbytes, r.stats  # each output chunk reads its rows in place
    # Chunks (and blocks) the caller chose are kept as they are.
    r = (a + 1).compute(urlpath=str(tmp_path / "c.b2nd"), chunks=(2048, 4096), blocks=(4, 4096), nthreads=2)
    assert r.to_blosc2().chunks == (2048, 4096) and r.to_blosc2().blocks == (4, 4096)
    np.testing.assert_array_equal(r[...], x + 1)


@pytest.mark.parametrize("budget", [64 * MiB, 256 * MiB])
def test_gram_over_64_mib_chunks_is_planned_within_the_budget(big, tmp_path, budget):
    # a.T @ a over 64 MiB row-strip chunks was refused at 64 and 256 MiB (290 MiB needed):
    # each column strip of x decompressed its chunks whole. The upper triangle is now kept
    # in row bands (each reads x once) and column strips are read in 4 MiB pieces.
    x, p = big
    a = b2lazy.open(p)
    plan = (a.T @ a).plan(max_memory=budget)
    assert 0 < plan.projected_peak <= budget
    r = (a.T @ a).compute(urlpath=str(tmp_path / "g.b2nd"), max_memory=budget, nthreads=2)
    got = r.to_numpy()
    bound = 1e-12 * (np.abs(x).T @ np.abs(x)) + 1e-30
    assert np.all(np.abs(got - x.T @ x) <= bound)
    assert r.stats["projected_peak_bytes"] <= budget, r.stats
    assert r.stats["peak_scratch_bytes"] <= r.stats["projected_peak_bytes"] + 2 * MiB, r.stats
    # x is read once per band of the upper triangle (it was 34x at 64 MiB, 56x at 256 MiB).
    assert r.stats["bytes_decompressed"][p] <= 20 * x.nbytes, r.stats


@pytest.mark.parametrize(
    "sel",
    [
        np.s_[:, 1000:1100],
        np.s_[100:3900, 1000:3000],
        np.s_[::3, 7:4000:129],
        np.s_[::-1, ::-7],
        np.s_[2040:2060, 5:9],
        np.s_[5, :],
    ],
)
def test_parts_of_64_mib_chunks_are_read_in_pieces(big, sel):
    # A column strip or a tile of a row-strip chunk is not one C-order range of it: its
    # item range (most of the 64 MiB chunk) is read in pieces of at most 4 MiB.
    x, p = big
    a = b2lazy.open(p)
    r = (a[sel] * 2).compute(nthreads=1, max_memory=16 * MiB)  # (nothing kept: what the tasks hold)
    np.testing.assert_array_equal(r[...], x[sel] * 2)
    projected, scratch = r.stats["projected_peak_bytes"], r.stats["peak_scratch_bytes"]
    assert scratch <= projected + 2 * MiB, r.stats
    assert projected <= 2.5 * scratch + 8 * MiB, r.stats  # as in test_projection_fits_the_budget...
    assert projected <= 16 * MiB, r.stats  # not a 64 MiB chunk buffer


def test_parts_of_big_chunks_of_square_blocks_are_read_block_by_block(tmp_path):
    # Blocks not in C order: a chunk over 4 MiB is read block by block, not whole.
    x = smooth((2048, 2048), seed=5)
    p = str(tmp_path / "sq.b2nd")
    blosc2.asarray(x, urlpath=p, mode="w", chunks=(1024, 2048), blocks=(128, 256))  # 16 MiB chunks
    a = b2lazy.open(p)
    for e, want in (
        (a.T + 1, x.T + 1),
        (a[3:2000:5, ::-3] * 2, x[3:2000:5, ::-3] * 2),
        (a[1000:1030] - 1, x[1000:1030] - 1),
    ):
        r = e.compute(nthreads=2, max_memory=16 * MiB)
        np.testing.assert_array_equal(r[...], want)
        # (arenas grow in blocks of at least 1 MiB)
        assert r.stats["peak_scratch_bytes"] <= r.stats["projected_peak_bytes"] + 2 * MiB, r.stats
        assert r.stats["projected_peak_bytes"] <= 16 * MiB, r.stats
    # Rows 1000:1030 touch one row of blocks in each of two chunks: 2 x 8 blocks of 256 KiB,
    # not two 16 MiB chunks; the plan's estimate says so too.
    r = (a[1000:1030] - 1).compute(nthreads=2, max_memory=16 * MiB)
    assert r.stats["bytes_decompressed"][p] == 4 * MiB, r.stats
    assert re.search(r"read \(decompressed\):\s+\S+: 4\.0 MiB", r.explain()), r.explain()
    r = (a + 1).compute(urlpath=str(tmp_path / "o.b2nd"), nthreads=2)  # aligned: whole chunks, as before
    np.testing.assert_array_equal(r[...], x + 1)


# ---------------------------------------------------------------------------------------
# random graphs and budgets
@st.composite
def graphs(draw):
    """A random graph over one 2-d operand: reductions broadcast back, scans, masks, products."""
    m, n = draw(st.integers(8, 96)), draw(st.integers(8, 96))
    x = smooth((m, n), seed=draw(st.integers(0, 5)))
    steps = draw(
        st.lists(
            st.sampled_from(["mean0", "sum1", "cumsum0", "cumsum1", "cumsum", "mask", "matmul", "sin", "sumall"]),
            min_size=1,
            max_size=4,
        )
    )
    return x, steps


def build(a, steps, lib):
    for s in steps:
        if a.ndim != 2:
            a = lib.sin(a)
            continue
        if s == "mean0":
            a = a - lib.mean(a, axis=0)
        elif s == "sum1":
            a = a + lib.sum(a, axis=1, keepdims=True)
        elif s == "cumsum0":
            a = lib.cumsum(a, axis=0) if lib is np else b2lazy.cumulative_sum(a, axis=0)
        elif s == "cumsum1":
            a = lib.cumsum(a, axis=1) if lib is np else b2lazy.cumulative_sum(a, axis=1)
        elif s == "cumsum":
            a = lib.cumsum(a)
        elif s == "mask":
            a = a[a > 0.1]
        elif s == "matmul":
            a = lib.matmul(a, a.T) / a.shape[1]
        elif s == "sin":
            a = lib.sin(a)
        elif s == "sumall":
            a = a - lib.sum(a) / a.size
    return a


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    g=graphs(),
    budget=st.sampled_from([1 << 16, 1 << 18, MiB, 4 * MiB, 64 * MiB]),
    nthreads=st.sampled_from([1, 2]),
    chunked=st.booleans(),
    to_numpy=st.booleans(),
)
def test_random_graphs_fit_the_budget_or_name_the_one_that_does(g, budget, nthreads, chunked, to_numpy):
    x, steps = g
    a = b2lazy.asarray(x, chunks=(8, 16)) if chunked else b2lazy.asarray(x)
    ref = build(x, steps, np)
    lazy = build(a, steps, b2lazy)

    def run(mm):
        if to_numpy:
            return lazy.to_numpy(nthreads=nthreads, max_memory=mm), None
        r = lazy.compute(nthreads=nthreads, max_memory=mm)
        return r.to_numpy(), r.stats

    try:
        got, stats = run(budget)
    except ValueError as e:
        m = REFUSAL.match(str(e))
        assert m, str(e)
        budget = int(m.group(1)) * MiB
        got, stats = run(budget)
    np.testing.assert_allclose(got, ref, rtol=1e-8, atol=1e-8 * max(1.0, float(np.abs(ref).max(initial=0))))
    if stats is not None:
        assert stats["projected_peak_bytes"] <= budget


def test_rss_growth_of_a_scan_stays_near_a_few_chunks(tmp_path):
    """Upper bound only, with a generous margin: cumsum of a 64 MiB array stored in 8 MiB
    chunks grows the process by well under the array (it grew by 105 MiB for 128 MiB)."""
    p = str(tmp_path / "a.b2nd")
    blosc2.asarray(smooth((2048, 4096), seed=1), urlpath=p, mode="w", chunks=(256, 4096))
    code = textwrap.dedent(f"""
        import b2lazy
        def status(field):
            for line in open("/proc/self/status"):
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
        a = b2lazy.open({p!r})
        open("/proc/self/clear_refs", "w").write("5")
        base = status("VmRSS")
        b2lazy.cumsum(a).compute(urlpath={str(tmp_path / "o.b2nd")!r}, nthreads=2)
        print(status("VmHWM") - base)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    growth = int(out.stdout.split()[-1])
    assert growth <= 4 * 8 * MiB + 16 * MiB, growth / MiB


def test_product_tiles_reshaped_to_read_least_within_the_budget(tmp_path):
    # Tiles shrunk to fit 48 MiB over (32, n) row strips of (4, n) blocks: the search tries
    # other widths and heights and keeps the plan whose estimated reads are least (within
    # its 1/8 margin), K-panels that cut a's blocks counted (Node::pull_pieces); what the
    # chosen plan decompresses agrees with the estimate and beats the bands as wide as the
    # result.
    n = 2048
    rng = np.random.default_rng(12)
    x, y = rng.random((n, n)), rng.random((n, n))
    for name, v in (("a", x), ("b", y)):
        blosc2.asarray(v, urlpath=str(tmp_path / f"{name}.b2nd"), mode="w", chunks=(32, n), blocks=(4, n))
    a, b = b2lazy.open(str(tmp_path / "a.b2nd")), b2lazy.open(str(tmp_path / "b.b2nd"))
    e = b2lazy.matmul(a, b)
    budget = 48 << 20
    p = e.plan(max_memory=budget)
    assert p.projected_peak <= budget

    # (reads of copies re-packed for the tiles count: re-packing is work too)
    def reads(q):
        return sum(q.source_bytes.values()) + q.kept_read_bytes

    for chunks in [(512, 1024), (256, 2048), (1024, 512), (128, 2048), (256, 1024)]:
        q = e.plan(max_memory=budget, chunks=chunks)
        if q.projected_peak <= budget:
            assert reads(p) <= reads(q) + reads(q) / 8, (p.chunks, chunks)
    r = e.compute(max_memory=budget)
    np.testing.assert_allclose(r[:], x @ y, rtol=1e-10)
    read = sum(r.stats["bytes_decompressed"].values())
    assert reads(p) / 1.5 <= read <= reads(p) * 1.5
    # Each source decompressed once: a's bands held whole along K, b re-packed a row of
    # its new tiles at a time (each (32, n) strip once, not once per tile cut from it).
    for src in ("a.b2nd", "b.b2nd"):
        got = sum(v for k, v in r.stats["bytes_decompressed"].items() if k.endswith(src))
        assert got == x.nbytes, (src, r.stats["bytes_decompressed"])
    assert "filled (1, " in str(p) and "chunks at a time" in str(p)
    r0 = e.compute(max_memory=budget, chunks=(256, n))
    assert read < sum(r0.stats["bytes_decompressed"].values())


def test_product_holds_a_band_its_panels_would_cut(tmp_path):
    # Regression: a stored in row strips whose blocks span all of K was streamed in
    # K-panels, each decompressing every block of the band again (14x a's size at 2048²
    # under 48 MiB, 32x at 8192² under 64 MiB). The band is now held whole along K when it
    # fits, read once per output row.
    n = 1024
    rng = np.random.default_rng(3)
    x, y = rng.random((n, n)), rng.random((n, n))
    for name, v, ch, bl in (("a", x, (32, n), (4, n)), ("b", y, (n, 32), (n, 4))):
        blosc2.asarray(v, urlpath=str(tmp_path / f"{name}.b2nd"), mode="w", chunks=ch, blocks=bl)
    a, b = b2lazy.open(str(tmp_path / "a.b2nd")), b2lazy.open(str(tmp_path / "b.b2nd"))
    for budget in (16 << 20, 48 << 20):
        r = b2lazy.matmul(a, b).compute(max_memory=budget)
        np.testing.assert_allclose(r[:], x @ y, rtol=1e-10)
        got = r.stats["bytes_decompressed"]
        mine = {k: v for k, v in got.items() if k.endswith("a.b2nd")}
        assert sum(mine.values()) <= 2 * x.nbytes, (budget, got)


@pytest.mark.parametrize("budget", [None, 64 * MiB])
def test_a_reduction_in_pieces_reads_each_block_once(tmp_path, budget):
    # Regression: sum(a3, axis=1) over (n, 4, 16) column strips of (512, 4, 16) blocks was
    # reduced in 64-row pieces; each piece decompressed whole blocks for an eighth of them,
    # and the next piece the same blocks again (each block read 8 times). Pieces are now
    # whole blocks deep, cut along the last axis to stay within the budget.
    x = (
        np.sin(np.arange(2048 * 4 * 1024) * 1e-3).reshape(2048, 4, 1024)
        + np.random.default_rng(0).random((2048, 4, 1024)) * 1e-3
    )
    p = str(tmp_path / "a3.b2nd")
    blosc2.asarray(x, urlpath=p, mode="w", chunks=(2048, 4, 16), blocks=(512, 4, 16))
    a3 = b2lazy.open(p)
    kw = {} if budget is None else {"max_memory": budget}
    r = b2lazy.sum(a3, axis=1).compute(nthreads=2, chunks=(512, 1024), **kw)
    np.testing.assert_allclose(r[...], x.sum(axis=1), rtol=1e-12)
    st_ = r.stats
    assert st_["bytes_decompressed"][p] == x.nbytes, st_
    assert st_["max_decompressions_per_chunk"][p] == 2048 // 512, st_  # each block once
    assert st_["peak_scratch_bytes"] <= st_["projected_peak_bytes"], st_


@pytest.mark.parametrize("budget", [None, 64 * MiB])
def test_thin_slabs_of_a_reduction_are_whole_blocks_deep(tmp_path, budget):
    # Regression: sum(a, axis=0) over (n, 64) column strips of (512, 64) blocks folded
    # 128-row slabs, each decompressing whole 512-row blocks (every block read 4 times).
    x = smooth((4096, 1024), seed=5)
    p = str(tmp_path / "cols.b2nd")
    blosc2.asarray(x, urlpath=p, mode="w", chunks=(4096, 64), blocks=(512, 64))
    a = b2lazy.open(p)
    kw = {} if budget is None else {"max_memory": budget}
    r = b2lazy.sum(a, axis=0).compute(nthreads=2, **kw)
    np.testing.assert_allclose(r[...], x.sum(axis=0), rtol=1e-12, atol=1e-9)
    assert r.stats["bytes_decompressed"][p] == x.nbytes, r.stats
    assert r.stats["max_decompressions_per_chunk"][p] <= 4096 // 512, r.stats


def test_product_bands_that_fit_but_reread_give_way_to_squares():
    # 8192² under 256 MiB over (128, n) row strips: 256-row bands fit, but read a re-packed
    # copy of b once per band (17 GiB); the tile search also runs then, from square tiles,
    # and keeps 2048² squares that re-pack both operands and read ~5 GiB. Planned only
    # (zeros in memory compress to nothing; nothing is computed).
    n = 8192
    z = np.zeros((n, n))
    a, b = (b2lazy.asarray(z, chunks=(128, n), blocks=(4, n)) for _ in range(2))
    e = b2lazy.matmul(a, b)
    budget = 256 << 20

    def reads(q):
        return sum(q.source_bytes.values()) + q.kept_read_bytes

    p = e.plan(max_memory=budget)
    bands = e.plan(max_memory=budget, chunks=(256, n))
    assert p.projected_peak <= budget and bands.projected_peak <= budget
    assert "tiles reshaped from (256, 8192)" in str(p), str(p)
    assert reads(p) * 3 < reads(bands), (p.chunks, reads(p), reads(bands))


def test_product_tiles_shrink_as_squares():
    # 4096² under 32 MiB over (256, n) row strips: no 8 MiB tile fits, and tiles shrunk by
    # their rows alone became (8, 1024) bands that read the other operand once per band
    # (66 GB); shrunk as squares they read ~25x the operands. Planned only.
    n = 4096
    z = np.zeros((n, n))
    a, b = (b2lazy.asarray(z, chunks=(256, n), blocks=(4, n)) for _ in range(2))
    e = b2lazy.matmul(a, b)
    p = e.plan(max_memory=32 << 20)
    assert p.projected_peak <= 32 << 20
    reads = sum(p.source_bytes.values()) + p.kept_read_bytes
    assert min(p.chunks) >= 64 and reads < 32 * 2 * z.nbytes, (p.chunks, reads)


def test_a_plan_over_the_budget_is_made_again_with_its_nodes_told_less():
    """svd_compressed of 400000 x 64: planned for all of 256 MiB, its products and TSQR
    panels each take their share and together project 278 MiB; told 128 MiB, they fit in
    256 MiB, and that plan runs (within the caller's budget) instead of a refusal."""
    x = b2lazy.random.default_rng(0).standard_normal((400000, 64))
    s = b2lazy.linalg.svd_compressed(x, 8).S
    budget = 256 * MiB
    text = str(s.plan(max_memory=budget))
    assert "budget: the nodes told max_memory 128.0 MiB" in text, text
    r = s.compute(max_memory=budget)
    assert r.stats["projected_peak_bytes"] <= budget, r.stats
    assert r.stats["peak_scratch_bytes"] <= budget, r.stats
    assert r.to_numpy().shape == (8,) and np.all(np.diff(r.to_numpy()) <= 0)
