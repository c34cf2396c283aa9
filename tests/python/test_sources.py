"""Sources and constructors: zeros/ones/full/arange/linspace, python-blosc2 interop, file
round trips for every dtype, compute() stats; plus regression tests for source bugs."""

import os

import blosc2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy
from conftest import (
    DTYPES,
    assert_exact,
    b2np,
    base_shapes,
    chunks_blocks,
    examples,
    random_values,
    run_python,
    within_budget,
)

STATS_KEYS = {"chunks_decompressed", "output_chunks", "cache_hits", "cache_misses", "peak_scratch_bytes"}


# ----------------------------------------------------------------------------------------
# constructors
# ----------------------------------------------------------------------------------------
@examples(60)
@given(shape=base_shapes(min_ndim=0, max_ndim=3), dtype=st.sampled_from(DTYPES), data=st.data())
def test_zeros_ones_full(shape, dtype, data):
    chunks = data.draw(st.one_of(st.none(), chunks_blocks(shape).map(lambda cb: cb[0])))
    if dtype.kind == "f":
        value = data.draw(st.floats(-1e6, 1e6))
    elif dtype.kind == "b":
        value = data.draw(st.booleans())
    else:
        info = np.iinfo(dtype)
        value = data.draw(st.integers(max(info.min, -(2**63)), min(info.max, 2**63 - 1)))
    for lazy, ref in [
        (b2lazy.zeros(shape, dtype=dtype, chunks=chunks), np.zeros(shape, dtype)),
        (b2lazy.ones(shape, dtype=dtype, chunks=chunks), np.ones(shape, dtype)),
        (b2lazy.full(shape, value, dtype=dtype, chunks=chunks), np.full(shape, value, dtype)),
    ]:
        assert lazy.shape == ref.shape and lazy.dtype == ref.dtype
        assert_exact(lazy.to_numpy(), ref)
        r = lazy.compute()
        assert r.shape == ref.shape and r.dtype == ref.dtype
        assert_exact(b2np(r), ref)
        assert r.stats["chunks_decompressed"]["total"] == 0


@pytest.mark.parametrize(
    "value,dtype",
    [
        (1.5, np.float64),
        (7, np.int64),
        (True, np.bool_),
        # NumPy scalars are taken by value (.item()), like Python scalars
        (np.float32(2.5), np.float64),
        (np.int8(3), np.int64),
    ],
)
def test_full_default_dtype(value, dtype):
    lazy = b2lazy.full((3, 2), value)
    assert lazy.dtype == dtype
    assert_exact(lazy.to_numpy(), np.full((3, 2), value, dtype=dtype))


@examples(60)
@given(
    start=st.integers(-50, 50),
    stop=st.integers(-50, 200),
    step=st.integers(-7, 7).filter(bool),
    dtype=st.sampled_from([None, "int8", "int32", "int64", "uint16", "float32", "float64"]),
    data=st.data(),
)
def test_arange_ints(start, stop, step, dtype, data):
    _ref64 = np.arange(start, stop, step)  # (NumPy takes the arguments)
    if dtype is not None and np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        if not (info.min <= min(start, stop) and max(start, stop) <= info.max):
            return  # values (or bounds) out of range of the dtype: NumPy raises / wraps
    ref = np.arange(start, stop, step, dtype=dtype)

    chunks = data.draw(st.one_of(st.none(), chunks_blocks(ref.shape).map(lambda cb: cb[0])))
    lazy = b2lazy.arange(start, stop, step, dtype=dtype, chunks=chunks)
    assert lazy.shape == ref.shape and lazy.dtype == ref.dtype
    assert_exact(lazy.to_numpy(), ref)
    assert_exact(b2np(lazy.compute()), ref)


@examples(40)
@given(start=st.floats(-100, 100), stop=st.floats(-100, 100), step=st.floats(0.1, 10), neg=st.booleans())
def test_arange_floats(start, stop, step, neg):
    step = -step if neg else step
    if all(float(v).is_integer() for v in (start, stop, step)):
        return  # test_bug_arange_integral_floats_dtype
    ref = np.arange(start, stop, step)
    lazy = b2lazy.arange(start, stop, step)
    assert lazy.shape == ref.shape and lazy.dtype == ref.dtype
    np.testing.assert_allclose(lazy.to_numpy(), ref, rtol=1e-12, atol=1e-12 * abs(step) * ref.size)


