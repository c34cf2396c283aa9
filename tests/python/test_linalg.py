"""Linear algebra (matmul / @, tensordot, vecdot, outer, permute_dims, transpose, .T, .mT,
matrix_transpose) against NumPy 2: random shapes (1-d promotion, broadcast batch axes,
size-1 and 0-length dims), chunkings, source kinds and dtype pairs (property tests),
contractions nested in lazy expressions in both directions, the chunk-read work counters,
large cases that take the engine's K-panel / kept-operand / parallel paths, and bad input.

Tolerances:
* integer / bool results: exact, as NumPy's (integer sums of products wrap around modulo
  2**bits; bool is OR of ANDs);
* float results: the engine sums the products in another order than NumPy (BLAS tiles,
  K-panels, parallel partial sums), so values are compared to NumPy in float64 with an
  error bound relative to the sum of magnitudes:
      |got - want64| <= rtol * (|a| @ |b|) + tiny,  rtol = 1e-5 (float32) / 1e-12 (float64)
  (the same contraction of |a| and |b|; for nested expressions the whole expression
  evaluated on magnitudes).  NaN / inf positions must agree exactly.
* result dtypes must equal NumPy's (np.matmul / np.tensordot / np.vecdot / np.outer).

The float reference is computed as plain sums of products (np.einsum, multiply + sum):
b2lazy follows IEEE arithmetic in every term (inf * 0 is NaN), as NumPy's own loops and
einsum do, while NumPy's BLAS calls (np.tensordot / np.dot through gemv) may skip zero
factors and give 0 there — the one documented deviation from NumPy's results.

Engine bugs these tests found are fixed and kept as tests: vecdot with a non-negative axis
and operands of different ndim (now NumPy's per-operand axis), tensordot / vecdot error
messages without the shapes, and an expensive operand (a + 1 in matmul(a + 1, b))
recomputed once per output chunk when the output chunks are not row bands.

Shared strategies and checks live in array_cases.py (no conftest fixtures).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy
from array_cases import DTYPES, assert_exact, basic_index, chunking, evaluate, examples, make_source
from conftest import within_budget

F32, F64 = np.dtype("float32"), np.dtype("float64")
RTOL = {F32: 1e-5, F64: 1e-12}
KINDS = ["numpy", "numpy_view", "mem", "disk"]


# ----------------------------------------------------------------------------------------
# values, shapes and the oracle
# ----------------------------------------------------------------------------------------
def lin_values(rng, dtype, shape, *, special=False):
    """Values of `dtype`: small integers (exact float results), full-range integers
    (wrap-around), normal floats at several scales; `special` sprinkles NaN / +-inf / -0."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.array(rng.random(shape) < rng.choice([0.1, 0.5, 0.9]))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if rng.random() < 0.5:
            return np.array(rng.integers(max(info.min, -4), 5, size=shape), dtype=dtype)
        return np.array(rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True))
    if rng.random() < 0.3:
        v = rng.integers(-6, 7, size=shape) * 0.5
    else:
        v = rng.standard_normal(shape) * rng.choice([1.0, 1e3, 1e-3]) + rng.choice([0.0, 3.0])
    v = np.array(v, dtype=dtype)
    if special and v.size:
        k = int(rng.integers(1, 4))
        v.flat[rng.integers(0, v.size, size=k)] = rng.choice([np.nan, np.inf, -np.inf, -0.0], size=k)
    return v


def _finite_abs64(x):
    return np.nan_to_num(np.abs(np.asarray(x).astype(np.float64)), nan=0.0, posinf=0.0, neginf=0.0)


def oracle(fn, *xs, ieee=None):
    """(NumPy's native result, float64 result, magnitude bound) of fn over NumPy arrays.

    The float64 result and the bound come from `ieee` when given: the same contraction as
    plain sums of products (np.einsum / multiply + sum).  NumPy's BLAS path (np.dot,
    np.matmul, np.tensordot on floats) skips zero factors, so it gives 0 for inf * 0
    where IEEE arithmetic, NumPy's own non-BLAS loops and b2lazy give NaN."""
    ieee = ieee or fn
    with np.errstate(all="ignore"):
        want = np.asarray(fn(*xs))
        if want.dtype.kind != "f":
            return want, None, None
        ref = np.asarray(ieee(*[np.asarray(x).astype(np.float64) for x in xs]))
        mag = np.asarray(ieee(*[_finite_abs64(x) for x in xs]))
    return want, ref, mag


def ieee_matmul(x, y):
    """np.matmul as plain sums of products (1-d promotion, broadcast batch axes)."""
    xv, yv = x.ndim == 1, y.ndim == 1
    r = np.einsum("...ij,...jk->...ik", x[None, :] if xv else x, y[:, None] if yv else y)
    if xv:
        r = r[..., 0, :]
    if yv:
        r = r[..., 0]
    return r


def ieee_tensordot(axes):
    def f(x, y):
        if isinstance(axes, int):
            xa, xb = list(range(x.ndim - axes, x.ndim)), list(range(axes))
        else:
            xa, xb = ([v] if isinstance(v, int) else list(v) for v in axes)
        xa, xb = [i % x.ndim for i in xa], [j % y.ndim for j in xb]
        letters = iter("abcdefghijklmnopqrstuvwxyz")
        sa = [next(letters) for _ in range(x.ndim)]
        sb = [None] * y.ndim
        for i, j in zip(xa, xb):
            sb[j] = sa[i]
        sb = [c or next(letters) for c in sb]
        out = [sa[i] for i in range(x.ndim) if i not in xa] + [sb[j] for j in range(y.ndim) if j not in xb]
        return np.einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out)}", x, y)

    return f


def ieee_vecdot(axis):
    return lambda x, y: np.sum(np.moveaxis(x, axis, -1) * np.moveaxis(y, axis, -1), axis=-1)


def check(got, want, ref=None, mag=None, what=""):
    """got against the oracle: dtype / shape as NumPy's, exact for int / bool, else the
    magnitude-relative bound from the module docstring."""
    got = np.asarray(got)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != NumPy {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != NumPy {want.shape}"
    if want.dtype.kind != "f":
        assert_exact(got, want, what)
        return
    g = got.astype(np.float64)
    nonfin = ~np.isfinite(ref)
    assert np.array_equal(np.isnan(g), np.isnan(ref)), (
        f"{what}: NaN positions differ\ngot={got[nonfin | ~np.isfinite(g)][:8]}\nref={ref[nonfin][:8]}"
    )
    inf = np.isinf(ref)
    assert np.array_equal(g[inf], ref[inf]) and not np.isinf(g[~inf]).any(), f"{what}: inf mismatch"
    fin = ~nonfin
    tiny = 4 * np.finfo(want.dtype).smallest_normal
    err = np.abs(g[fin] - ref[fin])
    tol = RTOL[want.dtype] * mag[fin] + tiny
    bad = ~(err <= tol)
    assert not bad.any(), (
        f"{what}: {int(bad.sum())} of {err.size} values out of tolerance\n"
        f"got={g[fin][bad][:6]}\nref={ref[fin][bad][:6]}\ntol={tol[bad][:6]}"
    )


@st.composite
def dim(draw, cap=12):
    """A dimension length: 0 sometimes, 1 often, else 2..cap."""
    r = draw(st.integers(0, 15))
    if r == 0:
        return 0
    if r <= 3:
        return 1
    return draw(st.integers(2, cap))


@st.composite
def batch_of(draw, batch):
    """A trailing part of `batch` with some lengths replaced by 1 (broadcasts to it)."""
    take = draw(st.integers(0, len(batch)))
    tail = batch[len(batch) - take :]
    return tuple(1 if draw(st.integers(0, 3)) == 0 else n for n in tail)


@st.composite
def matmul_shapes(draw):
    m, k, n = draw(dim(), label="m"), draw(dim(16), label="k"), draw(dim(), label="n")
    nb = draw(st.integers(0, 3), label="batch ndim")
    batch = tuple(draw(dim({1: 5, 2: 4, 3: 3}[nb])) for _ in range(nb))
    a_vec = draw(st.integers(0, 4), label="a 1-d") == 0
    b_vec = draw(st.integers(0, 4), label="b 1-d") == 0
    sa = (k,) if a_vec else draw(batch_of(batch)) + (m, k)
    sb = (k,) if b_vec else draw(batch_of(batch)) + (k, n)
    return sa, sb


@st.composite
def dtype_pair(draw, dtypes=DTYPES):
    da = draw(st.sampled_from(dtypes), label="a dtype")
    db = da if draw(st.booleans()) else draw(st.sampled_from(dtypes), label="b dtype")
    return da, db


def seeded(draw):
    return np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))


