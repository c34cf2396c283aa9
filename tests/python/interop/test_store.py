"""store, to_zarr, from_zarr and persist (issue #37, part 4), with zarr-python, h5py and
NumPy as the oracles; storing a ~1 GiB lazy expression into a zarr.Array holds far less
than its size (peak RSS in a subprocess)."""

import os
import subprocess
import sys
import textwrap

import h5py
import numpy as np
import pytest
import zarr
from hypothesis import given, settings, strategies as st

import b2lazy as bl


@st.composite
def cases(draw):
    shape = tuple(draw(st.lists(st.integers(1, 50), min_size=1, max_size=3)))
    src_chunks = tuple(draw(st.integers(1, s)) for s in shape)
    tgt_chunks = tuple(draw(st.integers(1, s)) for s in shape)
    x = np.random.default_rng(draw(st.integers(0, 2**16))).random(shape)
    staged = draw(st.booleans())  # an expression with a stage (a reduction computed once) or not
    return x, src_chunks, tgt_chunks, staged


def _expr(a, staged):
    return bl.sum(a, axis=0) + a if staged else bl.sin(a) * 2 + 1


def _ref(x, staged):
    return x.sum(axis=0) + x if staged else np.sin(x) * 2 + 1


@settings(max_examples=20, deadline=None)
@given(case=cases())
def test_store_into_zarr_h5py_numpy(tmp_path_factory, case):
    x, sc, tc, staged = case
    d = tmp_path_factory.mktemp("store")
    e = _expr(bl.asarray(x, chunks=sc), staged)
    want = _ref(x, staged)
    z = zarr.create_array(str(d / "z.zarr"), shape=x.shape, dtype="f8", chunks=tc)
    n = np.zeros(x.shape)
    with h5py.File(d / "f.h5", "w") as f:
        h = f.create_dataset("d", shape=x.shape, dtype="f8", chunks=tc)
        assert bl.store([e, e, e], [z, h, n]) is None
        np.testing.assert_allclose(h[...], want, rtol=1e-12)
    np.testing.assert_allclose(zarr.open_array(str(d / "z.zarr"))[...], want, rtol=1e-12)
    np.testing.assert_allclose(n, want, rtol=1e-12)


def test_store_regions_lock_and_return_stored():
    x = np.arange(12.0).reshape(3, 4)
    out = np.full((5, 6), -1.0)
    calls = []

    class Lock:
        def __enter__(self):
            calls.append(1)

        def __exit__(self, *a):
            pass

    bl.store(bl.asarray(x) + 1, out, regions=(slice(1, 4), slice(2, 6)), lock=Lock())
    want = np.full((5, 6), -1.0)
    want[1:4, 2:] = x + 1
    np.testing.assert_array_equal(out, want)
    assert calls
    (r,) = bl.store([bl.asarray(x)], [np.zeros((3, 4))], return_stored=True)
    np.testing.assert_array_equal(r.to_numpy(), x)


def test_store_into_a_b2lazy_array_opened_r_plus(tmp_path):
    p = str(tmp_path / "t.b2nd")
    bl.zeros((40, 30)).compute(urlpath=p, chunks=(16, 16))
    x = np.random.default_rng(2).random((40, 30))
    bl.store(bl.asarray(x) * 3, bl.open(p, mode="r+"))
    np.testing.assert_allclose(bl.open(p).to_numpy(), x * 3)
    with pytest.raises(ValueError, match="mode='r\\+'"):
        bl.store(bl.asarray(x), bl.open(p))


def test_store_refusals_name_the_argument():
    a = bl.ones((3, 4))
    with pytest.raises(ValueError, match="shape"):
        bl.store(a, np.zeros((4, 3)))
    with pytest.raises(ValueError, match="2 sources but 1 targets"):
        bl.store([a, a], [np.zeros((3, 4))])
    with pytest.raises(ValueError, match="compute"):
        bl.store(a, np.zeros((3, 4)), compute=False)
    with pytest.raises(TypeError, match="target 0"):
        bl.store(a, (1, 2))
    with pytest.raises(ValueError, match="step"):
        bl.store(a, np.zeros((6, 4)), regions=(slice(0, 6, 2),))


def test_to_zarr_from_zarr_roundtrip(tmp_path):
    x = np.random.default_rng(3).random((90, 70)).astype(np.float32)
    e = bl.asarray(x, chunks=(32, 32)) * 2
    url = str(tmp_path / "o.zarr")
    assert bl.to_zarr(e, url, chunks=(40, 35)) is None
    z = zarr.open_array(url)
    assert z.chunks == (40, 35) and z.dtype == np.float32
    np.testing.assert_array_equal(z[...], x * 2)
    back = bl.from_zarr(url)
    assert back.chunks == ((40, 40, 10), (35, 35))
    np.testing.assert_array_equal(back.to_numpy(), x * 2)
    with pytest.raises(FileExistsError, match="overwrite"):
        bl.to_zarr(e, url)
    bl.to_zarr(e + 1, url, overwrite=True)
    np.testing.assert_array_equal(zarr.open_array(url)[...], x * 2 + 1)
    r = bl.to_zarr(e, "file://" + str(tmp_path / "f.zarr"), return_stored=True)
    np.testing.assert_array_equal(r.to_numpy(), x * 2)


def test_to_zarr_component_makes_groups_zarr_python_reads(tmp_path):
    url = str(tmp_path / "g.zarr")
    x = np.arange(20).reshape(4, 5)
    bl.to_zarr(bl.asarray(x) + 1, url, component="a/b")
    g = zarr.open_group(url, mode="r")
    np.testing.assert_array_equal(g["a/b"][...], x + 1)
    np.testing.assert_array_equal(bl.from_zarr(url, component="a/b").to_numpy(), x + 1)