@pytest.mark.parametrize("args", [(0.0, 5.0, 1.0), (5.0,), (0.0, 0.0, 1.0), (2.0, -4.0, -2.0)])
def test_bug_arange_integral_floats_dtype(args):
    ref = np.arange(*args)
    lazy = b2lazy.arange(*args)
    assert lazy.dtype == ref.dtype == np.float64
    assert_exact(lazy.to_numpy(), ref)


def test_arange_with_shape():
    ref = np.arange(24).reshape(2, 3, 4)
    lazy = b2lazy.arange(24, shape=(2, 3, 4), chunks=(1, 2, 3))
    assert lazy.shape == ref.shape and lazy.dtype == ref.dtype
    assert_exact(lazy.to_numpy(), ref)
    assert_exact(b2np(lazy.compute()), ref)
    assert_exact(lazy[1, ::-1, 1:3].to_numpy(), ref[1, ::-1, 1:3])


@examples(60)
@given(
    start=st.floats(-1e3, 1e3),
    stop=st.floats(-1e3, 1e3),
    num=st.integers(0, 300),
    endpoint=st.booleans(),
    dtype=st.sampled_from([None, "float32", "float64"]),
)
def test_linspace(start, stop, num, endpoint, dtype):
    ref = np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    lazy = b2lazy.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    assert lazy.shape == ref.shape and lazy.dtype == ref.dtype
    got = lazy.to_numpy()
    tol = 4 * np.finfo(ref.dtype).eps * max(abs(start), abs(stop), 1.0)
    np.testing.assert_allclose(got, ref, rtol=0, atol=tol)
    if num and endpoint:
        assert got[-1] == ref[-1] and got[0] == ref[0]


