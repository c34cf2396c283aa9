"""Scans (cumsum / cumprod, NumPy style, and cumulative_sum / cumulative_prod, Array API
style with include_initial) against NumPy 2: random shapes / chunkings / dtypes / axes /
sources (property tests), random regions of scans, scans composed with elementwise
expressions and reductions, the chunk-read work counters and the error cases.

Tolerances: integer results exact (wrap-around is modular, as in NumPy).  Float scans
accumulate in float64 (float32 results are cast at the end), so the reference is NumPy in
float64 cast to the result dtype, rtol 1e-10 (float64) / 1e-6 (float32) plus an atol scaled
by the running magnitude (the same scan of |x|).

Shared strategies and checks live in array_cases.py (no conftest fixtures).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy
from array_cases import DTYPES, assert_close, assert_exact, basic_index, evaluate, examples, make_source, shapes

SCANS = ["cumsum", "cumprod", "cumulative_sum", "cumulative_prod"]


# ----------------------------------------------------------------------------------------
# strategies and helpers
# ----------------------------------------------------------------------------------------
def random_values(rng, dtype, shape, *, prod=False, nan=False):
    """Values of `dtype`; with prod=True the running products stay small / representable."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.array(rng.random(shape) < rng.choice([0.1, 0.5, 0.9]))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if prod:  # mostly 1 / -1, a few 0 and 2
            v = rng.choice([1, 1, 1, -1, -1, 2, 0] if dtype.kind == "i" else [1, 1, 1, 2, 0], size=shape)
            return np.array(v, dtype=dtype)
        if rng.random() < 0.4:
            return np.array(rng.integers(max(info.min, -5), 6, size=shape), dtype=dtype)
        return np.array(rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True))
    if prod:
        v = rng.uniform(0.8, 1.25, size=shape) * rng.choice([-1.0, 1.0, 1.0], size=shape)
    elif rng.random() < 0.3:
        v = rng.integers(-3, 4, size=shape) * 0.25
    else:
        v = rng.standard_normal(shape) * rng.choice([1.0, 1e3, 1e-3]) + rng.choice([0.0, 5.0])
    v = np.array(v, dtype=dtype)
    if nan and v.size:
        v.flat[rng.integers(0, v.size, size=rng.integers(1, 3))] = np.nan
    return v


def np_scan(name, x, axis=None, dtype=None, include_initial=False):
    kw = {} if dtype is None else {"dtype": dtype}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if name in ("cumsum", "cumprod"):
            return np.asarray(getattr(np, name)(x, axis=axis, **kw))
        return np.asarray(getattr(np, name)(x, axis=axis, include_initial=include_initial, **kw))


def b2_scan(name, a, axis=None, dtype=None, include_initial=False, method=False):
    kw = {}
    if axis is not None or method:
        kw["axis"] = axis
    if dtype is not None:
        kw["dtype"] = dtype
    if name in ("cumsum", "cumprod"):
        if method:
            return getattr(a, name)(**kw)
        return getattr(b2lazy, name)(a, **kw)
    return getattr(b2lazy, name)(a, include_initial=include_initial, **kw)


def check_scan(name, got, x, axis, dtype, include_initial, what):
    native = np_scan(name, x, axis, dtype, include_initial)
    assert got.dtype == native.dtype, f"{what}: dtype {got.dtype} != NumPy {native.dtype}"
    assert got.shape == native.shape, f"{what}: shape {got.shape} != NumPy {native.shape}"
    if native.dtype.kind != "f":
        assert_exact(got, native, what)
        return
    x64 = x.astype(np.float64)
    ref = np_scan(name, x64, axis, None, include_initial).astype(native.dtype)
    mag = np.nan_to_num(np.abs(x64), nan=0.0)
    run = np_scan(name, mag, axis, None, include_initial)
    f32 = native.dtype == np.float32
    assert_close(got, ref, 1e-6 if f32 else 1e-10, (1e-6 if f32 else 1e-12) * run, what)


