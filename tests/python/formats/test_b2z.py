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
from conftest import B2LAZY_COMMAND


def store(path, arrays, threshold=0):
    with blosc2.DictStore(str(path), mode="w", threshold=threshold) as ds:
        for k, v in arrays.items():
            ds[k] = v
    return str(path)


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(1, 30), min_size=1, max_size=3),
    dtype=st.sampled_from(["bool", "int8", "uint16", "int64", "float32", "float64"]),
    seed=st.integers(0, 2**16),
    nested=st.booleans(),
)
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


# --- zips written by Python's zipfile (issue #36 items 3 and 12) ----------------------


def zip_store(path, members):
    """A .b2z as python-blosc2 reads it (stored members and its embed.b2e) holding
    `members`, (name, array) pairs in this order, written by Python's zipfile."""
    import warnings
    import zipfile

    seed = str(path) + ".seed.b2z"
    store(seed, {"/seed": np.zeros(2)}, threshold=0)
    with (
        zipfile.ZipFile(seed) as zin,
        zipfile.ZipFile(str(path), "w", zipfile.ZIP_STORED) as zout,
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")  # "Duplicate name"
        zout.writestr("embed.b2e", zin.read("embed.b2e"))
        for name, a in members:
            zout.writestr(name, blosc2.asarray(a).to_cframe())
    return str(path)


@pytest.mark.parametrize("n", [255, 256, 300, 4095, 4096, 4097, 5000, 65530])
def test_long_member_names_list_and_open(tmp_path, n):
    """Names are read with their length: 4096+ bytes once overflowed a stack buffer, and
    names of 257+ bytes were listed but not found (minizip's lookup cuts them at 256)."""
    name = ("d/" + "k" * n)[:n]
    x, y = np.arange(10.0), np.arange(5)
    path = zip_store(tmp_path / "s.b2z", [(name + ".b2nd", x), ("y.b2nd", y)])
    ds = blosc2.DictStore(path, mode="r")  # the oracle
    np.testing.assert_array_equal(b2lazy.open(path, key="/" + name).to_numpy(), ds["/" + name][:])
    np.testing.assert_array_equal(b2lazy.open(f"{path}#/{name}").to_numpy(), x)
    np.testing.assert_array_equal(b2lazy.open(path, key="/y").to_numpy(), y)
    with pytest.raises(OSError) as e:
        b2lazy.open(path)  # two arrays: both listed
    assert "holds 2 arrays" in str(e.value) and ("/" + name)[:100] in str(e.value) and "/y" in str(e.value)
    one = zip_store(tmp_path / "one.b2z", [(name + ".b2nd", x)])
    np.testing.assert_array_equal(b2lazy.open(one).to_numpy(), x)


@pytest.mark.skipif(not B2LAZY_COMMAND, reason="the b2lazy command is not installed")
def test_long_names_in_the_command(tmp_path):
    import subprocess

    name = "k" * 5000
    path = zip_store(tmp_path / "s.b2z", [(name + ".b2nd", np.arange(6.0))])
    info = subprocess.run([B2LAZY_COMMAND, "info", f"{path}#/{name}"], capture_output=True, text=True, timeout=60)
    assert info.returncode == 0 and "(6,)" in info.stdout, info.stderr


@pytest.mark.parametrize("order", ["first-larger", "last-larger"])
def test_duplicate_names_read_as_python_blosc2(tmp_path, order):
    """Two members named x.b2nd: python-blosc2 reads the last (its name -> member dict)."""
    a, b = np.arange(64.0), np.full(64, 9.0)
    first, last = (a, b) if order == "first-larger" else (b, a)
    path = zip_store(tmp_path / "d.b2z", [("x.b2nd", first), ("y.b2nd", np.ones(3)), ("x.b2nd", last)])
    want = blosc2.DictStore(path, mode="r")["/x"][:]
    np.testing.assert_array_equal(want, last)  # (what the oracle does)
    np.testing.assert_array_equal(b2lazy.open(path, key="/x").to_numpy(), want)
    assert b2lazy.open(path, key="/x").sum().to_numpy() == want.sum()
    with pytest.raises(OSError, match=r"holds 2 arrays \(/x, /y\)"):
        b2lazy.open(path)


def test_duplicate_names_shapes_differ(tmp_path):
    path = zip_store(tmp_path / "d.b2z", [("x.b2nd", np.arange(4)), ("x.b2nd", np.arange(12.0).reshape(3, 4))])
    want = blosc2.DictStore(path, mode="r")["/x"][:]
    got = b2lazy.open(path)  # the one key
    assert got.shape == want.shape == (3, 4)
    np.testing.assert_array_equal(got.to_numpy(), want)


def test_keys_as_python_blosc2_names_them(tmp_path):
    """A name starting with '/' keeps it ('/abs.b2nd' is '/abs'), as python-blosc2's key."""
    path = zip_store(tmp_path / "s.b2z", [("/abs.b2nd", np.arange(3.0)), ("g/h/x.b2nd", np.arange(4.0))])
    ds = blosc2.DictStore(path, mode="r")
    assert {"/abs", "/g/h/x"} <= set(ds.keys())
    for key in ("/abs", "/g/h/x"):
        np.testing.assert_array_equal(b2lazy.open(path, key=key).to_numpy(), ds[key][:])
