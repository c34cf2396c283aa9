"""b2lazy.fft (the Array API's fft extension) against NumPy's np.fft: random shapes,
chunkings, dtypes, lengths, axes and norms; round trips; lanes longer than
fft_lane_length() transformed in four steps; transforms larger than max_memory."""

import contextlib
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

import b2lazy
from conftest import base_shapes, examples, make_source

NORMS = ["backward", "ortho", "forward"]
REAL = [np.dtype(t) for t in ("float32", "float64", "int32", "int64", "uint8", "bool")]
COMPLEX = [np.dtype(t) for t in ("complex64", "complex128")]
_REFUSED = re.compile(r"the smallest budget that works is (\d+) MiB")


@contextlib.contextmanager
def lane_length(n):
    """Graphs built inside transform lanes longer than n elements in four steps."""
    old = b2lazy._core.fft_lane_length()
    b2lazy._core.set_fft_lane_length(n)
    try:
        yield
    finally:
        b2lazy._core.set_fft_lane_length(old)


def values(rng, dtype, shape):
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0, 50, shape).astype(dtype)
    v = rng.standard_normal(shape)
    if dtype.kind == "c":
        v = v + 1j * rng.standard_normal(shape)
    return v.astype(dtype)


def single(dtype):
    return np.dtype(dtype) in (np.dtype("float32"), np.dtype("complex64"), np.dtype("float16"))


def expected_dtype(name, dtype):
    real_out = name in ("irfft", "hfft", "irfftn")
    if single(dtype):
        return np.dtype("float32" if real_out else "complex64")
    return np.dtype("float64" if real_out else "complex128")


def assert_fft_close(got, ref, dtype, what=""):
    tol = 2e-5 if single(dtype) else 1e-11
    scale = max(1.0, float(np.max(np.abs(ref)))) if ref.size else 1.0
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * scale, err_msg=what)


def source(data, x, tmp_path):
    return make_source(data.draw, x, data.draw(st.sampled_from(["numpy", "mem", "disk"])), str(tmp_path))


@given(
    name=st.sampled_from(["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]),
    dtype=st.sampled_from(REAL + COMPLEX),
    shape=base_shapes(min_ndim=1, max_ndim=3, allow_zero=False),
    norm=st.sampled_from(NORMS),
    data=st.data(),
)
@examples(150)
def test_one_dimensional_transforms_match_numpy(name, dtype, shape, norm, data, tmp_path_factory):
    if name in ("rfft", "ihfft") and dtype.kind == "c":
        dtype = np.dtype("float64")
    x = values(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))), dtype, shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    m = shape[axis]
    half = name in ("irfft", "hfft")
    n = data.draw(st.one_of(st.none(), st.integers(1, 2 * m + 3)))
    if n is None and half and m == 1:
        n = data.draw(st.integers(1, 6))
    a, descr = source(data, x, tmp_path_factory.mktemp("fft"))
    got = getattr(b2lazy.fft, name)(a, n=n, axis=axis, norm=norm)
    ref = getattr(np.fft, name)(x, n=n, axis=axis, norm=norm)
    what = f"{name} {descr} {dtype} {shape} n={n} axis={axis} norm={norm}"
    assert got.dtype == expected_dtype(name, dtype), what
    assert got.shape == ref.shape, what
    assert_fft_close(got.to_numpy(), ref, dtype, what)
    # a region of it: every other element along the axis, part of the others
    key = tuple(
        slice(None, None, 2) if d == axis % len(shape) else slice(0, max(1, s - 1)) for d, s in enumerate(ref.shape)
    )
    assert_fft_close(got[key].to_numpy(), ref[key], dtype, what + " region")


@given(
    name=st.sampled_from(["fftn", "ifftn", "rfftn", "irfftn"]),
    dtype=st.sampled_from(REAL + COMPLEX),
    shape=base_shapes(min_ndim=1, max_ndim=3, allow_zero=False),
    norm=st.sampled_from(NORMS),
    data=st.data(),
)
@examples(100)
def test_n_dimensional_transforms_match_numpy(name, dtype, shape, norm, data, tmp_path_factory):
    if name == "rfftn" and dtype.kind == "c":
        dtype = np.dtype("float32")
    x = values(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))), dtype, shape)
    nd = len(shape)
    axes = data.draw(
        st.one_of(
            st.none(), st.permutations(range(nd)).flatmap(lambda p: st.integers(1, nd).map(lambda k: tuple(p[:k])))
        )
    )
    k = nd if axes is None else len(axes)
    s = data.draw(st.one_of(st.none(), st.lists(st.integers(1, 9), min_size=k, max_size=k).map(tuple)))
    if name == "irfftn" and s is None:
        last = shape[(axes or tuple(range(nd)))[-1]]
        if last == 1:  # the default 2 * (m - 1) would be 0
            s = tuple(shape[a] for a in (axes or range(nd)))[:-1] + (2,)
    a, descr = source(data, x, tmp_path_factory.mktemp("fftn"))
    got = getattr(b2lazy.fft, name)(a, s=s, axes=axes, norm=norm)
    ref = getattr(np.fft, name)(x, s=s, axes=axes, norm=norm)
    what = f"{name} {descr} {dtype} {shape} s={s} axes={axes} norm={norm}"
    assert got.dtype == expected_dtype(name, dtype), what
    assert got.shape == ref.shape, what
    assert_fft_close(got.to_numpy(), ref, dtype, what)