def values_pair(draw, rng, sa, sb, da, db):
    special = (da.kind == "f" or db.kind == "f") and draw(st.integers(0, 5), label="NaN/inf") == 0
    return lin_values(rng, da, sa, special=special), lin_values(rng, db, sb, special=special)


def evaluate_lin(draw, lazy, tmp_path_factory):
    """evaluate() from array_cases, or compute to disk with random chunks, with random
    thread counts and memory budgets (small budgets change the engine's tiling)."""
    how = draw(st.sampled_from(["plain", "disk", "threads"]), label="evaluation")
    if how == "plain":
        return evaluate(draw, lazy)
    nthreads = draw(st.sampled_from([None, 1, 2]), label="nthreads")
    max_memory = draw(st.sampled_from([None, 1 << 16, 1 << 20]), label="max_memory")
    if how == "threads":
        return within_budget(lambda mm: lazy.to_numpy(nthreads=nthreads, max_memory=mm), max_memory)
    path = tmp_path_factory.mktemp("out") / "r.b2nd"
    chunks, blocks = draw(chunking(lazy.shape), label="disk chunks/blocks") if lazy.ndim else (None, None)
    r = within_budget(
        lambda mm: lazy.compute(urlpath=path, chunks=chunks, blocks=blocks, nthreads=nthreads, max_memory=mm),
        max_memory,
    )
    assert r.shape == lazy.shape and r.dtype == lazy.dtype
    return b2lazy.open(path).to_numpy()


# ----------------------------------------------------------------------------------------
# 1. matmul / @
# ----------------------------------------------------------------------------------------
def _call_matmul(form, a, b, x, y):
    if form == "matmul":
        return b2lazy.matmul(a, b)
    if form == "@":
        return a @ b
    if form == "ndarray @ lazy":
        return x @ b
    return a @ y  # lazy @ ndarray


def _operand(draw, x, tmp_path_factory, label):
    """A source with the values of x, or (matrices) the transpose of a source of x.mT:
    an operand stored transposed, which the engine reads as stored."""
    if x.ndim >= 2 and draw(st.integers(0, 2), label=f"{label} stored transposed") == 0:
        src = make_source(
            draw, np.ascontiguousarray(np.swapaxes(x, -1, -2)), tmp_path_factory, kinds=KINDS, label=label
        )
        if draw(st.booleans(), label=f"{label} .mT"):
            return src.mT
        return b2lazy.permute_dims(src, tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2))
    return make_source(draw, x, tmp_path_factory, kinds=KINDS, label=label)


@examples(220)
@given(data=st.data())
def test_random_matmul(data, tmp_path_factory):
    sa, sb = data.draw(matmul_shapes(), label="shapes")
    da, db = data.draw(dtype_pair(), label="dtypes")
    rng = seeded(data.draw)
    x, y = values_pair(data.draw, rng, sa, sb, da, db)
    a = _operand(data.draw, x, tmp_path_factory, "a")
    b = _operand(data.draw, y, tmp_path_factory, "b")
    form = data.draw(st.sampled_from(["matmul", "@", "ndarray @ lazy", "lazy @ ndarray"]), label="form")
    what = f"{form}: a{sa}:{da} b{sb}:{db}"
    want, ref, mag = oracle(np.matmul, x, y, ieee=ieee_matmul)
    r = _call_matmul(form, a, b, x, y)
    assert isinstance(r, b2lazy.Array), what
    assert r.dtype == want.dtype and r.shape == want.shape, (
        f"{what}: lazy {r.shape}:{r.dtype}, NumPy {want.shape}:{want.dtype}"
    )
    if want.ndim and data.draw(st.integers(0, 3), label="index the result") == 0:
        key = data.draw(basic_index(want.shape), label="index")  # strided / reversed regions
        r, want, what = r[key], want[key], f"({what})[{key}]"
        ref, mag = (None, None) if ref is None else (ref[key], mag[key])
    check(evaluate_lin(data.draw, r, tmp_path_factory), want, ref, mag, what)


@pytest.mark.parametrize("da", DTYPES, ids=str)
@pytest.mark.parametrize("db", DTYPES, ids=str)
def test_matmul_dtype_pairs(da, db):
    """Every dtype pair once, with wrap-around integers and a 0-length contraction."""
    rng = np.random.default_rng(16 * DTYPES.index(da) + DTYPES.index(db))
    x, y = lin_values(rng, da, (3, 2, 7)), lin_values(rng, db, (7, 5))
    want, ref, mag = oracle(np.matmul, x, y, ieee=ieee_matmul)
    a = b2lazy.asarray(x, chunks=(2, 2, 3), blocks=(1, 1, 2))
    check(b2lazy.matmul(a, y).to_numpy(), want, ref, mag, f"{da} @ {db}")
    check((y[:, 0] @ a.mT).to_numpy(), *oracle(np.matmul, y[:, 0], np.swapaxes(x, -1, -2)))
    e = np.zeros((3, 0), da), np.zeros((0, 4), db)
    check(b2lazy.matmul(*e).to_numpy(), *oracle(np.matmul, *e), what=f"empty {da} @ {db}")


def test_matmul_small_values():
    x = np.arange(6).reshape(2, 3)
    y = np.arange(12).reshape(3, 4)
    assert_exact(b2lazy.matmul(x, y).to_numpy(), x @ y)
    assert_exact((b2lazy.asarray(x) @ np.arange(3)).to_numpy(), x @ np.arange(3))
    assert_exact((np.arange(2) @ b2lazy.asarray(x)).to_numpy(), np.arange(2) @ x)
    v = b2lazy.matmul(np.arange(3), np.arange(3))
    assert v.shape == () and v.to_numpy() == 5
    big = np.array([[100, 100]], np.int8)
    assert_exact(b2lazy.matmul(big, big.T).to_numpy(), big @ big.T)  # wraps: 20000 % 256
    t = np.array([[True, False], [False, False]])
    assert_exact(b2lazy.matmul(t, t).to_numpy(), t @ t)