def test_linspace_with_shape_and_chunks():
    ref = np.linspace(0, 1, 24).reshape(4, 6)
    lazy = b2lazy.linspace(0, 1, 24, shape=(4, 6), chunks=(3, 4))
    np.testing.assert_allclose(lazy.to_numpy(), ref, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(b2np(lazy.compute()), ref, rtol=1e-15, atol=1e-15)


# ----------------------------------------------------------------------------------------
# python-blosc2 interop
# ----------------------------------------------------------------------------------------
def _arr(dtype, shape=(13, 7), seed=0):
    return random_values(np.random.default_rng(seed), dtype, shape)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_from_blosc2_in_memory(dtype):
    x = _arr(dtype)
    b = blosc2.asarray(x, chunks=(5, 4), blocks=(2, 4))
    a = b2lazy.asarray(b)
    assert a.shape == x.shape and a.dtype == x.dtype
    assert a.urlpath is None
    assert_exact(b2np(a), x)
    assert_exact((a[2:9:3, ::-2] == x[2:9:3, ::-2]).to_numpy(), np.ones((3, 4), bool))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_from_blosc2_on_disk(dtype, tmp_path):
    x = _arr(dtype, seed=1)
    path = str(tmp_path / "b.b2nd")
    b = blosc2.asarray(x, urlpath=path, mode="w", chunks=(6, 7), blocks=(3, 7))
    a = b2lazy.asarray(b)
    assert a.urlpath == path  # opened by path, not copied
    assert_exact(b2np(a), x)
    r = a[7:12].compute()
    assert r.stats["chunks_decompressed"]["total"] == 1
    assert_exact(b2np(r), x[7:12])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_to_blosc2(dtype, tmp_path):
    x = _arr(dtype, seed=2)
    for a in (
        b2lazy.asarray(x, chunks=(4, 4), blocks=(2, 2)),
        b2lazy.asarray(x).compute(chunks=(13, 2), blocks=(13, 1)),
    ):
        b = a.to_blosc2()
        assert isinstance(b, blosc2.NDArray)
        assert b.shape == x.shape and b.dtype == x.dtype
        assert_exact(b[...], x)
        assert tuple(b.chunks) == tuple({(4, 4): (4, 4)}.get(b.chunks, b.chunks))
    a = b2lazy.asarray(x, chunks=(4, 4), blocks=(2, 2))
    b = a.to_blosc2()
    assert tuple(b.chunks) == (4, 4) and tuple(b.blocks) == (2, 2)
    # lazy expression -> blosc2
    if dtype.kind in "iuf":
        with np.errstate(all="ignore"):
            ref = x * 2
        b = (a * 2).to_blosc2()
        assert_exact(b[...], ref)
    # to a file
    path = str(tmp_path / "t.b2nd")
    b = a.to_blosc2(urlpath=path)
    assert os.path.exists(path)
    assert_exact(b[...], x)
    assert_exact(blosc2.open(path)[...], x)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("contiguous", [True, False])
def test_b2lazy_file_opens_in_blosc2(dtype, contiguous, tmp_path):
    x = _arr(dtype, shape=(9, 4, 5), seed=3)
    path = str(tmp_path / ("w.b2nd" if contiguous else "wdir"))
    r = b2lazy.asarray(x).compute(urlpath=path, chunks=(4, 4, 2), blocks=(2, 2, 2), contiguous=contiguous)
    assert r.urlpath == path
    b = blosc2.open(path)
    assert b.shape == x.shape and b.dtype == x.dtype
    assert tuple(b.chunks) == (4, 4, 2) and tuple(b.blocks) == (2, 2, 2)
    assert_exact(b[...], x)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("contiguous", [True, False])
def test_blosc2_file_opens_in_b2lazy(dtype, contiguous, tmp_path):
    x = _arr(dtype, shape=(9, 4, 5), seed=4)
    path = str(tmp_path / ("w.b2nd" if contiguous else "wdir"))
    blosc2.asarray(x, urlpath=path, mode="w", chunks=(4, 3, 5), blocks=(2, 3, 2), contiguous=contiguous)
    a = b2lazy.open(path)
    assert a.shape == x.shape and a.dtype == x.dtype
    assert_exact(b2np(a), x)
    assert_exact(b2np(a[1:8:3, -1]), x[1:8:3, -1])
    if dtype.kind != "b":
        assert_exact((a + a).to_numpy(), x + x)


@examples(50)
@given(
    shape=base_shapes(min_ndim=0, max_ndim=4), dtype=st.sampled_from(DTYPES), contiguous=st.booleans(), data=st.data()
)
def test_roundtrip_file(shape, dtype, contiguous, data, tmpdir_factory_fn):
    tmp = tmpdir_factory_fn()
    x = random_values(np.random.default_rng(data.draw(st.integers(0, 1000))), dtype, shape)
    chunks, blocks = data.draw(chunks_blocks(shape, source=True))
    path = os.path.join(tmp, "r.b2nd" if contiguous else "rdir")
    b2lazy.asarray(x).compute(urlpath=path, chunks=chunks, blocks=blocks, contiguous=contiguous)
    a = b2lazy.open(path)
    assert a.shape == x.shape and a.dtype == x.dtype
    assert_exact(b2np(a), x)
    assert_exact(blosc2.open(path)[...], x)


def test_open_pathlike(tmp_path):
    x = np.arange(10.0)
    b2lazy.asarray(x).compute(urlpath=tmp_path / "p.b2nd")
    assert_exact(b2np(b2lazy.open(tmp_path / "p.b2nd")), x)


def test_numpy_source_is_zero_copy_view():
    x = np.arange(12.0).reshape(3, 4)
    a = b2lazy.asarray(x)
    x[1, 1] = 100.0  # a wraps x without copying
    assert a.to_numpy()[1, 1] == 100.0
    del x  # the lazy array keeps the buffer alive
    assert a.to_numpy()[1, 1] == 100.0


def test_compute_stats_keys():
    x = np.arange(1000.0).reshape(10, 100)
    for lazy in (b2lazy.asarray(x, chunks=(5, 50)) * 2, b2lazy.zeros((3, 3)), b2lazy.asarray(x) + 1):
        r = lazy.compute()
        assert STATS_KEYS <= set(r.stats)
        assert "total" in r.stats["chunks_decompressed"]
        assert all(isinstance(v, int) for v in r.stats["chunks_decompressed"].values())
    r = (b2lazy.asarray(x, chunks=(5, 50), blocks=(5, 10)) * 2).compute()
    assert r.stats["chunks_decompressed"]["total"] == 4
    assert r.stats["output_chunks"] >= 1


# ----------------------------------------------------------------------------------------
# regression tests for engine bugs these tests found (all fixed)
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "setup",
    [
        "a = b2lazy.asarray(np.arange(100.0), chunks=(16,), blocks=(16,))",
        "a = b2lazy.asarray(np.arange(100.0).reshape(10, 10), chunks=(16, 16), blocks=(16, 16))",
        "a = b2lazy.asarray(np.arange(100.0)).compute(chunks=(16,), blocks=(16,))",
        "b2lazy.asarray(np.arange(100.0)).compute(urlpath=P, chunks=(16,), blocks=(16,)); a = b2lazy.open(P)",
    ],
    ids=["mem", "mem-2d", "compute-result", "file"],
)
def test_bug_to_numpy_of_source_with_partial_chunk_overflows(setup, tmp_path):
    """Run in a subprocess so that the heap corruption cannot take the test session down."""
    code = f"""
import numpy as np, b2lazy
P = {str(tmp_path / "o.b2nd")!r}
{setup}
ref = np.arange(100.0).reshape(a.shape)
for i in range(20):
    v = a.to_numpy(nthreads=1)
    junk = [np.ones(1000) for _ in range(50)]
    assert (v == ref).all(), v
    assert (np.asarray(a) == ref).all()
print("ok")
"""
    p = run_python(code)
    assert p.returncode == 0 and "ok" in p.stdout, (p.returncode, p.stderr[-500:])