@given(
    dtype=st.sampled_from(["float32", "float64", "complex64", "complex128"]),
    shape=base_shapes(min_ndim=1, max_ndim=3, allow_zero=False),
    norm=st.sampled_from(NORMS),
    data=st.data(),
)
@examples(50)
def test_round_trips(dtype, shape, norm, data):
    dtype = np.dtype(dtype)
    x = values(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))), dtype, shape)
    axis = data.draw(st.integers(0, len(shape) - 1))
    a = b2lazy.asarray(x, chunks=tuple(data.draw(st.integers(1, s)) for s in shape))
    back = b2lazy.fft.ifft(b2lazy.fft.fft(a, axis=axis, norm=norm), axis=axis, norm=norm)
    assert_fft_close(back.to_numpy(), x, dtype)
    assert_fft_close(b2lazy.fft.ifftn(b2lazy.fft.fftn(a, norm=norm), norm=norm).to_numpy(), x, dtype)
    if dtype.kind == "f":
        m = shape[axis]
        r = b2lazy.fft.irfft(b2lazy.fft.rfft(a, axis=axis, norm=norm), n=m, axis=axis, norm=norm)
        assert r.dtype == dtype
        assert_fft_close(r.to_numpy(), x, dtype)
        r = b2lazy.fft.irfftn(b2lazy.fft.rfftn(a, norm=norm), s=shape, norm=norm)
        assert_fft_close(r.to_numpy(), x, dtype)


@given(
    n=st.integers(1, 40), d=st.sampled_from([1.0, 0.5, 3.0, 1e-3]), dtype=st.sampled_from([None, "float32", "float64"])
)
@examples(40)
def test_frequencies_match_numpy(n, d, dtype):
    for name in ("fftfreq", "rfftfreq"):
        got = getattr(b2lazy.fft, name)(n, d=d, dtype=dtype)
        ref = getattr(np.fft, name)(n, d=d).astype(dtype or "float64")
        assert got.dtype == ref.dtype
        np.testing.assert_array_equal(got.to_numpy(), ref)
        np.testing.assert_array_equal(got[1::2].to_numpy(), ref[1::2])  # any region