@st.composite
def scan_case(draw, names=SCANS, dtypes=DTYPES):
    name = draw(st.sampled_from(names), label="scan")
    dtype = draw(st.sampled_from(dtypes), label="dtype")
    shape = draw(shapes(max_size=3000), label="shape")
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))
    nan = dtype.kind == "f" and draw(st.integers(0, 4)) == 0
    x = random_values(rng, dtype, shape, prod="prod" in name, nan=nan)
    nd = len(shape)
    if name in ("cumsum", "cumprod"):
        axis = draw(st.one_of(st.none(), st.integers(-nd, nd - 1)), label="axis")
    elif nd <= 1:
        axis = draw(st.one_of(st.none(), st.integers(-nd, nd - 1)), label="axis")
    else:
        axis = draw(st.integers(-nd, nd - 1), label="axis")
    include_initial = name.startswith("cumulative") and draw(st.booleans(), label="incl")
    sdtype = None
    if draw(st.integers(0, 3)) == 0:
        opts = ["float64", "float32"] if dtype.kind == "f" else ["int64", "uint64", "int32", "float64", "float32"]
        sdtype = np.dtype(draw(st.sampled_from(opts), label="dtype="))
    return name, x, axis, sdtype, include_initial


# ----------------------------------------------------------------------------------------
# property tests
# ----------------------------------------------------------------------------------------
@examples(450)
@given(data=st.data())
def test_random_scans(data, tmp_path_factory):
    name, x, axis, sdtype, incl = data.draw(scan_case(), label="case")
    a = make_source(data.draw, x, tmp_path_factory)
    method = name in ("cumsum", "cumprod") and data.draw(st.booleans(), label="as method")
    what = f"{name}(x{x.shape}:{x.dtype}, axis={axis}, dtype={sdtype}, include_initial={incl})"
    r = b2_scan(name, a, axis, sdtype, incl, method)
    got = evaluate(data.draw, r)
    assert tuple(r.shape) == got.shape and r.dtype == got.dtype, what
    check_scan(name, got, x, axis, sdtype, incl, what)


@examples(30)
@given(data=st.data())
def test_random_scans_zero_d(data):
    name = data.draw(st.sampled_from(SCANS))
    dt = data.draw(st.sampled_from(DTYPES))
    x = np.array(data.draw(st.integers(-3 if dt.kind in "if" else 0, 3)), dtype=dt)
    got = b2_scan(name, b2lazy.asarray(x)).to_numpy()
    check_scan(name, got, x, None, None, False, f"{name} 0-d {x.dtype}")


@examples(250)
@given(data=st.data())
def test_scan_regions(data, tmp_path_factory):
    """Random basic-index regions of scans, and the last few elements of flattened scans."""
    name = data.draw(st.sampled_from(SCANS), label="scan")
    dtype = data.draw(
        st.sampled_from([np.dtype(t) for t in ("int32", "int64", "uint8", "float32", "float64")]), label="dtype"
    )
    shape = data.draw(shapes(allow_empty=False, max_size=3000), label="shape")
    nd = len(shape)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x = random_values(rng, dtype, shape, prod="prod" in name)
    a = make_source(data.draw, x, tmp_path_factory, kinds=["mem", "disk", "numpy"])
    incl = name.startswith("cumulative") and data.draw(st.booleans(), label="incl")
    if data.draw(st.booleans(), label="flat tail") and name in ("cumsum", "cumprod"):
        m = data.draw(st.integers(1, 20), label="m")
        key = (slice(-m, None),)
        axis = None
    else:
        axis = data.draw(st.integers(-nd, nd - 1), label="axis")
        out_shape = np_scan(name, x, axis, None, incl).shape
        key = data.draw(basic_index(out_shape, newaxis=True), label="index")
    what = f"{name}(x{shape}:{dtype}, axis={axis}, incl={incl})[{key}]"
    lazy = b2_scan(name, a, axis, None, incl)[key]
    got = evaluate(data.draw, lazy)
    full = np_scan(name, x, axis, None, incl)
    assert got.dtype == full.dtype, what
    if full.dtype.kind != "f":
        assert_exact(got, full[key], what)
        return
    x64 = x.astype(np.float64)
    ref = np_scan(name, x64, axis, None, incl).astype(full.dtype)[key]
    run = np_scan(name, np.abs(x64), axis, None, incl)[key]
    f32 = full.dtype == np.float32
    assert_close(got, ref, 1e-6 if f32 else 1e-10, (1e-6 if f32 else 1e-12) * run, what)


