"""Issue #11, items 2 and 3: big sizes and bad numeric arguments.

Shape, chunk and byte arithmetic is overflow-checked: a shape whose element count or byte
size does not fit int64 is a ValueError when the array is built (it wrapped: SIGFPE in
compute(chunks=(2**32, 2**32)), size 0 for ones((2**32, 2**32))). Numeric arguments are
converted with errors naming the argument, of NumPy's types (TypeError for non-integers,
ValueError beyond int64 or out of range, IndexError for indices); slice bounds and steps
beyond int64 are clamped as NumPy's. Cases that crashed run in a subprocess, the
hypothesis properties near the int64 limits too (check_* functions, run by one test)."""

import os
import subprocess
import textwrap

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy as bl
from conftest import B2LAZY_COMMAND, examples, raises_naming, run_python

I64_MAX = 2**63 - 1
HERE = os.path.dirname(os.path.abspath(__file__))


EXE = B2LAZY_COMMAND


def run_script(body):
    """`body` (after `import numpy as np, b2lazy as bl`) in a new interpreter; it must end
    normally (a crash is a signal, a negative return code) and print 'done'."""
    r = run_python("import numpy as np, b2lazy as bl\n" + textwrap.dedent(body))
    assert r.returncode == 0, f"status {r.returncode}\n{r.stdout}\n{r.stderr}"
    assert r.stdout.strip().endswith("done"), r.stdout + r.stderr
    return r.stdout


# --- item 2: big chunk sizes crashed --------------------------------------------------
def test_compute_with_chunks_beyond_int64_is_a_value_error_not_sigfpe():
    out = run_script(
        """
        for chunks in [(2**32, 2**32), (2**62, 4), (I64, 2), (2**31, 2**31)]:
            try:
                bl.zeros((4, 4)).compute(chunks=chunks)
                print("no error for", chunks)
            except ValueError as e:
                print("ValueError:", e)
        print("done")
    """.replace("I64", str(I64_MAX))
    )
    assert "no error" not in out
    assert "compute: chunks (4294967296, 4294967296) has more elements than fit in int64" in out
    assert "2 GiB" in out  # (2**31, 2**31) fits int64 but not Blosc2's chunks


def test_compute_with_blocks_beyond_int64_names_blocks():
    raises_naming(
        ValueError,
        lambda: bl.zeros((4, 4)).compute(chunks=(4, 4), blocks=(2**32, 2**32)),
        ["blocks", "(4294967296, 4294967296)"],
    )


