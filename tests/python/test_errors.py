"""Bad input: clear Python exceptions naming the culprit, no crash, no files left behind."""

import os
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy
from conftest import b2np, examples

ROWS = np.random.default_rng(0).random((40, 100))


def _shape_str(shape):
    return re.escape(str(tuple(shape)))


# ----------------------------------------------------------------------------------------
# shapes
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "s1,s2", [((3, 4), (5,)), ((2, 3), (3, 2)), ((4,), (0,)), ((2, 1, 3), (4, 2)), ((1, 5), (7, 4))]
)
def test_non_broadcastable_shapes(s1, s2):
    with pytest.raises(ValueError):
        np.ones(s1) + np.ones(s2)
    a, b = b2lazy.asarray(np.ones(s1)), b2lazy.asarray(np.ones(s2), chunks=tuple(max(1, n) for n in s2))
    for build in (
        lambda: a + b,
        lambda: b2lazy.atan2(a, b),
        lambda: b2lazy.where(a > 0, a, b),
        lambda: b2lazy.clip(a, b, None),
        lambda: b2lazy.maximum(b, a),
    ):
        with pytest.raises(ValueError) as e:
            build()
        msg = str(e.value)
        assert str(s1) in msg and str(s2) in msg, msg


@examples(40)
@given(s1=st.lists(st.integers(1, 4), min_size=1, max_size=3), s2=st.lists(st.integers(1, 4), min_size=1, max_size=3))
def test_broadcast_agrees_with_numpy(s1, s2):
    s1, s2 = tuple(s1), tuple(s2)
    try:
        ref = np.broadcast_shapes(s1, s2)
    except ValueError:
        with pytest.raises(ValueError, match=_shape_str(s1)):
            b2lazy.asarray(np.ones(s1)) - b2lazy.asarray(np.ones(s2))
        return
    assert (b2lazy.asarray(np.ones(s1)) - b2lazy.asarray(np.ones(s2))).shape == ref


# ----------------------------------------------------------------------------------------
# dtypes
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float128", ">f8", ">c16", ">i4", ">u2", "U3", "datetime64[s]", "O"])
def test_unsupported_dtype(dtype):
    x = np.zeros(4, dtype=dtype)
    name = np.dtype(dtype).name if not dtype.startswith(">") else dtype
    builds = [lambda: b2lazy.zeros(4, dtype=dtype)]
    if not dtype.startswith(">"):  # NumPy's big-endian arrays and astype(">f8"): accepted, held native
        builds += [
            lambda: b2lazy.asarray(x),
            lambda: b2lazy.asarray(x, chunks=(2,)),
            lambda: b2lazy.asarray(np.ones(4)).astype(dtype),
        ]
    for build in builds:
        with pytest.raises(TypeError) as e:
            build()
        msg = str(e.value)
        assert name in msg or str(np.dtype(dtype)) in msg, msg


def test_python_int_scalar_out_of_range_is_value_error():
    """Documented deviation (c): NumPy raises OverflowError, b2lazy ValueError."""
    u8 = b2lazy.asarray(np.arange(3, dtype=np.uint8))
    i8 = b2lazy.asarray(np.arange(3, dtype=np.int8))
    for build, num in [
        (lambda: u8 + 300, "300"),
        (lambda: u8 - (-1), "-1"),
        (lambda: i8 * 128, "128"),
        (lambda: b2lazy.where(u8 > 0, u8, 256), "256"),
        (lambda: b2lazy.asarray(np.arange(3)) + 2**64, str(2**64)),
    ]:
        with pytest.raises(ValueError, match=num):
            build()


def test_comparison_with_out_of_range_python_int_is_by_value():
    """NumPy 2 compares by value: every int8 is below 1000, every uint8 above -1."""
    i8 = np.arange(-3, 3, dtype=np.int8)
    u8 = np.arange(3, dtype=np.uint8)
    for f in [
        lambda x: 1000 < x,
        lambda x: x < 1000,
        lambda x: x == -129,
        lambda x: x != 2**70 // 2**10,
        lambda x: x >= -(2**63),
        lambda x: x <= 2**64 - 1,
    ]:
        for x in (i8, u8):
            assert (f(b2lazy.asarray(x)).to_numpy() == f(x)).all()


def test_bug_uint64_scalar_above_int64_max():
    x = np.array([1, 2], dtype=np.uint64)
    ref = x + 2**63
    assert (b2lazy.asarray(x) + 2**63).to_numpy().tolist() == ref.tolist()


def test_bad_operand_type():
    a = b2lazy.asarray(np.ones(3))
    with pytest.raises(TypeError):
        b2lazy.sin("abc")
    with pytest.raises(TypeError):
        a + "abc"
    with pytest.raises(TypeError):
        b2lazy.add(a)  # wrong arity


# ----------------------------------------------------------------------------------------
# files
# ----------------------------------------------------------------------------------------
def test_missing_file(tmp_path):
    path = str(tmp_path / "nope.b2nd")
    with pytest.raises(OSError, match=re.escape(path)):
        b2lazy.open(path)
    with pytest.raises(OSError, match=re.escape(str(tmp_path / "nodir"))):
        b2lazy.open(tmp_path / "nodir")


@pytest.mark.parametrize("content", [b"", b"\x00" * 100, os.urandom(2000), b"not a b2nd file" * 50])
def test_garbage_file(tmp_path, content):
    path = tmp_path / "x.b2nd"
    path.write_bytes(content)
    with pytest.raises(OSError, match=re.escape(str(path))):
        b2np(b2lazy.open(path) + 1)


def _write_rows(path, contiguous=True):
    b2lazy.asarray(ROWS).compute(urlpath=str(path), chunks=(10, 100), blocks=(5, 50), contiguous=contiguous)