# Compositions: (b2lazy form, NumPy form, NumPy magnitude form on |a|, |b|).  Each takes
# the module-like namespace and the two operands.
def _cs(m, x, axis=None):
    return m.cumsum(x, axis=axis)


COMPOSITIONS = {
    "sum(cumsum(a,0)*b,1)": (
        lambda a, b: b2lazy.sum(b2lazy.cumsum(a, axis=0) * b, axis=1),
        lambda a, b: np.sum(np.cumsum(a, axis=0) * b, axis=1),
        lambda a, b: np.sum(np.cumsum(a, axis=0) * b, axis=1),
    ),
    "cumsum(a*2+b,-1)": (
        lambda a, b: b2lazy.cumsum(a * 2 + b, axis=-1),
        lambda a, b: np.cumsum(a * 2 + b, axis=-1),
        lambda a, b: np.cumsum(a * 2 + b, axis=-1),
    ),
    "cumsum(sum(a,0))": (
        lambda a, b: b2lazy.cumsum(b2lazy.sum(a, axis=0)),
        lambda a, b: np.cumsum(np.sum(a, axis=0)),
        lambda a, b: np.cumsum(np.sum(a, axis=0)),
    ),
    "cumsum(a,0)-a": (
        lambda a, b: b2lazy.cumsum(a, axis=0) - a,
        lambda a, b: np.cumsum(a, axis=0) - a,
        lambda a, b: np.cumsum(a, axis=0) + a,
    ),
    "max(cumsum(a))": (
        lambda a, b: b2lazy.max(b2lazy.cumsum(a)),
        lambda a, b: np.max(np.cumsum(a)),
        lambda a, b: np.sum(a),
    ),
    "cumulative_sum(cumsum(a,0),axis=-1)": (
        lambda a, b: b2lazy.cumulative_sum(b2lazy.cumsum(a, axis=0), axis=-1),
        lambda a, b: np.cumulative_sum(np.cumsum(a, axis=0), axis=-1),
        lambda a, b: np.cumulative_sum(np.cumsum(a, axis=0), axis=-1),
    ),
    "cumsum(a)[-7:]+sum(b)": (
        lambda a, b: b2lazy.cumsum(a)[-7:] + b2lazy.sum(b),
        lambda a, b: np.cumsum(a)[-7:] + np.sum(b),
        lambda a, b: np.cumsum(a)[-7:] + np.sum(b),
    ),
    "mean(cumprod(a/8+1,axis=0),axis=-1)": (
        lambda a, b: b2lazy.mean(b2lazy.cumprod(a / 8 + 1, axis=0), axis=-1),
        lambda a, b: np.mean(np.cumprod(a / 8 + 1, axis=0), axis=-1),
        lambda a, b: np.mean(np.cumprod(a / 8 + 1, axis=0), axis=-1),
    ),
    "cumsum(a+b[0],0)": (
        lambda a, b: b2lazy.cumsum(a + b[0], axis=0),
        lambda a, b: np.cumsum(a + b[0], axis=0),
        lambda a, b: np.cumsum(a + b[0], axis=0),
    ),
    "cumprod(a[::-1]/8+1,axis=-1)": (
        lambda a, b: b2lazy.cumprod(a[::-1] / 8 + 1, axis=-1),
        lambda a, b: np.cumprod(a[::-1] / 8 + 1, axis=-1),
        lambda a, b: np.cumprod(a[::-1] / 8 + 1, axis=-1),
    ),
    "cumsum(a[1:,::2]*b[:-1,::2])": (
        lambda a, b: b2lazy.cumsum(a[1:, ::2] * b[:-1, ::2]),
        lambda a, b: np.cumsum(a[1:, ::2] * b[:-1, ::2]),
        lambda a, b: np.cumsum(a[1:, ::2] * b[:-1, ::2]),
    ),
    "cumsum(where(a>0,a,b),1)": (
        lambda a, b: b2lazy.cumsum(b2lazy.where(a > 0, a, b), axis=1),
        lambda a, b: np.cumsum(np.where(a > 0, a, b), axis=1),
        None,
    ),
}


