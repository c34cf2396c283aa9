"""map_blocks and blockwise (issue #37, part 4) against Dask's on the same inputs and
chunks: block-dependent functions (so that the blocks must be Dask's), block_info and
block_id, broadcasting, drop_axis/new_axis, contractions; refusals name the argument."""

import dask.array as da
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import b2lazy as bl


@st.composite
def chunked(draw, max_ndim=3):
    shape = tuple(draw(st.lists(st.integers(1, 30), min_size=1, max_size=max_ndim)))
    chunks = tuple(draw(st.integers(1, s)) for s in shape)
    x = np.random.default_rng(draw(st.integers(0, 2**16))).random(shape)
    return x, chunks


def _both(x, chunks):
    a = bl.asarray(x, chunks=chunks)
    return a, da.from_array(x, chunks=a.chunks)


def _centre(b):
    return b - b.mean()  # depends on the whole block: wrong blocks give wrong values


@settings(max_examples=40, deadline=None)
@given(case=chunked(), sub=st.booleans())
def test_map_blocks_matches_dask(case, sub):
    x, chunks = case
    a, d = _both(x, chunks)
    r = bl.map_blocks(_centre, a)
    want = d.map_blocks(_centre).compute()
    np.testing.assert_allclose(r.to_numpy(), want, atol=1e-12)
    assert r.chunks == d.chunks
    if sub:  # a region smaller than the blocks still sees whole blocks
        key = tuple(slice(s // 3, None, 2) for s in x.shape)
        np.testing.assert_allclose(r[key].to_numpy(), want[key], atol=1e-12)


def test_func_is_called_once_per_block():
    x = np.random.default_rng(1).random((100, 60))
    a = bl.asarray(x, chunks=(30, 25))
    seen = []
    r = bl.map_blocks(lambda b: (seen.append(b.shape), b * 2)[1], a, dtype=float)
    np.testing.assert_array_equal(r.to_numpy(), x * 2)
    assert sorted(seen) == sorted((h, w) for h in (30, 30, 30, 10) for w in (25, 25, 10))


def _located(b, block_info=None, block_id=None):
    (r0, _), (c0, _) = block_info[None]["array-location"]
    assert block_info[None]["chunk-shape"] == b.shape
    assert block_info[0]["chunk-location"] == block_id
    return b + r0 * 1000 + c0 + 0.5 * block_id[1] + 7 * block_info[None]["num-chunks"][0]


@settings(max_examples=25, deadline=None)
@given(case=chunked(max_ndim=2).filter(lambda c: c[0].ndim == 2))
def test_block_info_and_block_id_as_dask(case):
    x, chunks = case
    a, d = _both(x, chunks)
    got = bl.map_blocks(_located, a, dtype=float).to_numpy()
    np.testing.assert_allclose(got, d.map_blocks(_located, dtype=float).compute())


def test_block_info_of_every_argument_and_extra_arguments():
    x = np.arange(24.0).reshape(4, 6)
    y = np.arange(6.0)
    infos = {}

    def f(p, k, q, block_info=None):
        infos[block_info[None]["chunk-location"]] = {i: v for i, v in block_info.items() if i is not None}
        return p * k + q

    a, d = _both(x, (2, 3))
    b, e = _both(y, (3,))
    got = bl.map_blocks(f, a, 10, b, dtype=float)
    np.testing.assert_array_equal(got.to_numpy(), x * 10 + y)
    mine = dict(infos)
    infos.clear()
    np.testing.assert_array_equal(da.map_blocks(f, d, 10, e, dtype=float).compute(), x * 10 + y)
    assert mine == infos  # keys 0 and 2: positions among all arguments, as Dask's


@settings(max_examples=25, deadline=None)
@given(case=chunked(max_ndim=2).filter(lambda c: c[0].ndim == 2), axis=st.sampled_from([0, 1]))
def test_broadcasting_drop_axis_and_new_axis(case, axis):
    x, chunks = case
    a, d = _both(x, chunks)
    row = x[:1]  # (1, n): broadcast along the rows
    b, e = _both(row, (1, chunks[1]))
    np.testing.assert_allclose(
        bl.map_blocks(lambda p, q: p * q + q.mean(), a, b).to_numpy(),
        da.map_blocks(lambda p, q: p * q + q.mean(), d, e).compute(),
    )
    np.testing.assert_allclose(
        bl.map_blocks(lambda p: p.sum(axis=axis), a, drop_axis=axis).to_numpy(),
        d.map_blocks(lambda p: p.sum(axis=axis), drop_axis=axis).compute(),
    )
    np.testing.assert_allclose(
        bl.map_blocks(lambda p: p[None] * 2, a, new_axis=0).to_numpy(),
        d.map_blocks(lambda p: p[None] * 2, new_axis=0).compute(),
    )
    np.testing.assert_allclose(
        bl.map_blocks(lambda p: np.stack([p, -p], axis=-1), a, new_axis=2, chunks=a.chunks + ((2,),)).to_numpy(),
        d.map_blocks(lambda p: np.stack([p, -p], axis=-1), new_axis=2, chunks=d.chunks + ((2,),)).compute(),
    )


def test_output_chunks_that_keep_the_blocks_are_accepted_others_refused():
    a = bl.asarray(np.ones((10, 4)), chunks=(5, 4))
    np.testing.assert_array_equal(bl.map_blocks(np.negative, a, chunks=(5, 4)).to_numpy(), -np.ones((10, 4)))
    np.testing.assert_array_equal(bl.map_blocks(np.negative, a, chunks=((5, 5), (4,))).to_numpy(), -np.ones((10, 4)))
    with pytest.raises(ValueError, match="chunks"):
        bl.map_blocks(lambda b: b[:2], a, chunks=(2, 4))
    with pytest.raises(ValueError, match="block"):  # a function that changes the shape, undeclared
        bl.map_blocks(lambda b: b[:2], a, dtype=float).to_numpy()
    with pytest.raises(ValueError, match="drop_axis and new_axis"):
        bl.map_blocks(np.negative, a, drop_axis=0, new_axis=0)
    with pytest.raises(ValueError, match="drop_axis"):
        bl.map_blocks(np.negative, a, drop_axis=5)
    with pytest.raises(TypeError, match="callable"):
        bl.map_blocks(3, a)
    with pytest.raises(ValueError, match="dtype="):
        bl.map_blocks(lambda b, block_info: b, a)  # as Dask: inference fails without block_info


def test_dtype_from_inference_meta_or_argument():
    a = bl.asarray(np.arange(10), chunks=(3,))
    assert bl.map_blocks(lambda b: b / 2, a).dtype == np.float64
    assert bl.map_blocks(lambda b: b, a, dtype=np.float32).dtype == np.float32
    assert bl.map_blocks(lambda b: b, a, meta=np.array((), dtype=np.int16)).dtype == np.int16
    np.testing.assert_array_equal(
        bl.map_blocks(lambda b: b, a, dtype=np.float32).to_numpy(), np.arange(10, dtype=np.float32)
    )


@settings(max_examples=25, deadline=None)
@given(case=chunked(max_ndim=2).filter(lambda c: c[0].ndim == 2))
def test_blockwise_matches_dask(case):
    x, chunks = case
    a, d = _both(x, chunks)
    # a transpose, an elementwise pair, a contraction (concatenate=True) and a new index
    np.testing.assert_allclose(
        bl.blockwise(lambda p: p.T - p.mean(), "ji", a, "ij").to_numpy(),
        da.blockwise(lambda p: p.T - p.mean(), "ji", d, "ij", dtype=float).compute(),
    )
    np.testing.assert_allclose(bl.blockwise(np.add, "ij", a, "ij", a, "ij").to_numpy(), 2 * x)
    t, dt = _both(x.T.copy(), chunks[::-1])
    np.testing.assert_allclose(
        bl.blockwise(np.matmul, "ik", a, "ij", t, "jk", concatenate=True).to_numpy(),
        da.blockwise(np.matmul, "ik", d, "ij", dt, "jk", concatenate=True, dtype=float).compute(),
    )
    np.testing.assert_allclose(
        bl.blockwise(lambda p: p[..., None] * np.arange(3), "ijk", a, "ij", new_axes={"k": 3}).to_numpy(),
        da.blockwise(lambda p: p[..., None] * np.arange(3), "ijk", d, "ij", new_axes={"k": 3}, dtype=float).compute(),
    )


def test_blockwise_refusals_name_the_argument():
    a = bl.asarray(np.ones((4, 4)), chunks=(2, 2))
    with pytest.raises(ValueError, match="concatenate=True"):
        bl.blockwise(lambda p: p.sum(1), "i", a, "ij")
    with pytest.raises(ValueError, match="adjust_chunks"):
        bl.blockwise(np.negative, "ij", a, "ij", adjust_chunks={"i": 1})
    with pytest.raises(ValueError, match="repeats"):
        bl.blockwise(np.diagonal, "i", a, "ii", concatenate=True)
    with pytest.raises(ValueError, match="new_axes"):
        bl.blockwise(np.negative, "ijk", a, "ij")
    with pytest.raises(ValueError, match="pairs"):
        bl.blockwise(np.negative, "ij", a)


def test_map_blocks_nests_in_expressions_and_explains():
    x = np.arange(12.0).reshape(3, 4)
    a = bl.asarray(x, chunks=(1, 4))
    r = bl.sum(bl.map_blocks(_centre, a, name="centre"), axis=1) + 1
    np.testing.assert_allclose(r.to_numpy(), np.ones(3))
    assert "centre" in r.explain()


def test_0d_and_empty_arrays():
    assert bl.map_blocks(lambda b: b + 1, bl.asarray(2.0)).to_numpy() == 3.0
    r = bl.map_blocks(lambda b: b + 1, bl.zeros((0, 4)))
    assert r.shape == (0, 4) and r.to_numpy().shape == (0, 4)


def test_a_region_calls_func_only_on_the_blocks_it_meets():
    a = bl.asarray(np.arange(100.0), chunks=(10,))
    seen = []
    r = bl.map_blocks(lambda b, block_id=None: (seen.append(block_id), b * 2)[1], a, dtype=float)
    assert seen == []  # nothing runs at build time (dtype given)
    np.testing.assert_array_equal(r[3:57:2].to_numpy(), np.arange(100.0)[3:57:2] * 2)
    assert sorted(seen) == [(i,) for i in range(6)]  # blocks 0..5, each once
    seen.clear()
    np.testing.assert_array_equal(r[42:44].to_numpy(), [84.0, 86.0])
    assert seen == [(4,)]