# ----------------------------------------------------------------------------------------
# 2. tensordot
# ----------------------------------------------------------------------------------------
@st.composite
def tensordot_case(draw):
    """Shapes and axes: contracted lengths shared, random order / signs, int or pairs."""
    nc = draw(st.integers(0, 3), label="contracted")
    ra, rb = draw(st.integers(0, 2), label="free a"), draw(st.integers(0, 2), label="free b")
    cl = [draw(dim(6)) for _ in range(nc)]
    fa, fb = [draw(dim(5)) for _ in range(ra)], [draw(dim(5)) for _ in range(rb)]
    if draw(st.booleans(), label="int axes"):
        sa, sb = tuple(fa + cl), tuple(cl + fb)
        return sa, sb, nc
    pa = draw(st.permutations(range(nc + ra)), label="a axis order")
    pb = draw(st.permutations(range(nc + rb)), label="b axis order")
    sa = tuple((cl + fa)[i] for i in pa)  # axis j of a holds (cl + fa)[pa[j]]
    sb = tuple((cl + fb)[i] for i in pb)
    xa = [list(pa).index(i) for i in range(nc)]
    xb = [list(pb).index(i) for i in range(nc)]
    xa = [j - len(sa) if draw(st.booleans()) else j for j in xa]
    xb = [j - len(sb) if draw(st.booleans()) else j for j in xb]
    if nc == 1 and draw(st.booleans()):
        return sa, sb, (xa[0], xb[0])  # ints instead of 1-element sequences
    return sa, sb, (draw(st.sampled_from([list, tuple]))(xa), tuple(xb))


@examples(120)
@given(data=st.data())
def test_random_tensordot(data, tmp_path_factory):
    sa, sb, axes = data.draw(tensordot_case(), label="case")
    da, db = data.draw(dtype_pair(), label="dtypes")
    x, y = values_pair(data.draw, seeded(data.draw), sa, sb, da, db)
    a = _operand(data.draw, x, tmp_path_factory, "a")
    b = _operand(data.draw, y, tmp_path_factory, "b")
    what = f"tensordot(a{sa}:{da}, b{sb}:{db}, axes={axes})"
    want, ref, mag = oracle(lambda p, q: np.tensordot(p, q, axes=axes), x, y, ieee=ieee_tensordot(axes))
    r = b2lazy.tensordot(a, b, axes=axes)
    assert r.dtype == want.dtype and r.shape == want.shape, f"{what}: lazy {r.shape}:{r.dtype}"
    check(evaluate_lin(data.draw, r, tmp_path_factory), want, ref, mag, what)


def test_inf_times_zero_is_nan_in_contractions():
    """IEEE in every term, as np.einsum (np.tensordot's BLAS path gives [0, 0] here)."""
    x, y = np.array([np.inf, 1.0]), np.array(0.0)
    assert_exact(b2lazy.tensordot(x, y, axes=0).to_numpy(), np.array([np.nan, 0.0]))
    assert_exact(b2lazy.outer(x, y).to_numpy(), np.array([[np.nan], [0.0]]))
    X, Y = np.array([[np.inf], [1.0]]), np.array([[0.0, 1.0]])
    assert_exact(
        b2lazy.matmul(X, b2lazy.asarray(Y, chunks=(1, 1))).to_numpy(), np.array([[np.nan, np.inf], [0.0, 1.0]])
    )
    assert np.isnan(b2lazy.matmul(np.array([np.inf, 1.0]), np.array([0.0, 2.0])).to_numpy())
    assert np.isnan(b2lazy.vecdot(np.array([np.inf, 1.0]), np.array([0.0, 2.0])).to_numpy())


# Regression: a row range of one chunk spanning several blocks, one of them all zeros.
# C-Blosc2 3.3.5's getitem returns wrong items for such a range
# (blosc2.asarray(np.array([0, 0, 5, 4]), chunks=(4,), blocks=(2,)).schunk.get_slice(1, 3)
# gives [5, 4]); the b2nd source therefore reads ranges one block at a time.
def test_row_range_across_an_all_zero_block():
    x, y = np.array([[0], [-4], [0]]), np.array([[3]])
    a = b2lazy.asarray(x, chunks=(3, 1), blocks=(2, 1))
    assert_exact((a @ y)[1:].to_numpy(), (x @ y)[1:], "(a @ y)[1:]")
    assert_exact(a[1:].to_numpy(), x[1:], "a[1:]")


def test_tensordot_default_axes():
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((3, 4, 5)), rng.standard_normal((4, 5, 2))
    check(
        b2lazy.tensordot(b2lazy.asarray(x, chunks=(2, 3, 2)), y).to_numpy(), *oracle(np.tensordot, x, y), what="axes=2"
    )


# ----------------------------------------------------------------------------------------
# 3. vecdot, outer, permutations
# ----------------------------------------------------------------------------------------
@st.composite
def vecdot_case(draw):
    nd = draw(st.integers(1, 4), label="ndim")
    cap = {1: 30, 2: 10, 3: 6, 4: 4}[nd]
    full = tuple(draw(dim(cap)) for _ in range(nd))
    sa, sb = full, full
    # one operand may drop leading axes and set some lengths to 1 (broadcast)
    which = draw(st.sampled_from(["none", "a", "b"]), label="broadcast operand")
    axis = draw(st.integers(-nd, nd - 1), label="axis")
    d = axis % nd
    if which != "none":
        # drop leading axes (the contracted one too, sometimes: then NumPy counts a
        # non-negative axis on the shorter operand differently, or raises)
        drop = draw(st.integers(0, d if draw(st.integers(0, 3)) else nd - 1), label="dropped leading axes")
        part = tuple(1 if i != d and draw(st.integers(0, 2)) == 0 else n for i, n in enumerate(full))[drop:]
        if which == "a":
            sa = part
        else:
            sb = part
        if drop and axis >= 0 and draw(st.booleans()):
            axis -= nd  # a negative axis counts from the end of both operands
    return sa, sb, axis


@examples(100)
@given(data=st.data())
def test_random_vecdot(data, tmp_path_factory):
    sa, sb, axis = data.draw(vecdot_case(), label="case")
    da, db = data.draw(dtype_pair(), label="dtypes")
    x, y = values_pair(data.draw, seeded(data.draw), sa, sb, da, db)
    a = make_source(data.draw, x, tmp_path_factory, kinds=KINDS, label="a")
    b = make_source(data.draw, y, tmp_path_factory, kinds=KINDS, label="b")
    what = f"vecdot(a{sa}:{da}, b{sb}:{db}, axis={axis})"
    try:
        want, ref, mag = oracle(lambda p, q: np.vecdot(p, q, axis=axis), x, y, ieee=ieee_vecdot(axis))
    except ValueError:  # a non-negative axis names each operand's own axis (NumPy)
        with pytest.raises(ValueError):
            b2lazy.vecdot(a, b, axis=axis).to_numpy()
        return
    r = b2lazy.vecdot(a, b, axis=axis)
    assert r.dtype == want.dtype and r.shape == want.shape, f"{what}: lazy {r.shape}:{r.dtype}"
    check(evaluate_lin(data.draw, r, tmp_path_factory), want, ref, mag, what)


def test_vecdot_nonnegative_axis_counts_on_each_operand():
    """A non-negative axis with operands of different ndim: NumPy's gufunc counts it on
    each operand separately (the contracted axes are moved last, the rest broadcast)."""
    x = np.arange(6.0).reshape(2, 3)
    y = np.arange(12.0).reshape(2, 2, 3)
    for p, q in ((x, y), (y, x)):
        check(
            b2lazy.vecdot(p, q, axis=0).to_numpy(),
            *oracle(lambda u, v: np.vecdot(u, v, axis=0), p, q),
            what=f"vecdot({p.shape}, {q.shape}, axis=0)",
        )
    x = np.arange(12.0).reshape(4, 3)
    y = np.arange(36.0).reshape(3, 4, 3)
    with pytest.raises(ValueError):
        np.vecdot(x, y, axis=1)
    with pytest.raises(ValueError, match=r"\(4, 3\).*\(3, 4, 3\)"):
        b2lazy.vecdot(x, y, axis=1).to_numpy()