@examples(200)
@given(data=st.data())
def test_scan_compositions(data, tmp_path_factory):
    cname = data.draw(st.sampled_from(sorted(COMPOSITIONS)), label="composition")
    lazy_f, np_f, mag_f = COMPOSITIONS[cname]
    shape = data.draw(shapes(min_nd=2, max_nd=3, allow_empty=False, max_size=3000), label="shape")
    dtype = data.draw(st.sampled_from([np.dtype("int64"), np.dtype("int32"), np.dtype("float64")]), label="dtype")
    if "cumprod" in cname or "mean" in cname:
        dtype = np.dtype("float64")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    if dtype.kind == "f":
        x = rng.uniform(-1, 1, shape)
        y = rng.uniform(-1, 1, shape)
    else:
        x = rng.integers(-50, 50, shape).astype(dtype)
        y = rng.integers(-50, 50, shape).astype(dtype)
    a = make_source(data.draw, x, tmp_path_factory, label="a")
    b = make_source(data.draw, y, tmp_path_factory, label="b")
    got = evaluate(data.draw, lazy_f(a, b))
    ref = np_f(x, y)
    assert got.dtype == ref.dtype, (cname, got.dtype, ref.dtype)
    if dtype.kind != "f":
        assert_exact(got, ref, cname)
        return
    if mag_f is None:
        mag = np.cumsum(np.maximum(np.abs(x), np.abs(y)), axis=1)
    else:
        mag = mag_f(np.abs(x) if "cumprod" not in cname else x, np.abs(y))
        if "cumprod" in cname:
            mag = np.abs(mag)
    assert_close(got, ref, 1e-9, 1e-11 * np.abs(mag) + 1e-300, cname)


# ----------------------------------------------------------------------------------------
# table tests
# ----------------------------------------------------------------------------------------
def test_scan_values_small():
    x = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int16)
    a = b2lazy.asarray(x, chunks=(1, 2), blocks=(1, 1))
    assert_exact(b2lazy.cumsum(a).to_numpy(), np.array([1, 3, 6, 10, 15, 21]))
    assert_exact(b2lazy.cumsum(a, axis=0).to_numpy(), np.cumsum(x, axis=0))
    assert_exact(b2lazy.cumprod(a, axis=-1).to_numpy(), np.cumprod(x, axis=-1))
    assert_exact(
        b2lazy.cumulative_sum(a, axis=1, include_initial=True).to_numpy(), np.array([[0, 1, 3, 6], [0, 4, 9, 15]])
    )
    assert_exact(
        b2lazy.cumulative_prod(a, axis=0, include_initial=True).to_numpy(),
        np.array([[1, 1, 1], [1, 2, 3], [4, 10, 18]]),
    )
    assert b2lazy.cumsum(a).dtype == np.int64
    assert b2lazy.cumsum(a, dtype=np.int16).dtype == np.int16
    assert a.cumsum(axis=1).to_numpy().tolist() == np.cumsum(x, axis=1).tolist()


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("shape,axis", [((0,), None), ((0, 3), 0), ((3, 0), 1), ((2, 0, 2), -2)])
def test_empty_scans_include_initial(name, shape, axis):
    x = np.zeros(shape, dtype=np.float32)
    for incl in (False, True):
        got = b2_scan(name, b2lazy.asarray(x), axis, None, incl).to_numpy()
        assert_exact(got, np_scan(name, x, axis, None, incl), f"{name} {shape} {axis} {incl}")


def test_scan_nan_propagation():
    x = np.array([[1.0, np.nan, 2.0], [3.0, 4.0, np.nan], [5.0, 6.0, 7.0]])
    a = b2lazy.asarray(x, chunks=(2, 2), blocks=(1, 1))
    for name in ("cumsum", "cumprod"):
        for axis in (None, 0, 1):
            assert_exact(getattr(b2lazy, name)(a, axis=axis).to_numpy(), np_scan(name, x, axis))


def test_long_float_cumsum_accuracy():
    x = np.random.default_rng(5).uniform(-1, 1, 200_000)
    a = b2lazy.asarray(x, chunks=(30_000,), blocks=(7_000,))
    got = b2lazy.cumsum(a).to_numpy()
    run = np.cumsum(np.abs(x))
    assert_close(got, np.cumsum(x), 1e-10, 1e-12 * run)
    x32 = x.astype(np.float32)
    got = b2lazy.cumsum(b2lazy.asarray(x32, chunks=(30_000,), blocks=(7_000,))).to_numpy()
    assert got.dtype == np.float32
    assert_close(got, np.cumsum(x32.astype(np.float64)).astype(np.float32), 1e-6, 1e-7 * run)


