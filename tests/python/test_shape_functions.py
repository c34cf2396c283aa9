"""Shape functions (expand_dims, squeeze, flip, moveaxis, broadcast_to, reshape, concat,
stack, roll, take_along_axis, nonzero) against NumPy on every source kind, alone and
chained with each other and with expressions."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy
from conftest import assert_exact, assert_lazy_equal, b2np, examples, raises_naming
from test_indexing import indexed_source


@st.composite
def reshape_target(draw, shape):
    """A shape with as many elements as `shape` (prime factors regrouped), maybe with -1."""
    n = int(np.prod(shape))
    if n == 0:
        return tuple(draw(st.permutations(list(shape) + [1] * draw(st.integers(0, 1)))))
    factors, k, m = [], 2, n
    while m > 1:
        while m % k == 0:
            factors.append(k)
            m //= k
        k += 1
    factors = draw(st.permutations(factors))
    out = [1] * draw(st.integers(1, 4))
    for f in factors:
        out[draw(st.integers(0, len(out) - 1))] *= f
    if draw(st.booleans()):
        out[draw(st.integers(0, len(out) - 1))] = -1
    return tuple(out)


@st.composite
def shape_op(draw, shape):
    """One shape function as (name, numpy function, b2lazy function) for `shape`."""
    nd = len(shape)
    kind = draw(st.sampled_from(["expand_dims", "squeeze", "flip", "moveaxis", "broadcast_to", "reshape"]))
    if kind == "reshape":
        target = draw(reshape_target(shape))
        return f"reshape({target})", lambda a: np.reshape(a, target), lambda a: b2lazy.reshape(a, target)
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
        dst = draw(st.lists(st.integers(-nd, nd - 1), min_size=len(src), max_size=len(src), unique_by=lambda v: v % nd))
        return (f"moveaxis({src}, {dst})", lambda a: np.moveaxis(a, src, dst), lambda a: b2lazy.moveaxis(a, src, dst))
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
    assert_lazy_equal(got, np.asarray(ref), what)
    if ref.ndim:  # strided and reversed regions of the chain
        from test_indexing import basic_indices

        key = data.draw(basic_indices(ref.shape), label="key")
        assert_exact(b2np(got[key]), np.asarray(ref[key]), f"{what}[{key!r}]")
    if arr.dtype != np.bool_ and ref.size:
        with np.errstate(all="ignore"):
            assert_exact(b2np(got * 2), np.asarray(ref * 2), what + " * 2")


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda a: b2lazy.expand_dims(a, axis=3), ["expand_dims", "axis 3"]),
        (lambda a: b2lazy.squeeze(a, axis=0), ["squeeze", "axis 0", "not 1"]),
        (lambda a: b2lazy.flip(a, axis=(0, 0)), ["repeated axis"]),
        (lambda a: b2lazy.moveaxis(a, [0], [0, 1]), ["same number"]),
        (lambda a: b2lazy.broadcast_to(a, (4, 5)), ["(4, 5)", "(12, 5)"]),
        (lambda a: b2lazy.broadcast_to(a, (5,)), ["(5,)", "(12, 5)"]),
    ],
)
def test_shape_function_errors(call, words):
    a = b2lazy.asarray(np.zeros((12, 5)), chunks=(5, 5))
    raises_naming(ValueError, lambda: call(a), words)


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
    kind = data.draw(st.sampled_from(["concat", "concat_none", "stack", "roll", "roll_none"]))
    if kind == "concat":
        ref, got = np.concatenate(pieces_np, axis=axis), b2lazy.concat(pieces, axis=axis)
    elif kind == "concat_none":
        ref, got = np.concatenate(pieces_np, axis=None), b2lazy.concat(pieces, axis=None)
    elif kind == "stack":
        sax = data.draw(st.integers(-nd - 1, nd))
        ref, got = np.stack([arr, arr], axis=sax), b2lazy.stack([lazy, lazy], axis=sax)
    elif kind == "roll_none":  # along the flattened array
        shift = data.draw(st.integers(-2 * arr.size - 1, 2 * arr.size + 1))
        ref, got = np.roll(arr, shift), b2lazy.roll(lazy, shift)
    else:
        shift = data.draw(st.integers(-2 * n - 1, 2 * n + 1))
        ref, got = np.roll(arr, shift, axis=axis), b2lazy.roll(lazy, shift, axis=axis)
    what = f"{kind}({how}{arr.shape}, axis={axis})"
    assert got.shape == ref.shape and got.dtype == ref.dtype, (
        f"{what}: {got.shape} {got.dtype} vs {ref.shape} {ref.dtype}"
    )
    assert_exact(b2np(got), ref, what)
    if ref.ndim:
        key = data.draw(basic_indices(ref.shape), label="key")
        assert_exact(b2np(got[key]), np.asarray(ref[key]), f"{what}[{key!r}]")


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda a: b2lazy.concat([a, b2lazy.zeros((3, 4))]), ["array 1", "(3, 4)", "(12, 5)", "axis 1"]),
        (lambda a: b2lazy.concat([a, b2lazy.zeros((5,))]), ["same number of dimensions", "(5,)"]),
        (lambda a: b2lazy.concat([]), ["at least one"]),
        (lambda a: b2lazy.stack([a, b2lazy.zeros((12, 4))]), ["same shape", "(12, 4)"]),
        (lambda a: b2lazy.roll(a, (1, 2)), ["axis=None", "single integer"]),
        (lambda a: b2lazy.roll(a, (1, 2), axis=(0,)), ["same length"]),
    ],
)
def test_concat_errors(call, words):
    a = b2lazy.asarray(np.zeros((12, 5)), chunks=(5, 5))
    raises_naming(ValueError, lambda: call(a), words)


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


def test_reshape_of_thin_regions():
    """Regions spread thinly over the flat order (single columns of a wide reshape) are
    split until each pulls a short flat range; strided and reversed too."""
    x = np.arange(300 * 400, dtype=np.int64).reshape(300, 400)
    lazy = b2lazy.asarray(x, chunks=(64, 128))
    r = b2lazy.reshape(lazy, (400, 300))
    assert_exact(r.compute(chunks=(400, 1)).to_numpy(), x.reshape(400, 300), "column chunks")
    assert_exact(r[::-3, 7::50].to_numpy(), x.reshape(400, 300)[::-3, 7::50], "strided")
    assert_exact(b2lazy.reshape(r.T, (-1, 8, 10)).to_numpy(), x.reshape(400, 300).T.reshape(-1, 8, 10), "of .T")


def test_reshape_reads_each_chunk_about_once(tmp_path):
    x = np.arange(256 * 300.0).reshape(256, 300)
    path = str(tmp_path / "x.b2nd")
    b2lazy.asarray(x).compute(urlpath=path, chunks=(32, 100), blocks=(8, 100))
    r = b2lazy.reshape(b2lazy.open(path), (300, 16, 16)).compute()
    # Output chunks of whole input rows: only the chunks a boundary row falls in are read
    # twice, and then only that row's blocks (whole: 8 rows decompressed for 1, counted).
    assert r.stats["max_decompressions_per_chunk"][path] <= 2
    assert r.stats["bytes_decompressed"][path] <= 1.3 * x.nbytes
    assert_exact(r.to_numpy(), x.reshape(300, 16, 16), "reshape")


@pytest.mark.parametrize(
    "call, exc, words",
    [
        (lambda a: b2lazy.reshape(a, (7, -1)), ValueError, ["size 60", "(7, -1)"]),
        (lambda a: b2lazy.reshape(a, (6, 11)), ValueError, ["size 60", "(6, 11)"]),
        (lambda a: b2lazy.reshape(a, (-1, -1)), ValueError, ["one unknown"]),
        (lambda a: b2lazy.reshape(a, (-2, -30)), ValueError, ["negative", "-2"]),
        (lambda a: b2lazy.reshape(a, (6.0, 10)), TypeError, ["integers", "6.0"]),
        (
            lambda a: b2lazy.take_along_axis(a, np.zeros(3, np.int64), axis=0),
            ValueError,
            ["dimensions", "(3,)", "(12, 5)"],
        ),
        (lambda a: b2lazy.take_along_axis(a, np.zeros((2, 3), np.int64), axis=0), ValueError, ["broadcast", "(2, 3)"]),
        (lambda a: b2lazy.take_along_axis(a, np.full((1, 5), 12), axis=0), IndexError, ["12", "axis 0", "size 12"]),
        (lambda a: b2lazy.take_along_axis(a, np.zeros((1, 5)), axis=0), TypeError, ["integers", "float64"]),
        (lambda a: b2lazy.nonzero(a[0, 0]), ValueError, ["zero-dimensional"]),
        (lambda a: b2lazy.where(a > 0, 1), ValueError, ["both"]),
    ],
)
def test_reshape_and_along_axis_errors(call, exc, words):
    a = b2lazy.asarray(np.zeros((12, 5)), chunks=(5, 5))
    raises_naming(exc, lambda: call(a), words)


@examples(100)
@given(data=st.data())
def test_take_along_axis(data, tmpdir_factory_fn):
    """Random indices (repeats, negatives, length-1 axes broadcast against the array) on
    sources and expressions, and axis=None."""
    arr, lazy, how = data.draw(indexed_source(tmpdir_factory_fn()))
    nd = arr.ndim
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    if data.draw(st.booleans()) and arr.dtype != np.bool_:
        arr, lazy, how = arr + arr, lazy + lazy, how + "+itself"
    if data.draw(st.booleans()):
        axis, n, ishape = None, arr.size, (data.draw(st.integers(0, 6)),)
    else:
        axis = data.draw(st.integers(-nd, nd - 1))
        n = arr.shape[axis]
        ishape = [data.draw(st.sampled_from([1, s])) for s in arr.shape]
        ishape[axis] = data.draw(st.integers(0, 5))
        ishape = tuple(ishape)
    if n == 0:  # nothing to select from: no indices along the axis
        ishape = (0,) if axis is None else ishape[: axis % nd] + (0,) + ishape[axis % nd + 1 :]
    idx = rng.integers(-n, n, size=ishape) if n else np.zeros(ishape, np.int64)
    ref = np.take_along_axis(arr, idx, axis=axis)
    got = b2lazy.take_along_axis(lazy, idx, axis=axis)
    assert_lazy_equal(got, ref, f"take_along_axis({how}{arr.shape}, {idx.tolist()}, axis={axis})")


@examples(100)
@given(data=st.data())
def test_nonzero_and_where(data, tmpdir_factory_fn):
    """nonzero of sources (all dtypes) and of lazy comparisons, and where(cond)."""
    arr, lazy, how = data.draw(indexed_source(tmpdir_factory_fn()))
    if arr.dtype != np.bool_ and data.draw(st.booleans()):
        t = np.median(arr) if arr.size else 0
        arr, lazy, how = arr > t, lazy > t, f"{how} > median"
    ref = np.nonzero(arr)
    got = b2lazy.where(lazy) if data.draw(st.booleans()) else b2lazy.nonzero(lazy)
    assert len(got) == len(ref)
    for d, (g, r) in enumerate(zip(got, ref)):
        assert g.dtype == np.int64
        assert_exact(b2np(g), r, f"nonzero({how}{arr.shape})[{d}]")


def test_nonzero_counts_once(tmp_path):
    """The counting pass runs once for all axes; each coordinate array reads the mask again."""
    x = (np.arange(64 * 50) % 7 == 0).reshape(64, 50)
    path = str(tmp_path / "x.b2nd")
    b2lazy.asarray(x).compute(urlpath=path, chunks=(16, 50), blocks=(4, 50))
    src = b2lazy.open(path)
    rows, cols = b2lazy.nonzero(src)
    r = rows.compute()
    assert r.stats["chunks_decompressed"][path] == 4
    assert_exact(r.to_numpy(), np.nonzero(x)[0], "rows")
    assert_exact(cols.to_numpy(), np.nonzero(x)[1], "cols")
