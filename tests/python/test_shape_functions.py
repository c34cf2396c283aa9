"""Shape functions (expand_dims, squeeze, flip, moveaxis, broadcast_to) against NumPy on
every source kind, alone and chained with each other and with expressions."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy
from conftest import assert_exact, b2np, examples
from test_indexing import indexed_source


@st.composite
def shape_op(draw, shape):
    """One shape function as (name, numpy function, b2lazy function) for `shape`."""
    nd = len(shape)
    kind = draw(st.sampled_from(["expand_dims", "squeeze", "flip", "moveaxis", "broadcast_to"]))
    if kind == "expand_dims":
        ax = draw(st.integers(-nd - 1, nd))
        return f"expand_dims({ax})", lambda a: np.expand_dims(a, ax), lambda a: b2lazy.expand_dims(a, axis=ax)
    if kind == "squeeze":
        ones = [d for d in range(nd) if shape[d] == 1]
        axes = None if not ones or draw(st.booleans()) else tuple(draw(st.lists(st.sampled_from(ones), unique=True)))
        return f"squeeze({axes})", lambda a: np.squeeze(a, axis=axes), lambda a: b2lazy.squeeze(a, axis=axes)
    if kind == "flip" and nd:
        axes = None if draw(st.booleans()) else tuple(draw(st.lists(st.integers(0, nd - 1), min_size=1, unique=True)))
        return f"flip({axes})", lambda a: np.flip(a, axis=axes), lambda a: b2lazy.flip(a, axis=axes)
    if kind == "moveaxis" and nd:
        src = draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
        dst = draw(st.lists(st.integers(-nd, nd - 1), min_size=len(src), max_size=len(src),
                            unique_by=lambda v: v % nd))
        return (f"moveaxis({src}, {dst})", lambda a: np.moveaxis(a, src, dst),
                lambda a: b2lazy.moveaxis(a, src, dst))
    # broadcast_to: new leading axes, and length-1 axes stretched
    lead = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    target = lead + tuple(draw(st.integers(0, 3)) if s == 1 else s for s in shape)
    return f"broadcast_to({target})", lambda a: np.broadcast_to(a, target), lambda a: b2lazy.broadcast_to(a, target)


@examples(150)
@given(data=st.data())
def test_shape_function_chains(data, tmpdir_factory_fn):
    arr, lazy, how = data.draw(indexed_source(tmpdir_factory_fn()))
    ref, got, what = arr, lazy, how + str(arr.shape)
    for _ in range(data.draw(st.integers(1, 3))):
        name, f_np, f_b2 = data.draw(shape_op(ref.shape), label="op")
        ref, got, what = f_np(ref), f_b2(got), f"{name}({what})"
    assert got.shape == ref.shape, f"{what}: {got.shape} != {ref.shape}"
    assert_exact(b2np(got), np.asarray(ref), what)
    if arr.dtype != np.bool_ and ref.size:
        with np.errstate(all="ignore"):
            assert_exact(b2np(got * 2), np.asarray(ref * 2), what + " * 2")


@pytest.mark.parametrize("call, words", [
    (lambda a: b2lazy.expand_dims(a, axis=3), ["expand_dims", "axis 3"]),
    (lambda a: b2lazy.squeeze(a, axis=0), ["squeeze", "axis 0", "not 1"]),
    (lambda a: b2lazy.flip(a, axis=(0, 0)), ["repeated axis"]),
    (lambda a: b2lazy.moveaxis(a, [0], [0, 1]), ["same number"]),
    (lambda a: b2lazy.broadcast_to(a, (4, 5)), ["(4, 5)", "(12, 5)"]),
    (lambda a: b2lazy.broadcast_to(a, (5,)), ["(5,)", "(12, 5)"]),
])
def test_shape_function_errors(call, words):
    a = b2lazy.asarray(np.zeros((12, 5)), chunks=(5, 5))
    with pytest.raises(ValueError) as e:
        call(a)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_broadcast_to_reads_the_source_once_per_region(tmp_path):
    x = np.arange(100.0)
    path = str(tmp_path / "x.b2nd")
    b2lazy.asarray(x).compute(urlpath=path, chunks=(50,), blocks=(10,))
    r = b2lazy.broadcast_to(b2lazy.open(path), (300, 100)).compute(chunks=(300, 50))
    assert r.stats["chunks_decompressed"][path] == 2
    assert_exact(r.to_numpy(), np.broadcast_to(x, (300, 100)), "broadcast_to")


@examples(120)
@given(data=st.data())
def test_concat_stack_roll(data, tmpdir_factory_fn):
    """concat of pieces of a source (and of a differently typed copy), stack, roll, then
    random basic indexing of the result (strided and reversed regions across the pieces)."""
    from test_indexing import basic_indices
    arr, lazy, how = data.draw(indexed_source(tmpdir_factory_fn()))
    nd = arr.ndim
    axis = data.draw(st.integers(-nd, nd - 1))
    n = arr.shape[axis]
    cut = data.draw(st.integers(0, n))
    sl = lambda a, lo, hi: a[(slice(None),) * (axis % nd) + (slice(lo, hi),)]  # noqa: E731
    other = arr.astype(np.float64) if arr.dtype.kind in "iu" and data.draw(st.booleans()) else arr
    pieces_np = [sl(arr, cut, n), sl(other, 0, cut), arr]
    pieces = [sl(lazy, cut, n), sl(b2lazy.asarray(other, chunks=tuple(max(1, s) for s in other.shape)), 0, cut), lazy]
    kind = data.draw(st.sampled_from(["concat", "concat_none", "stack", "roll"]))
    if kind == "concat":
        ref, got = np.concatenate(pieces_np, axis=axis), b2lazy.concat(pieces, axis=axis)
    elif kind == "concat_none":
        ref, got = np.concatenate(pieces_np, axis=None), b2lazy.concat(pieces, axis=None)
    elif kind == "stack":
        sax = data.draw(st.integers(-nd - 1, nd))
        ref, got = np.stack([arr, arr], axis=sax), b2lazy.stack([lazy, lazy], axis=sax)
    else:
        shift = data.draw(st.integers(-2 * n - 1, 2 * n + 1))
        ref, got = np.roll(arr, shift, axis=axis), b2lazy.roll(lazy, shift, axis=axis)
    what = f"{kind}({how}{arr.shape}, axis={axis})"
    assert got.shape == ref.shape and got.dtype == ref.dtype, f"{what}: {got.shape} {got.dtype} vs {ref.shape} {ref.dtype}"
    assert_exact(b2np(got), ref, what)
    if ref.ndim:
        key = data.draw(basic_indices(ref.shape), label="key")
        assert_exact(b2np(got[key]), np.asarray(ref[key]), f"{what}[{key!r}]")


@pytest.mark.parametrize("call, words", [
    (lambda a: b2lazy.concat([a, b2lazy.zeros((3, 4))]), ["array 1", "(3, 4)", "(12, 5)", "axis 1"]),
    (lambda a: b2lazy.concat([a, b2lazy.zeros((5,))]), ["same number of dimensions", "(5,)"]),
    (lambda a: b2lazy.concat([]), ["at least one"]),
    (lambda a: b2lazy.stack([a, b2lazy.zeros((12, 4))]), ["same shape", "(12, 4)"]),
    (lambda a: b2lazy.roll(a, 1), ["axis=None", "reshape"]),
    (lambda a: b2lazy.roll(a, (1, 2), axis=(0,)), ["same length"]),
])
def test_concat_errors(call, words):
    a = b2lazy.asarray(np.zeros((12, 5)), chunks=(5, 5))
    with pytest.raises(ValueError) as e:
        call(a)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_concat_reads_only_the_pieces_a_region_covers(tmp_path):
    x = np.arange(1000.0)
    p1, p2 = str(tmp_path / "a.b2nd"), str(tmp_path / "b.b2nd")
    b2lazy.asarray(x).compute(urlpath=p1, chunks=(100,), blocks=(20,))
    b2lazy.asarray(-x).compute(urlpath=p2, chunks=(100,), blocks=(20,))
    c = b2lazy.concat([b2lazy.open(p1), b2lazy.open(p2)])
    r = c[1950:].compute()
    assert p1 not in r.stats["chunks_decompressed"]
    assert r.stats["chunks_decompressed"][p2] == 1
    assert_exact(r.to_numpy(), -x[950:], "concat tail")
