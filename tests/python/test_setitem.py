"""x[key] = value (issue #15, item 4): a lazy array rebinds to a lazy update of its old
value; an array opened with mode="r+" writes through to its b2nd file, rewriting only the
storage chunks the key touches. NumPy is the oracle."""

import blosc2
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import b2lazy
from conftest import DTYPES, base_shapes, evaluations, examples, make_source, random_values

SOURCE_KINDS = ["numpy", "mem", "disk", "sparse"]


@st.composite
def assignments(draw, min_ndim=0):
    """(x, key, value): x's values, a basic key and a value NumPy accepts for x[key]."""
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(base_shapes(min_ndim=min_ndim, max_ndim=3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = random_values(rng, np.dtype(dtype), shape, special=False)
    key = draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    sel = x[key].shape
    how = draw(st.sampled_from(["scalar", "full", "trailing", "ones"]))
    vdtype = draw(st.sampled_from([dtype, "float64", "int32", "bool"]))
    if how == "scalar":
        value = random_values(rng, np.dtype(vdtype), (), special=False).item()
    else:
        vshape = {
            "full": sel,
            "trailing": sel[len(sel) // 2 :],
            "ones": tuple(1 if i % 2 else s for i, s in enumerate(sel)),
        }[how]
        value = random_values(rng, np.dtype(vdtype), vshape, special=False)
    return x, key, value


def numpy_assigned(x, key, value):
    ref = x.copy()
    with np.errstate(all="ignore"):
        ref[key] = value
    return ref


def cast_like_numpy(value, dtype):
    """value in `dtype`, as NumPy's setitem stores it."""
    with np.errstate(all="ignore"):
        return np.asarray(value).astype(dtype)


def test_value_cast_to_the_arrays_dtype():
    x = b2lazy.zeros((2, 3), dtype=np.int32)
    x[0] = np.array([1.5, 2.7, -3.9])
    x[1, 1:] = True
    ref = np.zeros((2, 3), np.int32)
    ref[0] = np.array([1.5, 2.7, -3.9])
    ref[1, 1:] = True
    np.testing.assert_array_equal(x.to_numpy(), ref)
    assert x.dtype == np.int32


@given(case=assignments(), kind=st.sampled_from(SOURCE_KINDS), data=st.data())
@examples(120)
def test_lazy_setitem_matches_numpy(case, kind, data, tmp_path):
    x, key, value = case
    lazy, descr = make_source(data.draw, x, kind, str(tmp_path))
    before = lazy + 0 if x.dtype != np.bool_ else lazy | False
    # Values in x's dtype (a float out of an integer's range casts as the platform does).
    v = cast_like_numpy(value, x.dtype)
    v = v.item() if not isinstance(value, np.ndarray) else v
    lazy[key] = v
    ref = numpy_assigned(x, key, v)
    assert lazy.shape == x.shape and lazy.dtype == x.dtype
    for how, got in evaluations(lazy, data.draw, str(tmp_path)):
        np.testing.assert_array_equal(got, ref, err_msg=f"{descr} [{key!r}] = {value!r} via {how}")
    # Arrays made from x before keep its old values.
    np.testing.assert_array_equal(before.to_numpy(), x if x.dtype != np.bool_ else x | False)


@given(case=assignments(min_ndim=1), data=st.data())
@examples(60)
def test_setitem_twice_and_in_expressions(case, data, tmp_path):
    x, key, value = case
    lazy = b2lazy.asarray(x, chunks=tuple(max(1, s // 2) for s in x.shape))
    v = cast_like_numpy(value, x.dtype)
    lazy[key] = v
    lazy[(slice(None, None, 2),)] = lazy[(slice(None, None, 2),)]  # a value reading the array itself
    ref = numpy_assigned(x, key, v)
    np.testing.assert_array_equal(lazy.to_numpy(), ref)
    if x.dtype.kind in "fiu":
        np.testing.assert_array_equal((lazy * 2).to_numpy(), ref * 2)


def test_numpy_value_is_a_snapshot():
    x = b2lazy.zeros((4, 4))
    v = np.ones(4)
    x[1] = v
    v[:] = 7  # NumPy copies on assignment; so does x[key] = value
    np.testing.assert_array_equal(x.to_numpy()[1], np.ones(4))


def test_pull_reads_only_the_value_it_covers(tmp_path):
    """A region of the result outside the key reads nothing of the value."""
    vpath = str(tmp_path / "v.b2nd")
    b2lazy.asarray(np.arange(100.0).reshape(10, 10)).compute(urlpath=vpath, chunks=(5, 10), blocks=(5, 10))
    x = b2lazy.zeros((40, 10))
    x[30:40] = b2lazy.open(vpath)
    part = x[0:20].compute()
    assert vpath not in part.stats["bytes_decompressed"]
    whole = x.compute()
    assert whole.stats["bytes_decompressed"][vpath] == 800
    expect = np.zeros((40, 10))
    expect[30:40] = np.arange(100.0).reshape(10, 10)
    np.testing.assert_array_equal(whole.to_numpy(), expect)


@given(
    dtype=st.sampled_from(DTYPES),
    shape=base_shapes(min_ndim=1, max_ndim=3),
    lead=st.integers(0, 2),
    scalar=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
@examples(60)
def test_mask_setitem(dtype, shape, lead, scalar, seed):
    rng = np.random.default_rng(seed)
    x = random_values(rng, np.dtype(dtype), shape, special=False)
    mdims = max(1, len(shape) - lead)
    mask = rng.random(shape[:mdims]) < 0.4
    value = random_values(rng, np.dtype(dtype), () if scalar else shape[mdims:], special=False)
    value = value.item() if scalar else value
    lazy = b2lazy.asarray(x)
    lazy[mask] = value
    ref = x.copy()
    ref[mask] = value
    np.testing.assert_array_equal(lazy.to_numpy(), ref)


def test_mask_from_the_array_itself():
    x = np.linspace(-1, 1, 60).reshape(6, 10)
    lazy = b2lazy.asarray(x, chunks=(2, 5))
    lazy[lazy < 0] = 0.0
    np.testing.assert_array_equal(lazy.to_numpy(), np.where(x < 0, 0.0, x))


def test_setitem_errors():
    x = b2lazy.zeros((4, 5))
    with pytest.raises(ValueError, match=r"\(3,\).*\(4, 5\)|\(4, 5\).*\(3,\)"):
        x[...] = np.ones(3)
    with pytest.raises(IndexError, match="out of bounds"):
        x[7] = 1.0
    with pytest.raises(IndexError, match="integer index arrays"):
        x[[0, 2]] = 1.0
    with pytest.raises(ValueError, match="one by one"):
        x[np.ones((4, 5), bool)] = np.ones(20)
    with pytest.raises(IndexError, match="mask"):
        x[np.ones((3,), bool)] = 1.0
    np.testing.assert_array_equal(x.to_numpy(), np.zeros((4, 5)))  # failed assignments change nothing


def test_lazy_setitem_saves_and_reopens(tmp_path):
    x = b2lazy.asarray(np.arange(24.0).reshape(4, 6))
    y = x * 2  # made before: saved with the values x had
    x[1:3, ::2] = -1.0
    x[x > 20] = 0.0
    x[::-1, 0] = x[:, 1]  # a value reading x itself
    path = str(tmp_path / "e.b2lazy")
    x.save(path)
    ref = np.arange(24.0).reshape(4, 6)
    ref[1:3, ::2] = -1.0
    ref[ref > 20] = 0.0
    ref[::-1, 0] = ref[:, 1].copy()
    np.testing.assert_array_equal(b2lazy.open(path).to_numpy(), ref)
    y.save(path)
    np.testing.assert_array_equal(b2lazy.open(path).to_numpy(), np.arange(24.0).reshape(4, 6) * 2)


# --- mode="r+": written through to the file ----------------------------------------------


def _chunk_bytes(path):
    a = blosc2.open(path)  # (held: its schunk does not keep it alive)
    return [bytes(a.schunk.get_chunk(i)) for i in range(a.schunk.nchunks)]


def _touched_chunks(shape, chunks, marks):
    grid = [-(-s // c) for s, c in zip(shape, chunks)]
    out = set()
    for i, idx in enumerate(np.ndindex(*grid)):
        box = tuple(slice(j * c, (j + 1) * c) for j, c in zip(idx, chunks))
        if marks[box].any():
            out.add(i)
    return out


@given(
    dtype=st.sampled_from(["float64", "int32", "uint8"]),
    shape=base_shapes(min_ndim=1, max_ndim=3, allow_zero=False),
    contiguous=st.booleans(),
    data=st.data(),
)
@examples(60)
def test_r_plus_rewrites_only_touched_chunks(dtype, shape, contiguous, data, tmp_path):
    chunks = tuple(data.draw(st.integers(1, s)) for s in shape)
    blocks = tuple(data.draw(st.integers(1, c)) for c in chunks)
    path = str(tmp_path / ("x.b2nd" if contiguous else "xdir"))
    x = (np.arange(int(np.prod(shape))) % 50 + 1).astype(dtype).reshape(shape)
    blosc2.asarray(x, chunks=chunks, blocks=blocks, urlpath=path, mode="w", contiguous=contiguous)
    key = data.draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    value = (np.asarray(x[key]) % 50 + 100).astype(dtype)  # differs from the old values everywhere
    before = _chunk_bytes(path)
    w = b2lazy.open(path, mode="r+")
    w[key] = value
    ref = x.copy()
    ref[key] = value
    np.testing.assert_array_equal(blosc2.open(path)[...], ref)
    np.testing.assert_array_equal(w.to_numpy(), ref)  # x reads the file as it is now
    marks = np.zeros(shape, bool)
    marks[key] = True
    after = _chunk_bytes(path)
    changed = {i for i, (a, b) in enumerate(zip(before, after)) if a != b}
    assert changed == _touched_chunks(shape, chunks, marks)


def test_r_plus_overlapping_value_and_mask(tmp_path):
    path = str(tmp_path / "x.b2nd")
    x = np.arange(100.0).reshape(10, 10)
    blosc2.asarray(x, chunks=(3, 10), blocks=(1, 10), urlpath=path, mode="w")
    w = b2lazy.open(path, mode="r+")
    old = b2lazy.open(path)
    w[1:] = w[:-1]  # the value reads the file: taken before anything is written
    ref = x.copy()
    ref[1:] = x[:-1]
    np.testing.assert_array_equal(blosc2.open(path)[...], ref)
    with pytest.raises(OSError, match="changed on disk"):
        old.to_numpy()  # opened before the write: it says so rather than mix old and new
    before = _chunk_bytes(path)
    w[w > 85] = -1.0  # True only in the last chunk
    ref[ref > 85] = -1.0
    np.testing.assert_array_equal(blosc2.open(path)[...], ref)
    after = _chunk_bytes(path)
    assert [i for i in range(len(before)) if before[i] != after[i]] == [3]


def test_r_plus_refuses_what_it_cannot_update(tmp_path):
    zpath = str(tmp_path / "z.zarr")
    b2lazy.asarray(np.zeros((4, 4))).compute(urlpath=zpath)
    with pytest.raises(ValueError, match="r\\+"):
        b2lazy.open(zpath, mode="r+")
    with pytest.raises(ValueError, match="mode"):
        b2lazy.open(zpath, mode="w")
    path = str(tmp_path / "x.b2nd")
    blosc2.asarray(np.zeros((4, 4)), urlpath=path, mode="w")
    w = b2lazy.open(path, mode="r+")
    before = _chunk_bytes(path)
    with pytest.raises(ValueError, match="broadcast"):
        w[0] = np.ones(3)
    with pytest.raises(IndexError):
        w[9] = 1.0
    assert _chunk_bytes(path) == before  # refused before anything was written
