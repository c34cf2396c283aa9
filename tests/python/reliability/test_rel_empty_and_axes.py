"""Issue #11, item 10: gaps found by outside suites (array-api-tests) and python-blosc2.

- Arrays with a zero-length axis, also as python-blosc2 stores them (chunk and block
  extent 0 on that axis), open, explain and compute; every kind of node over them gives
  NumPy's values, dtypes and errors (sum 0, prod 1, mean nan, min/max/argmin raise).
- `take(x, [])` and the other empty selections have NumPy's shapes.
- A scalar boolean index (`x[True]`, `x[:, np.False_]`) adds an axis, as NumPy; with
  other advanced indices it broadcasts with them.
- var/std with `correction >= N` give NaN (Array API; NumPy gives inf or nan), never an
  error; a negative correction is NumPy's.
- An out-of-range axis raises numpy.exceptions.AxisError (a ValueError and an IndexError)
  from every function that takes one, also in expression strings.
"""

import os
import shutil
import subprocess
import sys
import warnings

import blosc2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.exceptions import AxisError

import b2lazy
from conftest import assert_exact, examples

# The command installed beside this interpreter (a venv need not be on PATH), else PATH's.
_BESIDE = os.path.join(os.path.dirname(sys.executable), "b2lazy")
EXE = _BESIDE if os.access(_BESIDE, os.X_OK) else shutil.which("b2lazy")


def blosc2_file(tmp_path, x, name="e.b2nd", **kw):
    """x written by python-blosc2 with its default chunks (or `kw`), opened by b2lazy."""
    path = str(tmp_path / name)
    blosc2.asarray(x, urlpath=path, mode="w", **kw)
    return b2lazy.open(path), path