@given(shape=base_shapes(min_ndim=1, max_ndim=3), data=st.data())
@examples(40)
def test_shifts_match_numpy(shape, data):
    x = np.arange(int(np.prod(shape))).reshape(shape)
    axes = data.draw(
        st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1), st.permutations(range(len(shape))).map(tuple))
    )
    for name in ("fftshift", "ifftshift"):
        got = getattr(b2lazy.fft, name)(b2lazy.asarray(x, chunks=tuple(max(1, s // 2) for s in shape)), axes=axes)
        np.testing.assert_array_equal(got.to_numpy(), getattr(np.fft, name)(x, axes=axes))


@given(
    n=st.integers(2, 300),
    name=st.sampled_from(["fft", "ifft", "rfft", "irfft"]),
    norm=st.sampled_from(NORMS),
    lead=st.integers(1, 3),
    data=st.data(),
)
@examples(60)
def test_four_step_lanes_match_numpy(n, name, norm, lead, data):
    """Lanes longer than the lane length are transformed in four steps (a prime length is
    transformed whole): the same values as NumPy's, along either axis."""
    rng = np.random.default_rng(n)
    axis = data.draw(st.sampled_from([0, 1]))
    shape = (n, lead) if axis == 0 else (lead, n)
    x = rng.standard_normal(shape)
    if name in ("fft", "ifft", "irfft"):
        x = x + 1j * rng.standard_normal(shape)
    nn = data.draw(st.one_of(st.none(), st.integers(2, 2 * n)))
    with lane_length(data.draw(st.integers(1, 12))):
        got = getattr(b2lazy.fft, name)(
            b2lazy.asarray(x, chunks=(max(1, shape[0] // 3), 2)), n=nn, axis=axis, norm=norm
        )
    ref = getattr(np.fft, name)(x, n=nn, axis=axis, norm=norm)
    assert got.shape == ref.shape
    assert_fft_close(got.to_numpy(), ref, x.dtype, f"{name} n={nn} axis={axis}")


def test_four_step_lane_larger_than_max_memory(tmp_path):
    """One lane of 2**21 complex128 (32 MiB) transformed within a budget of a fraction of
    it: four steps, each stage kept (spilled) for the next."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(1 << 21) + 1j * rng.standard_normal(1 << 21)
    path = str(tmp_path / "x.b2nd")
    b2lazy.asarray(x).compute(urlpath=path, chunks=(1 << 17,), blocks=(1 << 13,))
    with lane_length(1 << 16):
        f = b2lazy.fft.fft(b2lazy.open(path))
    budget = 16 << 20
    try:
        r = f.compute(urlpath=str(tmp_path / "f.b2nd"), max_memory=budget)
    except ValueError as e:  # refused before any work: the smallest budget that works
        budget = int(_REFUSED.search(str(e)).group(1)) << 20
        r = f.compute(urlpath=str(tmp_path / "f.b2nd"), max_memory=budget)
    assert budget < x.nbytes
    assert r.stats["projected_peak_bytes"] <= budget and r.stats["peak_scratch_bytes"] <= budget
    assert_fft_close(b2lazy.open(str(tmp_path / "f.b2nd")).to_numpy(), np.fft.fft(x), x.dtype)


@pytest.mark.parametrize("axis", [0, 1])
def test_transform_larger_than_max_memory(tmp_path, axis):
    """A 16 MiB complex128 array transformed along each axis under an 8 MiB budget: whole
    lanes, a few at a time."""
    rng = np.random.default_rng(axis)
    x = rng.standard_normal((512, 2048)) + 1j * rng.standard_normal((512, 2048))
    path = str(tmp_path / "x.b2nd")
    b2lazy.asarray(x).compute(urlpath=path, chunks=(64, 512))
    r = b2lazy.fft.fft(b2lazy.open(path), axis=axis).compute(urlpath=str(tmp_path / "f.b2nd"), max_memory=8 << 20)
    assert r.stats["projected_peak_bytes"] <= 8 << 20
    assert_fft_close(r.to_numpy(), np.fft.fft(x, axis=axis), x.dtype)
    r = b2lazy.fft.rfftn(b2lazy.real(b2lazy.open(path))).compute(max_memory=8 << 20)
    assert_fft_close(r.to_numpy(), np.fft.rfftn(x.real), x.dtype)


def test_expression_strings_call_the_same_functions():
    x = np.random.default_rng(0).standard_normal((6, 5))
    ops = {"a": b2lazy.asarray(x, chunks=(2, 2))}
    assert_fft_close(
        b2lazy.evaluate("fft_fft(a, n=8, axis=0, norm='ortho')", ops).to_numpy(),
        np.fft.fft(x, n=8, axis=0, norm="ortho"),
        x.dtype,
    )
    assert_fft_close(b2lazy.evaluate("fft_irfftn(fft_rfftn(a), s=(6, 5)) * 2", ops).to_numpy(), x * 2, x.dtype)
    np.testing.assert_array_equal(
        b2lazy.evaluate("fft_fftshift(fft_fftfreq(7, d=0.5))").to_numpy(), np.fft.fftshift(np.fft.fftfreq(7, d=0.5))
    )


def test_bad_arguments_name_what_is_wrong():
    a = b2lazy.asarray(np.ones((4, 3)))
    with pytest.raises(TypeError, match="rfft: x must be real, got complex128"):
        b2lazy.fft.rfft(a + 1j)
    with pytest.raises(ValueError, match=r"invalid number of data points \(0\) along axis 1"):
        b2lazy.fft.fft(a, n=0)
    with pytest.raises(ValueError, match="norm must be"):
        b2lazy.fft.fft(a, norm="none")
    with pytest.raises(np.exceptions.AxisError):
        b2lazy.fft.fft(a, axis=2)
    with pytest.raises(ValueError, match="at least one dimension"):
        b2lazy.fft.fft(b2lazy.asarray(1.0))
    with pytest.raises(ValueError, match="s and axes must have the same length"):
        b2lazy.fft.fftn(a, s=(2, 2), axes=(0,))
    with pytest.raises(ValueError, match=r"invalid number of data points \(0\)"):
        b2lazy.fft.irfft(b2lazy.asarray(np.ones(1)))


def test_saved_and_pickled_by_name():
    import pickle

    x = np.arange(8.0)
    f = b2lazy.fft.rfft(b2lazy.asarray(x), n=6, norm="ortho")
    g = pickle.loads(pickle.dumps(f))
    assert_fft_close(g.to_numpy(), np.fft.rfft(x, n=6, norm="ortho"), x.dtype)
    assert pickle.loads(pickle.dumps(b2lazy.fft.fft)) is b2lazy.fft.fft