def test_to_zarr_into_a_zarr_array_and_from_one(tmp_path):
    z = zarr.create_array(str(tmp_path / "z.zarr"), shape=(6, 8), dtype="i8", chunks=(4, 4), fill_value=0)
    x = np.arange(48).reshape(6, 8)
    bl.to_zarr(bl.asarray(x) * 2, z)
    np.testing.assert_array_equal(z[...], x * 2)
    bl.to_zarr(bl.ones((2, 2), dtype="int64"), z, region=(slice(0, 2), slice(0, 2)))
    assert z[0, 0] == 1 and z[2, 2] == x[2, 2] * 2
    np.testing.assert_array_equal(bl.from_zarr(z).to_numpy(), z[...])
    with pytest.raises(TypeError, match="unexpected keyword"):
        bl.to_zarr(bl.ones(2), str(tmp_path / "q.zarr"), bogus=1)


def test_persist_evaluates_into_memory():
    x = np.random.default_rng(4).random((50, 40))
    e = bl.exp(bl.asarray(x)) - 1
    p = e.persist()
    assert isinstance(p, bl.Array) and p.urlpath is None and p._a.kind == "b2nd"
    assert p.stats is not None  # evaluated now
    np.testing.assert_allclose(p.to_numpy(), np.exp(x) - 1)
    p1, p2 = bl.persist(e, e + 1)
    np.testing.assert_allclose(p2.to_numpy(), np.exp(x))
    np.testing.assert_allclose(bl.persist(e).to_numpy(), p1.to_numpy())
    with pytest.raises(TypeError, match="at least one"):
        bl.persist()


_PEAK = textwrap.dedent("""
    import sys, numpy as np, zarr, b2lazy as bl

    def hwm():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    n = 16384
    x = bl.arange(n * 8192, dtype="float64").reshape(n, 8192)
    e = (x % 7) * 0.5 + 1  # 1 GiB, never materialised
    z = zarr.create_array(sys.argv[1], shape=e.shape, dtype="f8", chunks=(512, 8192))
    base = hwm()
    bl.store(e, z)
    peak = hwm()
    assert z[n - 1, 8191] == ((n * 8192 - 1) % 7) * 0.5 + 1
    print(e.nbytes, base, peak)
""")


def test_storing_a_gib_expression_into_zarr_stays_far_below_its_size(tmp_path):
    r = subprocess.run(
        [sys.executable, "-c", _PEAK, str(tmp_path / "big.zarr")],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert r.returncode == 0, r.stderr
    nbytes, base, peak = map(int, r.stdout.split())
    assert nbytes == 1 << 30
    print(
        f"store 1 GiB into zarr: peak RSS {peak / 2**20:.0f} MiB, {(peak - base) / 2**20:.0f} MiB above "
        f"the {base / 2**20:.0f} MiB before"
    )
    assert peak - base < nbytes / 4


@pytest.mark.parametrize("fn", ["store", "to_zarr", "from_zarr"])
def test_a_saved_file_cannot_call_the_writers(tmp_path, fn):
    import json

    victim = tmp_path / "keep.zarr"
    bl.to_zarr(bl.ones(3), str(victim))
    saved = {
        "format": "b2lazy-expression",
        "version": 1,
        "root": 0,
        "calls": [{"fn": fn, "args": [str(victim)], "kwargs": {"overwrite": True}}],
        "nodes": [{"shape": [3], "dtype": "float64", "call": 0}],
    }
    p = tmp_path / "evil.b2lazy"
    p.write_text(json.dumps(saved))
    with pytest.raises(ValueError, match=fn):
        bl.open(str(p))
    np.testing.assert_array_equal(zarr.open_array(str(victim))[...], np.ones(3))


def test_stored_targets_save_by_their_values(tmp_path):
    (r,) = bl.store([bl.arange(4.0)], [np.zeros(4)], return_stored=True)
    r.save(str(tmp_path / "r.b2lazy"))
    np.testing.assert_array_equal(bl.open(str(tmp_path / "r.b2lazy")).to_numpy(), np.arange(4.0))


def test_store_0d_and_empty_sources():
    o = np.zeros(())
    bl.store(bl.asarray(3.0) + 1, o)
    assert o == 4.0
    e = np.full((0, 5), 7.0)
    bl.store(bl.zeros((0, 5)) + 1, e)
    assert e.shape == (0, 5)


def test_to_zarr_and_from_zarr_through_zarr_python_urls():
    pytest.importorskip("fsspec")
    x = np.arange(20.0).reshape(4, 5)
    url = f"memory://b2lazy-test-{os.getpid()}"
    bl.to_zarr(bl.asarray(x) + 1, url, chunks=(2, 5))
    z = zarr.open_array(url, mode="r")
    assert z.chunks == (2, 5)
    np.testing.assert_array_equal(z[...], x + 1)
    np.testing.assert_array_equal(bl.from_zarr(url).to_numpy(), x + 1)
    with pytest.raises(FileExistsError):  # (as a local path's)
        bl.to_zarr(bl.asarray(x), url)
    bl.to_zarr(bl.asarray(x) * 2, url + "-g", component="a/b")
    np.testing.assert_array_equal(zarr.open_array(url + "-g", path="a/b", mode="r")[...], x * 2)
    np.testing.assert_array_equal(bl.from_zarr(url + "-g", component="a/b").to_numpy(), x * 2)
