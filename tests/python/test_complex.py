"""Issue #15 item 2: complex64 and complex128 through elementwise functions, reductions,
scans, products and storage, against NumPy 2 as the oracle (random shapes, chunkings and
sources; the standard's special cases are the Array API suite's)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy
from conftest import SOURCE_KINDS, base_shapes, examples, make_source

COMPLEX = [np.complex64, np.complex128]

# Exact in both (IEEE operations on the parts, or a part's copy): bit for bit, NaN positions too.
EXACT_UNARY = ["negative", "positive", "conj", "real", "imag", "isnan", "isinf", "isfinite", "round"]
EXACT_BINARY = ["add", "subtract", "equal", "not_equal"]
# Through the C library (b2lazy) or NumPy's own loops: close, not equal. (Products and
# quotients with infinite parts differ by design: gcc's follow C99 Annex G, (inf+inf j) * 2
# is inf+inf j; NumPy's naive formula gives nan+nan j. Finite inputs only here.)
MATH_UNARY = [
    "abs",
    "sqrt",
    "exp",
    "expm1",
    "log",
    "log1p",
    "log2",
    "log10",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "tanh",
    "asin",
    "acos",
    "atan",
    "asinh",
    "acosh",
    "atanh",
    "square",
    "reciprocal",
    "sign",
    "angle",
]
MATH_BINARY = ["multiply", "divide", "pow"]

NP_NAME = {
    "pow": "power",
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
}


def np_fn(name):
    return getattr(np, NP_NAME.get(name, name))


def complex_values(rng, dtype, shape, special=False, scale=3.0):
    re = rng.uniform(-scale, scale, shape)
    im = rng.uniform(-scale, scale, shape)
    x = (re + 1j * im).astype(dtype)
    if special and x.size:
        flat = x.reshape(-1)
        picks = [0, -0.0, np.inf, -np.inf, np.nan, 1.0]
        for k in rng.choice(flat.size, size=max(1, flat.size // 4)):
            flat[k] = complex(rng.choice(picks), rng.choice(picks))
    return x


def close(got, ref, dtype):
    rtol = 2e-5 if np.dtype(dtype) in (np.complex64, np.float32) else 1e-12
    assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol, equal_nan=True)


@st.composite
def complex_case(draw, tmpdir, special=False):
    dtype = draw(st.sampled_from(COMPLEX))
    shape = draw(base_shapes(max_ndim=3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = complex_values(rng, dtype, shape, special=special)
    lazy, descr = make_source(draw, x, draw(st.sampled_from(SOURCE_KINDS)), tmpdir)
    return x, lazy, descr


@given(data=st.data(), name=st.sampled_from(EXACT_UNARY))
@examples(60)
def test_exact_unary_functions_match_numpy_bit_for_bit(tmp_path_factory, data, name):
    x, lazy, descr = data.draw(complex_case(str(tmp_path_factory.mktemp("c")), special=True))
    got = getattr(b2lazy, name)(lazy).to_numpy()
    with np.errstate(all="ignore"):
        ref = np_fn(name)(x)
    assert got.dtype == ref.dtype and got.shape == ref.shape, descr
    np.testing.assert_array_equal(got, ref, err_msg=descr)


@given(data=st.data(), name=st.sampled_from(EXACT_BINARY))
@examples(40)
def test_exact_binary_functions_match_numpy(tmp_path_factory, data, name):
    x, lazy, descr = data.draw(complex_case(str(tmp_path_factory.mktemp("c")), special=True))
    rng = np.random.default_rng(x.size)
    y = complex_values(rng, x.dtype, x.shape[-1:] if x.ndim else (), special=True)
    got = getattr(b2lazy, name)(lazy, b2lazy.asarray(y)).to_numpy()
    ref = np_fn(name)(x, y)
    np.testing.assert_array_equal(got, ref, err_msg=descr)
    assert got.dtype == ref.dtype


@given(data=st.data(), name=st.sampled_from(MATH_UNARY))
@examples(80)
def test_math_functions_match_numpy(tmp_path_factory, data, name):
    x, lazy, descr = data.draw(complex_case(str(tmp_path_factory.mktemp("c"))))
    got = getattr(b2lazy, name)(lazy).to_numpy()
    with np.errstate(all="ignore"):
        ref = np_fn(name)(x)
    close(got, ref, x.dtype)


@given(data=st.data(), name=st.sampled_from(MATH_BINARY))
@examples(40)
def test_products_quotients_and_powers_match_numpy(tmp_path_factory, data, name):
    x, lazy, descr = data.draw(complex_case(str(tmp_path_factory.mktemp("c"))))
    y = complex_values(np.random.default_rng(7), x.dtype, x.shape, scale=1.5)
    got = getattr(b2lazy, name)(lazy, b2lazy.asarray(y)).to_numpy()
    with np.errstate(all="ignore"):
        ref = np_fn(name)(x, y)
    close(got, ref, x.dtype)


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, -1, -2, 7, 0.5, 1 + 1j])
def test_powers_as_numpy(exponent):
    x = complex_values(np.random.default_rng(3), np.complex128, (50,), scale=2)
    x[:3] = [0, 1j, -1]
    with np.errstate(all="ignore"):
        close((b2lazy.asarray(x) ** exponent).to_numpy(), x**exponent, np.complex128)


def test_a_fused_expression_of_complex_and_real_operands():
    rng = np.random.default_rng(1)
    z = complex_values(rng, np.complex64, (30, 20))
    r = rng.standard_normal((30, 20)).astype(np.float32)
    a, b = b2lazy.asarray(z, chunks=(7, 9)), b2lazy.asarray(r, chunks=(30, 4))
    got = (b2lazy.abs(a * b + 1j) ** 2 + b2lazy.real(b2lazy.conj(a) * a)).to_numpy()
    ref = np.abs(z * r + 1j) ** 2 + np.real(np.conj(z) * z)
    close(got, ref, np.float32)


@pytest.mark.parametrize(
    "left,right",
    [
        (np.complex64, np.float32),
        (np.complex64, np.float64),
        (np.complex64, np.int16),
        (np.complex64, np.int32),
        (np.complex128, np.float32),
        (np.complex64, np.bool_),
        (np.complex64, np.uint8),
        (np.complex64, np.complex128),
    ],
)
def test_promotion_matches_numpy(left, right):
    a, b = np.ones(3, left), np.ones(3, right)
    assert (b2lazy.asarray(a) + b2lazy.asarray(b)).dtype == (a + b).dtype
    assert b2lazy.result_type(left, right) == np.result_type(left, right)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.int64, np.bool_, np.complex64])
@pytest.mark.parametrize("scalar", [1j, 2.5, 3])
def test_python_scalars_are_weak(dtype, scalar):
    a = np.ones(4, dtype)
    if dtype is np.bool_ and not isinstance(scalar, complex):
        return
    assert (b2lazy.asarray(a) * scalar).dtype == (a * scalar).dtype
    np.testing.assert_array_equal((b2lazy.asarray(a) * scalar).to_numpy(), a * scalar)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("to", [np.bool_, np.int32, np.uint8, np.float32, np.float64, np.complex64, np.complex128])
def test_casts_as_numpy(dtype, to):
    x = complex_values(np.random.default_rng(2), dtype, (40,), scale=100)
    x[:4] = [0, 1j, -0.0, 5]
    with (
        np.errstate(all="ignore"),
        pytest.warns(np.exceptions.ComplexWarning) if to not in COMPLEX and to is not np.bool_ else _nothing(),
    ):
        ref = x.astype(to)
    np.testing.assert_array_equal(b2lazy.asarray(x).astype(to).to_numpy(), ref)
    back = b2lazy.asarray(ref).astype(dtype).to_numpy()
    np.testing.assert_array_equal(back, ref.astype(dtype))


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


@given(data=st.data(), name=st.sampled_from(["sum", "prod", "mean"]))
@examples(60)
def test_reductions_match_numpy(tmp_path_factory, data, name):
    x, lazy, descr = data.draw(complex_case(str(tmp_path_factory.mktemp("c"))))
    axis = data.draw(st.sampled_from([None] + list(range(x.ndim))))
    if name == "prod":
        x = x / np.maximum(1, np.abs(x))  # no overflow over long axes
        lazy = b2lazy.asarray(x, chunks=tuple(max(1, s // 2) for s in x.shape) or None)
    got = getattr(b2lazy, name)(lazy, axis=axis).to_numpy()
    with np.errstate(all="ignore"):
        ref = getattr(np, name)(x, axis=axis)
    rtol = 1e-3 if x.dtype == np.complex64 else 1e-9
    assert got.dtype == ref.dtype, descr
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * max(1, x.size), equal_nan=True, err_msg=descr)


@given(data=st.data(), name=st.sampled_from(["cumulative_sum", "cumulative_prod"]))
@examples(40)
def test_scans_match_numpy(tmp_path_factory, data, name):
    x, lazy, descr = data.draw(complex_case(str(tmp_path_factory.mktemp("c"))))
    if x.ndim != 1:
        return
    if name == "cumulative_prod":
        x = x / np.abs(x)  # unit modulus: no overflow
        lazy = b2lazy.asarray(x, chunks=(max(1, x.size // 3),))
    got = getattr(b2lazy, name)(lazy).to_numpy()
    ref = (np.cumsum if name == "cumulative_sum" else np.cumprod)(x)
    rtol = 1e-3 if x.dtype == np.complex64 else 1e-9
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * max(1, x.size), err_msg=descr)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("chunks", [(7, 5), (64, 3), (1, 64)])
def test_matmul_and_vecdot_conjugate_as_numpy(dtype, chunks):
    rng = np.random.default_rng(5)
    a = complex_values(rng, dtype, (40, 33))
    b = complex_values(rng, dtype, (33, 21))
    la = b2lazy.asarray(a, chunks=chunks)
    lb = b2lazy.asarray(b, chunks=chunks[::-1])
    rtol = 1e-4 if dtype == np.complex64 else 1e-10
    np.testing.assert_allclose(b2lazy.matmul(la, lb).to_numpy(), a @ b, rtol=rtol)
    np.testing.assert_allclose((b2lazy.matmul(la, lb) + 1j).to_numpy(), a @ b + 1j, rtol=rtol)
    np.testing.assert_allclose(b2lazy.matmul(la.mT, la).to_numpy(), a.T @ a, rtol=rtol)  # the Gram path
    np.testing.assert_allclose(b2lazy.vecdot(la, la).to_numpy(), np.vecdot(a, a), rtol=rtol)
    np.testing.assert_allclose(b2lazy.tensordot(la, lb, axes=1).to_numpy(), np.tensordot(a, b, axes=1), rtol=rtol)
    # a real operand promotes
    r = rng.standard_normal((33, 4))
    np.testing.assert_allclose(b2lazy.matmul(la, b2lazy.asarray(r)).to_numpy(), a @ r, rtol=rtol)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("where", ["o.b2nd", "dir", "o.zarr"])
def test_storage_round_trips(tmp_path, dtype, where):
    x = complex_values(np.random.default_rng(4), dtype, (23, 17), special=True)
    path = str(tmp_path / where)
    kw = {"contiguous": False} if where == "dir" else {}
    b2lazy.asarray(x).compute(urlpath=path, chunks=(5, 8), **kw)
    back = b2lazy.open(path)
    assert back.dtype == dtype
    np.testing.assert_array_equal(back.to_numpy(), x)
    np.testing.assert_array_equal((back + 1).to_numpy(), x + 1)


def test_python_blosc2_reads_what_b2lazy_writes_and_back(tmp_path):
    blosc2 = pytest.importorskip("blosc2")
    x = complex_values(np.random.default_rng(6), np.complex128, (31, 9))
    path = str(tmp_path / "c.b2nd")
    b2lazy.asarray(x).compute(urlpath=path, chunks=(8, 9))
    np.testing.assert_array_equal(blosc2.open(path)[:], x)
    p2 = str(tmp_path / "p.b2nd")
    blosc2.asarray(x.astype(np.complex64), urlpath=p2, mode="w", chunks=(10, 4))
    np.testing.assert_array_equal(b2lazy.open(p2).to_numpy(), x.astype(np.complex64))


def test_zarr_python_reads_complex_with_a_fill_value(tmp_path):
    zarr = pytest.importorskip("zarr")
    x = complex_values(np.random.default_rng(8), np.complex64, (12, 10))
    path = str(tmp_path / "z.zarr")
    b2lazy.asarray(x).compute(urlpath=path, chunks=(5, 5))
    np.testing.assert_array_equal(zarr.open_array(path, mode="r")[:], x)
    z = zarr.create_array(str(tmp_path / "f.zarr"), shape=(6,), chunks=(4,), dtype="complex128", fill_value=1 + 2j)
    z[:2] = [3j, 4]
    np.testing.assert_array_equal(b2lazy.open(str(tmp_path / "f.zarr")).to_numpy(), z[:])


def test_creation_and_scalars():
    assert b2lazy.asarray(1 + 2j).dtype == np.complex128
    assert complex(b2lazy.asarray(1 + 2j)) == 1 + 2j
    np.testing.assert_array_equal(
        b2lazy.full((3, 2), 1 - 1j, dtype=np.complex64).to_numpy(), np.full((3, 2), 1 - 1j, dtype=np.complex64)
    )
    np.testing.assert_array_equal(b2lazy.zeros(4, dtype=b2lazy.complex64).to_numpy(), np.zeros(4, np.complex64))
    np.testing.assert_allclose(b2lazy.linspace(1j, 2 + 3j, 7).to_numpy(), np.linspace(1j, 2 + 3j, 7))
    np.testing.assert_array_equal(b2lazy.eye(3, dtype=np.complex128).to_numpy(), np.eye(3, dtype=np.complex128))
    assert b2lazy.finfo(b2lazy.complex64).dtype == np.float32
    assert b2lazy.isdtype(b2lazy.complex64, "complex floating")
    assert b2lazy.__array_namespace_info__().default_dtypes()["complex floating"] == np.complex128


def test_an_expression_string_with_complex_operands():
    z = complex_values(np.random.default_rng(9), np.complex128, (20,))
    got = b2lazy.evaluate("abs(z * c) + real(z)", z=z, c=2j).to_numpy()
    np.testing.assert_allclose(got, np.abs(z * 2j) + z.real)


@pytest.mark.parametrize(
    "call,words",
    [
        (lambda z: b2lazy.less(z, z), ["less", "complex128"]),
        (lambda z: b2lazy.maximum(z, 1), ["maximum", "complex128"]),
        (lambda z: b2lazy.floor(z), ["floor", "complex128"]),
        (lambda z: b2lazy.max(z), ["max", "complex128"]),
        (lambda z: b2lazy.argmin(z), ["argmin", "complex128"]),
        (lambda z: b2lazy.sort(z), ["sort", "complex128"]),
        (lambda z: b2lazy.std(z), ["std", "complex128"]),
        (lambda z: b2lazy.bitwise_and(z, z), ["bitwise_and", "complex128"]),
    ],
)
def test_functions_without_a_complex_meaning_say_so(call, words):
    z = b2lazy.asarray(np.arange(6) * 1j)
    with pytest.raises(TypeError) as e:
        call(z).to_numpy()
    for w in words:
        assert w in str(e.value)


def test_imaginary_literals_in_expression_strings():
    z = complex_values(np.random.default_rng(10), np.complex64, (9,))
    np.testing.assert_allclose(b2lazy.evaluate("z * 2j + 1.5J - 3", z=z).to_numpy(), z * 2j + 1.5j - 3, rtol=1e-6)
    assert b2lazy.evaluate("z + 1j", z=z).dtype == np.complex64  # a weak scalar, as in NumPy 2
    assert complex(b2lazy.evaluate("2j * 3 + 1")) == 1 + 6j  # numbers alone: a 0-d complex128
    np.testing.assert_array_equal(b2lazy.evaluate("[1, 2j]").to_numpy(), np.array([1, 2j]))
    with pytest.raises(SyntaxError):
        b2lazy.evaluate("0x1j")


def test_saved_and_pickled_expressions_keep_complex_scalars_and_operands(tmp_path):
    import pickle

    z = complex_values(np.random.default_rng(11), np.complex64, (6, 5))
    e = b2lazy.exp(b2lazy.asarray(z) * complex(0.5, float("inf"))) + (1 - 2j)
    path = str(tmp_path / "e.b2lazy")
    e.save(path)
    again = b2lazy.open(path)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(again.to_numpy(), e.to_numpy())
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(e)).to_numpy(), e.to_numpy())
    assert again.dtype == np.complex64


@given(data=st.data())
@examples(40)
def test_unique_of_complex_values_as_numpy(tmp_path_factory, data):
    """unique_* of complex: sorted in memory, NumPy's order (values with a NaN part last),
    each NaN its own group, -0.0 equal to 0.0."""
    x, lazy, descr = data.draw(complex_case(str(tmp_path_factory.mktemp("c")), special=True))
    x = np.round(x)  # repeats
    lazy = b2lazy.asarray(x, chunks=tuple(max(1, s // 2) for s in x.shape) or None)
    u, r = b2lazy.unique_all(lazy), np.unique_all(x)
    for f in ("values", "indices", "inverse_indices", "counts"):
        np.testing.assert_array_equal(getattr(u, f).to_numpy(), getattr(r, f), err_msg=f"{f} {descr}")
    assert b2lazy.unique_values(lazy).dtype == x.dtype


def test_unique_of_complex_beyond_the_budget_says_so():
    z = b2lazy.zeros((1000,), dtype=b2lazy.complex128)
    with pytest.raises(ValueError, match="in memory"):
        b2lazy.unique_values(z, max_memory=10_000)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_exp_over_the_whole_range_as_the_c_library(dtype):
    """exp is vectorised (SLEEF's exp, sin, cos of the parts); large real parts, non-finite
    parts and results go to the C library's cexp: together, NumPy's values."""
    rng = np.random.default_rng(12)
    big = 750 if dtype == np.complex128 else 95
    x = rng.uniform(-big, big, 4000) + 1j * rng.uniform(-1e6, 1e6, 4000) * rng.choice([1e-6, 1, 1e-300], 4000)
    x[:8] = [
        0,
        -0.0 + 0j,
        complex(np.inf, 0),
        complex(-np.inf, 1),
        complex(1, np.inf),
        complex(np.nan, 0),
        complex(709.5, 1e-300),
        complex(-745, 3),
    ]
    x = x.astype(dtype)
    with np.errstate(all="ignore"):
        ref = np.exp(x)
    got = b2lazy.exp(b2lazy.asarray(x, chunks=(700,))).to_numpy()
    rtol = 2e-6 if dtype == np.complex64 else 1e-14
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=0, equal_nan=True)