@pytest.mark.parametrize("how", ["compute", "expr-to_numpy"])
def test_bug_single_block_partial_edge_chunk(how):
    x = np.arange(1.0, 11.0).reshape(2, 5)
    a = b2lazy.asarray(x, chunks=(2, 4), blocks=(2, 4))
    if how == "compute":
        got = blosc2.ndarray_from_cframe(a.compute().to_cframe())[...]
    else:
        got = (a + 0).to_numpy(nthreads=1)
    assert_exact(got, x)  # got[1, 4] == 0.0 instead of 10.0


def test_bug_asarray_0d_with_chunks():
    a = b2lazy.asarray(np.array(5.0), chunks=(), blocks=())
    assert a.shape == ()


@pytest.mark.parametrize("nthreads", [1, 2, 3])
@pytest.mark.parametrize("max_memory", [None, 1 << 12, 1 << 16])
def test_evaluation_options_do_not_change_values(nthreads, max_memory):
    x = np.random.default_rng(5).random((300, 200))
    a = b2lazy.asarray(x, chunks=(50, 64), blocks=(10, 32))
    ref = np.sin(x) * 2 + x[:, ::-1]
    e = b2lazy.sin(a) * 2 + a[:, ::-1]
    np.testing.assert_array_max_ulp(
        within_budget(lambda mm: e.to_numpy(nthreads=nthreads, max_memory=mm), max_memory), ref, 4
    )
    r = within_budget(
        lambda mm: e.compute(nthreads=nthreads, max_memory=mm, chunks=(64, 64), blocks=(16, 16)), max_memory
    )
    np.testing.assert_array_max_ulp(b2np(r), ref, 4)


# ----------------------------------------------------------------------------------------
# partial chunk reads
# ----------------------------------------------------------------------------------------
@st.composite
def _row_strip_layout(draw):
    """A shape with chunks whose blocks keep the chunk's C order (extent-1 leading block
    axes, one split axis, whole trailing axes): the layout b2nd sources read by ranges."""
    shape = draw(base_shapes(min_ndim=1, max_ndim=3))
    chunks = tuple(draw(st.integers(1, max(1, s))) for s in shape)
    split = draw(st.integers(0, len(shape) - 1))
    blocks = tuple(
        1 if d < split else draw(st.integers(1, chunks[d])) if d == split else chunks[d] for d in range(len(shape))
    )
    return shape, chunks, blocks