def numpy_outcome(f, *args):
    """(value, None) or (None, exception) of f(*args) with NumPy."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return np.asarray(f(*args)), None
        except Exception as e:  # noqa: BLE001 - the type is compared below
            return None, e


def check_like_numpy(f, x, lazy, what):
    """f(b2lazy, lazy) has the value, dtype and shape of f(np, x), or raises its error type."""
    ref, err = numpy_outcome(f, np, x)
    if err is not None:
        with pytest.raises(type(err)):
            f(b2lazy, lazy).to_numpy()
        return
    got = f(b2lazy, lazy)
    assert got.shape == ref.shape, f"{what}: shape {got.shape} != NumPy {ref.shape}"
    assert np.dtype(got.dtype) == ref.dtype, f"{what}: dtype {got.dtype} != NumPy {ref.dtype}"
    assert_exact(got.to_numpy(), ref, what)
    assert_exact(got.compute().to_numpy(), ref, what + " (compute)")


# ----------------------------------------------------------------------------------------
# python-blosc2 files with a zero-length axis (chunks (0,) etc.)
# ----------------------------------------------------------------------------------------
BLOSC2_EMPTY = [
    ("zeros((0,))", lambda p: blosc2.zeros((0,), urlpath=p, mode="w")),
    ("asarray(empty((3, 0)))", lambda p: blosc2.asarray(np.empty((3, 0)), urlpath=p, mode="w")),
    ("zeros((0, 5), int32)", lambda p: blosc2.zeros((0, 5), dtype=np.int32, urlpath=p, mode="w")),
    ("zeros((4, 0, 3), float32)", lambda p: blosc2.zeros((4, 0, 3), dtype=np.float32, urlpath=p, mode="w")),
    ("asarray(empty((0, 0), bool))", lambda p: blosc2.asarray(np.empty((0, 0), bool), urlpath=p, mode="w")),
    ("zeros((0, 5), chunks=(2, 5))", lambda p: blosc2.zeros((0, 5), chunks=(2, 5), blocks=(1, 5), urlpath=p, mode="w")),
]


@pytest.mark.parametrize("make", [m for _, m in BLOSC2_EMPTY], ids=[n for n, _ in BLOSC2_EMPTY])
def test_blosc2_empty_file_opens_and_computes(tmp_path, make):
    path = str(tmp_path / "e.b2nd")
    stored = make(path)
    x = stored[...]
    a = b2lazy.open(path)
    assert a.shape == x.shape and np.dtype(a.dtype) == x.dtype
    assert_exact(a.to_numpy(), x, "to_numpy")
    assert "b2nd" in a.explain()
    r = a.compute()
    assert r.shape == x.shape and r.stats["output_chunks"] == 0
    assert_exact(r.to_numpy(), x, "compute")
    out = str(tmp_path / "out.b2nd")
    w = (a + 1).compute(urlpath=out)
    assert_exact(w.to_numpy(), x + 1, "a + 1 on disk")
    assert_exact(blosc2.open(out)[...], x + 1, "read back by python-blosc2")
    assert "output chunks" in w.explain() or w.explain()
    assert_exact(b2lazy.sum(a).to_numpy(), np.sum(x), "sum")
    assert_exact(b2lazy.asarray(stored).to_numpy(), x, "asarray(blosc2.NDArray)")


def test_blosc2_empty_file_is_stored_with_chunk_extent_zero(tmp_path):
    """The premise of the tests above: python-blosc2 writes extent 0 where the shape is 0."""
    s = blosc2.asarray(np.empty((3, 0)), urlpath=str(tmp_path / "e.b2nd"), mode="w")
    assert 0 in s.chunks and 0 in s.blocks


# Operations as f(module, x): the same call works with NumPy and with b2lazy.
def _ops(ndim):
    ops = {
        "x + 1": lambda m, x: x + 1,
        "sin(x * 1.0) * x": lambda m, x: m.sin(x * 1.0) * x,  # (NumPy: float16 for uint8)
        "x > 0": lambda m, x: x > 0,
        "sum": lambda m, x: m.sum(x),
        "prod": lambda m, x: m.prod(x),
        "mean": lambda m, x: m.mean(x),
        "var": lambda m, x: m.var(x),
        "std(correction=1)": lambda m, x: m.std(x, correction=1),
        "min": lambda m, x: m.min(x),
        "max": lambda m, x: m.max(x),
        "argmin": lambda m, x: m.argmin(x),
        "argmax": lambda m, x: m.argmax(x),
        "any": lambda m, x: m.any(x),
        "all": lambda m, x: m.all(x),
        "count_nonzero": lambda m, x: m.count_nonzero(x),
        "cumsum": lambda m, x: m.cumsum(x),
        "x[::2]": lambda m, x: x[::2],
        "x[::-1]": lambda m, x: x[::-1],
        "x[1:]": lambda m, x: x[1:],
        "x[..., None]": lambda m, x: x[..., None],
        "take(x, [])": lambda m, x: m.take(x, np.zeros(0, np.int64)),
        "x[x > 0]": lambda m, x: x[x > 0],
        "x[zeros(shape, bool)]": lambda m, x: x[np.zeros(x.shape, bool)],
        "reshape(-1)": lambda m, x: m.reshape(x, (-1,)),
        "concat flat": lambda m, x: m.concat([x, x], axis=None) if m is b2lazy else np.concatenate([x, x], None),
        "flip": lambda m, x: m.flip(x),
        "roll": lambda m, x: m.roll(x, 1),
        "where": lambda m, x: m.where(x > 0, x, 0),
        "clip": lambda m, x: m.clip(x, 0, 1),
        "astype(float32)": lambda m, x: m.astype(x, np.float32) if m is b2lazy else x.astype(np.float32),
        "x + ones((1,) * ndim)": lambda m, x: x + m.ones((1,) * x.ndim, dtype=x.dtype),
        "nonzero(x)[0]": lambda m, x: m.nonzero(x)[0],
        "broadcast_to(sum keepdims)": lambda m, x: m.broadcast_to(m.sum(x, axis=0, keepdims=True), x.shape),
        "squeeze(expand_dims)": lambda m, x: m.squeeze(m.expand_dims(x, axis=0), axis=0),
    }
    for d in range(ndim):
        ops.update(
            {
                f"sum(axis={d})": lambda m, x, d=d: m.sum(x, axis=d),
                f"prod(axis={d}, keepdims)": lambda m, x, d=d: m.prod(x, axis=d, keepdims=True),
                f"mean(axis={d})": lambda m, x, d=d: m.mean(x, axis=d),
                f"var(axis={d})": lambda m, x, d=d: m.var(x, axis=d),
                f"max(axis={d})": lambda m, x, d=d: m.max(x, axis=d),
                f"argmax(axis={d})": lambda m, x, d=d: m.argmax(x, axis=d),
                f"all(axis={d})": lambda m, x, d=d: m.all(x, axis=d),
                f"count_nonzero(axis={d})": lambda m, x, d=d: m.count_nonzero(x, axis=d),
                f"cumulative_sum(axis={d})": lambda m, x, d=d: m.cumulative_sum(x, axis=d),
                f"cumulative_prod(axis={d}, include_initial)": lambda m, x, d=d: m.cumulative_prod(
                    x, axis=d, include_initial=True
                ),
                f"take(x, [], axis={d})": lambda m, x, d=d: m.take(x, np.zeros(0, np.int64), axis=d),
                f"concat(axis={d})": lambda m, x, d=d: (m.concat if m is b2lazy else np.concatenate)([x, x], axis=d),
                f"stack(axis={d})": lambda m, x, d=d: m.stack([x, x], axis=d),
                f"expand_dims({d})": lambda m, x, d=d: m.expand_dims(x, axis=d),
                f"moveaxis({d}, -1)": lambda m, x, d=d: m.moveaxis(x, d, -1),
                f"mask on axis {d}": lambda m, x, d=d: x[(slice(None),) * d + (np.arange(x.shape[d]) % 2 == 0,)],
                # partly empty inputs, maybe a non-empty result: the empty operand's chunks
                # (extent 0 when python-blosc2 stored it) must not reach the output's grid
                f"concat with ones on axis {d}": lambda m, x, d=d: (m.concat if m is b2lazy else np.concatenate)(
                    [x, m.ones(x.shape[:d] + (2,) + x.shape[d + 1 :], dtype=x.dtype)], axis=d
                ),
                f"take_along_axis(axis={d})": lambda m, x, d=d: m.take_along_axis(
                    x, np.zeros(x.shape[:d] + (1 if x.shape[d] else 0,) + x.shape[d + 1 :], np.int64), axis=d
                ),
                f"roll(axis={d})": lambda m, x, d=d: m.roll(x, 2, axis=d),
            }
        )
    if ndim >= 2:
        ops.update(
            {
                "x @ x.mT": lambda m, x: m.matmul(x, m.matrix_transpose(x)),
                "x.mT @ x": lambda m, x: m.matmul(m.matrix_transpose(x), x),
                "tensordot(x, x, axes=ndim)": lambda m, x: m.tensordot(x, x, axes=x.ndim),
                "vecdot(x, x)": lambda m, x: m.vecdot(x, x),
                "permute_dims": lambda m, x: m.permute_dims(x, tuple(range(x.ndim))[::-1]),
                "reshape(0, -1)": lambda m, x: m.reshape(x, (x.shape[0], -1)) if x.shape[0] else m.reshape(x, (0, -1)),
            }
        )
    return ops


@st.composite
def empty_case(draw):
    ndim = draw(st.integers(1, 3), label="ndim")
    shape = [draw(st.integers(1, 5)) for _ in range(ndim)]
    for d in draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True)):
        shape[d] = 0
    dtype = draw(st.sampled_from(["float64", "float32", "int32", "uint8", "bool"]), label="dtype")
    return tuple(shape), np.dtype(dtype)


def _source(draw, x, tmp_path_factory):
    kind = draw(st.sampled_from(["numpy", "mem", "b2lazy file", "blosc2 file", "blosc2 chunks"]), label="source")
    if kind == "numpy":
        return b2lazy.asarray(x)
    chunks = tuple(draw(st.integers(1, 4)) for _ in x.shape)
    if kind == "mem":
        return b2lazy.asarray(x, chunks=chunks)
    path = str(tmp_path_factory.mktemp("empty") / "x.b2nd")
    if kind == "b2lazy file":
        return b2lazy.asarray(x).compute(urlpath=path, chunks=chunks)
    if kind == "blosc2 file":  # python-blosc2's default chunks: extent 0 on the empty axes
        blosc2.asarray(x, urlpath=path, mode="w")
    else:
        blosc2.asarray(x, urlpath=path, mode="w", chunks=chunks, blocks=chunks)
    return b2lazy.open(path)


@examples(300)
@given(data=st.data())
def test_random_operations_on_empty_arrays(data, tmp_path_factory):
    shape, dtype = data.draw(empty_case(), label="case")
    x = np.zeros(shape, dtype)
    lazy = _source(data.draw, x, tmp_path_factory)
    ops = _ops(len(shape))
    name = data.draw(st.sampled_from(sorted(ops)), label="operation")
    check_like_numpy(ops[name], x, lazy, f"{name} of {shape} {dtype}")


@pytest.mark.parametrize("name", sorted(_ops(2)))
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0)])
def test_every_operation_on_a_blosc2_empty_file(tmp_path, name, shape):
    x = np.zeros(shape)
    lazy, _ = blosc2_file(tmp_path, x)
    check_like_numpy(_ops(2)[name], x, lazy, f"{name} of blosc2 file {shape}")


@pytest.mark.parametrize("mk,kn", [(0, 4), (3, 0), (0, 0)])
def test_matmul_with_an_empty_dimension(tmp_path, mk, kn):
    """M=0 gives (0, N); K=0 gives zeros of (M, N) — from files python-blosc2 wrote."""
    a_np = np.ones((mk, 3 if mk else 0))  # (0, 3) or (3, 0) or (0, 0)
    b_np = np.ones((a_np.shape[1], 4))
    a, _ = blosc2_file(tmp_path, a_np, "a.b2nd")
    b, _ = blosc2_file(tmp_path, b_np, "b.b2nd")
    for f in (
        lambda m, p, q: m.matmul(p, q),
        lambda m, p, q: m.matmul(p, q) + 1,
        lambda m, p, q: m.tensordot(p, q, axes=1),
    ):
        ref = f(np, a_np, b_np)
        got = f(b2lazy, a, b)
        assert got.shape == ref.shape
        assert_exact(got.to_numpy(), ref, "matmul")
        assert_exact(got.compute().to_numpy(), ref, "matmul compute")


def test_empty_reductions_have_numpy_values():
    x = b2lazy.asarray(np.zeros((0, 3), np.int16))
    assert_exact(b2lazy.sum(x).to_numpy(), np.sum(np.zeros((0, 3), np.int16)))
    assert_exact(b2lazy.prod(x, axis=0).to_numpy(), np.ones(3, np.int64))
    assert np.isnan(b2lazy.mean(x).to_numpy())
    for f in (b2lazy.min, b2lazy.max, b2lazy.argmin, b2lazy.argmax):
        with pytest.raises(ValueError, match="zero-size"):
            f(x)
    assert_exact(b2lazy.max(x, axis=1).to_numpy(), np.zeros(0, np.int16))  # nothing to reduce into


# ----------------------------------------------------------------------------------------
# the command over an empty python-blosc2 file
# ----------------------------------------------------------------------------------------
@pytest.mark.skipif(EXE is None, reason="the b2lazy command is not on PATH")
def test_command_on_an_empty_blosc2_file(tmp_path):
    x = np.empty((3, 0))
    _, path = blosc2_file(tmp_path, x)
    out = str(tmp_path / "out.b2nd")
    p = subprocess.run(
        [EXE, "eval", "sin(a) + sum(a, axis=1, keepdims=True)", f"a={path}", "-o", out],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    assert_exact(blosc2.open(out)[...], np.sin(x) + np.sum(x, axis=1, keepdims=True))
    p = subprocess.run(
        [EXE, "eval", "sum(a, axis=1)", f"a={path}", "-o", out], capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0, p.stderr
    assert_exact(blosc2.open(out)[...], np.zeros(3))
    for cmd in (["info", path], ["explain", "a * 2", f"a={path}"]):
        p = subprocess.run([EXE, *cmd], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0 and "(3, 0)" in p.stdout, (cmd, p.stdout, p.stderr)
    p = subprocess.run([EXE, "eval", "max(a)", f"a={path}", "-o", out], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "zero-size" in p.stderr, p.stderr


def test_expression_strings_on_an_empty_blosc2_file(tmp_path):
    x = np.empty((0, 4))
    a, _ = blosc2_file(tmp_path, x)
    for text, ref in [
        ("a * 2 + 1", x * 2 + 1),
        ("sum(a, axis=0)", np.sum(x, axis=0)),
        ("take(a, [], axis=1)", np.take(x, [], axis=1)),
        ("a[a > 0]", x[x > 0]),
        ("cumsum(a, axis=0)", np.cumsum(x, axis=0)),
        ("a.T @ a", x.T @ x),
    ]:
        got = b2lazy.evaluate(text, a=a)
        assert got.shape == ref.shape, text
        assert_exact(got.to_numpy(), ref, text)


# ----------------------------------------------------------------------------------------
# take with no indices, empty masks
# ----------------------------------------------------------------------------------------
TAKE_EMPTY = [
    ((3, 4), [], 0),
    ((3, 4), [], 1),
    ((3, 4), [], None),
    ((3, 4), np.zeros((0, 2), np.int64), 0),
    ((3, 4), np.zeros((2, 0), np.int64), 1),
    ((0, 3), [], 0),
    ((0, 3), [0, 2, 1], 1),
    ((5,), [], 0),
    ((5,), np.array([], np.uint8), None),
]


@pytest.mark.parametrize("shape,idx,axis", TAKE_EMPTY)
def test_take_with_empty_indices(shape, idx, axis):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    ref = np.take(x, idx, axis=axis)
    for src in (b2lazy.asarray(x), b2lazy.asarray(x, chunks=tuple(max(1, s // 2) for s in shape))):
        got = b2lazy.take(src, idx, axis=axis)
        assert got.shape == ref.shape
        assert_exact(got.to_numpy(), ref, f"take({shape}, {idx!r}, axis={axis})")


def test_take_along_axis_and_index_lists_with_no_indices():
    x = np.arange(12.0).reshape(3, 4)
    a = b2lazy.asarray(x)
    assert_exact(
        b2lazy.take_along_axis(a, np.zeros((3, 0), np.int64), axis=1).to_numpy(),
        np.take_along_axis(x, np.zeros((3, 0), np.int64), axis=1),
    )
    assert_exact(a[[]].to_numpy(), x[[]])
    assert_exact(a[:, []].to_numpy(), x[:, []])
    assert_exact(a.oindex[[], 1:].to_numpy(), x[np.ix_([], range(1, 4))])


MASK_CASES = [
    ((0, 3), lambda s: np.zeros((0, 3), bool)),
    ((3, 0), lambda s: np.zeros((3, 0), bool)),
    ((2, 0, 3), lambda s: np.zeros((2, 0), bool)),
    ((0, 3), lambda s: np.zeros(0, bool)),
    ((0, 3), lambda s: (slice(None), np.array([True, False, True]))),
    ((3, 0), lambda s: np.array([True, False, True])),
    ((2, 3), lambda s: np.zeros(2, bool)),
    ((2, 3), lambda s: np.zeros((2, 3), bool)),
    ((4, 0, 2), lambda s: (np.array([True, False, True, True]), slice(None), 1)),
    # a mask axis of length 0 fits an axis of any length (NumPy; found by array-api-tests)
    ((1,), lambda s: np.zeros(0, bool)),
    ((2, 3), lambda s: np.zeros((2, 0), bool)),
    ((2, 3), lambda s: np.zeros((0, 0), bool)),
    ((2, 3), lambda s: np.zeros(0, bool)),
    ((2, 3, 4), lambda s: np.zeros((0, 3), bool)),
    ((2, 3), lambda s: (slice(None), np.zeros(0, bool))),
    ((2, 3), lambda s: (np.zeros(0, bool), np.zeros(0, bool))),
    # and these NumPy refuses
    ((2, 3), lambda s: np.zeros((1, 3), bool)),
    ((2, 3), lambda s: np.zeros((0, 5), bool)),
    ((2, 3), lambda s: np.zeros((3, 0), bool)),
    ((2, 3), lambda s: (np.ones(2, bool), np.zeros(0, bool))),
]


@pytest.mark.parametrize("shape,key", MASK_CASES)
def test_masks_with_zero_length_axes(tmp_path, shape, key):
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    k = key(shape)
    ref, err = numpy_outcome(lambda: x[k])
    for src in (b2lazy.asarray(x), blosc2_file(tmp_path, x)[0]):
        if err is not None:
            with pytest.raises(type(err)):
                src[k]
            continue
        got = src[k]
        assert got.shape == ref.shape, (shape, got.shape, ref.shape)
        assert_exact(got.to_numpy(), ref, f"{shape}[{k!r}]")
    lazy_mask = b2lazy.asarray(x) > 100
    assert_exact(b2lazy.asarray(x)[lazy_mask].to_numpy(), x[x > 100], "lazy mask")


# ----------------------------------------------------------------------------------------
# scalar boolean indices
# ----------------------------------------------------------------------------------------
SCALAR_BOOL_KEYS = [
    True,
    False,
    np.True_,
    np.False_,
    np.array(True),
    np.array(False),
    (),
    (True,),
    (Ellipsis, True),
    (slice(None), np.False_),
    (slice(None), True),
    (True, 0),
    (0, True),
    (True, False),
    (True, True),
    (None, True),
    (True, None, False),
    (True, slice(1, 3), None),
    (Ellipsis, False, 1),
    ([0, 2], True),
    (True, [0, 2]),
    (np.array([1, 0]), Ellipsis, True),
    (True, [[0], [1]], [1, 2]),
    (0, slice(None), True),
]


@pytest.mark.parametrize("key", SCALAR_BOOL_KEYS, ids=[repr(k) for k in SCALAR_BOOL_KEYS])
@pytest.mark.parametrize("shape", [(3, 4), (0, 3), (3, 4, 2)])
def test_scalar_boolean_index(shape, key):
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    ref, err = numpy_outcome(lambda: x[key])
    a = b2lazy.asarray(x, chunks=tuple(max(1, s // 2) for s in shape))
    if err is not None:
        with pytest.raises(type(err)):
            a[key].to_numpy()
        return
    got = a[key]
    assert got.shape == ref.shape, (key, got.shape, ref.shape)
    assert_exact(got.to_numpy(), ref, f"x{shape}[{key!r}]")


@pytest.mark.parametrize("key", [True, False, (True, False), (Ellipsis, np.True_), (None, False)])
def test_scalar_boolean_index_of_a_0d_array(key):
    x = np.array(2.5)
    got = b2lazy.asarray(x)[key]
    assert_exact(got.to_numpy(), x[key], repr(key))


def test_scalar_boolean_index_in_expressions():
    x = np.arange(6.0).reshape(2, 3)
    for text, ref in [("a[True]", x[True]), ("a[:, False]", x[:, False]), ("a[..., True] * 2", x[..., True] * 2)]:
        got = b2lazy.evaluate(text, a=b2lazy.asarray(x))
        assert_exact(got.to_numpy(), ref, text)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint32", "uint64"])
def test_index_arrays_of_every_integer_dtype(dtype):
    """Found while routing scalar booleans: an int32 index array read -1 as 2**32 - 1."""
    x = np.arange(20.0).reshape(4, 5)
    a = b2lazy.asarray(x, chunks=(3, 2))
    signed = np.dtype(dtype).kind == "i"
    for key in ([-1, 0, 2] if signed else [3, 0, 2], [[1], [-4 if signed else 0]]):
        idx = np.array(key, dtype)
        for k in (idx, (slice(None), idx % 5), (idx, idx)):
            assert_exact(a[k].to_numpy(), x[k], f"{dtype} {k!r}")
    for k in (np.array(-1 if signed else 3, dtype), np.dtype(dtype).type(1), (1, np.array(2, dtype))):
        assert_exact(a[k].to_numpy(), x[k], f"0-d {dtype} {k!r}")
    assert_exact(
        b2lazy.take(a, np.array([-1, 1] if signed else [3, 1], dtype), axis=1).to_numpy(),
        np.take(x, np.array([-1, 1] if signed else [3, 1], dtype), axis=1),
    )


def test_no_stale_messages_about_later_issues():
    """Messages must not send users to an issue for something that works now."""
    a = b2lazy.asarray(np.zeros((2, 2)))
    for key in (1.5, "a", (0, object())):
        with pytest.raises(TypeError) as e:
            a[key]
        assert "own issue" not in str(e.value) and "not supported yet" not in str(e.value)
        assert "boolean" in str(e.value)  # the list of valid indices names them


# ----------------------------------------------------------------------------------------
# var / std corrections
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("corr", [0, 1, 2.5, 4, 5, 6, 100, -1, -2.5, np.inf])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_var_std_correction(name, corr, axis):
    x = np.random.default_rng(7).standard_normal((5, 4))
    n = x.size if axis is None else x.shape[axis]
    got = getattr(b2lazy, name)(b2lazy.asarray(x, chunks=(2, 3)), axis=axis, correction=corr).to_numpy()
    if n - corr <= 0:  # the Array API: NaN (NumPy divides by max(N - c, 0): inf)
        assert np.all(np.isnan(got)), got
        return
    with np.errstate(all="ignore"):
        ref = getattr(np, name)(x, axis=axis, ddof=corr)
    np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_var_std_correction_on_constant_and_empty_data():
    ones = b2lazy.asarray(np.ones((3, 2)))
    assert np.all(np.isnan(b2lazy.var(ones, axis=0, correction=3).to_numpy()))
    assert np.all(np.isnan(b2lazy.std(ones, correction=10).to_numpy()))
    empty = b2lazy.asarray(np.ones((0, 2)))
    for corr in (0, 1, -1):
        assert np.all(np.isnan(b2lazy.var(empty, axis=0, correction=corr).to_numpy()))
    assert b2lazy.var(empty, axis=1, correction=5).shape == (0,)
    got = b2lazy.evaluate("var(a, correction=7) + std(a, ddof=6)", a=ones).to_numpy()
    assert np.isnan(got)


# ----------------------------------------------------------------------------------------
# AxisError from every function that takes an axis
# ----------------------------------------------------------------------------------------
_X = np.arange(6.0).reshape(2, 3)
AXIS_SITES = [
    ("sum", lambda a: b2lazy.sum(a, axis=5), "sum(a, axis=5)"),
    ("sum tuple", lambda a: b2lazy.sum(a, axis=(0, -3)), "sum(a, axis=(0, -3))"),
    ("prod", lambda a: b2lazy.prod(a, axis=2), "prod(a, axis=2)"),
    ("mean", lambda a: b2lazy.mean(a, axis=-3), "mean(a, axis=-3)"),
    ("var", lambda a: b2lazy.var(a, axis=2), "var(a, axis=2)"),
    ("std", lambda a: b2lazy.std(a, axis=(1, 2)), "std(a, axis=(1, 2))"),
    ("min", lambda a: b2lazy.min(a, axis=2), "min(a, axis=2)"),
    ("max", lambda a: b2lazy.max(a, axis=2), "a.max(axis=2)"),
    ("any", lambda a: b2lazy.any(a, axis=2), "any(a, axis=2)"),
    ("all", lambda a: b2lazy.all(a, axis=2), "all(a, axis=2)"),
    ("count_nonzero", lambda a: b2lazy.count_nonzero(a, axis=2), "count_nonzero(a, axis=2)"),
    ("argmin", lambda a: b2lazy.argmin(a, axis=2), "argmin(a, axis=2)"),
    ("argmax", lambda a: b2lazy.argmax(a, axis=-3), "argmax(a, axis=-3)"),
    ("cumulative_sum", lambda a: b2lazy.cumulative_sum(a, axis=2), "cumulative_sum(a, axis=2)"),
    ("cumulative_prod", lambda a: b2lazy.cumulative_prod(a, axis=-3), "cumulative_prod(a, axis=-3)"),
    ("cumsum", lambda a: b2lazy.cumsum(a, axis=2), "cumsum(a, axis=2)"),
    ("cumprod", lambda a: b2lazy.cumprod(a, axis=2), "cumprod(a, axis=2)"),
    ("expand_dims", lambda a: b2lazy.expand_dims(a, axis=3), "expand_dims(a, axis=3)"),
    ("expand_dims negative", lambda a: b2lazy.expand_dims(a, axis=-4), "expand_dims(a, axis=-4)"),
    ("squeeze", lambda a: b2lazy.squeeze(a, axis=2), "squeeze(a, axis=2)"),
    ("moveaxis source", lambda a: b2lazy.moveaxis(a, 2, 0), "moveaxis(a, 2, 0)"),
    ("moveaxis destination", lambda a: b2lazy.moveaxis(a, 0, -3), "moveaxis(a, 0, -3)"),
    ("flip", lambda a: b2lazy.flip(a, axis=2), "flip(a, axis=2)"),
    ("roll", lambda a: b2lazy.roll(a, 1, axis=2), "roll(a, 1, axis=2)"),
    ("concat", lambda a: b2lazy.concat([a, a], axis=2), "concat([a, a], axis=2)"),
    ("stack", lambda a: b2lazy.stack([a, a], axis=3), "stack([a, a], axis=3)"),
    ("take", lambda a: b2lazy.take(a, [0], axis=2), "take(a, [0], axis=2)"),
    (
        "take_along_axis",
        lambda a: b2lazy.take_along_axis(a, np.zeros((2, 3), np.int64), axis=2),
        "take_along_axis(a, [[0, 0, 0], [0, 0, 0]], axis=2)",
    ),
    ("vecdot", lambda a: b2lazy.vecdot(a, a, axis=2), "vecdot(a, a, axis=2)"),
    ("vecdot negative", lambda a: b2lazy.vecdot(a, a, axis=-3), "vecdot(a, a, axis=-3)"),
    ("tensordot", lambda a: b2lazy.tensordot(a, a, axes=([5], [0])), "tensordot(a, a, axes=([5], [0]))"),
    ("tensordot count", lambda a: b2lazy.tensordot(a, a, axes=3), "tensordot(a, a, axes=3)"),
    ("permute_dims", lambda a: b2lazy.permute_dims(a, (0, 5)), "permute_dims(a, (0, 5))"),
    ("transpose", lambda a: b2lazy.permute_dims(a, (-3, 0)), "transpose(a, (-3, 0))"),
]


BIG = 2**40  # beyond a C int: out of bounds too, not a conversion error
AXIS_SITES_BIG = [
    ("sum", lambda a: b2lazy.sum(a, axis=BIG)),
    ("sum tuple", lambda a: b2lazy.sum(a, axis=(0, -BIG))),
    ("argmax", lambda a: b2lazy.argmax(a, axis=BIG)),
    ("cumsum", lambda a: b2lazy.cumsum(a, axis=BIG)),
    ("cumulative_prod", lambda a: b2lazy.cumulative_prod(a, axis=BIG)),
    ("expand_dims", lambda a: b2lazy.expand_dims(a, axis=BIG)),
    ("squeeze", lambda a: b2lazy.squeeze(a, axis=BIG)),
    ("flip", lambda a: b2lazy.flip(a, axis=(0, BIG))),
    ("roll", lambda a: b2lazy.roll(a, 1, axis=BIG)),
    ("moveaxis", lambda a: b2lazy.moveaxis(a, BIG, 0)),
    ("concat", lambda a: b2lazy.concat([a, a], axis=BIG)),
    ("stack", lambda a: b2lazy.stack([a, a], axis=-BIG)),
    ("take", lambda a: b2lazy.take(a, [0], axis=BIG)),
    ("take_along_axis", lambda a: b2lazy.take_along_axis(a, np.zeros((2, 3), np.int64), axis=BIG)),
    ("vecdot", lambda a: b2lazy.vecdot(a, a, axis=BIG)),
    ("tensordot", lambda a: b2lazy.tensordot(a, a, axes=BIG)),
    ("tensordot pair", lambda a: b2lazy.tensordot(a, a, axes=([BIG], [0]))),
    ("permute_dims", lambda a: b2lazy.permute_dims(a, (BIG, 0))),
]


@pytest.mark.parametrize(
    "call",
    [c for _, c, _ in AXIS_SITES] + [c for _, c in AXIS_SITES_BIG],
    ids=[n for n, _, _ in AXIS_SITES] + [n + " (2**40)" for n, _ in AXIS_SITES_BIG],
)
def test_out_of_range_axis_is_numpys_axis_error(call):
    a = b2lazy.asarray(_X)
    for exc in (AxisError, IndexError, ValueError):
        with pytest.raises(exc) as e:
            call(a).to_numpy()
        assert "out of bounds" in str(e.value), str(e.value)


@pytest.mark.parametrize("text", [t for _, _, t in AXIS_SITES], ids=[n for n, _, _ in AXIS_SITES])
def test_out_of_range_axis_in_expression_strings(text):
    for exc in (AxisError, IndexError, ValueError):
        with pytest.raises(exc) as e:
            b2lazy.evaluate(text, a=b2lazy.asarray(_X)).to_numpy()
        assert "out of bounds" in str(e.value) and " at column " in str(e.value), str(e.value)


def test_axis_errors_that_numpy_raises_as_value_errors_stay_value_errors():
    a = b2lazy.asarray(_X)
    for call in (
        lambda: b2lazy.sum(a, axis=(0, 0)),
        lambda: b2lazy.squeeze(a, axis=0),
        lambda: b2lazy.permute_dims(a, (0,)),
        lambda: b2lazy.permute_dims(a, (0, 0)),
        lambda: b2lazy.moveaxis(a, (0, 0), (0, 1)),
    ):
        with pytest.raises(ValueError) as e:
            call()
        assert not isinstance(e.value, IndexError), str(e.value)


@pytest.mark.skipif(EXE is None, reason="the b2lazy command is not on PATH")
def test_command_axis_error(tmp_path):
    _, path = blosc2_file(tmp_path, _X)
    p = subprocess.run(
        [EXE, "eval", "sum(a, axis=5)", f"a={path}", "-o", str(tmp_path / "o.b2nd")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode != 0 and "axis 5 is out of bounds" in p.stderr, p.stderr
    assert not os.path.exists(tmp_path / "o.b2nd")


# ----------------------------------------------------------------------------------------
# other gaps array-api-tests found
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(), (0,), (3, 0), 4])
def test_zeros_and_ones_with_dtype_none_are_float64(shape):
    for f in ("zeros", "ones"):
        got = getattr(b2lazy, f)(shape, dtype=None)
        assert_exact(got.to_numpy(), getattr(np, f)(shape, dtype=None), f"{f}({shape}, dtype=None)")


def test_index_of_a_0d_integer_array():
    x = np.arange(10.0)
    n = b2lazy.sum(b2lazy.asarray(np.array([1, 2], np.int32)))  # lazy 0-d int64: 3
    assert [0, 1, 2][b2lazy.asarray(np.array(2))] == 2
    assert range(10)[n] == 3 and x[n] == 3.0
    for bad in (b2lazy.asarray(np.array(2.0)), b2lazy.asarray(np.array([1])), b2lazy.asarray(np.array(True))):
        with pytest.raises(TypeError):
            [0, 1, 2][bad]
