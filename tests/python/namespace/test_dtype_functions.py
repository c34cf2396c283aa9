"""result_type, can_cast, isdtype, finfo and iinfo (issue #15) against NumPy 2, whose
promotion rules b2lazy's engine follows."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy as bl
from array_cases import DTYPES, examples

KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric"]


@examples(200)
@given(
    args=st.lists(
        st.one_of(st.sampled_from(DTYPES), st.sampled_from([True, 3, -1, 2.5])), min_size=1, max_size=4
    ).filter(lambda a: any(isinstance(v, np.dtype) for v in a)),
    as_arrays=st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_result_type_like_numpy(args, as_arrays):
    ref = np.result_type(*args)
    mixed = [bl.zeros(1, dtype=a) if isinstance(a, np.dtype) and as_arr else a for a, as_arr in zip(args, as_arrays)]
    assert bl.result_type(*mixed) == ref
    # and the engine's own promotion agrees: the dtype of an expression over these operands
    # (-1 with an unsigned array is an error there: out of the array's range)
    arrays = [bl.zeros(1, dtype=a) if isinstance(a, np.dtype) else a for a in args]
    if len(arrays) >= 2 and isinstance(arrays[0], bl.Array) and -1 not in args:
        e, chained = arrays[0], args[0]
        for a, arg in zip(arrays[1:], args[1:]):
            e, chained = e + a, np.result_type(chained, arg)  # pairwise, as the expression is
        assert e.dtype == chained


def test_result_type_needs_an_array_or_dtype():
    with pytest.raises(ValueError):
        bl.result_type()
    with pytest.raises(ValueError):
        bl.result_type(1, 2.0)
    assert bl.result_type(bl.float32, 1j) == np.complex64 and bl.result_type(bl.int8, 1j) == np.complex128
    assert bl.result_type(bl.complex64, bl.float64) == np.complex128
    assert bl.result_type(np.float16, np.int8) == np.float16 and bl.result_type(np.float16, 1.0) == np.float16


@examples(200)
@given(a=st.sampled_from(DTYPES), b=st.sampled_from(DTYPES), as_array=st.booleans())
def test_can_cast_like_numpy(a, b, as_array):
    src = bl.zeros(2, dtype=a) if as_array else a
    assert bl.can_cast(src, b) is bool(np.can_cast(a, b, casting="safe"))


@examples(200)
@given(
    d=st.sampled_from(DTYPES),
    kind=st.one_of(
        st.sampled_from(KINDS),
        st.sampled_from(DTYPES),
        st.lists(st.sampled_from(KINDS) | st.sampled_from(DTYPES), min_size=1, max_size=3).map(tuple),
    ),
)
def test_isdtype_like_numpy(d, kind):
    assert bl.isdtype(d, kind) is bool(np.isdtype(d, kind))


def test_isdtype_errors():
    with pytest.raises(ValueError, match="unknown kind"):
        bl.isdtype(bl.int8, "integer")
    with pytest.raises(TypeError):
        bl.isdtype(bl.int8, (("bool",),))


@pytest.mark.parametrize("d", [d for d in DTYPES if d.kind == "f"])
def test_finfo(d):
    f, ref = bl.finfo(d), np.finfo(d)
    for name in ("eps", "max", "min", "smallest_normal"):
        assert type(getattr(f, name)) is float and getattr(f, name) == float(getattr(ref, name))
    assert f.bits == ref.bits and f.dtype == d and bl.finfo(bl.zeros(1, dtype=d)) == f
    with pytest.raises(TypeError):
        bl.finfo(bl.int8)


@pytest.mark.parametrize("d", [np.dtype(np.complex64), np.dtype(np.complex128)])
def test_finfo_of_complex_is_that_of_its_parts(d):
    f, ref = bl.finfo(d), np.finfo(d)
    assert f.bits == ref.bits and f.eps == float(ref.eps) and f.dtype == ref.dtype


@pytest.mark.parametrize("d", [d for d in DTYPES if d.kind in "iu"])
def test_iinfo(d):
    i, ref = bl.iinfo(d), np.iinfo(d)
    assert (i.bits, i.min, i.max) == (ref.bits, ref.min, ref.max) and i.dtype == d
    assert type(i.max) is int and bl.iinfo(bl.zeros(1, dtype=d)) == i
    with pytest.raises(TypeError):
        bl.iinfo(bl.float32)
