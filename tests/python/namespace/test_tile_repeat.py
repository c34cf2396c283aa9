"""tile and repeat (issue #15) against NumPy on every source kind, chunking and dtype,
with lazy inputs and basic indexing of the results (regions that cross tile periods,
strided and reversed). Counters show that a slice of a tiled or repeated array reads
only the input chunks it maps to."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy as bl
from array_cases import DTYPES, assert_exact, basic_index, evaluate, examples, make_source, shapes


@st.composite
def source(draw, tmp_path_factory, max_size=600):
    shape = draw(shapes(min_nd=0, max_nd=3, max_size=max_size), label="shape")
    dtype = draw(st.sampled_from(DTYPES), label="dtype")
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))
    x = rng.integers(-100, 100, size=shape)
    x = (x > 0) if dtype == np.bool_ else x.astype(dtype)
    lazy = make_source(draw, x, tmp_path_factory)
    if draw(st.booleans(), label="through an expression"):
        lazy, x = lazy * 2, x * 2
    return lazy, np.asarray(x)


@examples(150)
@given(data=st.data())
def test_tile_like_numpy(data, tmp_path_factory):
    lazy, x = data.draw(source(tmp_path_factory))
    reps = tuple(data.draw(st.lists(st.integers(0, 4), min_size=0, max_size=4), label="reps"))
    if not reps and x.ndim == 0:
        reps = (2,)
    got, ref = bl.tile(lazy, reps), np.tile(x, reps)
    assert got.shape == ref.shape and got.dtype == ref.dtype
    assert_exact(evaluate(data.draw, got), ref, f"tile {reps}")
    key = data.draw(basic_index(ref.shape), label="key")
    assert_exact(got[key].to_numpy(), ref[key], f"tile {reps} [{key}]")


@examples(150)
@given(data=st.data())
def test_repeat_like_numpy(data, tmp_path_factory):
    lazy, x = data.draw(source(tmp_path_factory))
    axis = data.draw(st.none() | (st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none()), label="axis")
    n = x.size if axis is None else x.shape[axis]
    repeats = data.draw(
        st.one_of(st.integers(0, 4), st.lists(st.integers(0, 4), min_size=n, max_size=n), st.just([3])), label="repeats"
    )
    got = bl.repeat(lazy, np.asarray(repeats) if isinstance(repeats, list) else repeats, axis=axis)
    ref = np.repeat(x, repeats, axis=axis)
    assert got.shape == ref.shape and got.dtype == ref.dtype
    assert_exact(evaluate(data.draw, got), ref, f"repeat {repeats} axis={axis}")
    key = data.draw(basic_index(ref.shape), label="key")
    assert_exact(got[key].to_numpy(), ref[key], f"repeat {repeats} axis={axis} [{key}]")


def test_repeat_counts_from_a_lazy_array():
    x = np.arange(6).reshape(2, 3)
    counts = bl.asarray(np.array([2, 0, 1]))
    assert_exact(bl.repeat(bl.asarray(x), counts, axis=1).to_numpy(), np.repeat(x, [2, 0, 1], axis=1))


def test_tile_and_repeat_errors():
    x = bl.asarray(np.arange(4))
    with pytest.raises(ValueError, match="non-negative"):
        bl.tile(x, (-1,))
    with pytest.raises(ValueError, match="non-negative"):
        bl.repeat(x, -1)
    with pytest.raises(ValueError, match="3 repeats for an axis of length 4"):
        bl.repeat(x, [1, 2, 3])
    with pytest.raises(TypeError, match="integers"):
        bl.repeat(x, np.array([1.5, 2, 3, 4]))
    with pytest.raises(np.exceptions.AxisError):
        bl.repeat(x, 2, axis=1)
    with pytest.raises(ValueError):
        bl.tile(x, (2**40, 2**40))


def test_slices_of_tile_and_repeat_read_only_their_chunks(tmp_path):
    x = np.arange(1000, dtype=np.float64)
    bl.asarray(x).compute(urlpath=tmp_path / "x.b2nd", chunks=(100,), blocks=(100,))
    a = bl.open(tmp_path / "x.b2nd")
    # output [2950, 3050) of tile(x, 5) wraps from input 950.. to ..50: the first and last chunks
    r = bl.tile(a, 5)[2950:3050].compute()
    assert_exact(r.to_numpy(), np.tile(x, 5)[2950:3050])
    assert r.stats["distinct_chunks_decompressed"][a.urlpath] == 2
    # output [400, 700) of repeat(x, 3) is input [133, 233]: two chunks
    r = bl.repeat(a, 3)[400:700].compute()
    assert_exact(r.to_numpy(), np.repeat(x, 3)[400:700])
    assert r.stats["distinct_chunks_decompressed"][a.urlpath] == 2
