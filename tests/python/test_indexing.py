"""Basic indexing (integers, slices with any step, Ellipsis, None) of sources and lazy
expressions against NumPy, and the chunk-read counters of sliced evaluations."""

import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy
from conftest import DTYPES, assert_exact, b2np, base_shapes, examples, make_source, random_values, SOURCE_KINDS


# ----------------------------------------------------------------------------------------
# random basic indices
# ----------------------------------------------------------------------------------------
@st.composite
def axis_index(draw, n, allow_int=True):
    """An index for one axis of length n: an int (negative too) or a slice."""
    if allow_int and n > 0 and draw(st.integers(0, 2)) == 0:
        return draw(st.integers(-n, n - 1))
    bound = st.one_of(st.none(), st.integers(-n - 3, n + 3))
    step = draw(st.one_of(st.none(), st.integers(-5, 5).filter(lambda s: s != 0)))
    return slice(draw(bound), draw(bound), step)


@st.composite
def basic_indices(draw, shape):
    """A random basic index for `shape`: a tuple (or a bare item) of ints, slices, at most one
    Ellipsis, and Nones."""
    nd = len(shape)
    n_front = draw(st.integers(0, nd))
    use_ellipsis = draw(st.booleans())
    n_back = draw(st.integers(0, nd - n_front)) if use_ellipsis else 0
    items = [draw(axis_index(shape[i])) for i in range(n_front)]
    back = [draw(axis_index(shape[nd - n_back + i])) for i in range(n_back)]
    if use_ellipsis:
        items = items + [Ellipsis] + back
    for _ in range(draw(st.integers(0, 2))):  # new axes anywhere
        items.insert(draw(st.integers(0, len(items))), None)
    if len(items) == 1 and draw(st.booleans()):
        return items[0]  # a bare int / slice / Ellipsis / None
    return tuple(items)


@st.composite
def indexed_source(draw, tmpdir, kinds=SOURCE_KINDS):
    shape = draw(base_shapes(min_ndim=1, max_ndim=4))
    dtype = draw(st.sampled_from(DTYPES))
    arr = random_values(np.random.default_rng(draw(st.integers(0, 2**32 - 1))), dtype, shape)
    kind = draw(st.sampled_from(kinds))
    lazy, how = make_source(draw, arr, kind, tmpdir)
    return arr, lazy, how


def _check(got_lazy, ref, what):
    assert got_lazy.shape == ref.shape, f"{what}: shape {got_lazy.shape} != {ref.shape}"
    assert got_lazy.dtype == ref.dtype, f"{what}: dtype {got_lazy.dtype} != {ref.dtype}"
    assert_exact(b2np(got_lazy), ref, what)
    assert_exact(b2np(got_lazy.compute()), ref, what + " compute()")


@examples(120)
@given(data=st.data())
def test_basic_indexing_of_sources(data, tmpdir_factory_fn):
    tmp = tmpdir_factory_fn()
    arr, lazy, how = data.draw(indexed_source(tmp))
    key = data.draw(basic_indices(arr.shape), label="key")
    ref = arr[key]
    _check(lazy[key], np.asarray(ref), f"{how}{arr.shape}[{key!r}]")


@examples(80)
@given(data=st.data())
def test_basic_indexing_of_expressions(data, tmpdir_factory_fn):
    """Indexing a lazy expression (and indexing twice) equals NumPy."""
    tmp = tmpdir_factory_fn()
    arr, lazy, how = data.draw(indexed_source(tmp))
    other = random_values(np.random.default_rng(1), arr.dtype, arr.shape[-1:])
    with np.errstate(all="ignore"):
        if arr.dtype == np.bool_:
            ref_full = arr ^ other
            expr = lazy ^ b2lazy.asarray(other)
        else:
            ref_full = arr * 3 + other
            expr = lazy * 3 + b2lazy.asarray(other, chunks=tuple(max(1, s) for s in other.shape))
    key = data.draw(basic_indices(arr.shape), label="key")
    ref = np.asarray(ref_full[key])
    sub = expr[key]
    _check(sub, ref, f"({how} expr)[{key!r}]")
    if ref.ndim:
        key2 = data.draw(basic_indices(ref.shape), label="key2")
        _check(sub[key2], np.asarray(ref[key2]), f"({how} expr)[{key!r}][{key2!r}]")
        # indexing a sliced source, then computing an expression over it
        with np.errstate(all="ignore"):
            _check(
                b2lazy.abs(lazy[key][key2]) if arr.dtype != np.bool_ else lazy[key][key2],
                np.asarray(np.abs(arr[key][key2]) if arr.dtype != np.bool_ else arr[key][key2]),
                f"abs({how}[{key!r}][{key2!r}])",
            )


@pytest.mark.parametrize(
    "key",
    [
        0,
        -1,
        5,
        slice(None),
        slice(None, None, -1),
        slice(3, 17, 4),
        slice(-2, -19, -3),
        slice(100, None),
        slice(None, -100),
        Ellipsis,
        None,
        (None, Ellipsis, None),
        (Ellipsis, 3),
        (slice(1, 9, 2), Ellipsis, -2),
        (2, 3),
        (None, 1, None, slice(None, None, -2)),
        (slice(5, 5),),
        (slice(8, 2),),
    ],
)
def test_index_table(key, tmp_path):
    x = np.arange(20 * 6, dtype=np.int32).reshape(20, 6)
    b2lazy.asarray(x).compute(urlpath=tmp_path / "x.b2nd", chunks=(4, 4), blocks=(2, 2))
    a = b2lazy.open(tmp_path / "x.b2nd")
    for src in (a, b2lazy.asarray(x), a + 0):
        _check(src[key], np.asarray(x[key]), f"{src!r}[{key!r}]")