@pytest.mark.parametrize("how", ["truncate-half", "truncate-tail", "truncate-header", "flip-middle", "zero-middle"])
def test_corrupted_file(tmp_path, how):
    path = tmp_path / "x.b2nd"
    _write_rows(path)
    d = bytearray(path.read_bytes())
    n = len(d)
    if how == "truncate-half":
        d = d[: n // 2]
    elif how == "truncate-tail":
        d = d[: n - 20]
    elif how == "truncate-header":
        d = d[:40]
    elif how == "flip-middle":
        for i in range(n // 3, n // 3 + 200):
            d[i] ^= 0xFF
    else:
        d[n // 2 : n // 2 + 500] = bytes(500)
    path.write_bytes(bytes(d))
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(OSError, match=re.escape(str(path))):
        a = b2lazy.open(path)
        (a * 2).compute(urlpath=out / "y.b2nd")
    assert os.listdir(out) == []  # failed compute leaves nothing behind
    with pytest.raises(OSError, match=re.escape(str(path))):
        (b2lazy.open(path) + 1).to_numpy()


@pytest.mark.parametrize("how", ["missing-chunk", "garbage-chunk"])
def test_corrupted_sparse_directory(tmp_path, how):
    path = tmp_path / "d"
    _write_rows(path, contiguous=False)
    chunk = sorted(f for f in os.listdir(path) if f.endswith(".chunk"))[1]
    if how == "missing-chunk":
        os.remove(path / chunk)
    else:
        (path / chunk).write_bytes(os.urandom(300))
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(OSError, match=re.escape(str(path))):
        (b2lazy.open(path) + 1).compute(urlpath=out / "y.b2nd")
    assert os.listdir(out) == []
    with pytest.raises(OSError, match=re.escape(str(path))):
        (b2lazy.open(path) + 1).compute(urlpath=out / "ydir", contiguous=False)
    assert os.listdir(out) == []
    with pytest.raises(OSError):
        (b2lazy.open(path) + 1).to_numpy()


@pytest.mark.parametrize("contiguous", [True, False])
def test_output_in_missing_directory(tmp_path, contiguous):
    path = tmp_path / "no" / "such" / ("y.b2nd" if contiguous else "ydir")
    with pytest.raises(OSError, match=re.escape(str(path.parent))):
        (b2lazy.asarray(ROWS) + 1).compute(urlpath=path, contiguous=contiguous)
    assert not (tmp_path / "no").exists()
    assert os.listdir(tmp_path) == []


def test_failed_compute_leaves_existing_output_dir_clean(tmp_path):
    """A compute that fails half way (source chunk 2 corrupted) leaves no temporary files."""
    src = tmp_path / "src.b2nd"
    _write_rows(src)
    d = bytearray(src.read_bytes())
    for i in range(len(d) // 2, len(d) // 2 + 300):
        d[i] ^= 0x5A
    src.write_bytes(bytes(d))
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("unrelated")
    for target in ("y.b2nd", "ydir"):
        with pytest.raises(OSError):
            (b2lazy.open(src) * 2).compute(urlpath=out / target, contiguous=target.endswith("b2nd"))
        assert sorted(os.listdir(out)) == ["keep.txt"], os.listdir(out)


# ----------------------------------------------------------------------------------------
# indexing
# ----------------------------------------------------------------------------------------
@pytest.fixture
def arr():
    return b2lazy.asarray(np.arange(24.0).reshape(2, 3, 4), chunks=(1, 2, 2), blocks=(1, 1, 2))


@pytest.mark.parametrize(
    "key,axis", [(2, 0), (-3, 0), ((0, 3), 1), ((0, -4), 1), ((Ellipsis, 4), 2), ((0, 0, -5), 2), ((None, 1, 5), 1)]
)
def test_index_out_of_bounds(arr, key, axis):
    with pytest.raises(IndexError):
        np.arange(24.0).reshape(2, 3, 4)[key]
    with pytest.raises(IndexError, match=f"axis {axis}"):
        arr[key]
    with pytest.raises(IndexError, match=f"axis {axis}"):
        (arr + 1)[key]


def test_too_many_indices(arr):
    with pytest.raises(IndexError):
        arr[0, 0, 0, 0]
    with pytest.raises(IndexError):
        (arr * 2)[0, :, 1, None, 0]
    with pytest.raises(IndexError):
        arr[..., 0, ...]


@pytest.mark.parametrize("key", [1.5, (0, 1.0), (slice(None), np.float64(2.0))])
def test_float_index(arr, key):
    with pytest.raises(TypeError):
        arr[key]


@pytest.mark.parametrize("key", [slice(0, 1.5), slice(None, None, 0.5)])
def test_float_in_slice(arr, key):
    with pytest.raises(TypeError):
        arr[key]


@pytest.mark.parametrize("key", [slice(None, None, 0), (0, slice(1, 2, 0))])
def test_step_zero(arr, key):
    with pytest.raises(ValueError):
        arr[key]


def test_bad_compute_arguments():
    a = b2lazy.asarray(np.ones((4, 4)))
    with pytest.raises(ValueError):
        a.compute(chunks=(0, 2))
    with pytest.raises((ValueError, TypeError)):
        a.compute(chunks=(2, 2, 2))
    with pytest.raises(ValueError):
        a.compute(chunks=(2, 2), blocks=(4, 4))
    with pytest.raises(TypeError):
        a.compute(cparams={"bogus": 1})


def test_bug_arange_too_long_is_an_error():
    """arange(0, 2**63 - 1) overflowed the length (shape (0,)); NumPy raises too."""
    with pytest.raises(ValueError, match="maximum allowed size"):
        b2lazy.arange(0, 2**63 - 1)
    with pytest.raises(ValueError, match="maximum allowed size"):
        b2lazy.arange(0, float("inf"))
