"""x[key] = value casts as NumPy's setitem does (issue #36, item 7): NaN and infinity into
an integer array, complex into a real one and Python integers out of range fail as NumPy
fails, on lazy arrays and on files opened with mode="r+" alike; nothing is written then.

NumPy is the oracle: each case is tried on a NumPy array first, and b2lazy must raise the
same exception type (or store the same values, with NumPy's warning)."""

from __future__ import annotations

import warnings

import blosc2
import numpy as np
import pytest

import b2lazy

SCALARS = [
    np.nan,
    np.inf,
    -np.inf,
    1 + 2j,
    np.uint64(2**64 - 1),
    2**64 - 1,
    2**63,
    -(2**63) - 1,
    np.float64(np.nan),
    np.float32(np.inf),
    1e300,
    1.5,
    np.float32(2.5),
    True,
    -1,
    256,
    np.int64(-1),
    [np.nan, 1.0],
    [1 + 1j, 2],
    [2**64, 1],
    [1.5, -2.5],
]
DTYPES = ["int64", "int32", "uint8", "uint64", "float32", "float64", "bool", "complex64"]


def numpy_outcome(dtype, value):
    """What NumPy does for x[:2] = value on a length-4 array: ('raise', type) or
    ('store', values, warned)."""
    ref = np.zeros(4, dtype)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            ref[:2] = value
        except Exception as e:  # noqa: BLE001 - the oracle's own exception type
            return ("raise", type(e))
    return ("store", ref, bool(w))


def targets(kind, tmp_path, dtype):
    if kind == "lazy":
        return b2lazy.zeros((4,), dtype=dtype)
    path = str(tmp_path / f"x-{dtype}.b2nd")
    blosc2.asarray(np.zeros(4, dtype), urlpath=path, mode="w", chunks=(2,), blocks=(1,))
    return b2lazy.open(path, mode="r+")


@pytest.mark.parametrize("kind", ["lazy", "r+"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("value", SCALARS, ids=repr)
def test_scalars_and_lists_cast_as_numpy(kind, dtype, value, tmp_path):
    expect = numpy_outcome(dtype, value)
    x = targets(kind, tmp_path, dtype)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        if expect[0] == "raise":
            with pytest.raises(expect[1]):
                x[:2] = value
            np.testing.assert_array_equal(x.to_numpy(), np.zeros(4, dtype))  # nothing written
            return
        x[:2] = value
    np.testing.assert_array_equal(x.to_numpy(), expect[1])
    assert bool(w) == expect[2]  # NumPy's warning (ComplexWarning, overflow) where it warns


@pytest.mark.parametrize("kind", ["lazy", "r+"])
def test_numpy_arrays_cast_as_numpy_with_its_warnings(kind, tmp_path):
    x = targets(kind, tmp_path, "int64")
    with pytest.warns(RuntimeWarning):
        x[:2] = np.array([np.nan, 1.0])  # NumPy: an unsafe cast with "invalid value" warning
    ref = np.zeros(4, np.int64)
    with np.errstate(all="ignore"):
        ref[:2] = np.array([np.nan, 1.0])
    np.testing.assert_array_equal(x.to_numpy(), ref)
    f = targets(kind, tmp_path, "float64")
    with pytest.warns(np.exceptions.ComplexWarning):
        f[:2] = np.array([1 + 2j, 3 + 0j])
    np.testing.assert_array_equal(f.to_numpy(), [1, 3, 0, 0])


@pytest.mark.parametrize("kind", ["lazy", "r+"])
def test_lazy_values_that_would_lose_information_are_refused(kind, tmp_path):
    x = targets(kind, tmp_path, "int64")
    with pytest.raises(TypeError, match="float64 values to a int64 array.*astype"):
        x[:2] = b2lazy.asarray(np.array([np.nan, 1.0]))
    with pytest.raises(TypeError, match="imaginary"):
        targets(kind, tmp_path, "float32")[:2] = b2lazy.asarray(np.array([1 + 2j, 1j]))
    x[:2] = b2lazy.asarray(np.array([np.nan, 1.0])).astype("int64") * 0 + 5  # said explicitly
    np.testing.assert_array_equal(x.to_numpy(), [5, 5, 0, 0])
    x[2:] = b2lazy.asarray(np.array([3, 4], np.int32))  # a same-kind cast
    np.testing.assert_array_equal(x.to_numpy(), [5, 5, 3, 4])
