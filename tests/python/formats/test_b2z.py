"""Arrays inside python-blosc2 DictStore zips (.b2z), issue #13 item 5: opened where their
frames lie in the zip (b2lazy.open(path, key=...), "s.b2z#/key"), and b2lazy.asarray of
an array python-blosc2's DictStore returns (stored members by their key; small arrays
python-blosc2 embedded in embed.b2e through their in-memory copy)."""
import blosc2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import b2lazy


def store(path, arrays, threshold=0):
    with blosc2.DictStore(str(path), mode="w", threshold=threshold) as ds:
        for k, v in arrays.items():
            ds[k] = v
    return str(path)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 30), min_size=1, max_size=3),
       dtype=st.sampled_from(["bool", "int8", "uint16", "int64", "float32", "float64"]),
       seed=st.integers(0, 2**16), nested=st.booleans())
def test_members_read_equal_and_lazily(tmp_path_factory, shape, dtype, seed, nested):
    rng = np.random.default_rng(seed)
    x = (rng.random(shape) * 100).astype(dtype)
    key = "/g/h/x" if nested else "/x"
    path = store(tmp_path_factory.mktemp("z") / "s.b2z", {key: x, "/y": np.ones(3)})
    ds = blosc2.DictStore(path, mode="r")
    for a in (b2lazy.open(path, key=key), b2lazy.open(f"{path}#{key}"), b2lazy.asarray(ds[key])):
        assert a.urlpath == f"{path}#{key}"
        np.testing.assert_array_equal(a.to_numpy(), x)
    r = (b2lazy.open(path, key=key) * 2).compute()
    np.testing.assert_array_equal(r.to_numpy(), x * 2)


def test_embedded_arrays_come_through_python_blosc2(tmp_path):
    x = np.arange(50.0)
    path = store(tmp_path / "s.b2z", {"/small": x, "/big": np.ones((100, 100))}, threshold=10_000)
    ds = blosc2.DictStore(path, mode="r")
    np.testing.assert_array_equal(b2lazy.asarray(ds["/small"]).to_numpy(), x)  # from its in-memory copy
    with pytest.raises(OSError, match="embed.b2e"):
        b2lazy.open(path, key="/small")
    np.testing.assert_array_equal(b2lazy.open(path, key="/big").to_numpy(), np.ones((100, 100)))


def test_keys_are_asked_for_and_named(tmp_path):
    path = store(tmp_path / "s.b2z", {"/a": np.zeros(4), "/b": np.ones(4)})
    with pytest.raises(OSError, match=r"holds 2 arrays \(/a, /b\): name one"):
        b2lazy.open(path)
    with pytest.raises(OSError, match="has no array '/c'"):
        b2lazy.open(path, key="/c")
    one = store(tmp_path / "one.b2z", {"/only": np.arange(3)})
    np.testing.assert_array_equal(b2lazy.open(one).to_numpy(), np.arange(3))  # the one array


def test_the_command_reads_members(tmp_path):
    import subprocess
    path = store(tmp_path / "s.b2z", {"/a": np.arange(12.0).reshape(3, 4)})
    out = str(tmp_path / "o.b2nd")
    subprocess.run(["b2lazy", "eval", "a.T @ a", f"a={path}#/a", "-o", out], check=True, capture_output=True)
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(b2lazy.open(out).to_numpy(), x.T @ x)
    info = subprocess.run(["b2lazy", "info", f"{path}#/a"], check=True, capture_output=True, text=True).stdout
    assert "(3, 4)" in info


def test_b2z_is_read_only(tmp_path):
    with pytest.raises(OSError, match="does not write"):
        b2lazy.asarray(np.ones(3)).compute(urlpath=str(tmp_path / "o.b2z"))


def test_paths_holding_a_hash(tmp_path):
    d = tmp_path / "a#b"
    d.mkdir()
    path = store(d / "s#2.b2z", {"/x": np.arange(5.0)})
    np.testing.assert_array_equal(b2lazy.open(path).to_numpy(), np.arange(5.0))
    np.testing.assert_array_equal(b2lazy.open(path + "#/x").to_numpy(), np.arange(5.0))