@examples(50)
@given(data=st.data())
def test_random_outer(data, tmp_path_factory):
    sa = data.draw(st.sampled_from([(), (1,)]) | st.tuples(dim(20)) | st.tuples(dim(5), dim(5)), label="a shape")
    sb = data.draw(st.tuples(dim(20)) | st.tuples(dim(4), dim(3), dim(3)), label="b shape")
    da, db = data.draw(dtype_pair(), label="dtypes")
    x, y = values_pair(data.draw, seeded(data.draw), sa, sb, da, db)
    a = make_source(data.draw, x, tmp_path_factory, kinds=KINDS, label="a")
    b = make_source(data.draw, y, tmp_path_factory, kinds=KINDS, label="b")
    what = f"outer(a{sa}:{da}, b{sb}:{db})"
    want = np.outer(x, y)
    r = b2lazy.outer(a, b)
    assert r.dtype == want.dtype and r.shape == want.shape, f"{what}: lazy {r.shape}:{r.dtype}"
    # a single product per element: exact (IEEE multiplication is correctly rounded)
    assert_exact(evaluate_lin(data.draw, r, tmp_path_factory), want, what)


@st.composite
def permutation_case(draw):
    nd = draw(st.integers(0, 5), label="ndim")
    cap = {0: 1, 1: 30, 2: 12, 3: 7, 4: 5, 5: 4}[nd]
    shape = tuple(draw(dim(cap)) for _ in range(nd))
    perm = tuple(j - nd if draw(st.booleans()) else j for j in draw(st.permutations(range(nd))))
    return shape, perm


@examples(120)
@given(data=st.data())
def test_random_permutations(data, tmp_path_factory):
    shape, perm = data.draw(permutation_case(), label="case")
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    x = lin_values(seeded(data.draw), dtype, shape)
    a = make_source(data.draw, x, tmp_path_factory, kinds=KINDS)
    forms = ["permute_dims", "transpose(axes)", "transpose", ".T"]
    if len(shape) >= 2:
        forms += ["matrix_transpose", ".mT"]
    form = data.draw(st.sampled_from(forms), label="form")
    lazy, want = {
        "permute_dims": lambda: (b2lazy.permute_dims(a, perm), np.permute_dims(x, perm)),
        "transpose(axes)": lambda: (b2lazy.transpose(a, perm), np.transpose(x, perm)),
        "transpose": lambda: (b2lazy.transpose(a), np.transpose(x)),
        ".T": lambda: (a.T, x.T),
        "matrix_transpose": lambda: (b2lazy.matrix_transpose(a), np.matrix_transpose(x)),
        ".mT": lambda: (a.mT, x.mT),
    }[form]()
    what = f"{form} of {shape}:{dtype}, perm={perm}"
    assert lazy.shape == want.shape and lazy.dtype == want.dtype, what
    if data.draw(st.booleans(), label="index the result"):
        key = data.draw(basic_index(want.shape), label="index")
        lazy, want, what = lazy[key], want[key], f"{what}[{key}]"
    if data.draw(st.booleans(), label="permute again"):
        p2 = data.draw(st.permutations(range(want.ndim)), label="perm 2")
        lazy, want, what = b2lazy.permute_dims(lazy, p2), np.permute_dims(want, p2), f"permute_dims({what}, {p2})"
    assert_exact(evaluate_lin(data.draw, lazy, tmp_path_factory), np.asarray(want), what)


# ----------------------------------------------------------------------------------------
# 4. nesting: contractions of lazy expressions and expressions of contractions
# ----------------------------------------------------------------------------------------
class LazyOps:
    """The operations the templates use, for b2lazy arrays."""

    matmul = staticmethod(b2lazy.matmul)
    tensordot = staticmethod(b2lazy.tensordot)
    outer = staticmethod(b2lazy.outer)
    permute_dims = staticmethod(b2lazy.permute_dims)
    sin = staticmethod(b2lazy.sin)

    def __init__(self, draw):
        self.draw = draw  # picks among equivalent spellings

    def add(self, x, y):
        return x + y

    def sub(self, x, y):
        return x - y

    def mul(self, x, y):
        return x * y

    def sum(self, x, axis):
        return b2lazy.sum(x, axis=axis) if self.draw(st.booleans()) else x.sum(axis=axis)

    def vecdot(self, x, y, axis):
        return b2lazy.vecdot(x, y, axis=axis)

    def T(self, x):
        return x.T if self.draw(st.booleans()) else b2lazy.transpose(x)

    def mT(self, x):
        return x.mT if self.draw(st.booleans()) else b2lazy.matrix_transpose(x)

    def mm(self, x, y):
        return x @ y if self.draw(st.booleans()) else b2lazy.matmul(x, y)


class NumpyOps:
    """The same with NumPy (native dtypes: the dtype oracle and the integer oracle; on
    float64 copies: the float reference)."""

    matmul = staticmethod(np.matmul)
    mm = staticmethod(np.matmul)
    tensordot = staticmethod(np.tensordot)
    outer = staticmethod(np.outer)
    permute_dims = staticmethod(np.permute_dims)
    sin = staticmethod(np.sin)
    add = staticmethod(np.add)
    sub = staticmethod(np.subtract)
    mul = staticmethod(np.multiply)
    T = staticmethod(np.transpose)
    mT = staticmethod(np.matrix_transpose)

    @staticmethod
    def sum(x, axis):
        return np.sum(x, axis=axis)

    @staticmethod
    def vecdot(x, y, axis):
        return np.vecdot(x, y, axis=axis)


class MagOps(NumpyOps):
    """Magnitude bounds on |x| inputs: |x op y| <= mag(x) op' mag(y), scalars by their
    absolute value; sin by 1 (its few-ULP error is far below the tolerance) plus the bound
    of its argument (sin passes on its argument's error, at most)."""

    sub = staticmethod(np.add)

    @staticmethod
    def add(x, y):
        return np.abs(x) + np.abs(y)

    @staticmethod
    def mul(x, y):
        return np.abs(x) * np.abs(y)

    @staticmethod
    def sin(x):
        return 1 + x


def _slice_rows_cols(o, x):
    return x[1:, ::2]


