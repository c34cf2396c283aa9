"""rechunk: Dask's chunk specs, the chunks a compute() without chunks= writes (b2nd and
Zarr), the plan's output chunks, .chunks, nesting in expressions, values unchanged."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import b2lazy as bl


def _b2nd_chunks(path):
    import blosc2

    return tuple(blosc2.open(path).chunks)


@settings(max_examples=40)
@given(st.lists(st.integers(1, 30), min_size=1, max_size=3), st.data())
def test_written_chunks_and_values(tmp_path_factory, shape, data):
    shape = tuple(shape)
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    spec = tuple(data.draw(st.one_of(st.integers(1, 40), st.just(-1), st.none())) for _ in shape)
    want = tuple(n if c in (-1, None) else min(c, n) for c, n in zip(spec, shape))  # NumPy operands: one chunk
    y = bl.rechunk(x, spec)
    assert y.plan().chunks == want
    path = str(tmp_path_factory.mktemp("rc") / "y.b2nd")
    out = y.compute(path)
    assert _b2nd_chunks(path) == want
    np.testing.assert_array_equal(out.to_numpy(), x)


def test_specs_as_dask_has_them():
    a = bl.zeros((100, 60), chunks=(50, 20))
    assert bl.rechunk(a, 30).plan().chunks == (30, 30)
    assert bl.rechunk(a, {1: 15}).plan().chunks == (50, 15)  # axis 0 keeps its chunks
    assert bl.rechunk(a, ((40, 40, 20), -1)).plan().chunks == (40, 60)
    assert a.rechunk((10, None)).plan().chunks == (10, 20)
    auto = bl.rechunk(bl.zeros((4096, 4096)), "auto").plan().chunks
    assert np.prod(auto) * 8 <= 8 << 20
    assert bl.rechunk(a, (30, 20)).chunks == ((30, 30, 30, 10), (20, 20, 20))
    with pytest.raises(ValueError, match="irregular"):
        bl.rechunk(a, ((20, 40, 40), -1))
    with pytest.raises(ValueError, match="add up to"):
        bl.rechunk(a, ((40, 40), -1))
    with pytest.raises(ValueError, match="positive"):
        bl.rechunk(a, 0)
    with pytest.raises(ValueError, match="axes"):
        bl.rechunk(a, (10, 10, 10))
    with pytest.raises(TypeError, match="rechunk"):
        bl.rechunk(a, 2.5)


def test_stored_source_rechunked_and_written(tmp_path):
    src = (
        bl.arange(200 * 120, dtype=bl.float64).reshape((200, 120)).compute(str(tmp_path / "a.b2nd"), chunks=(100, 120))
    )
    y = src.rechunk((25, 40))
    assert y.plan().chunks == (25, 40)
    y.compute(str(tmp_path / "b.b2nd"))
    assert _b2nd_chunks(str(tmp_path / "b.b2nd")) == (25, 40)
    np.testing.assert_array_equal(bl.open(str(tmp_path / "b.b2nd")).to_numpy(), src.to_numpy())
    # nested: an elementwise expression over it takes its chunks, over another operand's
    z = bl.rechunk(src, 50) + src
    assert z.plan().chunks == (50, 50)
    np.testing.assert_array_equal(z.to_numpy(), 2 * src.to_numpy())
    # compute's own chunks= still win
    assert y.plan(chunks=(10, 10)).chunks == (10, 10)


def test_zarr_output_chunks(tmp_path):
    x = np.arange(60 * 40, dtype=np.int32).reshape(60, 40)
    bl.rechunk(x, (16, 10)).compute(str(tmp_path / "y.zarr"))
    meta = json.loads((tmp_path / "y.zarr" / "zarr.json").read_text())
    assert meta["chunk_grid"]["configuration"]["chunk_shape"] == [16, 10]
    np.testing.assert_array_equal(bl.open(str(tmp_path / "y.zarr")).to_numpy(), x)


def test_expression_string():
    x = np.arange(100.0).reshape(10, 10)
    r = bl.evaluate("rechunk(a, (5, -1)) + 1", {"a": x})
    assert r.plan().chunks == (5, 10)
    np.testing.assert_array_equal(r.to_numpy(), x + 1)
    assert bl.evaluate("rechunk(a, 3)", {"a": x}).plan().chunks == (3, 3)


def test_saved_expressions_keep_the_calls(tmp_path):
    a = bl.asarray(np.arange(12.0).reshape(3, 4)).compute(str(tmp_path / "a.b2nd"))
    for name, e in [
        ("einsum", bl.einsum("ij,kj->ik", a, a)),
        ("pad", bl.pad(a, ((1, 2), (0, 1)), "reflect")),
        ("rechunk", bl.rechunk(a, {0: 2}) + 1),
        ("padnan", bl.pad(a, 1, constant_values=np.nan)),
    ]:
        e.save(str(tmp_path / f"{name}.b2lazy"))
        r = bl.open(str(tmp_path / f"{name}.b2lazy"))
        np.testing.assert_array_equal(r.to_numpy(), e.to_numpy())
        assert r.plan().chunks == e.plan().chunks
