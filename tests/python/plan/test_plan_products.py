"""Issue #12, item 4: products of an operand with its own transpose (x.T @ x, x @ x.T,
batched x.mT @ x) are symmetric and computed as such: syrk on the diagonal tiles, the
upper triangle computed once and mirrored below the diagonal. NumPy is the oracle.

* Property tests: random shapes (square, tall-skinny, short-wide, batched stacks), source
  kinds, chunkings, output chunks (tiles on, above, below and across the diagonal, and
  strided / reversed selections of the result), dtypes (float32/float64 through BLAS,
  integers exact with NumPy's wrap-around, bool as OR of ANDs).
* Lazy operands on both sides (sin(a).T @ sin(a), (a + 1) @ (a + 1)) and products nested
  in expressions.
* explain() names the symmetric product; the work counters show the upper triangle
  computed once (one cache miss) and read again for the mirrored tiles (cache hits).

Float tolerance as in test_linalg.py: |got - want| <= rtol * (|x|^T |x|) + tiny, in float64.
No timings are asserted.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy
from array_cases import examples, make_source

DTYPES = [np.dtype(t) for t in ("float64", "float32", "int64", "int32", "int8", "uint8", "bool")]
RTOL = {np.dtype("float32"): 1e-5, np.dtype("float64"): 1e-12}


def values(rng, dtype, shape):
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    return (rng.standard_normal(shape) * rng.choice([1e-3, 1.0, 1e3])).astype(dtype)


def gram(x, trans):
    sw = np.swapaxes(x, -1, -2)
    return (sw @ x) if trans else (x @ sw)


def check(got, x, trans):
    want = gram(x, trans)
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    if want.dtype.kind in "fc":
        x64 = np.abs(x.astype(np.float64))
        bound = RTOL[want.dtype] * gram(x64, trans) + 1e-30
        assert np.all(np.abs(got.astype(np.float64) - gram(x.astype(np.float64), trans)) <= bound)
    else:
        np.testing.assert_array_equal(got, want)


def check_product(got, p, q, rtol=1e-12):
    """got == p @ q within rtol of |p| @ |q| (each element's own error bound), in float64."""
    bound = rtol * (np.abs(p) @ np.abs(q)) + 1e-30
    assert np.all(np.abs(got - p @ q) <= bound)


def lazy_gram(a, trans):
    return (a.mT @ a) if trans else (a @ a.mT)


@st.composite
def matrix_shapes(draw):
    batch = draw(st.sampled_from([(), (), (3,), (2, 2)]))
    kind = draw(st.sampled_from(["square", "tall", "wide", "any"]))
    if kind == "square":
        n = draw(st.integers(1, 60))
        return batch + (n, n)
    if kind == "tall":
        return batch + (draw(st.integers(40, 200)), draw(st.integers(1, 8)))
    if kind == "wide":
        return batch + (draw(st.integers(1, 8)), draw(st.integers(40, 200)))
    return batch + (draw(st.integers(1, 50)), draw(st.integers(1, 50)))


@given(data=st.data())
@examples(120)
def test_gram_matches_numpy(data, tmp_path_factory):
    shape = data.draw(matrix_shapes(), label="x shape")
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    trans = data.draw(st.booleans(), label="x.T @ x (else x @ x.T)")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x = values(rng, dtype, shape)
    a = make_source(data.draw, x, tmp_path_factory)
    e = lazy_gram(a, trans)
    how = data.draw(st.sampled_from(["to_numpy", "compute", "tiles"]), label="evaluate")
    if how == "to_numpy":
        got = e.to_numpy()
    elif how == "compute":
        got = e.compute().to_numpy()
    else:  # output tiles of any shape: on, above, below and across the diagonal
        chunks = tuple(data.draw(st.integers(1, max(1, s)), label="out chunk") for s in e.shape)
        got = e.compute(chunks=chunks).to_numpy()
    check(got, x, trans)


@given(data=st.data())
@examples(60)
def test_gram_strided_selections(data):
    """Selections of the product with steps (also negative) pull it off the tile grid."""
    n, k = data.draw(st.integers(2, 40)), data.draw(st.integers(1, 30))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal((k, n))
    a = b2lazy.asarray(x, chunks=(max(1, k // 2), max(1, n // 3)))
    sl = tuple(
        slice(data.draw(st.integers(0, n - 1)), None, data.draw(st.sampled_from([1, 2, 3, -1, -2]))) for _ in range(2)
    )
    got = (a.T @ a)[sl].to_numpy()
    want = (x.T @ x)[sl]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * float(np.abs(x).sum() ** 2))


@pytest.mark.parametrize("trans", [True, False])
def test_lazy_operand_both_sides(trans):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((90, 70))
    a = b2lazy.asarray(x, chunks=(32, 16))
    s = b2lazy.sin(a)
    got = lazy_gram(s, trans).compute(chunks=(16, 16)).to_numpy()
    check(got, np.sin(x), trans)
    # the same lazy node on both sides, not transposed: an ordinary product
    sq = x[:70, :70] + 1
    b = b2lazy.asarray(x, chunks=(32, 16))[:70, :70] + 1
    check_product((b @ b).compute(chunks=(20, 30)).to_numpy(), sq, sq)


def test_nested_in_expressions():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((64, 48))
    a = b2lazy.asarray(x, chunks=(16, 16))
    g = a.T @ a
    check((g + 1.0).compute(chunks=(16, 48)).to_numpy() - 1.0, x, True)
    np.testing.assert_allclose(b2lazy.sum(g, axis=0).to_numpy(), (x.T @ x).sum(axis=0), rtol=1e-10)
    np.testing.assert_allclose((g @ a.T).to_numpy(), x.T @ x @ x.T, rtol=1e-10)


def test_explain_and_counters_show_the_symmetric_plan():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((200, 128))
    a = b2lazy.asarray(x, chunks=(50, 32))
    e = a.T @ a
    text = e.explain()
    assert "syrk" in text and "mirrored" in text
    # inputs a chunk does not read are shown as such, not as a region like [-1:1]
    assert "asked nothing" in text and "[-1:" not in text
    r = e.compute(chunks=(32, 32))  # 4 x 4 tiles: 4 on the diagonal, 6 above, 6 below
    check(r.to_numpy(), x, True)
    st_ = r.stats
    assert st_["cache_misses"] == 1  # the upper triangle, computed once
    assert st_["cache_hits"] >= 12  # read for the 6 tiles above and the 6 mirrored below
    # a product of two different operands keeps the ordinary plan
    assert "syrk" not in (a.T @ b2lazy.asarray(x.copy())).explain()


def test_different_dtypes_are_promoted_not_symmetric():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    a = b2lazy.asarray(x)
    got = (a.T @ a.astype(np.float64)).to_numpy()
    np.testing.assert_array_equal(got, x.T @ x.astype(np.float64))


def test_short_k_computes_off_diagonal_tiles_directly():
    """With a short k an element costs less to compute than to keep and read back: the
    tiles off the diagonal are multiplied directly and nothing is kept."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((16, 96))
    a = b2lazy.asarray(x, chunks=(16, 32))
    e = a.T @ a
    assert "too short" in e.explain()
    r = e.compute(chunks=(32, 32))
    check(r.to_numpy(), x, True)
    assert r.stats["cache_misses"] == 0


@pytest.mark.parametrize("chunks,blocks", [((64, 1024), (4, 1024)), ((1024, 32), (256, 32)), ((256, 256), (64, 64))])
def test_gram_triangle_filled_in_one_pass_reads_x_once(tmp_path, chunks, blocks):
    # x^T x's upper triangle kept dense is one region filled in one pass over x's row
    # panels, shared by the workers: x is decompressed once and never kept (it was kept
    # dense, 512 MiB at 8192², for the triangle's tiles to read column panels of), and
    # the diagonal tiles come from the triangle (no second pass over x).
    import blosc2

    n = 1024
    v = np.random.default_rng(5).random((n, n))
    blosc2.asarray(v, urlpath=str(tmp_path / "x.b2nd"), mode="w", chunks=chunks, blocks=blocks)
    x = b2lazy.open(str(tmp_path / "x.b2nd"))
    e = x.T @ x
    r = e.compute(chunks=(256, 256))
    np.testing.assert_allclose(r[:], v.T @ v, rtol=1e-12, atol=1e-9)
    assert r.stats["sources_kept"] == 0
    read = sum(b for k, b in r.stats["bytes_decompressed"].items() if k.endswith("x.b2nd"))
    assert read == v.nbytes, r.stats["bytes_decompressed"]


def test_gram_under_a_small_budget_tiles_the_triangle_and_repacks_x(tmp_path):
    # x^T x over (32, n) row strips under 12-24 MiB: the triangle (32 MiB) is spilled in
    # square tiles, not row bands, each reading two column strips of x re-packed once
    # (row bands would read x once per band: 16x and more). x's file is read once; the
    # estimate (the tiles' two strips, Node::pull_pieces) within 1.5x of what is read.
    import blosc2

    n = 2048
    x = np.random.default_rng(3).random((n, n))
    blosc2.asarray(x, urlpath=str(tmp_path / "x.b2nd"), mode="w", chunks=(32, n), blocks=(4, n))
    a = b2lazy.open(str(tmp_path / "x.b2nd"))
    e = a.T @ a
    for budget in (12 << 20, 24 << 20):
        p = e.plan(max_memory=budget)
        tri = [s for s in p.stages if s["kind"] == "gram_upper"]
        assert tri and tri[0]["chunks"][1] < n, str(p)
        r = e.compute(max_memory=budget)
        np.testing.assert_allclose(r[:], x.T @ x, rtol=1e-10)
        read = r.stats["bytes_decompressed"]
        assert sum(v for k, v in read.items() if k.endswith("x.b2nd")) == x.nbytes, read
        est = sum(p.source_bytes.values()) + p.kept_read_bytes
        assert est / 1.5 <= sum(read.values()) <= est * 1.5, (est, read)
