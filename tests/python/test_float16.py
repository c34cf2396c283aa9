"""Issue #15 item 2: float16 as a storage dtype with NumPy's result dtypes. Each operation
widens to float32 and rounds once (NumPy's float16 loops do the same): arithmetic and
comparisons match NumPy bit for bit, math functions within 1 ulp of float16; reductions
accumulate in wider types (close to NumPy's); sorts, casts and storage are exact."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy
from conftest import SOURCE_KINDS, assert_max_ulp, base_shapes, examples, make_source

F16 = np.float16
EXACT_BINARY = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "maximum",
    "minimum",
    "floor_divide",
    "remainder",
    "copysign",
    "nextafter",
    "equal",
    "less",
    "greater_equal",
    "not_equal",
]
EXACT_UNARY = [
    "negative",
    "abs",
    "sqrt",
    "floor",
    "ceil",
    "trunc",
    "round",
    "sign",
    "square",
    "reciprocal",
    "isnan",
    "isinf",
    "isfinite",
    "signbit",
]
MATH_UNARY = [
    "sin",
    "cos",
    "tan",
    "exp",
    "expm1",
    "exp2",
    "log",
    "log2",
    "log10",
    "log1p",
    "tanh",
    "asinh",
    "atan",
    "cbrt",
]
NP_NAME = {"pow": "power", "atan": "arctan", "asinh": "arcsinh"}


def np_fn(name):
    return getattr(np, NP_NAME.get(name, name))


def half_values(rng, shape, special=True):
    x = (rng.standard_normal(shape) * rng.choice([1, 10, 300], size=shape)).astype(F16)
    if special and x.size:
        flat = x.reshape(-1)
        picks = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65504, 6e-8, 1.0], dtype=F16)
        for k in rng.choice(flat.size, size=max(1, flat.size // 5)):
            flat[k] = rng.choice(picks)
    return x


@st.composite
def half_case(draw, tmpdir):
    shape = draw(base_shapes(max_ndim=3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = half_values(rng, shape)
    lazy, descr = make_source(draw, x, draw(st.sampled_from(SOURCE_KINDS)), tmpdir)
    return x, lazy, descr, rng


@given(data=st.data(), name=st.sampled_from(EXACT_BINARY))
@examples(60)
def test_arithmetic_and_comparisons_match_numpy_bit_for_bit(tmp_path_factory, data, name):
    x, lazy, descr, rng = data.draw(half_case(str(tmp_path_factory.mktemp("h"))))
    y = half_values(rng, x.shape)
    got = getattr(b2lazy, name)(lazy, b2lazy.asarray(y)).to_numpy()
    with np.errstate(all="ignore"):
        ref = np_fn(name)(x, y)
    assert got.dtype == ref.dtype, descr
    np.testing.assert_array_equal(got, ref, err_msg=f"{name} {descr}")


@given(data=st.data(), name=st.sampled_from(EXACT_UNARY))
@examples(60)
def test_exact_unary_functions_match_numpy(tmp_path_factory, data, name):
    x, lazy, descr, _ = data.draw(half_case(str(tmp_path_factory.mktemp("h"))))
    got = getattr(b2lazy, name)(lazy).to_numpy()
    with np.errstate(all="ignore"):
        ref = np_fn(name)(x)
    assert got.dtype == ref.dtype, descr
    np.testing.assert_array_equal(got, ref, err_msg=f"{name} {descr}")


@given(data=st.data(), name=st.sampled_from(MATH_UNARY))
@examples(60)
def test_math_functions_within_one_ulp(tmp_path_factory, data, name):
    x, lazy, descr, _ = data.draw(half_case(str(tmp_path_factory.mktemp("h"))))
    got = getattr(b2lazy, name)(lazy).to_numpy()
    with np.errstate(all="ignore"):
        ref = np_fn(name)(x)
    assert_max_ulp(got, ref, maxulp=1, msg=f"{name} {descr}")


@pytest.mark.parametrize(
    "other", [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.float32, np.float64, np.complex64]
)
def test_promotion_as_numpy(other):
    a, b = np.ones(3, F16), np.ones(3, other)
    assert (b2lazy.asarray(a) + b2lazy.asarray(b)).dtype == (a + b).dtype
    assert (b2lazy.asarray(a) * 2.5).dtype == F16 and (b2lazy.asarray(a) + 1).dtype == F16
    if np.dtype(other).kind in "biu" and np.dtype(other).itemsize == 1:
        assert b2lazy.sqrt(b2lazy.asarray(b)).dtype == np.sqrt(b).dtype == F16


@pytest.mark.parametrize("to", [np.bool_, np.int8, np.uint16, np.int64, np.float32, np.float64, np.complex64])
def test_casts_both_ways_as_numpy(to):
    x = half_values(np.random.default_rng(1), (200,), special=False)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(b2lazy.asarray(x).astype(to).to_numpy(), x.astype(to))
    wide = np.random.default_rng(2).standard_normal(300) * 3e4
    wide[:6] = [65504, 65519.99, 65520, 1e-8, -3e-8, np.nan]
    src = wide.astype(to) if np.dtype(to).kind != "b" else wide > 0
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(b2lazy.asarray(src).astype(F16).to_numpy(), src.astype(F16))


@given(data=st.data(), name=st.sampled_from(["sum", "mean", "max", "min", "argmax", "argmin", "prod", "var"]))
@examples(60)
def test_reductions_close_to_numpy(tmp_path_factory, data, name):
    x, lazy, descr, _ = data.draw(half_case(str(tmp_path_factory.mktemp("h"))))
    # finite and small: NumPy's float16 var squares in float16 (65504**2 is inf there; ours
    # computes in float64), and float16 sums would overflow
    x = np.where(np.isfinite(x), x, F16(1)).astype(F16) / F16(1024)
    lazy = b2lazy.asarray(x, chunks=tuple(max(1, s // 2) for s in x.shape) or None)
    axis = data.draw(st.sampled_from([None] + list(range(x.ndim))))
    if name in ("argmax", "argmin") and axis is None and x.ndim > 1:
        axis = 0
    reduced = x.size if axis is None else (x.shape[axis] if x.ndim else 1)
    if reduced == 0 and name in ("max", "min", "argmax", "argmin"):
        return
    got = getattr(b2lazy, name)(lazy, axis=axis).to_numpy()
    with np.errstate(all="ignore"):
        ref = getattr(np, name)(x, axis=axis)
    assert got.dtype == ref.dtype, (name, descr)
    if name in ("max", "min", "argmax", "argmin"):
        np.testing.assert_array_equal(got, ref)
    else:  # ours accumulates in float64, NumPy's in float32 (pairwise): one rounding apart
        np.testing.assert_allclose(
            got.astype(np.float64),
            ref.astype(np.float64),
            rtol=2e-3,
            atol=2e-3,
            equal_nan=True,
            err_msg=f"{name} {descr}",
        )


def test_scans_and_quantiles():
    x = (np.random.default_rng(3).standard_normal(500) / 8).astype(F16)
    got = b2lazy.cumulative_sum(b2lazy.asarray(x, chunks=(64,))).to_numpy()
    assert got.dtype == F16
    # NumPy rounds every partial sum to float16; ours accumulates in float64, rounds once
    np.testing.assert_allclose(
        got.astype(float), np.cumsum(x.astype(float)).astype(F16).astype(float), rtol=1e-3, atol=1e-3
    )
    q = b2lazy.quantile(b2lazy.asarray(x), 0.3).to_numpy()
    assert q.dtype == np.quantile(x, 0.3).dtype
    np.testing.assert_allclose(float(q), float(np.quantile(x, 0.3)), rtol=1e-3)


@given(data=st.data())
@examples(40)
def test_sorts_searches_and_unique_are_exact(tmp_path_factory, data):
    x, lazy, descr, rng = data.draw(half_case(str(tmp_path_factory.mktemp("h"))))
    if x.ndim == 0:
        return
    np.testing.assert_array_equal(b2lazy.sort(lazy, axis=-1).to_numpy(), np.sort(x, axis=-1))
    np.testing.assert_array_equal(
        b2lazy.argsort(lazy, axis=-1, stable=True).to_numpy(), np.argsort(x, axis=-1, kind="stable")
    )
    flat = np.sort(x.reshape(-1))
    v = half_values(rng, (9,))
    np.testing.assert_array_equal(
        b2lazy.searchsorted(b2lazy.asarray(flat), b2lazy.asarray(v)).to_numpy(), np.searchsorted(flat, v)
    )
    u = b2lazy.unique_counts(lazy)
    ref = np.unique_counts(x)
    np.testing.assert_array_equal(u.values.to_numpy(), ref.values)
    np.testing.assert_array_equal(u.counts.to_numpy(), ref.counts)


def test_products_accumulate_in_float32_and_round_once():
    rng = np.random.default_rng(4)
    a = (rng.standard_normal((33, 20)) / 4).astype(F16)
    b = (rng.standard_normal((20, 17)) / 4).astype(F16)
    got = b2lazy.matmul(b2lazy.asarray(a, chunks=(8, 8)), b2lazy.asarray(b, chunks=(8, 8))).to_numpy()
    assert got.dtype == F16
    ref = (a.astype(np.float32) @ b.astype(np.float32)).astype(F16)
    assert_max_ulp(got, ref, maxulp=1)  # (BLAS's float32 sums in another order: a rounding apart)
    np.testing.assert_allclose(got.astype(float), (a @ b).astype(float), rtol=5e-3, atol=5e-3)
    assert_max_ulp(
        b2lazy.matmul(b2lazy.asarray(a).mT, b2lazy.asarray(a)).to_numpy(),
        (a.T.astype(np.float32) @ a.astype(np.float32)).astype(F16),
        maxulp=1,
    )
    v = b2lazy.vecdot(b2lazy.asarray(a), b2lazy.asarray(a)).to_numpy()
    assert v.dtype == F16
    np.testing.assert_allclose(v.astype(float), np.vecdot(a, a).astype(float), rtol=5e-3)


@pytest.mark.parametrize("where", ["o.b2nd", "dir", "o.zarr"])
def test_storage_round_trips(tmp_path, where):
    x = half_values(np.random.default_rng(5), (23, 17))
    path = str(tmp_path / where)
    kw = {"contiguous": False} if where == "dir" else {}
    b2lazy.asarray(x).compute(urlpath=path, chunks=(5, 8), **kw)
    back = b2lazy.open(path)
    assert back.dtype == F16
    np.testing.assert_array_equal(back.to_numpy(), x)
    np.testing.assert_array_equal((back + 1).to_numpy(), x + F16(1))


def test_peers_read_and_write_float16():
    blosc2 = pytest.importorskip("blosc2")
    zarr = pytest.importorskip("zarr")
    import tempfile

    d = tempfile.mkdtemp()
    x = half_values(np.random.default_rng(6), (31, 9))
    blosc2.asarray(x, urlpath=f"{d}/p.b2nd", mode="w", chunks=(10, 4))
    np.testing.assert_array_equal(b2lazy.open(f"{d}/p.b2nd").to_numpy(), x)
    b2lazy.asarray(x).compute(urlpath=f"{d}/q.b2nd")
    np.testing.assert_array_equal(blosc2.open(f"{d}/q.b2nd")[:], x)
    z = zarr.create_array(f"{d}/f.zarr", shape=(6,), chunks=(4,), dtype="float16", fill_value=1.5)
    z[:2] = [3, 4]
    np.testing.assert_array_equal(b2lazy.open(f"{d}/f.zarr").to_numpy(), z[:])
    b2lazy.asarray(x).compute(urlpath=f"{d}/w.zarr", chunks=(8, 8))
    np.testing.assert_array_equal(zarr.open_array(f"{d}/w.zarr", mode="r")[:], x)


def test_a_user_function_sees_float16_blocks():
    x = half_values(np.random.default_rng(7), (40,), special=False)

    def twice(inputs, output, offset):
        assert inputs[0].dtype == F16
        output[...] = inputs[0] * 2

    got = b2lazy.lazyudf(twice, (b2lazy.asarray(x, chunks=(16,)),), F16).to_numpy()
    np.testing.assert_array_equal(got, x * F16(2))
