"""take(x, indices, axis): integer-array indexing along one axis, against NumPy's take, on
every source kind and on lazy expressions, with the chunk-read counters that show only the
touched chunks are read."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy
from conftest import assert_exact, assert_lazy_equal, b2np, examples, raises_naming
from test_indexing import basic_indices, indexed_source


@st.composite
def take_args(draw, shape):
    """(indices, axis) for `shape`: axis None (flattened) or any axis, negative too; indices
    of 0-2 dimensions with repeats, negatives and any order."""
    axis = draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    n = int(np.prod(shape)) if axis is None else shape[axis]
    ishape = draw(st.lists(st.integers(0, 5), min_size=0, max_size=2).map(tuple))
    if n == 0:
        ishape = tuple(0 for _ in ishape) if ishape else (0,)
        return np.zeros(ishape, dtype=np.int64), axis
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return rng.integers(-n, n, size=ishape), axis


@examples(120)
@given(data=st.data())
def test_take_of_sources(data, tmpdir_factory_fn):
    arr, lazy, how = data.draw(indexed_source(tmpdir_factory_fn()))
    idx, axis = data.draw(take_args(arr.shape))
    ref = np.take(arr, idx, axis=axis)
    got = b2lazy.take(lazy, idx, axis=axis)
    what = f"take({how}{arr.shape}, {idx.tolist()}, axis={axis})"
    assert got.shape == ref.shape and got.dtype == ref.dtype, what
    assert_exact(b2np(got), ref, what)
    assert_exact(b2np(got.compute()), ref, what + " compute()")


@examples(60)
@given(data=st.data())
def test_take_of_expressions_then_indexed(data, tmpdir_factory_fn):
    """take over a lazy expression, then basic indexing of the result (strided regions of
    the index axes)."""
    arr, lazy, how = data.draw(indexed_source(tmpdir_factory_fn()))
    idx, axis = data.draw(take_args(arr.shape))
    with np.errstate(all="ignore"):
        ref_full, expr = (arr ^ True, lazy ^ True) if arr.dtype == np.bool_ else (arr * 2 - 1, lazy * 2 - 1)
    ref = np.take(ref_full, idx, axis=axis)
    got = b2lazy.take(expr, idx, axis=axis)
    assert_exact(b2np(got), ref, f"take({how} expr, {idx.tolist()}, axis={axis})")
    if ref.ndim:
        key = data.draw(basic_indices(ref.shape), label="key")
        assert_exact(b2np(got[key]), np.asarray(ref[key]), f"take(...)[{key!r}]")


def test_take_reads_only_touched_chunks(tmp_path):
    x = np.random.default_rng(0).random((1000, 64))
    path = str(tmp_path / "x.b2nd")
    b2lazy.asarray(x).compute(urlpath=path, chunks=(100, 64), blocks=(10, 64))
    a = b2lazy.open(path)
    idx = [5, 7, 950, 6, 950]
    r = b2lazy.take(b2lazy.sin(a) + a, idx, axis=0).compute()
    assert r.stats["distinct_chunks_decompressed"][path] == 2  # chunks 0 and 9
    assert r.stats["max_decompressions_per_chunk"][path] == 1
    np.testing.assert_allclose(r.to_numpy(), np.sin(x[idx]) + x[idx], rtol=1e-15)


def test_take_reads_runs_of_neighbouring_blocks(tmp_path):
    """Rows 0 and 100 of a 128-row chunk are read as two pieces, not as the 101 rows
    between them; rows in neighbouring 8-row blocks are read as one run (3..17). Counted
    in whole blocks (what a piece decompresses)."""
    x = np.arange(256 * 10.0).reshape(256, 10)
    path = str(tmp_path / "x.b2nd")
    b2lazy.asarray(x).compute(urlpath=path, chunks=(128, 10), blocks=(8, 10))
    a = b2lazy.open(path)
    block = 8 * 10 * 8
    for idx, blocks in [([100, 0], 2), ([3, 12, 17, 100], 3 + 1), ([5, 5, 5], 1)]:
        r = a[idx].compute()
        assert r.stats["bytes_decompressed"][path] == blocks * block, idx
        assert_exact(r.to_numpy(), x[idx], f"a[{idx}]")


@pytest.mark.parametrize(
    "call, exc, words",
    [
        (lambda a: b2lazy.take(a, [12], axis=0), IndexError, ["12", "axis 0", "size 12"]),
        (lambda a: b2lazy.take(a, [-13], axis=0), IndexError, ["-13", "axis 0"]),
        (lambda a: b2lazy.take(a, [0], axis=2), ValueError, ["axis 2", "(12, 5)"]),
        (lambda a: b2lazy.take(a, [0.5], axis=0), TypeError, ["integers", "float64"]),
        (lambda a: b2lazy.take(a, [0], axis=1.0), TypeError, ["axis"]),
        (lambda a: b2lazy.take(a, [60]), IndexError, ["60", "size 60"]),
    ],
)
def test_take_errors(call, exc, words):
    a = b2lazy.asarray(np.zeros((12, 5)), chunks=(5, 5))
    raises_naming(exc, lambda: call(a), words)


# ----------------------------------------------------------------------------------------
# x[key] with one integer or boolean array among basic indices; x.oindex[...]
# ----------------------------------------------------------------------------------------
from test_indexing import axis_index  # noqa: E402


@st.composite
def one_array_keys(draw, shape):
    """A key with one index array (ints with repeats and negatives, or a 1-d mask) on a
    random axis, basic indices on the others, maybe None and a trailing omission."""
    nd = len(shape)
    where = draw(st.integers(0, nd - 1))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = shape[where]
    if draw(st.booleans()):
        arr = rng.random(n) < 0.5
    else:
        ishape = draw(st.lists(st.integers(0, 4), min_size=1, max_size=2).map(tuple))
        arr = rng.integers(-n, n, size=ishape) if n else np.zeros((0,), dtype=np.int64)
        if draw(st.booleans()) and arr.ndim == 1:
            arr = arr.tolist()
    items = [arr if d == where else draw(axis_index(shape[d])) for d in range(nd)]
    keep = draw(st.integers(where + 1, nd))  # omit some trailing axes
    items = items[:keep]
    for _ in range(draw(st.integers(0, 1))):
        items.insert(draw(st.integers(0, len(items))), None)
    return tuple(items)


@examples(150)
@given(data=st.data())
def test_getitem_with_one_index_array(data, tmpdir_factory_fn):
    arr, lazy, how = data.draw(indexed_source(tmpdir_factory_fn()))
    key = data.draw(one_array_keys(arr.shape), label="key")
    ref = np.asarray(arr[key])
    got = lazy[key]
    what = f"{how}{arr.shape}[{key!r}]"
    assert_lazy_equal(got, ref, what)


@examples(80)
@given(data=st.data())
def test_oindex(data, tmpdir_factory_fn):
    arr, lazy, how = data.draw(indexed_source(tmpdir_factory_fn()))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    items, ref = [], arr
    for d, n in enumerate(arr.shape):
        kind = data.draw(st.sampled_from(["array", "mask", "slice", "int"] if n else ["slice"]))
        if kind == "array":
            items.append(rng.integers(-n, n, size=data.draw(st.integers(0, 4))))
        elif kind == "mask":
            items.append(rng.random(n) < 0.5)
        elif kind == "int":
            items.append(int(rng.integers(-n, n)))
        else:
            items.append(data.draw(axis_index(n, allow_int=False)))
    # NumPy reference: one axis at a time, from the last (so earlier positions stay put).
    for d in reversed(range(arr.ndim)):
        k = items[d]
        ref = ref[(slice(None),) * d + (k,)]
    got = lazy.oindex[tuple(items)]
    assert_exact(b2np(got), np.asarray(ref), f"{how}{arr.shape}.oindex[{items!r}]")


@pytest.mark.parametrize(
    "key, exc, words",
    [
        (([0, 1], [1, 2, 3]), IndexError, ["broadcast", "(2,)", "(3,)"]),
        (([12],), IndexError, ["12", "axis 0", "size 12"]),
        ((slice(None), [-6]), IndexError, ["-6", "axis 1", "size 5"]),
        (([0.5],), IndexError, ["integer", "float64", "axis 0"]),
        ((np.ones(3, bool),), IndexError, ["boolean index", "axis 0", "12", "3"]),
        ((np.ones((12, 4), bool),), IndexError, ["boolean index", "(12, 5)", "(12, 4)"]),
        ((0, 0, [0]), IndexError, ["too many indices"]),
    ],
)
def test_getitem_array_errors(key, exc, words):
    a = b2lazy.asarray(np.zeros((12, 5)), chunks=(5, 5))
    raises_naming(exc, lambda: a[key], words)


@st.composite
def several_array_keys(draw, shape):
    """Keys with several index arrays that broadcast together (some of them integers, or
    an n-d boolean mask over consecutive axes), adjacent or separated by slices."""
    nd = len(shape)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if draw(st.booleans()) and nd >= 2:  # an n-d mask over axes [a, a + m)
        a = draw(st.integers(0, nd - 2))
        m = draw(st.integers(2, nd - a))
        mask = rng.random(shape[a : a + m]) < 0.4
        items = [draw(axis_index(shape[d])) for d in range(a)] + [mask]
        items += [draw(axis_index(shape[d])) for d in range(a + m, nd)]
        return tuple(items)
    bshape = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple))
    items = []
    for d in range(nd):
        n = shape[d]
        kind = draw(st.sampled_from(["array", "array", "slice", "int"])) if n else "slice"
        if kind == "array":
            sub = bshape[draw(st.integers(0, len(bshape))) :]  # broadcastable to bshape
            items.append(rng.integers(-n, n, size=sub))
        elif kind == "int":
            items.append(int(rng.integers(-n, n)))
        else:
            items.append(draw(axis_index(n, allow_int=False)))
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), None)
    return tuple(items)


@examples(150)
@given(data=st.data())
def test_getitem_with_several_index_arrays(data, tmpdir_factory_fn):
    arr, lazy, how = data.draw(indexed_source(tmpdir_factory_fn()))
    key = data.draw(several_array_keys(arr.shape), label="key")
    ref = np.asarray(arr[key])
    what = f"{how}{arr.shape}[{key!r}]"
    got = lazy[key]
    assert_lazy_equal(got, ref, what)
    assert_exact(b2np(lazy.vindex[key]), ref, what + " vindex")
    with np.errstate(all="ignore"):
        if arr.dtype != np.bool_:
            assert_exact(b2np((lazy * 2)[key]), np.asarray((arr * 2)[key]), "(2x)" + what)


def test_pointwise_reads_only_touched_chunks(tmp_path):
    x = np.random.default_rng(1).random((400, 300))
    path = str(tmp_path / "x.b2nd")
    b2lazy.asarray(x).compute(urlpath=path, chunks=(100, 100), blocks=(20, 100))
    a = b2lazy.open(path)
    rows, cols = np.array([5, 350, 7]), np.array([250, 10, 260])
    r = (b2lazy.sin(a) + 1)[rows, cols].compute()
    st_ = r.stats
    assert st_["distinct_chunks_decompressed"][path] == 2  # chunks (0, 2) and (3, 0)
    assert st_["max_decompressions_per_chunk"][path] == 1
    np.testing.assert_allclose(r.to_numpy(), np.sin(x[rows, cols]) + 1, rtol=1e-15)


# ----------------------------------------------------------------------------------------
# x[mask] with a mask of x's shape: counted pass, then lazy filling
# ----------------------------------------------------------------------------------------
@examples(120)
@given(data=st.data())
def test_mask_select(data, tmpdir_factory_fn):
    arr, lazy, how = data.draw(indexed_source(tmpdir_factory_fn()))
    if arr.ndim == 0:
        return
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    share = data.draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]))
    m = rng.random(arr.shape) < share
    kind = data.draw(st.sampled_from(["numpy", "lazy", "expression"]))
    if kind == "numpy":
        mask = m
    elif kind == "lazy":
        mask = b2lazy.asarray(m, chunks=tuple(max(1, s // 2) for s in arr.shape))
    else:  # a lazy comparison over a second source
        r = rng.random(arr.shape)
        mask = b2lazy.asarray(r, chunks=tuple(max(1, s // 3 + 1) for s in arr.shape)) < share
        m = r < share
    ref = arr[m]
    got = lazy[mask]
    what = f"{how}{arr.shape}[{kind} mask, {share}]"
    assert_lazy_equal(got, ref, what)
    if ref.size:
        key = data.draw(basic_indices(ref.shape), label="key")
        assert_exact(b2np(got[key]), np.asarray(ref[key]), f"{what}[{key!r}]")
        assert_exact(b2np(got.compute(chunks=(max(1, ref.size // 3),))), ref, what + " compute")


def test_mask_select_passes_over_a_file(tmp_path):
    x = np.random.default_rng(2).random((2000, 512))  # 8 MiB: two strips of 4 MiB
    path = str(tmp_path / "x.b2nd")
    b2lazy.asarray(x).compute(urlpath=path, chunks=(100, 512), blocks=(10, 512))
    a = b2lazy.open(path)
    sel = a[(a > 0.9) & (a < 0.95)]  # the counting pass runs here
    assert sel.shape == (int(((x > 0.9) & (x < 0.95)).sum()),)
    # The filling pass, as one output chunk: each row strip pulls the values, and the mask
    # computed from them reuses them, so a chunk is read once, or twice (half each time)
    # when it straddles the two strips; then the 10-row block the boundary cuts is
    # decompressed by both (bytes count whole blocks).
    r = sel.compute(chunks=sel.shape)
    assert r.stats["max_decompressions_per_chunk"][path] <= 2
    assert r.stats["distinct_chunks_decompressed"][path] == 20
    assert x.nbytes <= r.stats["bytes_decompressed"][path] <= x.nbytes + 10 * 512 * 8
    assert_exact(r.to_numpy(), x[(x > 0.9) & (x < 0.95)], "a[mask]")
    # The head of the selection reads only the first strip's chunks (rows < 1100).
    head = sel[:10].compute()
    assert head.stats["distinct_chunks_decompressed"][path] <= 11
    assert_exact(head.to_numpy(), x[(x > 0.9) & (x < 0.95)][:10], "a[mask][:10]")
    with pytest.raises(IndexError, match=r"\(2000, 512\).*\(3, 4\)"):
        a[np.ones((3, 4), bool)]


def test_fancy_selection_written_to_a_file(tmp_path):
    """x[fancy].compute(urlpath=...) writes chunk by chunk (9 x 3 output chunks); the file
    opens in python-blosc2 with NumPy's values, and b2lazy can select from it again."""
    import blosc2

    rng = np.random.default_rng(5)
    x = rng.random((2000, 300))
    src = str(tmp_path / "x.b2nd")
    b2lazy.asarray(x).compute(urlpath=src, chunks=(100, 100), blocks=(20, 100))
    a = b2lazy.open(src)
    idx = rng.permutation(2000)[:900]
    out = str(tmp_path / "sel.b2nd")
    r = (a * 2)[idx, ::-1].compute(urlpath=out, chunks=(100, 100), blocks=(20, 100))
    got = blosc2.open(out)[:]
    assert_exact(got, (x * 2)[idx, ::-1], "(a * 2)[idx, ::-1] on disk")
    assert r.stats["output_chunks"] == 27
    m = b2lazy.open(out)[b2lazy.open(out) > 1.5].compute(urlpath=str(tmp_path / "m.b2nd"))
    assert_exact(m.to_numpy(), got[got > 1.5], "mask of the written selection")


def test_float_scalar_index_names_the_entry():
    a = b2lazy.asarray(np.zeros((12, 5)), chunks=(5, 5))
    with pytest.raises(TypeError, match=r"entry 1.*float 0.5"):
        a[0, 0.5]
