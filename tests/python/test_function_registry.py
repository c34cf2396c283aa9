"""One function registry (include/b2lazy/functions.hpp): the Python package, expression
strings and the C++ table agree on every function's name, aliases, parameters, kinds and
defaults — checked here entry by entry, by calling each function both ways."""

import inspect

import numpy as np
import pytest

import b2lazy
from b2lazy import _registry

ENTRIES = b2lazy._core.functions()

# A value for each required parameter, as a Python object and as expression text.
A = np.arange(1, 13, dtype=np.float64).reshape(3, 4) / 7
B = np.linspace(-1, 1, 12).reshape(3, 4)
REQUIRED = {
    "x": ("a", lambda o: o["a"]),
    "x1": ("a", lambda o: o["a"]),
    "x2": ("b", lambda o: o["b"]),
    "condition": ("a > 1", lambda o: o["a"] > 1),
    "arrays": ("[a, b]", lambda o: [o["a"], o["b"]]),
    "indices": ("[0, 2]", lambda o: [0, 2]),
    "shape": ("(3, 4)", lambda o: (3, 4)),
    "fill_value": ("2", lambda o: 2),
    "q": ("0.25", lambda o: 0.25),
    "start": ("2", lambda o: 2),
    "stop": ("9", lambda o: 9),
    "n_rows": ("3", lambda o: 3),
    "repetitions": ("(2, 1)", lambda o: (2, 1)),
    "repeats": ("2", lambda o: 2),
    "source": ("0", lambda o: 0),
    "destination": ("1", lambda o: 1),
    "axes": ("(1, 0)", lambda o: (1, 0)),
    "dtype": ("'float32'", lambda o: "float32"),
    "shift": ("1", lambda o: 1),
    "element": ("a", lambda o: o["a"]),
    "test_elements": ("[0.25, 1]", lambda o: [0.25, 1]),
    "bins": ("[0, 0.5, 1.5]", lambda o: [0, 0.5, 1.5]),
    "a": ("a", lambda o: o["a"]),
    "y": ("b[0]", lambda o: o["b"][0]),
    "low": ("5", lambda o: 5),
    "n": ("8", lambda o: 8),
    "subscripts": ("'i,i'", lambda o: "i,i"),
    "operands": (None, None),
    "pad_width": ("1", lambda o: 1),
    "window_shape": ("(2, 2)", lambda o: (2, 2)),
    "window": ("2", lambda o: 2),
    "codes": ("[1, 0, -1, 1]", lambda o: [1, 0, -1, 1]),
    "func": ("'nanmean'", lambda o: "nanmean"),
}
# Functions whose defaults need an argument of another kind to run at all.
ROW = {"x": ("a[0]", lambda o: o["a"][0])}
NEEDS = {
    "matmul": {"x2": ("b.T", lambda o: o["b"].T)},
    "cumulative_sum": ROW,
    "cumulative_prod": ROW,
    "matrix_transpose": {},
    "squeeze": {"x": ("a[:1]", lambda o: o["a"][:1])},
    "reshape": {"shape": ("(4, 3)", lambda o: (4, 3))},
    "broadcast_to": {"shape": ("(2, 3, 4)", lambda o: (2, 3, 4))},
    "bitwise_and": {},
    "take_along_axis": {"indices": ("[[0], [1], [2]]", lambda o: np.array([[0], [1], [2]]))},
    "searchsorted": {"x1": ("sort(a[0], axis=0)", lambda o: b2lazy.sort(o["a"][0], axis=0))},
    "bincount": {"x": ("astype(a[0] * 7, 'int64')", lambda o: (o["a"][0] * 7).astype("int64"))},
    "histogram2d": {"x": ("a[1]", lambda o: o["a"][1])},
}
# b2lazy.linalg's factorisations of square matrices: a symmetric positive-definite one.
SPD = (
    "matmul(a, matrix_transpose(a)) + eye(3)",
    lambda o: b2lazy.matmul(o["a"], b2lazy.matrix_transpose(o["a"])) + b2lazy.eye(3),
)
NEEDS.update(
    {f"linalg_{n}": {"x": SPD} for n in ("cholesky", "eigh", "eigvalsh", "slogdet", "det", "inv", "eig", "eigvals")}
)
NEEDS["linalg_solve"] = {"x1": SPD, "x2": ("b", lambda o: o["b"])}
NEEDS["linalg_svd_compressed"] = {"k": ("2", lambda o: 2)}
INT_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "bitwise_invert"}


def _operands():
    ops = {"a": b2lazy.asarray(A, chunks=(2, 3)), "b": b2lazy.asarray(B, chunks=(2, 2))}
    return ops


def _required_call(entry):
    """The call of `entry` with its required arguments only: (expression text, Python args)."""
    texts, values = [], []
    for name, kind, default in entry["params"]:
        if default is not None or kind == "keyword_only":
            continue
        text, value = NEEDS.get(entry["name"], {}).get(name) or REQUIRED[name]
        if kind == "var_positional":  # two 1-d arrays (meshgrid's and broadcast_arrays' *arrays)
            texts += ["a[0]", "b[1]"]
            values += [lambda o: o["a"][0], lambda o: o["b"][1]]
            continue
        texts.append(text)
        values.append(value)
    return texts, values