# name -> (operands, function of (ops, operands dict), float only)
#   a (m, k)   b (k, n)   c (n, p)   d (n, k)   s (k, k)   e (q, n)   a3 (m, q, k)
#   A3 (B1, m, k)   B3 (B2, k, n)   with B1, B2 broadcastable
TEMPLATES = {
    "matmul(a + 1, b)": (lambda o, v: o.matmul(o.add(v["a"], 1), v["b"]), False),
    "matmul(sum(a3, axis=1), b)": (lambda o, v: o.matmul(o.sum(v["a3"], 1), v["b"]), False),
    "matmul(s, b) + b": (lambda o, v: o.add(o.matmul(v["s"], v["b"]), v["b"]), False),
    "matmul(a.T, a)": (lambda o, v: o.matmul(o.T(v["a"]), v["a"]), False),
    "(a @ b)[1:, ::2]": (lambda o, v: o.mm(v["a"], v["b"])[1:, ::2], False),
    "sum(a @ b, axis=0)": (lambda o, v: o.sum(o.mm(v["a"], v["b"]), 0), False),
    "matmul(a @ b, c)": (lambda o, v: o.matmul(o.mm(v["a"], v["b"]), v["c"]), False),
    "a @ (b @ c)": (lambda o, v: o.mm(v["a"], o.mm(v["b"], v["c"])), False),
    "matmul(sin(a), d.mT)": (lambda o, v: o.matmul(o.sin(v["a"]), o.mT(v["d"])), True),
    "sin(a @ b) * 2": (lambda o, v: o.mul(o.sin(o.mm(v["a"], v["b"])), 2), True),
    "tensordot(a3, b, ([2], [0])) * 3": (lambda o, v: o.mul(o.tensordot(v["a3"], v["b"], ([2], [0])), 3), False),
    "tensordot(a3 - 1, e, ([1], [0]))": (lambda o, v: o.tensordot(o.sub(v["a3"], 1), v["e"], ([1], [0])), False),
    "vecdot(a @ b, (a + 1) @ b, axis=0)": (
        lambda o, v: o.vecdot(o.mm(v["a"], v["b"]), o.mm(o.add(v["a"], 1), v["b"]), 0),
        False,
    ),
    "(a @ b).T @ a": (lambda o, v: o.mm(o.T(o.mm(v["a"], v["b"])), v["a"]), False),
    "permute_dims(a3, (2, 0, 1)) @ e": (lambda o, v: o.mm(o.permute_dims(v["a3"], (2, 0, 1)), v["e"]), False),
    "(A3 + 1) @ B3": (lambda o, v: o.mm(o.add(v["A3"], 1), v["B3"]), False),
    "A3 @ B3.mT.mT - 2": (lambda o, v: o.sub(o.mm(v["A3"], o.mT(o.mT(v["B3"]))), 2), False),
    "outer(sum(a, axis=1), sum(b, axis=0))": (lambda o, v: o.outer(o.sum(v["a"], 1), o.sum(v["b"], 0)), False),
    "a @ b - sum(a @ b, axis=0)": (lambda o, v: o.sub(o.mm(v["a"], v["b"]), o.sum(o.mm(v["a"], v["b"]), 0)), False),
    "s @ s + s.T": (lambda o, v: o.add(o.mm(v["s"], v["s"]), o.T(v["s"])), False),
    "a[::-1] @ b[:, ::2]": (lambda o, v: o.mm(v["a"][::-1], v["b"][:, ::2]), False),
    "a @ sum(b, axis=1)": (lambda o, v: o.matmul(v["a"], o.sum(v["b"], 1)), False),
    "sum(a, axis=0) @ a3.mT": (lambda o, v: o.matmul(o.sum(v["a"], 0), o.mT(v["a3"])), False),
    "a3.mT @ a3": (lambda o, v: o.mm(o.mT(v["a3"]), v["a3"]), False),
    "(d @ s) @ (s @ b)": (lambda o, v: o.mm(o.mm(v["d"], v["s"]), o.mm(v["s"], v["b"])), False),
    "matmul(a @ b * (a @ b), c)": (
        lambda o, v: o.matmul(o.mul(o.mm(v["a"], v["b"]), o.mm(v["a"], v["b"])), v["c"]),
        False,
    ),
}


class _Recorder(dict):
    def __init__(self, d):
        super().__init__(d)
        self.used = set()

    def __getitem__(self, k):
        self.used.add(k)
        return super().__getitem__(k)


NEST_DTYPES = [np.dtype(t) for t in ("float64", "float32", "int64", "int32", "int8", "uint16")]


@st.composite
def nest_shapes(draw):
    m, k, n, p, q = (draw(dim(10), label=c) for c in "mknpq")
    b1 = draw(dim(4), label="B")
    b2 = 1 if draw(st.booleans()) else b1
    if draw(st.booleans()):
        b1, b2 = b2, b1
    return {
        "a": (m, k),
        "b": (k, n),
        "c": (n, p),
        "d": (n, k),
        "s": (k, k),
        "e": (q, n),
        "a3": (m, q, k),
        "A3": (b1, m, k),
        "B3": (b2, k, n),
    }


@examples(120)
@given(data=st.data())
def test_nested_expressions(data, tmp_path_factory):
    dtype = data.draw(st.sampled_from(NEST_DTYPES), label="dtype")
    names = [n for n, (_, fo) in TEMPLATES.items() if dtype.kind == "f" or not fo]
    name = data.draw(st.sampled_from(names), label="template")
    fn = TEMPLATES[name][0]
    shapes_ = data.draw(nest_shapes(), label="shapes")
    rng = seeded(data.draw)
    # floats stay moderate (products of products), integers use the full range (wrap-around)
    vals = {k: lin_values(rng, dtype, s) for k, s in shapes_.items()}
    if dtype.kind == "f":
        vals = {k: (v / (1 + np.abs(v).max(initial=0) / 10)).astype(dtype) for k, v in vals.items()}
    used = _Recorder(vals)
    fn(NumpyOps, used)  # which operands the template reads: only those become random sources
    lazy_in = {
        k: make_source(data.draw, v, tmp_path_factory, kinds=KINDS, label=k) if k in used.used else None
        for k, v in vals.items()
    }
    with np.errstate(all="ignore"):
        want = np.asarray(fn(NumpyOps, vals))
        if want.dtype.kind == "f":
            ref = np.asarray(fn(NumpyOps, {k: v.astype(np.float64) for k, v in vals.items()}))
            mag = np.asarray(fn(MagOps, {k: np.abs(v.astype(np.float64)) for k, v in vals.items()}))
        else:
            ref = mag = None
    lazy = fn(LazyOps(data.draw), lazy_in)
    post = data.draw(st.sampled_from(["none", "index", "+1"]), label="then")
    if post == "index" and want.ndim:
        key = data.draw(basic_index(want.shape), label="index")
        lazy, want, name = lazy[key], want[key], f"({name})[{key}]"
        ref, mag = (None, None) if ref is None else (ref[key], mag[key])
    elif post == "+1":
        lazy, name = lazy + 1, f"({name}) + 1"
        with np.errstate(all="ignore"):
            want = want + want.dtype.type(1)
        ref, mag = (None, None) if ref is None else (ref + 1, mag + 1)
    what = f"{name} {dtype} {shapes_}"
    assert lazy.dtype == want.dtype and lazy.shape == want.shape, (
        f"{what}: lazy {lazy.shape}:{lazy.dtype}, NumPy {want.shape}:{want.dtype}"
    )
    check(lazy.to_numpy(), want, ref, mag, f"to_numpy(): {what}")
    if lazy.ndim == 0:
        check(lazy.compute().to_numpy(), want, ref, mag, f"compute(): {what}")
        return
    chunks, blocks = data.draw(chunking(lazy.shape), label="memory chunks/blocks")
    r = lazy.compute(chunks=chunks, blocks=blocks)
    check(r.to_numpy(), want, ref, mag, f"compute(chunks={chunks}, blocks={blocks}): {what}")
    chunks, blocks = data.draw(chunking(lazy.shape), label="disk chunks/blocks")
    path = tmp_path_factory.mktemp("nested") / "r.b2nd"
    lazy.compute(urlpath=path, chunks=chunks, blocks=blocks)
    check(b2lazy.open(path).to_numpy(), want, ref, mag, f"compute(urlpath, chunks={chunks}): {what}")


# ----------------------------------------------------------------------------------------
# 5. work counters (square operands on disk)
# ----------------------------------------------------------------------------------------
N = 512


@pytest.fixture(scope="module")
def square(tmp_path_factory):
    """a, b: (512, 512) on disk in (128, 128) chunks; a3: (512, 4, 512) in (128, 2, 128)."""
    rng = np.random.default_rng(11)
    d = tmp_path_factory.mktemp("counters")
    vals = {"a": rng.standard_normal((N, N)), "b": rng.standard_normal((N, N)), "a3": rng.standard_normal((N, 4, N))}
    chunks = {"a": ((128, 128), (32, 64)), "b": ((128, 128), (64, 32)), "a3": ((128, 2, 128), (32, 2, 32))}
    paths = {}
    for k, x in vals.items():
        paths[k] = str(d / f"{k}.b2nd")
        b2lazy.asarray(x).compute(urlpath=paths[k], chunks=chunks[k][0], blocks=chunks[k][1])
    return vals, paths