@examples(80)
@given(layout=_row_strip_layout(), dtype=st.sampled_from(DTYPES), zero_share=st.floats(0, 0.9), data=st.data())
def test_range_reads_with_all_zero_blocks(layout, dtype, zero_share, data):
    """Reads of parts of chunks (single-chunk ranges and multi-chunk gathers) on arrays
    where many blocks are all zeros — the case where C-Blosc2 3.3.5's multi-block getitem
    goes wrong, so the source reads a range block by block."""
    shape, chunks, blocks = layout
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = random_values(rng, dtype, shape)
    if x.size:  # zero out whole rows so that entire blocks become zeros
        rows = rng.random(shape[0]) < zero_share
        x[rows] = 0
    a = b2lazy.asarray(x, chunks=chunks, blocks=blocks)
    index = []
    rows_only = data.draw(st.booleans())  # a range of whole rows: contiguous in a chunk
    for d, s in enumerate(shape):
        if rows_only and d > 0:
            index.append(slice(None))
            continue
        lo = data.draw(st.integers(0, s))
        hi = data.draw(st.integers(lo, s))
        step = 1 if rows_only else data.draw(st.sampled_from([1, 1, 1, 2, -1]))
        index.append(slice(lo, hi, step) if step > 0 else slice(hi - 1 if hi else None, lo - 1 if lo else None, -1))
    index = tuple(index)
    assert_exact(a[index].to_numpy(), x[index], f"{shape} chunks={chunks} blocks={blocks} [{index}]")
    assert_exact(a.to_numpy(), x, f"{shape} chunks={chunks} blocks={blocks} whole")


def test_column_band_of_row_strips_decompresses_only_its_blocks(tmp_path):
    """A column band of (8, 4096) row strips in (1, 512) blocks touches one block per row of
    each strip: those are decompressed, not the blocks between the band's first item and its
    last (a range read would decompress 57 of a strip's 64 blocks for 8 needed)."""
    x = np.random.default_rng(4).random((64, 4096))
    path = str(tmp_path / "x.b2nd")
    blosc2.asarray(x, urlpath=path, chunks=(8, 4096), blocks=(1, 512), mode="w")
    a = b2lazy.open(path)
    block = 512 * 8
    for cols, per_row in [(slice(0, 512), 1), (slice(700, 1100), 2), (slice(100, 110), 1)]:
        r = a[:, cols].compute()
        np.testing.assert_array_equal(r.to_numpy(), x[:, cols])
        assert r.stats["bytes_decompressed"][path] == 64 * per_row * block, cols


@examples(40)
@given(data=st.data())
def test_strided_regions_of_row_strips_match_numpy(data, tmp_path_factory):
    """Any rectangle (and steps) of a file in row strips whose blocks are rows or parts of
    rows, read by blocks or by item ranges, is NumPy's."""
    rows, cols = data.draw(st.integers(1, 40)), data.draw(st.integers(1, 300))
    crow = data.draw(st.integers(1, rows))
    bcol = data.draw(st.integers(1, cols))
    x = np.arange(rows * cols, dtype=np.float64).reshape(rows, cols)
    path = str(tmp_path_factory.mktemp("strips") / "x.b2nd")
    blosc2.asarray(x, urlpath=path, chunks=(crow, cols), blocks=(1, bcol), mode="w")
    a = b2lazy.open(path)
    r0, c0 = data.draw(st.integers(0, rows - 1)), data.draw(st.integers(0, cols - 1))
    r1, c1 = data.draw(st.integers(r0 + 1, rows)), data.draw(st.integers(c0 + 1, cols))
    rs, cs = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 5))
    np.testing.assert_array_equal(a[r0:r1:rs, c0:c1:cs].to_numpy(), x[r0:r1:rs, c0:c1:cs])