@pytest.mark.skipif(EXE is None, reason="the b2lazy command is not installed")
@pytest.mark.parametrize("chunks", ["4294967296,4294967296", "9223372036854775808,1", "99999999999999999999999"])
def test_command_chunks_beyond_int64_exit_2_naming_the_option(tmp_path, chunks):
    a = tmp_path / "a.b2nd"
    bl.asarray(np.arange(16.0).reshape(4, 4)).compute(urlpath=str(a))
    r = subprocess.run(
        [EXE, "eval", "a + 1", f"a={a}", "-o", str(tmp_path / "o.b2nd"), "--chunks", chunks],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "--chunks" in r.stderr
    assert not (tmp_path / "o.b2nd").exists()


@pytest.mark.skipif(EXE is None, reason="the b2lazy command is not installed")
def test_command_chunks_over_blosc2_limit_is_an_error_not_a_crash(tmp_path):
    a = tmp_path / "a.b2nd"
    bl.asarray(np.arange(16.0).reshape(4, 4)).compute(urlpath=str(a))
    r = subprocess.run(
        [EXE, "eval", "a + 1", f"a={a}", "-o", str(tmp_path / "o.b2nd"), "--chunks", "2147483648,2147483648"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode in (1, 2), (r.returncode, r.stderr)
    assert "chunks" in r.stderr


@pytest.mark.skipif(EXE is None, reason="the b2lazy command is not installed")
@pytest.mark.parametrize(
    "option,value",
    [
        ("--max-memory", "1e30G"),
        ("--max-memory", "1e19"),
        ("--threads", "99999999999999999999"),
        ("--clevel", "-99999999999999999999"),
    ],
)
def test_command_numbers_beyond_range_exit_2(tmp_path, option, value):
    a = tmp_path / "a.b2nd"
    bl.asarray(np.arange(16.0)).compute(urlpath=str(a))
    r = subprocess.run(
        [EXE, "eval", "a + 1", f"a={a}", "-o", str(tmp_path / "o.b2nd"), option, value],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert option in r.stderr


# --- item 3: silently wrong sizes -----------------------------------------------------
@pytest.mark.parametrize("make", [bl.ones, bl.zeros, lambda s: bl.full(s, 7)])
def test_shape_with_more_elements_than_int64_is_a_value_error(make):
    # ones((2**32, 2**32)) had size 0, sum 0.0 and mean nan
    raises_naming(
        ValueError, lambda: make((2**32, 2**32)), ["shape (4294967296, 4294967296) has more elements than fit in int64"]
    )


def test_shape_with_more_bytes_than_int64_is_a_value_error():
    raises_naming(ValueError, lambda: bl.zeros((2**60, 4)), ["(1152921504606846976, 4)", "float64", "bytes"])
    raises_naming(ValueError, lambda: bl.zeros((2**61, 4), dtype=np.int8), ["more elements"])
    assert bl.zeros((2**60, 4), dtype=np.int8).size == 2**62


def test_a_zero_extent_does_not_excuse_the_others():
    with pytest.raises(ValueError):  # as NumPy's "array is too big"
        np.empty((0, 2**40, 2**40))
    raises_naming(ValueError, lambda: bl.zeros((0, 2**40, 2**40)), ["shape"])


def test_sum_over_2_40_by_300_stays_valid():
    # 2**40 * 300 elements (2.6e15 bytes of float64) fit int64: a lazy array like any other
    x = bl.sum(bl.zeros((2**40, 300)))
    assert x.shape == ()
    assert bl.zeros((2**40, 300)).size == 2**40 * 300


def test_reductions_of_oversized_broadcasts_are_errors():
    raises_naming(ValueError, lambda: bl.broadcast_to(bl.ones(3), (2**62, 3)), ["(4611686018427387904, 3)"])
    big = bl.broadcast_to(bl.zeros(1, dtype=np.int8), (2**62,))
    raises_naming(ValueError, lambda: bl.concat([big, big, big]), ["concat", "axis 0", "int64"])
    raises_naming(ValueError, lambda: bl.outer(bl.arange(2**40), bl.arange(2**40)), ["shape", "int64"])
    raises_naming(ValueError, lambda: bl.reshape(bl.zeros(3), (2**62, 4)), ["reshape", "(4611686018427387904, 4)"])


# --- bad numeric arguments name the argument ------------------------------------------
@pytest.mark.parametrize(
    "call,exc,words",
    [
        (lambda: bl.zeros((2**63,)), ValueError, ["shape", "9223372036854775808", "int64"]),
        (lambda: bl.zeros(2**63), ValueError, ["shape", "9223372036854775808"]),
        (lambda: bl.zeros((-(2**63) - 1, 2)), ValueError, ["shape", "-9223372036854775809"]),
        (lambda: bl.zeros((100.5, 10)), TypeError, ["shape", "100.5"]),
        (lambda: bl.zeros("ab"), TypeError, ["shape", "'ab'"]),
        (lambda: bl.zeros((-1, 10)), ValueError, ["negative"]),
        (lambda: bl.ones((3,), chunks=(2**64,)), ValueError, ["chunks", "18446744073709551616"]),
        (lambda: bl.ones((3,), chunks=(1.5,)), TypeError, ["chunks", "1.5"]),
        (lambda: bl.zeros((4, 4)).compute(chunks=(100.5, 10)), TypeError, ["chunks", "100.5"]),
        (lambda: bl.zeros((4, 4)).compute(chunks=(2**63, 1)), ValueError, ["chunks", "9223372036854775808"]),
        (lambda: bl.zeros((4, 4)).compute(blocks=(2.0, 2)), TypeError, ["blocks", "2.0"]),
        (lambda: bl.asarray(np.zeros(4), chunks=(2**70,)), ValueError, ["chunks", str(2**70)]),
        (lambda: bl.zeros(4).compute(max_memory=2**70), ValueError, ["max_memory", str(2**70), "2**63-1"]),
        (lambda: bl.zeros(4).compute(max_memory=-1), ValueError, ["max_memory", "-1"]),
        (lambda: bl.zeros(4).compute(max_memory=0), ValueError, ["max_memory", "0"]),
        (lambda: bl.zeros(4).to_numpy(max_memory=2**64), ValueError, ["max_memory"]),
        (lambda: bl.zeros(4).to_numpy(max_memory=1e9), TypeError, ["max_memory", "1000000000.0"]),
        (lambda: bl.zeros(4).compute(nthreads=2.5), TypeError, ["nthreads", "2.5"]),
        (lambda: bl.zeros(4).to_numpy(nthreads="2"), TypeError, ["nthreads", "'2'"]),
        (lambda: bl.reshape(bl.zeros(4), (100.5,)), TypeError, ["reshape", "100.5"]),
        (lambda: bl.reshape(bl.zeros(4), (2**63,)), ValueError, ["reshape", "9223372036854775808"]),
        (lambda: bl.broadcast_to(bl.zeros(4), (2.5, 4)), TypeError, ["broadcast_to", "2.5"]),
        (lambda: bl.broadcast_to(bl.zeros(4), (2**64, 4)), ValueError, ["broadcast_to", "18446744073709551616"]),
        (lambda: bl.roll(bl.zeros(4), 2**63), ValueError, ["roll", "9223372036854775808"]),
        (lambda: bl.linspace(0, 1, 2.5), TypeError, ["num", "2.5"]),
        (lambda: bl.linspace(0, 1, 2**63), ValueError, ["num", "9223372036854775808"]),
        (lambda: bl.arange(2**62 + 1), ValueError, ["arange", "maximum allowed size", "4611686018427387905"]),
        (lambda: bl.arange(0, 2**64, 1), ValueError, ["arange"]),
    ],
)
def test_bad_numeric_arguments_name_the_argument(call, exc, words):
    raises_naming(exc, call, words)


def test_numpy_raises_the_same_types():
    """The oracle for the table above: NumPy's exception types for the same arguments."""
    for call, exc in [
        (lambda: np.zeros((2**63,)), ValueError),
        (lambda: np.zeros((100.5, 10)), TypeError),
        (lambda: np.zeros((2**32, 2**32)), ValueError),
        (lambda: np.zeros((-1, 10)), ValueError),
        (lambda: np.ones(3).reshape(100.5), TypeError),
        (lambda: np.linspace(0, 1, 2.5), TypeError),
        (lambda: np.broadcast_to(1, (2**63,)), ValueError),
        (lambda: np.arange(10)[1.5], IndexError),
    ]:
        with pytest.raises(exc):
            call()


# --- indices and slices beyond int64 --------------------------------------------------
A = np.arange(10.0)
M = np.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize(
    "key,axis,size",
    [
        (2**63, 0, 10),
        (-(2**63) - 1, 0, 10),
        (2**64, 0, 10),
        (np.uint64(2**63), 0, 10),
        ((Ellipsis, 2**63), 0, 10),
    ],
)
def test_integer_index_beyond_int64_is_an_index_error(key, axis, size):
    v = int(key[-1] if isinstance(key, tuple) else key)
    raises_naming(
        IndexError, lambda: bl.asarray(A)[key], [f"index {v} is out of bounds for axis {axis} with size {size}"]
    )


@pytest.mark.parametrize(
    "key,axis,size",
    [
        ((0, 2**63), 1, 4),
        ((2**63, 0), 0, 3),
        ((Ellipsis, 2**63), 1, 4),
        ((None, 1, -(2**70)), 1, 4),
        ((2**63, Ellipsis), 0, 3),
        ((slice(None), [0, 1], 2**63), None, None),
    ],
)
def test_integer_index_beyond_int64_names_its_axis(key, axis, size):
    m = bl.asarray(M)
    v = [int(k) for k in key if isinstance(k, int) and abs(k) >= 2**63][0]
    words = [f"index {v} is out of bounds"] + ([f"for axis {axis} with size {size}"] if axis is not None else [])
    raises_naming(IndexError, lambda: m[key], words)
    raises_naming(IndexError, lambda: m.oindex[tuple(k for k in key if k is not None)], [f"index {v}"])


@pytest.mark.parametrize(
    "key",
    [
        slice(None, None, -(2**63)),
        slice(None, None, 2**63),
        slice(None, None, -(2**63) + 1),
        slice(None, None, 2**63 - 1),
        slice(None, None, -(2**70)),
        slice(2**70, -(2**70), -1),
        slice(-(2**70), 2**70),
        slice(2**63, None),
        slice(None, -(2**63)),
        slice(-(2**63), None, -1),
        slice(2**63 - 1, -(2**63), -(2**62)),
        slice(3, 2**64, 2**62),
        (slice(None, None, -(2**63)), slice(1, 2**63)),
    ],
)
def test_slices_beyond_int64_are_clamped_as_numpy(key):
    ref = (M if isinstance(key, tuple) else A)[key]
    got = bl.asarray(M if isinstance(key, tuple) else A)[key]
    assert got.shape == ref.shape
    np.testing.assert_array_equal(got.to_numpy(), ref)


def test_slice_of_a_one_element_slice_with_huge_steps():
    # a moot step of a one-element slice must not multiply with the next slice's step
    ref = A[:: 2**62][::4][:: -(2**63)]
    got = bl.asarray(A)[:: 2**62][::4][:: -(2**63)]
    np.testing.assert_array_equal(got.to_numpy(), ref)
    x = bl.asarray(A, chunks=(3,))
    np.testing.assert_array_equal(x[9 :: 2**62][:: -(2**62)].to_numpy(), A[9 :: 2**62][:: -(2**62)])


def test_expression_strings_with_big_numbers():
    a = bl.asarray(A)
    np.testing.assert_array_equal(bl.evaluate("a[::-2**63]", a=a).to_numpy(), A[:: -(2**63)])
    np.testing.assert_array_equal(bl.evaluate("a[18446744073709551615:-2**63:-1]", a=a).to_numpy(), A[::-1])
    # the evaluator folds ints exactly within int64 / uint64; beyond, a clear error
    raises_naming(ValueError, lambda: bl.evaluate("a[2**70:]", a=a), ["out of range", "column"])
    raises_naming(ValueError, lambda: bl.evaluate("zeros((2**32, 2**32))"), ["(4294967296, 4294967296)"])
    raises_naming(ValueError, lambda: bl.evaluate("zeros((2**63,))"), ["shape"])
    raises_naming(ValueError, lambda: bl.evaluate("reshape(a, (2**62, 4))", a=a), ["reshape"])
    raises_naming(ValueError, lambda: bl.evaluate("broadcast_to(a, (2**62, 10))", a=a), ["(4611686018427387904, 10)"])
    raises_naming(IndexError, lambda: bl.evaluate("a[2**63]", a=a), ["9223372036854775808"])


def test_arange_over_big_ints_is_exact():
    # through doubles, arange(2**60, 2**60 + 10) was empty (2**60 + 10 rounds to 2**60).
    # The values are Python's range(), as NumPy's where it is exact (NumPy takes the length
    # in doubles: np.arange(0, 2**62 + 1, 2**61) misses 2**62; b2lazy does not).
    for args in [
        (2**60, 2**60 + 10),
        (-(2**63), -(2**63) + 3),
        (I64_MAX - 5, I64_MAX),
        (I64_MAX, -(2**63), -(2**62)),
        (-(2**63), I64_MAX, 2**62),
        (0, 2**62 + 1, 2**61),
    ]:
        ref = np.array(range(*args), dtype=np.int64)
        got = bl.arange(*args)
        assert got.shape == ref.shape and got.dtype == ref.dtype, args
        np.testing.assert_array_equal(got.to_numpy(), ref)
        np.testing.assert_array_equal(bl.evaluate(f"arange{args}").to_numpy(), ref)
    assert bl.arange(2**59).shape == (2**59,)  # lazily fine (NumPy: MemoryError)
    assert bl.arange(2**63 - 5, 2**63 + 5).dtype == np.float64  # beyond int64: float64, as NumPy


# --- hypothesis near the int64 limits (run in a subprocess by one test) -------------------
NEAR_LIMITS = st.one_of(
    st.integers(0, 6),
    st.integers(2**31 - 2, 2**31 + 2),
    st.integers(2**32 - 2, 2**32 + 2),
    st.integers(2**61 - 2, 2**61 + 2),
    st.integers(2**62 - 2, 2**62 + 2),
    st.integers(2**63 - 3, 2**63 + 2),
    st.integers(2**64 - 2, 2**64 + 2),
    st.integers(-3, -1),
    st.integers(-(2**63) - 2, -(2**63) + 2),
)
SHAPES = st.lists(NEAR_LIMITS, min_size=0, max_size=4).map(tuple)
ERRORS = (ValueError, TypeError, IndexError, OverflowError)


def fits(shape, itemsize):
    """Does NumPy accept `shape` (in int64, nonzero extents times itemsize within int64)?"""
    if any(not 0 <= s <= I64_MAX for s in shape):
        return False
    n = 1
    for s in shape:
        n *= s or 1
    return n * itemsize <= I64_MAX


def size_of(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def expect_numpy_or_error(build, shape, itemsize, ref=None):
    """build() gives an array of `shape` (and, when small, NumPy's values ref()) or, when
    the shape does not fit, a clear error of NumPy's types; nothing else."""
    try:
        x = build()
    except ERRORS as e:
        assert not fits(shape, itemsize), f"{shape}: unexpected {type(e).__name__}: {e}"
        assert str(e)
        return None
    assert fits(shape, itemsize), f"{shape}: accepted"
    assert x.shape == shape and x.size == size_of(shape)
    if ref is not None and x.size <= 4096:
        np.testing.assert_array_equal(x.to_numpy(), ref())
    return x


@examples(60)
@given(SHAPES, st.sampled_from(["int8", "float64", "bool"]), st.sampled_from(["zeros", "ones", "full"]))
def check_constructors(shape, dtype, fn):
    build = {
        "zeros": lambda: bl.zeros(shape, dtype=dtype),
        "ones": lambda: bl.ones(shape, dtype=dtype),
        "full": lambda: bl.full(shape, 3, dtype=dtype),
    }[fn]
    ref = {
        "zeros": lambda: np.zeros(shape, dtype),
        "ones": lambda: np.ones(shape, dtype),
        "full": lambda: np.full(shape, 3, dtype),
    }[fn]
    x = expect_numpy_or_error(build, shape, np.dtype(dtype).itemsize, ref)
    if x is not None and x.size > 4096:
        assert bl.sum(x).shape == ()  # reductions of big lazy arrays build


@examples(60)
@given(NEAR_LIMITS, NEAR_LIMITS, st.one_of(NEAR_LIMITS, st.integers(-(2**63) - 2, -1)))
def check_arange(start, stop, step):
    try:
        x = bl.arange(start, stop, step)
    except ERRORS as e:
        assert str(e)
        if all(-(2**63) <= v <= I64_MAX for v in (start, stop, step)) and step != 0:
            n = max(0, -((start - stop) // step))
            assert n * 8 > I64_MAX, f"arange{(start, stop, step)}: {e}"
        return
    n = max(0, -((start - stop) // step)) if step else 0
    if all(-(2**63) <= v <= I64_MAX for v in (start, stop, step)):
        assert x.shape == (n,) and x.dtype == np.int64
        if n <= 4096:  # (Python's range: NumPy takes the length in doubles, see above)
            np.testing.assert_array_equal(x.to_numpy(), np.array(range(start, stop, step), dtype=np.int64))


def numpy_or_error(call):
    """NumPy's result of call(), or the exception it raised."""
    try:
        return call()
    except (ValueError, TypeError, OverflowError, MemoryError) as e:
        return e


@examples(60)
@given(SHAPES, SHAPES)
def check_reshape_and_broadcast_to(source, target):
    small = tuple(s if 0 <= s <= 6 else 2 for s in source)
    base = np.arange(size_of(small), dtype=np.int8).reshape(small)  # int8: bytes == elements
    x = bl.asarray(base)
    # (NumPy reads any negative reshape entry as the unknown one; b2lazy only -1, as the Array API)
    reshape_ref = numpy_or_error(lambda: base.reshape(target)) if not any(s < -1 for s in target) else ValueError()
    for fn, ref in [
        (bl.reshape, reshape_ref),
        (bl.broadcast_to, numpy_or_error(lambda: np.broadcast_to(base, target))),
    ]:
        try:
            got = fn(x, target)
        except ERRORS as e:
            assert isinstance(ref, Exception), f"{fn.__name__}({small} -> {target}): {e}"
            assert str(e)
            continue
        assert not isinstance(ref, Exception), f"{fn.__name__}({small} -> {target}): accepted, NumPy: {ref!r}"
        assert got.shape == ref.shape
        if got.size <= 4096:
            np.testing.assert_array_equal(got.to_numpy(), ref)


@examples(60)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple), st.data())
def check_compute_chunks(shape, data):
    chunks = tuple(data.draw(NEAR_LIMITS) for _ in shape)
    base = np.arange(size_of(shape), dtype=np.float64).reshape(shape)
    try:
        r = bl.asarray(base).compute(chunks=chunks)
    except ERRORS as e:
        assert str(e)
        ok = all(0 < c <= I64_MAX for c in chunks) and size_of(chunks) * 8 <= 2**31 - 64
        assert not ok, f"chunks {chunks}: {e}"
        return
    assert all(0 < c for c in chunks) and size_of(chunks) * 8 <= 2**31
    np.testing.assert_array_equal(r.to_numpy(), base)


@examples(60)
@given(
    st.integers(0, 6),
    st.one_of(st.none(), NEAR_LIMITS, NEAR_LIMITS.map(lambda v: -v)),
    st.one_of(st.none(), NEAR_LIMITS, NEAR_LIMITS.map(lambda v: -v)),
    st.one_of(st.none(), NEAR_LIMITS.filter(bool), NEAR_LIMITS.filter(bool).map(lambda v: -v)),
)
def check_slices(n, start, stop, step):
    ref = np.arange(float(n))[start:stop:step]
    got = bl.asarray(np.arange(float(n)), chunks=(2,) if n else None)[start:stop:step]
    assert got.shape == ref.shape
    np.testing.assert_array_equal(got.to_numpy(), ref)


def test_big_numbers_give_numpy_results_or_clear_errors_never_a_crash():
    code = (
        f"import sys; sys.path[:0] = [{HERE!r}, {os.path.dirname(HERE)!r}]\n"
        "import test_rel_sizes as t\n"
        "for check in (t.check_constructors, t.check_arange, t.check_reshape_and_broadcast_to,\n"
        "              t.check_compute_chunks, t.check_slices):\n"
        "    check()\n"
        "print('done')\n"
    )
    r = run_python(code, timeout=600)
    assert r.returncode == 0, f"status {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-6000:]}"
    assert r.stdout.strip().endswith("done")