def _nchunks(shape, chunks):
    return math.prod(-(-s // c) for s, c in zip(shape, chunks))


# compute() as it chooses, or into chunks like the operands', or other user chunkings
OUTPUTS = {
    "default": {},
    "chunks=(128,128)": {"chunks": (128, 128), "blocks": (32, 32)},
    "chunks=(256,64)": {"chunks": (256, 64), "blocks": (64, 64)},
    "disk chunks=(128,128)": {"chunks": (128, 128), "blocks": (64, 64), "urlpath": True},
    "nthreads=1 chunks=(64,512)": {"chunks": (64, 512), "nthreads": 1},
    "chunks=(128,128) max_memory=1MB": {"chunks": (128, 128), "max_memory": 1 << 20},  # kept copy spills
}


def _compute(lazy, how, tmp_path):
    kw = dict(OUTPUTS[how])
    if kw.pop("urlpath", False):
        kw["urlpath"] = tmp_path / "out.b2nd"
    mm = kw.pop("max_memory", None)
    return within_budget(lambda m: lazy.compute(max_memory=m, **kw), mm)


def _opened(paths):
    srcs = {k: b2lazy.open(p) for k, p in paths.items()}
    for k, p in paths.items():
        assert srcs[k].urlpath == p  # the name stats count a source's decompressions under
    return srcs


@pytest.mark.parametrize("how", list(OUTPUTS))
def test_counter_matmul_of_expression(square, how, tmp_path):
    """matmul(a + 1, b): a + 1 is an expensive operand; each chunk of a is read once or
    twice, not once per output chunk."""
    vals, paths = square
    s = _opened(paths)
    r = _compute(b2lazy.matmul(s["a"] + 1, s["b"]), how, tmp_path)
    st_ = r.stats
    name_a, name_b = paths["a"], paths["b"]
    assert {name_a, name_b, "total"} <= set(st_["chunks_decompressed"]), st_
    assert st_["distinct_chunks_decompressed"][name_a] == _nchunks((N, N), (128, 128)), st_
    assert st_["distinct_chunks_decompressed"][name_b] == _nchunks((N, N), (128, 128)), st_
    assert st_["max_decompressions_per_chunk"][name_a] <= 2, st_
    check(r.to_numpy(), *oracle(lambda p, q: np.matmul(p + 1, q), vals["a"], vals["b"]), what=how)


@pytest.mark.parametrize("how", list(OUTPUTS))
def test_counter_matmul_of_reduction(square, how, tmp_path):
    vals, paths = square
    s = _opened(paths)
    r = _compute(b2lazy.matmul(b2lazy.sum(s["a3"], axis=1), s["b"]), how, tmp_path)
    st_ = r.stats
    name = paths["a3"]
    assert st_["distinct_chunks_decompressed"][name] == _nchunks((N, 4, N), (128, 2, 128)), st_
    assert st_["max_decompressions_per_chunk"][name] <= 2, st_
    check(r.to_numpy(), *oracle(lambda p, q: np.matmul(p.sum(axis=1), q), vals["a3"], vals["b"]), what=how)


@pytest.mark.parametrize("how", list(OUTPUTS))
def test_counter_matmul_of_slice(square, how, tmp_path):
    """matmul(a[:128], b) reads only the 4 chunks of a in its first 128 rows."""
    vals, paths = square
    s = _opened(paths)
    lazy = b2lazy.matmul(s["a"][:128], s["b"])
    kw = dict(OUTPUTS[how])
    if "chunks" in kw:  # the result has 128 rows
        kw["chunks"] = (min(128, kw["chunks"][0]), kw["chunks"][1])
        kw.pop("blocks", None)
    if kw.pop("urlpath", False):
        kw["urlpath"] = tmp_path / "out.b2nd"
    mm = kw.pop("max_memory", None)
    r = within_budget(lambda m: lazy.compute(max_memory=m, **kw), mm)
    st_ = r.stats
    assert st_["distinct_chunks_decompressed"][paths["a"]] == 4, st_
    assert st_["distinct_chunks_decompressed"][paths["b"]] == 16, st_
    check(r.to_numpy(), *oracle(lambda p, q: p[:128] @ q, vals["a"], vals["b"]), what=how)


def test_counter_plain_matmul_reads_each_chunk(square):
    vals, paths = square
    s = _opened(paths)
    r = (s["a"] @ s["b"]).compute()
    st_ = r.stats
    for k in ("a", "b"):
        assert st_["distinct_chunks_decompressed"][paths[k]] == 16, st_
        assert st_["max_decompressions_per_chunk"][paths[k]] <= 2, st_
    check(r.to_numpy(), *oracle(np.matmul, vals["a"], vals["b"]))


# ----------------------------------------------------------------------------------------
# large operands: K-panels, kept operands with sub-tiles, parallel splits
# ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def panel_sources(tmp_path_factory):
    """A long contraction (K = 5000) stored in chunks that do not divide it."""
    rng = np.random.default_rng(21)
    d = tmp_path_factory.mktemp("panels")
    out = {}
    for dt in ("float64", "float32", "int64", "int16"):
        x, y = lin_values(rng, dt, (48, 5000)), lin_values(rng, dt, (5000, 40))
        pa, pb = d / f"a_{dt}.b2nd", d / f"b_{dt}.b2nd"
        b2lazy.asarray(x).compute(urlpath=pa, chunks=(48, 700), blocks=(16, 100))
        b2lazy.asarray(y).compute(urlpath=pb, chunks=(700, 40), blocks=(100, 40))
        out[dt] = (x, y, pa, pb)
    return out


@pytest.mark.parametrize("dt", ["float64", "float32", "int64", "int16"])
@pytest.mark.parametrize("expr", ["a @ b", "(a + 1) @ b", "a @ (b * 2)", "a[:, ::-1] @ b[::-1]"])
@pytest.mark.parametrize("budget", [None, 8 << 20, 2 << 20])
@pytest.mark.parametrize("nthreads", [1, 2])
def test_long_contraction_panels(panel_sources, dt, expr, budget, nthreads):
    x, y, pa, pb = panel_sources[dt]
    a, b = b2lazy.open(pa), b2lazy.open(pb)
    f = {
        "a @ b": lambda p, q: p @ q,
        "(a + 1) @ b": lambda p, q: (p + 1) @ q,
        "a @ (b * 2)": lambda p, q: p @ (q * 2),
        "a[:, ::-1] @ b[::-1]": lambda p, q: p[:, ::-1] @ q[::-1],
    }[expr]
    got = within_budget(lambda mm: f(a, b).to_numpy(nthreads=nthreads, max_memory=mm), budget)
    check(got, *oracle(f, x, y), what=f"{expr} {dt} budget={budget}")
    r = within_budget(lambda mm: f(a, b).compute(chunks=(20, 16), max_memory=mm, nthreads=nthreads), budget)
    check(r.to_numpy(), *oracle(f, x, y), what=f"{expr} {dt} budget={budget} chunks=(20, 16)")


@pytest.mark.parametrize("dt", ["float64", "int32"])
@pytest.mark.parametrize("nthreads", [1, 2])
def test_kept_operand_sub_tiles(dt, nthreads):
    """Kept expensive operands with sub-tiles along the other side (> 256 rows / columns),
    batched, with both kinds of operand chunking."""
    rng = np.random.default_rng(3)
    cases = [
        ((600, 300), (300, 40), lambda p, q: p @ (q + 1)),
        ((40, 300), (300, 600), lambda p, q: (p + 1) @ q),
        ((3, 50, 100), (1, 100, 300), lambda p, q: (p - 1) @ q),
        ((2, 1, 300, 30), (4, 30, 70), lambda p, q: p @ (q * 3)),
        ((300, 70), (70, 300), lambda p, q: (p + 1) @ (q + 2)),
    ]
    for sa, sb, f in cases:
        x, y = lin_values(rng, dt, sa), lin_values(rng, dt, sb)
        want = oracle(f, x, y)
        a = b2lazy.asarray(x, chunks=tuple(max(1, n // 3) for n in sa))
        b = b2lazy.asarray(y, chunks=tuple(max(1, n // 2) for n in sb))
        out_chunks = tuple(max(1, n // 2) for n in want[0].shape[:-1]) + (7,)
        for budget in (None, 1 << 20):
            check(
                within_budget(lambda mm: f(a, b).to_numpy(nthreads=nthreads, max_memory=mm), budget),
                *want,
                what=f"{sa} {sb} {budget}",
            )
            check(
                within_budget(
                    lambda mm: f(x, b).compute(chunks=out_chunks, nthreads=nthreads, max_memory=mm), budget
                ).to_numpy(),
                *want,
                what=f"{sa} {sb} {budget} chunks={out_chunks}",
            )


@pytest.mark.parametrize("dt", ["float64", "float32", "int32"])
@pytest.mark.parametrize("form", ["x @ y", "x.T @ y", "x @ y.T", "(x + 1) @ y", "x.T @ y.T"])
def test_column_panels_read_in_place(dt, form, tmp_path):
    """Output tiles narrower than b (or shorter than a) read column panels of a matrix held
    in memory (a NumPy operand, or a stored operand the plan keeps dense) in place, at the
    matrix's row stride (BLAS's leading dimension)."""
    rng = np.random.default_rng(11)
    xs = lin_values(rng, dt, (300, 260))
    ys = lin_values(rng, dt, (260, 300))
    f = {
        "x @ y": lambda x, y: x @ y,
        "x.T @ y": lambda x, y: x[:260, :260].T @ y,
        "x @ y.T": lambda x, y: x @ y[:, :260].T,
        "(x + 1) @ y": lambda x, y: (x + 1) @ y,
        "x.T @ y.T": lambda x, y: x[:260, :260].T @ y[:, :260].T,
    }[form]
    want = oracle(f, xs, ys)
    b2lazy.asarray(xs).compute(urlpath=str(tmp_path / "x.b2nd"), chunks=(64, 260))
    b2lazy.asarray(ys).compute(urlpath=str(tmp_path / "y.b2nd"), chunks=(64, 300))
    stored = (b2lazy.open(tmp_path / "x.b2nd"), b2lazy.open(tmp_path / "y.b2nd"))
    for x, y in [(b2lazy.asarray(xs), b2lazy.asarray(ys)), stored]:
        for chunks in [(100, 48), (40, 300), (300, 30)]:
            out = f(x, y).compute(chunks=chunks[: want[0].ndim], nthreads=2)
            check(out.to_numpy(), *want, what=f"{form} {dt} chunks={chunks}")


@pytest.mark.parametrize("dt", ["int32", "float32", "uint8", "bool"])
def test_parallel_k_split(dt):
    """A small result over a long K: the workers sum K ranges and add the partials."""
    rng = np.random.default_rng(4)
    k = (1 << 22) + 3
    x, y = lin_values(rng, dt, (k,)), lin_values(rng, dt, (k,))
    a = b2lazy.asarray(x, chunks=(1 << 20,))
    for nthreads in (1, 2):
        check(b2lazy.matmul(a, y).to_numpy(nthreads=nthreads), *oracle(np.matmul, x, y), what=f"{nthreads}")
    xx, yy = x[: 1 << 21].reshape(1, -1), y[: 1 << 21].reshape(-1, 1)
    check(
        b2lazy.matmul(xx, b2lazy.asarray(yy, chunks=(1000, 1))).to_numpy(nthreads=2),
        *oracle(np.matmul, xx, yy),
        what="(1, K) @ (K, 1)",
    )


def test_parallel_row_split():
    rng = np.random.default_rng(6)
    for dt in ("float64", "int64"):
        x, y = lin_values(rng, dt, (200, 1500)), lin_values(rng, dt, (1500, 150))
        a = b2lazy.asarray(x, chunks=(64, 512))
        check((a @ y).to_numpy(nthreads=2), *oracle(np.matmul, x, y), what=dt)
        check(((a + 1) @ y).compute(nthreads=2).to_numpy(), *oracle(lambda p, q: (p + 1) @ q, x, y), what=dt)


def test_tensordot_several_k_axes_in_panels(tmp_path):
    rng = np.random.default_rng(8)
    x, y = rng.standard_normal((40, 60, 70)), rng.standard_normal((60, 70, 30))
    b2lazy.asarray(x).compute(urlpath=tmp_path / "x.b2nd", chunks=(40, 20, 70), blocks=(8, 10, 70))
    a = b2lazy.open(tmp_path / "x.b2nd")
    b = b2lazy.asarray(y, chunks=(25, 70, 30))
    for budget in (None, 4 << 20, 1 << 20):
        for axes in (2, ([1, 2], [0, 1]), ([2, 1], [1, 0]), ([-1, -2], [1, 0])):
            check(
                within_budget(lambda mm: b2lazy.tensordot(a, b, axes=axes).to_numpy(max_memory=mm), budget),
                *oracle(lambda p, q: np.tensordot(p, q, axes=axes), x, y),
                what=f"{axes} {budget}",
            )
        check(
            within_budget(lambda mm: b2lazy.tensordot(a + 1, b, axes=2).to_numpy(max_memory=mm), budget),
            *oracle(lambda p, q: np.tensordot(p + 1, q, axes=2), x, y),
            what=f"(a + 1) {budget}",
        )


# ----------------------------------------------------------------------------------------
# 6. bad input
# ----------------------------------------------------------------------------------------
def _z(*shape):
    return b2lazy.asarray(np.zeros(shape))


# (description, call, shapes the message must name)
BAD = [
    ("matmul inner", lambda: b2lazy.matmul(_z(2, 3), _z(4, 5)), [(2, 3), (4, 5)]),
    ("@ inner", lambda: _z(2, 3) @ _z(4, 5), [(2, 3), (4, 5)]),
    ("matmul 1-d inner", lambda: b2lazy.matmul(_z(3), _z(4)), [(3,), (4,)]),
    ("matmul 2-d @ 1-d", lambda: b2lazy.matmul(_z(2, 3), _z(4)), [(2, 3), (4,)]),
    ("matmul 1-d @ 2-d", lambda: b2lazy.matmul(_z(5), _z(4, 3)), [(5,), (4, 3)]),
    ("matmul empty inner", lambda: b2lazy.matmul(_z(0, 3), _z(0, 3)), [(0, 3), (0, 3)]),
    ("matmul batch", lambda: b2lazy.matmul(_z(2, 2, 3), _z(3, 3, 4)), [(2, 2, 3), (3, 3, 4)]),
    ("matmul batch 4-d", lambda: _z(2, 4, 2, 3) @ _z(3, 3, 4), [(2, 4, 2, 3), (3, 3, 4)]),
    ("matmul batch 0 vs 2", lambda: _z(0, 2, 3) @ _z(2, 3, 4), [(0, 2, 3), (2, 3, 4)]),
    ("matmul 0-d left", lambda: b2lazy.matmul(_z(), _z(3)), [(), (3,)]),
    ("matmul 0-d right", lambda: b2lazy.matmul(_z(3, 3), np.float64(2.0)), [(3, 3), ()]),
    ("matmul 0-d both", lambda: b2lazy.matmul(_z(), _z()), [()]),
    ("tensordot lengths", lambda: b2lazy.tensordot(_z(2, 3), _z(3, 2), axes=([0], [0, 1])), [(2, 3), (3, 2)]),
    ("tensordot repeated a", lambda: b2lazy.tensordot(_z(3, 3), _z(3, 3), axes=([0, 0], [0, 1])), [(3, 3)]),
    ("tensordot repeated b", lambda: b2lazy.tensordot(_z(3, 3), _z(3, 3), axes=([0, 1], [1, -1])), [(3, 3)]),
    ("tensordot repeated neg", lambda: b2lazy.tensordot(_z(3, 3), _z(3, 3), axes=([1, -1], [0, 1])), [(3, 3)]),
    ("tensordot range a", lambda: b2lazy.tensordot(_z(2, 3), _z(3, 2), axes=([2], [0])), [(2, 3), (3, 2)]),
    ("tensordot range neg", lambda: b2lazy.tensordot(_z(2, 3), _z(3, 2), axes=([-3], [0])), [(2, 3), (3, 2)]),
    ("tensordot range b", lambda: b2lazy.tensordot(_z(2, 3), _z(3, 2), axes=([1], [5])), [(2, 3), (3, 2)]),
    ("tensordot size", lambda: b2lazy.tensordot(_z(2, 3), _z(3, 2), axes=([0], [0])), [(2, 3), (3, 2)]),
    ("tensordot size 2", lambda: b2lazy.tensordot(_z(2, 3, 4), _z(3, 5), axes=2), [(2, 3, 4), (3, 5)]),
    ("tensordot int too big", lambda: b2lazy.tensordot(_z(2, 3), _z(3, 2), axes=3), [(2, 3), (3, 2)]),
    ("tensordot int negative", lambda: b2lazy.tensordot(_z(2, 3), _z(3, 2), axes=-1), [(2, 3), (3, 2)]),
    ("tensordot 0-d", lambda: b2lazy.tensordot(_z(), _z(3), axes=1), [(), (3,)]),
    ("vecdot 0-d", lambda: b2lazy.vecdot(_z(), _z()), [()]),
    ("vecdot 0-d and 1-d", lambda: b2lazy.vecdot(_z(3), _z()), [(3,), ()]),
    ("vecdot axis", lambda: b2lazy.vecdot(_z(2, 3), _z(2, 3), axis=2), [(2, 3)]),
    (
        "vecdot axis neg",
        lambda: b2lazy.vecdot(
            _z(2, 3),
            _z(
                3,
            ),
            axis=-2,
        ),
        [(2, 3), (3,)],
    ),
    ("vecdot size", lambda: b2lazy.vecdot(_z(2, 3), _z(2, 4)), [(2, 3), (2, 4)]),
    ("vecdot broadcast", lambda: b2lazy.vecdot(_z(2, 3), _z(4, 3)), [(2, 3), (4, 3)]),
    ("vecdot contracted 1 vs 3", lambda: b2lazy.vecdot(_z(2, 1), _z(2, 3)), [(2, 1), (2, 3)]),
    ("permute short", lambda: b2lazy.permute_dims(_z(2, 3), (0,)), [(2, 3)]),
    ("permute long", lambda: b2lazy.permute_dims(_z(2, 3), (0, 1, 2)), [(2, 3)]),
    ("permute repeated", lambda: b2lazy.permute_dims(_z(2, 3, 4), (0, 1, 1)), [(2, 3, 4)]),
    ("permute repeated neg", lambda: b2lazy.permute_dims(_z(2, 3, 4), (0, 1, -2)), [(2, 3, 4)]),
    ("permute range", lambda: b2lazy.permute_dims(_z(2, 3), (0, 2)), [(2, 3)]),
    ("permute range neg", lambda: b2lazy.permute_dims(_z(2, 3), (-3, 1)), [(2, 3)]),
    ("permute 0-d", lambda: b2lazy.permute_dims(_z(), (0,)), [()]),
    ("transpose axes", lambda: b2lazy.transpose(_z(2, 3), (1, 1)), [(2, 3)]),
    ("matrix_transpose 1-d", lambda: b2lazy.matrix_transpose(_z(3)), [(3,)]),
    ("matrix_transpose 0-d", lambda: b2lazy.matrix_transpose(_z()), [()]),
    (".mT 1-d", lambda: _z(4).mT, [(4,)]),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_input_raises_value_error_naming_shapes(case):
    _, call, shapes_ = case
    with pytest.raises(ValueError) as e:
        call().to_numpy()
    for s in shapes_:
        assert str(s) in str(e.value), f"{str(s)!r} not in {str(e.value)!r}"


BAD_TYPES = [
    ("tensordot axes str", lambda: b2lazy.tensordot(_z(2, 3), _z(3, 2), axes="ab")),
    ("tensordot axes triple", lambda: b2lazy.tensordot(_z(2, 3), _z(3, 2), axes=([1], [0], [0]))),
    ("tensordot axes float", lambda: b2lazy.tensordot(_z(2, 3), _z(3, 2), axes=1.0)),
    ("tensordot axes float seq", lambda: b2lazy.tensordot(_z(2, 3), _z(3, 2), axes=([1.0], [0]))),
    ("tensordot axes bool", lambda: b2lazy.tensordot(_z(2, 3), _z(3, 2), axes=True)),
    ("tensordot axes None", lambda: b2lazy.tensordot(_z(2, 3), _z(3, 2), axes=None)),
    ("vecdot axis float", lambda: b2lazy.vecdot(_z(2, 3), _z(2, 3), axis=1.0)),
    ("vecdot axis None", lambda: b2lazy.vecdot(_z(2, 3), _z(2, 3), axis=None)),
    ("permute axes None", lambda: b2lazy.permute_dims(_z(2, 3), None)),
    ("permute axes floats", lambda: b2lazy.permute_dims(_z(2, 3), (1.0, 0.0))),
    ("permute axes str", lambda: b2lazy.permute_dims(_z(2, 3), "10")),
    ("@ list", lambda: _z(2, 2) @ [[1.0, 2.0], [3.0, 4.0]]),
]


@pytest.mark.parametrize("case", BAD_TYPES, ids=[c[0] for c in BAD_TYPES])
def test_bad_argument_types(case):
    _, call = case
    with pytest.raises((TypeError, ValueError)):
        call().to_numpy()


def test_bad_input_in_subprocess_never_crashes():
    """The whole bad-input table in a fresh interpreter: errors, never an abort."""
    import subprocess
    import sys

    code = (
        "import sys; sys.path.insert(0, %r)\n"
        "import test_linalg as t\n"
        "n = 0\n"
        "for _, call, *_ in t.BAD + t.BAD_TYPES:\n"
        "    try:\n"
        "        call().to_numpy()\n"
        "    except (TypeError, ValueError):\n"
        "        n += 1\n"
        "print('OK', n)\n"
    ) % __import__("os").path.dirname(__file__)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and f"OK {len(BAD) + len(BAD_TYPES)}" in p.stdout, (
        p.returncode,
        p.stdout,
        p.stderr[-800:],
    )


def test_bug_bool_matmul_stores_true_not_counts():
    """A bool product is an or of ands: its bytes are 0 or 1 (they held the count of
    true products, so 0 + a @ c gave 2), in tiles and in the K-split of a small result."""
    rng = np.random.default_rng(4)
    for a, c in [
        (np.ones((1, 3), bool), np.array([[False], [True], [True]])),
        (rng.random((3, 1 << 21)) < 0.5, rng.random((1 << 21, 2)) < 0.5),
        (rng.random((300, 500)) < 0.5, rng.random((500, 7)) < 0.5),
    ]:
        r = b2lazy.matmul(b2lazy.asarray(a), b2lazy.asarray(c))
        assert r.to_numpy().view(np.uint8).max() <= 1
        np.testing.assert_array_equal((0 + r).to_numpy(), 0 + a @ c)