def test_index_numpy_integers_in_slices():
    x = np.arange(24).reshape(4, 6)
    a = b2lazy.asarray(x)
    _check(a[np.int64(1) : np.int16(4) : np.int8(2)], x[1:4:2], "numpy ints in slice")


@pytest.mark.parametrize("k", [np.int64(2), np.uint8(1), np.int32(-1)], ids=repr)
def test_bug_index_numpy_integer_scalar(k):
    x = np.arange(24).reshape(4, 6)
    a = b2lazy.asarray(x)
    _check(a[k], x[k], repr(k))
    _check(a[1:, k], x[1:, k], repr(k))


# ----------------------------------------------------------------------------------------
# chunk counters
# ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("counters")
    x = np.arange(100 * 80, dtype=np.float64).reshape(100, 80)
    rows = str(d / "rows.b2nd")  # chunks (10, 80): 10 row chunks
    tiles = str(d / "tiles.b2nd")  # chunks (10, 8): 10 x 10 tiles
    b2lazy.asarray(x).compute(urlpath=rows, chunks=(10, 80), blocks=(5, 40))
    b2lazy.asarray(x).compute(urlpath=tiles, chunks=(10, 8), blocks=(5, 4))
    return x, rows, tiles


def _reads(r, path):
    cd = r.stats["chunks_decompressed"]
    return cd.get(path, cd.get(os.path.basename(path), 0)), cd["total"]


@pytest.mark.parametrize(
    "build,ref,expected",
    [
        (lambda a: (a + 1)[12:19], lambda x: (x + 1)[12:19], 1),
        (lambda a: a[12:19] + 1, lambda x: x[12:19] + 1, 1),
        (lambda a: a[::7, 5], lambda x: x[::7, 5], 10),
        (lambda a: a[95:], lambda x: x[95:], 1),
        (lambda a: a[5:15], lambda x: x[5:15], 2),
        (lambda a: a[-1], lambda x: x[-1], 1),
        (lambda a: a[::-1][0], lambda x: x[::-1][0], 1),
        (lambda a: a[0:100:50], lambda x: x[0:100:50], 2),
        (lambda a: a[::-10, ::-1] * 2, lambda x: x[::-10, ::-1] * 2, 10),
        (lambda a: b2lazy.sin(a)[None, 33, 7:9], lambda x: np.sin(x)[None, 33, 7:9], 1),
        (lambda a: a[..., 3][40:60], lambda x: x[..., 3][40:60], 2),
    ],
    ids=[
        "(a+1)[12:19]",
        "a[12:19]+1",
        "a[::7,5]",
        "a[95:]",
        "a[5:15]",
        "a[-1]",
        "a[::-1][0]",
        "a[0:100:50]",
        "a[::-10,::-1]*2",
        "sin(a)[None,33,7:9]",
        "a[...,3][40:60]",
    ],
)
def test_row_chunk_counters(files, build, ref, expected):
    x, rows, _ = files
    a = b2lazy.open(rows)
    r = build(a).compute()
    with np.errstate(all="ignore"):
        assert_exact(b2np(r), np.asarray(ref(x)))
    n, total = _reads(r, rows)
    assert (n, total) == (expected, expected), r.stats


@pytest.mark.parametrize(
    "build,expected",
    [
        (lambda a: a[:, 5], 10),  # one column of tiles
        (lambda a: a[:, 5:7], 10),
        (lambda a: a[:, 7:9], 20),  # straddles two tile columns
        (lambda a: a[3, :], 10),
        (lambda a: a[3, 5], 1),
        (lambda a: a[12:19, 17:23] * 2, 1),
        (lambda a: a[::11, ::9], 90),  # rows hit all 10 row chunks; columns miss tile column 8
    ],
    ids=["a[:,5]", "a[:,5:7]", "a[:,7:9]", "a[3,:]", "a[3,5]", "a[12:19,17:23]*2", "a[::11,::9]"],
)
def test_tile_chunk_counters(files, build, expected):
    x, _, tiles = files
    a = b2lazy.open(tiles)
    r = build(a).compute()
    assert_exact(b2np(r), np.asarray(build(x)))
    n, total = _reads(r, tiles)
    assert (n, total) == (expected, expected), r.stats


def test_same_source_twice(files):
    """a[:, 5] + a[:, 5]: correct values; each chunk is read once or (no dedup) twice."""
    x, _, tiles = files
    a = b2lazy.open(tiles)
    r = (a[:, 5] + a[:, 5]).compute()
    assert_exact(b2np(r), x[:, 5] * 2)
    assert 10 <= r.stats["chunks_decompressed"]["total"] <= 20


def test_two_sources_counted_separately(files):
    x, rows, tiles = files
    a, b = b2lazy.open(rows), b2lazy.open(tiles)
    r = (a + b)[12:19, :8].compute()
    assert_exact(b2np(r), (x + x)[12:19, :8])
    assert _reads(r, rows)[0] == 1
    assert _reads(r, tiles)[0] == 1
    assert r.stats["chunks_decompressed"]["total"] == 2


def test_to_numpy_counters(files):
    x, rows, _ = files
    e = (b2lazy.open(rows) + 1)[12:19]
    assert_exact(e.to_numpy(), (x + 1)[12:19])
    assert e.last_stats["chunks_decompressed"]["total"] == 1


def test_stats_keys(files):
    _, rows, _ = files
    r = (b2lazy.open(rows) * 2).compute()
    for k in ("chunks_decompressed", "output_chunks", "cache_hits", "cache_misses", "peak_scratch_bytes"):
        assert k in r.stats, k
    assert r.stats["chunks_decompressed"]["total"] == 10
    assert r.stats["output_chunks"] >= 1
    assert r.stats["peak_scratch_bytes"] >= 0