def _values(r):
    if isinstance(r, (tuple, list)):
        return [np.asarray(v.to_numpy() if isinstance(v, b2lazy.Array) else v) for v in r]
    return [r.to_numpy()]


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_python_function_has_the_registry_signature(entry):
    fn = getattr(b2lazy, entry["name"])
    assert str(inspect.signature(fn)) == entry["signature"]
    assert entry["name"] in b2lazy.__all__
    for alias in entry["aliases"]:
        assert getattr(b2lazy, alias) is fn and alias in b2lazy.__all__
    if entry["method"]:
        assert hasattr(b2lazy.Array, entry["name"])


def test_expression_strings_call_exactly_the_registry():
    names = {n for e in ENTRIES for n in [e["name"], *e["aliases"]]}
    assert set(b2lazy._core.expression_functions()) == names


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_defaults_are_the_same_in_python_and_strings(entry):
    """Each function called with its required arguments only (every default in play), from
    Python and from an expression string: the same result."""
    name = entry["name"]
    ops = _operands()
    if name in INT_ONLY:
        ops = {k: (v * 7).astype("int64") for k, v in ops.items()}
    texts, values = _required_call(entry)
    py = getattr(b2lazy, name)(*[v(ops) for v in values])
    call = f"{name}({', '.join(texts)})"
    want = _values(py)
    if isinstance(py, (tuple, list)):  # an expression gives an array: each item by index
        got = [b2lazy.evaluate(f"{call}[{i}]", ops).to_numpy() for i in range(len(py))]
    else:
        got = _values(b2lazy.evaluate(call, ops))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize(
    "entry", [e for e in ENTRIES if e["params"][0][1] == "positional_only"], ids=lambda e: e["name"]
)
def test_positional_only_is_refused_by_keyword_both_ways(entry):
    name, first = entry["name"], entry["params"][0][0]
    ops = _operands()
    texts, values = _required_call(entry)
    with pytest.raises(TypeError):
        getattr(b2lazy, name)(*[v(ops) for v in values[1:]], **{first: values[0](ops)})
    with pytest.raises(TypeError, match="positional-only"):
        b2lazy.evaluate(f"{name}({', '.join(texts[1:] + [f'{first}={texts[0]}'])})", ops)


def test_keyword_calls_work_both_ways():
    ops = _operands()
    a = ops["a"]
    cases = [
        (
            "sum(a, axis=1, keepdims=True, dtype='float32')",
            b2lazy.sum(a, axis=1, keepdims=True, dtype="float32"),
            A.sum(axis=1, keepdims=True, dtype=np.float32),
        ),
        (
            "quantile(a, 0.3, axis=0, method='nearest')",
            b2lazy.quantile(a, 0.3, axis=0, method="nearest"),
            np.quantile(A, 0.3, axis=0, method="nearest"),
        ),
        ("take(a, [2, 0], axis=0)", b2lazy.take(a, [2, 0], axis=0), np.take(A, [2, 0], axis=0)),
        (
            "linspace(0, 1, num=5, endpoint=False)",
            b2lazy.linspace(0, 1, num=5, endpoint=False),
            np.linspace(0, 1, num=5, endpoint=False),
        ),
        ("diff(a, axis=0, n=2)", b2lazy.diff(a, axis=0, n=2), np.diff(A, axis=0, n=2)),
        (
            "cumulative_sum(a, axis=1, include_initial=True)",
            b2lazy.cumulative_sum(a, axis=1, include_initial=True),
            np.cumulative_sum(A, axis=1, include_initial=True),
        ),
        ("var(a, axis=0, ddof=1)", b2lazy.var(a, axis=0, ddof=1), np.var(A, axis=0, ddof=1)),
        (
            "trace(a, offset=1, axis1=1, axis2=0)",
            b2lazy.trace(a, offset=1, axis1=1, axis2=0),
            np.trace(A, offset=1, axis1=1, axis2=0),
        ),
    ]
    for text, py, ref in cases:
        st = b2lazy.evaluate(text, ops)
        np.testing.assert_allclose(py.to_numpy(), ref, rtol=1e-6, err_msg=text)
        np.testing.assert_array_equal(st.to_numpy(), py.to_numpy(), err_msg=text)


def test_methods_are_the_registry_methods_in_both():
    ops = _operands()
    for entry in ENTRIES:
        if entry["method"] and entry["family"] in ("reduction", "scan"):
            name = entry["name"]
            np.testing.assert_array_equal(
                b2lazy.evaluate(f"a.{name}(axis=0)", ops).to_numpy(), getattr(ops["a"], name)(axis=0).to_numpy()
            )
    with pytest.raises(NameError, match="no method 'nansum'"):  # a function, not a method
        b2lazy.evaluate("a.nansum()", ops)


def test_a_body_that_drifts_from_its_entry_fails():
    def take(x, indices, /, axis=None):  # a default of its own
        return x

    with pytest.raises(TypeError, match="registry"):
        _registry.registered(take)

    def vecdot(x1, x2, /, axis):  # axis is keyword-only in the registry
        return x1

    with pytest.raises(TypeError, match="registry"):
        _registry.registered(vecdot)


def test_every_namespace_function_pickles_by_reference():
    # dask and multiprocessing send functions by reference: b2lazy.<name> must be found
    # again as the same object (the recording wrapper, not its module's inner function).
    import pickle

    for name in b2lazy.__all__:
        f = getattr(b2lazy, name)
        if callable(f) and not isinstance(f, type):
            assert pickle.loads(pickle.dumps(f)) is f, name
