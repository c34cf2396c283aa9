"""b2lazy as an Array API namespace (issue #15 item 1): the namespace and its info, dtype
objects and constants, devices, DLPack, Python scalar conversions and astype(copy=)."""

import math
import subprocess
import sys

import numpy as np
import pytest

import b2lazy as bl
from array_cases import DTYPES, assert_exact


def test_namespace_of_arrays_and_version():
    x = bl.asarray(np.arange(3))
    assert bl.__array_api_version__ == "2024.12"
    assert x.__array_namespace__() is bl
    assert x.__array_namespace__(api_version="2023.12") is bl
    with pytest.raises(ValueError, match="2099.01"):
        x.__array_namespace__(api_version="2099.01")


def test_dtype_objects_compare_with_array_dtypes():
    for d in DTYPES:
        obj = getattr(bl, d.name)
        assert obj == d and bl.asarray(np.zeros(2, d)).dtype == obj
        assert bl.zeros(2, dtype=obj).dtype == d
    assert bl.bool == np.bool_ and bl.bool is not bool
    assert "bool" in dir(bl) and "float64" in bl.__all__
    assert bl.complex128 == np.complex128 and bl.complex64 == np.complex64
    assert (
        "complex64" in bl.__all__
        and bl.float16 == np.float16
        and "float16" not in bl.__array_namespace_info__().dtypes()
    )
    with pytest.raises(AttributeError):
        bl.no_such_name


def test_module_code_keeps_python_bool():
    # b2lazy.bool is served by the module's __getattr__: the package's own bool() calls
    # and isinstance(x, bool) checks still see Python's bool.
    x = bl.asarray(np.array([1.0, 2.0]))
    assert bl.sum(x, keepdims=True).shape == (1,)
    assert bool(bl.asarray(np.array([True])))
    with pytest.raises(TypeError):
        bl.take(x, [0], axis=True)


def test_constants():
    assert bl.e == math.e and bl.pi == math.pi and bl.inf == math.inf and math.isnan(bl.nan)
    assert type(bl.e) is float and bl.newaxis is None
    assert bl.asarray(np.arange(3))[:, bl.newaxis].shape == (3, 1)


def test_namespace_info():
    info = bl.__array_namespace_info__()
    caps = info.capabilities()
    assert caps["boolean indexing"] is True and caps["data-dependent shapes"] is True
    assert info.devices() == ["cpu"] and info.default_device() == "cpu"
    assert info.default_dtypes() == {
        "real floating": np.float64,
        "complex floating": np.complex128,
        "integral": np.int64,
        "indexing": np.int64,
    }
    assert list(info.dtypes()) == [d.name for d in DTYPES] + ["complex64", "complex128"]
    assert set(info.dtypes(kind="integral")) == {d.name for d in DTYPES if d.kind in "iu"}
    assert set(info.dtypes(kind=("bool", "real floating"))) == {"bool", "float32", "float64"}
    assert info.dtypes(kind="complex floating") == {"complex64": np.complex64, "complex128": np.complex128}
    with pytest.raises(ValueError, match="kind"):
        info.dtypes(kind="floating")
    with pytest.raises(ValueError, match="device"):
        info.dtypes(device="gpu")


def test_devices():
    x = bl.asarray(np.arange(3.0))
    assert x.device == "cpu" and x.to_device("cpu") is x
    assert bl.zeros(2, device=x.device).device == "cpu"
    for make in (
        lambda: x.to_device("cuda"),
        lambda: bl.ones(2, device="gpu"),
        lambda: bl.asarray([1], device="gpu"),
        lambda: bl.eye(2, device="gpu"),
        lambda: bl.arange(3, device="gpu"),
        lambda: bl.astype(x, bl.int8, device="gpu"),
    ):
        with pytest.raises(ValueError, match="device"):
            make()


def test_dlpack_round_trip():
    x = np.arange(12, dtype=np.int16).reshape(3, 4)
    lazy = bl.asarray(x) * 2
    assert lazy.__dlpack_device__() == (1, 0)
    assert_exact(np.from_dlpack(lazy), x * 2)
    back = bl.from_dlpack(np.from_dlpack(lazy))
    assert_exact(back.to_numpy(), x * 2)
    assert bl.from_dlpack(lazy) is lazy
    with pytest.raises(BufferError):
        lazy.__dlpack__(copy=False)


def test_scalar_conversions():
    assert float(bl.asarray(2.5)) == 2.5 and int(bl.asarray(7)) == 7
    assert complex(bl.asarray(1.5)) == 1.5 + 0j and type(complex(bl.asarray(1))) is complex
    assert [10, 20, 30][bl.asarray(np.int8(1))] == 20
    assert bool(bl.asarray(np.array(0.0))) is False
    with pytest.raises(TypeError):
        [1, 2][bl.asarray(1.0)]
    with pytest.raises(TypeError):
        float(bl.asarray(np.arange(3.0)))
    with pytest.raises(ValueError):
        bool(bl.asarray(np.arange(3.0)))
    with pytest.raises(OverflowError):
        int(bl.asarray(np.inf))
    with pytest.raises(ValueError):
        int(bl.asarray(np.nan))


def test_astype_copy():
    x = bl.asarray(np.arange(4, dtype=np.int32))
    assert x.astype(bl.int32, copy=False) is x
    y = x.astype(bl.int32)  # copy=True: another Array with the same values
    assert y is not x and y.dtype == np.int32
    z = bl.astype(x, bl.float32, copy=False)  # a cast always makes a new array
    assert z.dtype == np.float32 and z is not x
    assert_exact(z.to_numpy(), np.arange(4, dtype=np.float32))
    assert x.astype(np.float16).dtype == np.float16  # (not an Array API dtype; NumPy's)


def test_var_std_with_correction_beyond_the_count_are_nan():
    x = bl.asarray(np.ones((3, 2)))
    assert np.isnan(bl.var(x, correction=7).to_numpy())
    assert np.isnan(bl.std(x, axis=0, correction=3).to_numpy()).all()


def test_namespace_imports_cleanly_in_a_fresh_interpreter():
    code = "import b2lazy as bl; from b2lazy import bool, float64, eye; print(bool, float64, eye(2).shape)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["bool", "float64", "(2,", "2)"]