# ----------------------------------------------------------------------------------------
# work counters (the checks): (400, 300) float64, chunks (50, 60) -> 8 x 5 = 40
# ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def counted_sources(tmp_path_factory):
    x = np.random.default_rng(11).standard_normal((400, 300))
    path = tmp_path_factory.mktemp("scan_counters") / "a.b2nd"
    b2lazy.asarray(x).compute(urlpath=str(path), chunks=(50, 60), blocks=(10, 20))
    return x, {"disk": lambda: b2lazy.open(path), "mem": lambda: b2lazy.asarray(x, chunks=(50, 60), blocks=(10, 20))}


def _total(r):
    return r.stats["chunks_decompressed"]["total"]


@pytest.mark.parametrize("kind", ["disk", "mem"])
def test_counter_cumsum_tail(counted_sources, kind):
    x, src = counted_sources
    r = b2lazy.cumsum(src[kind]())[-10:].compute()
    assert _total(r) <= 80
    ref = np.cumsum(x)
    assert_close(r.to_numpy(), ref[-10:], 1e-10, 1e-12 * np.cumsum(np.abs(x))[-10:])


@pytest.mark.parametrize("kind", ["disk", "mem"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_counter_full_cumsum(counted_sources, kind, axis):
    x, src = counted_sources
    r = b2lazy.cumsum(src[kind](), axis=axis).compute()
    assert _total(r) <= 80, r.stats
    assert_close(r.to_numpy(), np.cumsum(x, axis=axis), 1e-10, 1e-12 * np.cumsum(np.abs(x), axis=axis))


@pytest.mark.parametrize("kind", ["disk", "mem"])
def test_counter_scan_head_reads_little(counted_sources, kind):
    x, src = counted_sources
    r = b2lazy.cumsum(src[kind](), axis=0)[:50].compute()  # first row-chunk only: 5 chunks
    assert _total(r) <= 5
    assert_close(r.to_numpy(), np.cumsum(x, axis=0)[:50], 1e-10, 1e-12 * 50 * np.abs(x).max())


@pytest.mark.parametrize("kind", ["disk"])
def test_counter_include_initial(counted_sources, kind):
    x, src = counted_sources
    r = b2lazy.cumulative_sum(src[kind](), axis=0, include_initial=True).compute()
    assert_close(
        r.to_numpy(),
        np.cumulative_sum(x, axis=0, include_initial=True),
        1e-10,
        1e-12 * np.cumulative_sum(np.abs(x), axis=0, include_initial=True),
    )
    assert _total(r) <= 80, r.stats


# ----------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SCANS)
@pytest.mark.parametrize("axis", [2, -3, 7])
def test_scan_axis_out_of_range(name, axis):
    a = b2lazy.asarray(np.ones((3, 4)))
    with pytest.raises(ValueError, match=str(axis)):
        b2_scan(name, a, axis).to_numpy()


@pytest.mark.parametrize("name", SCANS)
def test_scan_axis_out_of_range_1d(name):
    with pytest.raises(ValueError):
        b2_scan(name, b2lazy.asarray(np.ones(5)), 1).to_numpy()
    with pytest.raises(ValueError):
        b2_scan(name, b2lazy.asarray(np.ones(5)), -2).to_numpy()


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (1, 1)])
def test_cumulative_needs_axis(name, shape):
    with pytest.raises(ValueError):
        getattr(b2lazy, name)(b2lazy.asarray(np.ones(shape))).to_numpy()
    with pytest.raises(ValueError):
        getattr(b2lazy, name)(b2lazy.asarray(np.ones(shape), chunks=(1,) * len(shape)), include_initial=True)


@pytest.mark.parametrize("name", SCANS)
@pytest.mark.parametrize("axis", [(0,), 1.0, True, "0"])
def test_scan_bad_axis_type(name, axis):
    with pytest.raises(TypeError):
        b2_scan(name, b2lazy.asarray(np.ones((3, 4))), axis)
