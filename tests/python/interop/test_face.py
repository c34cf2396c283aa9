"""The Python face of an Array (issue #37, part 5): repr and HTML repr, nbytes/itemsize,
.chunks equal to the plan's output chunks (Dask's normalized form), __version__, and call
errors that name the function and its parameters as expression strings do."""

import inspect
import re
from importlib import metadata

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import b2lazy as bl

DTYPES = ["bool", "int8", "uint16", "int32", "float32", "float64", "complex128"]


@st.composite
def arrays(draw):
    shape = tuple(draw(st.lists(st.integers(1, 40), min_size=1, max_size=3)))
    chunks = tuple(draw(st.integers(1, s)) for s in shape)
    dtype = draw(st.sampled_from(DTYPES))
    x = (np.arange(np.prod(shape)).reshape(shape) % 7).astype(dtype)
    return x, bl.asarray(x, chunks=chunks)


def _dask_normal(chunk, shape):
    return tuple(tuple([c] * (s // c) + ([s % c] if s % c else [])) for c, s in zip(chunk, shape))


@settings(max_examples=40, deadline=None)
@given(case=arrays(), op=st.sampled_from(["+1", "sum0", "T", "getitem"]))
def test_chunks_are_the_plans(case, op):
    x, a = case
    e = {
        "+1": lambda: a + 1,
        "sum0": lambda: bl.sum(a, axis=0, keepdims=True),
        "T": lambda: a.T,
        "getitem": lambda: a[::2],
    }[op]()
    plan = e.plan()
    assert e.chunks == _dask_normal(plan.chunks, e.shape)
    # (Dask's form: block lengths per axis that sum to the shape)
    assert tuple(sum(c) for c in e.chunks) == e.shape
    assert e.nbytes == e.size * e.dtype.itemsize and e.itemsize == e.dtype.itemsize


def test_chunks_of_an_expression_follow_its_plan_not_one_chunk():
    a = bl.asarray(np.ones((256, 256)))
    e = a + 1
    assert e.chunks == _dask_normal(e.plan().chunks, e.shape)
    assert e.plan().chunks != (256, 256) or e.chunks == ((256,), (256,))
    # planned once per array: the second read reuses it
    assert e.__dict__["_plan_chunks"][1] == tuple(e.plan().chunks)


def test_chunks_follow_a_setitem_rebinding():
    a = bl.asarray(np.zeros((40, 40)), chunks=(10, 40))
    e = a + 0
    first = e.chunks
    e[0] = 1  # rebinds e to a lazy update: planned anew
    assert e.chunks == _dask_normal(e.plan().chunks, e.shape)
    assert first == ((10,) * 4, (40,))


def test_repr_names_operation_shape_dtype_chunks_and_size():
    a = bl.asarray(np.zeros((1000, 1000)), chunks=(250, 1000))
    r = repr(a + 1)
    assert r == "b2lazy.Array<add>(shape=(1000, 1000), dtype=float64, chunks=(250, 1000), nbytes=7.6 MiB)"
    assert repr(bl.sum(a, axis=1)).startswith("b2lazy.Array<sum>(shape=(1000,), dtype=float64")
    assert "nbytes=8 B" in repr(bl.sum(a)) and "shape=()" in repr(bl.sum(a))
    assert "<getitem>" in repr(a[:3])
    assert repr(bl.asarray(np.zeros(3, np.int8))).endswith("nbytes=3 B)")


def test_repr_of_a_stored_source_names_its_format_and_path(tmp_path):
    path = str(tmp_path / "a.zarr")
    bl.asarray(np.zeros((10, 4))).compute(urlpath=path, chunks=(5, 4))
    assert repr(bl.open(path)) == (
        f"b2lazy.Array<zarr>(shape=(10, 4), dtype=float64, chunks=(5, 4), nbytes=320 B, urlpath={path!r})"
    )
    assert repr(bl.open(path) + 1).startswith("b2lazy.Array<add>(") and "urlpath" not in repr(bl.open(path) + 1)


def test_html_repr_is_a_table_of_array_and_chunk():
    a = bl.asarray(np.zeros((1000, 1000)), chunks=(250, 1000))
    h = (bl.sqrt(a) * 2)._repr_html_()
    for word in [
        "<table>",
        "Array",
        "Chunk",
        "7.6 MiB",
        "1.9 MiB",
        "(1000, 1000)",
        "(250, 1000)",
        "4 chunks",
        "float64",
        "multiply",
    ]:
        assert word in h, (word, h)


def test_version_is_the_distributions():
    assert bl.__version__ == metadata.version("b2lazy")
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", bl.__version__)


def _expression_error(text, **ops):
    with pytest.raises(TypeError) as e:
        bl.evaluate(text, **ops)
    return str(e.value).split(" at column")[0]


@pytest.mark.parametrize(
    "py, text",
    [
        (lambda a: bl.sum(a, axes=0), "sum(a, axes=0)"),
        (lambda a: bl.mean(a, 0, False, None, 5), "mean(a, 0, False, None, 5)"),
        (lambda a: bl.clip(a, 0, 1, max=3), "clip(a, 0, 1, max=3)"),
        (lambda a: bl.where(a > 0, a, a, a), "where(a > 0, a, a, a)"),
        (lambda a: bl.matmul(a), "matmul(a)"),
        (lambda a: bl.sin(a, b=1), "sin(a, b=1)"),
        (lambda a: bl.reshape(a, (4,), shape=(4,)), "reshape(a, (4,), shape=(4,))"),
    ],
)
def test_call_errors_name_the_function_as_expressions_do(py, text):
    a = bl.asarray(np.arange(4.0))
    with pytest.raises(TypeError) as e:
        py(a)
    msg = str(e.value)
    assert msg == _expression_error(text, a=a)
    name = text.split("(")[0]
    assert msg.startswith(f"{name}() ")


def test_unknown_keyword_lists_the_parameters():
    with pytest.raises(
        TypeError,
        match=r"^sum\(\) got an unexpected keyword argument 'axes' \(it takes "
        r"axis, keepdims, dtype\)$",
    ):
        bl.sum(bl.ones(3), axes=0)
    params = [p.name for p in inspect.signature(bl.sum).parameters.values() if p.kind != p.POSITIONAL_ONLY]
    assert params == ["axis", "keepdims", "dtype"]


def test_errors_raised_inside_a_function_are_not_rewritten():
    with pytest.raises(TypeError, match="axis"):
        bl.sum(bl.ones(3), axis="x")
