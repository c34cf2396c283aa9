"""broadcast_arrays, unstack and diff (issue #15) against NumPy on every source kind and
chunking, with lazy inputs; the results are views or expressions, never copies."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy as bl
from array_cases import DTYPES, assert_exact, evaluate, examples, make_source, shapes


def values(draw, dtype, shape):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))
    x = rng.integers(-50, 50, size=shape)
    return (x > 0) if dtype == np.bool_ else x.astype(dtype)


@examples(80)
@given(data=st.data())
def test_broadcast_arrays_like_numpy(data, tmp_path_factory):
    base = data.draw(shapes(min_nd=0, max_nd=3, max_size=200), label="base")
    n = data.draw(st.integers(1, 4), label="n")
    xs, lazies = [], []
    for i in range(n):
        # each shape: a suffix of base with some axes set to 1
        nd = data.draw(st.integers(0, len(base)), label=f"ndim {i}")
        shape = tuple(1 if data.draw(st.booleans(), label=f"one {i}") else s for s in base[len(base) - nd :])
        x = values(data.draw, data.draw(st.sampled_from(DTYPES), label=f"dtype {i}"), shape)
        xs.append(x)
        lazies.append(make_source(data.draw, x, tmp_path_factory))
    got, ref = bl.broadcast_arrays(*lazies), np.broadcast_arrays(*xs)
    assert isinstance(got, list)
    for g, r in zip(got, ref):
        assert g.dtype == r.dtype
        assert_exact(evaluate(data.draw, g), r, "broadcast_arrays")


def test_broadcast_arrays_error_names_the_shapes():
    with pytest.raises(ValueError, match=r"\(2,\), \(3,\)"):
        bl.broadcast_arrays(bl.zeros(2), bl.zeros(3))


@examples(80)
@given(data=st.data())
def test_unstack_like_numpy(data, tmp_path_factory):
    shape = data.draw(shapes(min_nd=1, max_nd=4, max_size=500), label="shape")
    x = values(data.draw, data.draw(st.sampled_from(DTYPES), label="dtype"), shape)
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    got = bl.unstack(make_source(data.draw, x, tmp_path_factory), axis=axis)
    ref = tuple(np.moveaxis(x, axis, 0))
    assert isinstance(got, tuple) and len(got) == len(ref)
    for g, r in zip(got, ref):
        assert_exact(g.to_numpy(), r, f"unstack axis={axis}")


@examples(120)
@given(data=st.data())
def test_diff_like_numpy(data, tmp_path_factory):
    shape = data.draw(shapes(min_nd=1, max_nd=3, max_size=600), label="shape")
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    x = values(data.draw, dtype, shape)
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    n = data.draw(st.integers(0, 3), label="n")
    kw_ref, kw = {}, {}
    for side in ("prepend", "append"):
        how = data.draw(st.sampled_from(["none", "scalar", "array"]), label=side)
        if how == "scalar":
            kw_ref[side] = kw[side] = data.draw(st.integers(0, 5)) if dtype != np.bool_ else True
        elif how == "array":
            s = list(x.shape)
            s[axis] = data.draw(st.integers(0, 3), label=f"{side} length")
            v = values(data.draw, dtype, tuple(s))
            kw_ref[side], kw[side] = v, bl.asarray(v)
    with np.errstate(all="ignore"):
        ref = np.diff(x, n=n, axis=axis, **kw_ref)
    got = bl.diff(make_source(data.draw, x, tmp_path_factory), axis=axis, n=n, **kw)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    assert_exact(evaluate(data.draw, got), ref, f"diff n={n} axis={axis} {list(kw)}")


def test_diff_and_unstack_errors():
    with pytest.raises(ValueError, match="non-negative"):
        bl.diff(bl.arange(3), n=-1)
    with pytest.raises(ValueError, match="one dimension"):
        bl.diff(bl.asarray(1.0))
    with pytest.raises(ValueError, match="one dimension"):
        bl.unstack(bl.asarray(1.0))
    with pytest.raises(np.exceptions.AxisError):
        bl.unstack(bl.zeros((2, 3)), axis=2)
