"""Shared strategies and helpers for the b2lazy Python test suite.

NumPy (2.x) is the oracle.  The central piece is `ExprBuilder`, which draws a random
expression tree and builds, node by node, both the lazy b2lazy expression and the NumPy
reference value, together with what we know about its accuracy:

* exact nodes (integer/bool arithmetic, comparisons, IEEE-exact float arithmetic on exact
  inputs, ...) must match NumPy bit for bit (NaN positions included);
* a single transcendental applied to exact inputs must match within MAX_ULP ULP;
* compound expressions over approximate values carry an elementwise error scale `mag`:
  |b2lazy - numpy| <= rtol * mag (+ a tiny atol for denormals).

Discontinuous operations (comparisons, floor, casts to int, copysign, ...) are only
applied to exact inputs, so that approximation errors never flip a result.

Documented deviations from NumPy, which the tests assert as b2lazy's behaviour:
 (a) (none since float16 landed: math of bool/int8/uint8 is float16, as in NumPy.)
 (b) integer division / remainder by zero gives 0 (as NumPy does, with a warning).
     Integer `reciprocal(0)` is NumPy-implementation-defined (INT_MIN for int64); the
     oracle expects 0 there.  Integer pow never gets negative exponents.
 (c) Python int scalars out of range of the array dtype raise ValueError (NumPy:
     OverflowError) in arithmetic; comparisons with them are by value, as NumPy 2's.
     Scalars are drawn in range here and both are tested in test_errors.py.
 (d) transcendentals within MAX_ULP ULP.

Engine bugs found by these tests are fixed and kept as regression tests
(`test_bug_*`).
"""

from __future__ import annotations

import itertools
import operator
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

# netCDF4-python, when imported, points HDF5_PLUGIN_PATH at its own filter plugins for every
# libhdf5 in the process and for the rest of the session (only when the variable is unset):
# h5py then loads netCDF4's Blosc plugin instead of hdf5plugin's and refuses to write with it.
# Set (empty, as if unset) for the whole session, netCDF4 leaves it alone.
os.environ.setdefault("HDF5_PLUGIN_PATH", "")

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import b2lazy

# ----------------------------------------------------------------------------------------
# hypothesis profile: modest example counts, no deadline (compression timing varies)
# ----------------------------------------------------------------------------------------
settings.register_profile(
    "b2lazy",
    deadline=None,
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
    print_blob=True,
)
# CI runs a fixed set of examples so a landing never depends on luck; local runs explore.
settings.register_profile("ci", parent=settings.get_profile("b2lazy"), derandomize=True)
settings.load_profile(os.environ.get("B2LAZY_HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "b2lazy"))
# B2LAZY_EXAMPLES_SCALE=10 multiplies every test's max_examples (for a long bug hunt)
EXAMPLES_SCALE = float(os.environ.get("B2LAZY_EXAMPLES_SCALE", "1"))


def examples(n):
    """settings(max_examples=n), scaled by B2LAZY_EXAMPLES_SCALE."""
    return settings(max_examples=max(1, int(n * EXAMPLES_SCALE)))


# The installed b2lazy command of this interpreter's environment (a venv's own before one
# elsewhere on PATH), or None when it is not installed.
B2LAZY_COMMAND = shutil.which("b2lazy", path=os.path.dirname(sys.executable)) or shutil.which("b2lazy")


def run_python(code, timeout=120):
    """Run `code` in a fresh interpreter (for crash checks); returns CompletedProcess."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)


def b2np(lazy, via="to_numpy"):
    """Evaluate a b2lazy.Array to NumPy (`via`: "to_numpy" or "asarray")."""
    return lazy.to_numpy() if via == "to_numpy" else np.asarray(lazy)


# ----------------------------------------------------------------------------------------
# dtypes and operations
# ----------------------------------------------------------------------------------------
DTYPES = [
    np.dtype(n)
    for n in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64")
]
INT_DTYPES = [d for d in DTYPES if d.kind in "iu"]
FLOAT_DTYPES = [d for d in DTYPES if d.kind == "f"]
F16 = np.dtype("float16")

MAX_ULP = 4
RTOL = {F16: 2e-3, np.dtype("float32"): 1e-5, np.dtype("float64"): 1e-12}

NP_NAME = {
    "pow": "power",
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "atan2": "arctan2",
    "bitwise_invert": "invert",
    "bitwise_left_shift": "left_shift",
    "bitwise_right_shift": "right_shift",
}


def np_func(name):
    return getattr(np, NP_NAME.get(name, name))


def b2_func(name):
    return getattr(b2lazy, name)


# The registry's elementwise functions, so a function added there is tested here without a
# line: every one with a kernel but the complex parts (real, imag, conj, angle), which
# test_complex.py checks.
_ELEMENTWISE = [
    e
    for e in b2lazy._registry.ENTRIES.values()
    if e["family"] == "elementwise" and e["kernel"] is not None and e["name"] not in {"real", "imag", "conj", "angle"}
]
UNARY_OPS = [e["name"] for e in _ELEMENTWISE if len(e["params"]) == 1]
BINARY_OPS = [e["name"] for e in _ELEMENTWISE if len(e["params"]) == 2]
# Approximate (libm-grade) functions: compared within MAX_ULP when applied to exact inputs.
TRANSCENDENTAL = {
    "sqrt",
    "cbrt",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "atan2",
    "hypot",
    "logaddexp",
}  # + pow on floats
# Continuous operations that may take approximate inputs (error scale is propagated).
APPROX_OK = {"negative", "positive", "abs", "square", "add", "subtract", "multiply", "divide", "maximum", "minimum"}

BINARY_OPERATORS = {
    "add": operator.add,
    "subtract": operator.sub,
    "multiply": operator.mul,
    "divide": operator.truediv,
    "floor_divide": operator.floordiv,
    "remainder": operator.mod,
    "pow": operator.pow,
    "bitwise_and": operator.and_,
    "bitwise_or": operator.or_,
    "bitwise_xor": operator.xor,
    "bitwise_left_shift": operator.lshift,
    "bitwise_right_shift": operator.rshift,
    "less": operator.lt,
    "less_equal": operator.le,
    "greater": operator.gt,
    "greater_equal": operator.ge,
    "equal": operator.eq,
    "not_equal": operator.ne,
}
UNARY_OPERATORS = {"negative": operator.neg, "positive": operator.pos, "abs": abs, "bitwise_invert": operator.invert}


def _is_intlike(x):
    """bool/int array dtype, or a Python bool/int scalar."""
    if isinstance(x, (bool, int)):
        return True
    if isinstance(x, float):
        return False
    return np.dtype(x).kind in "biu"


def _dt(x):
    return x if isinstance(x, (bool, int, float)) else np.dtype(x)


def known_bug(name, args):
    """Reason string if (op, operand dtypes) hits a known b2lazy bug, else None. The random
    generator steers around such cases; every bug found so far is fixed, so none are
    listed (add one here with its own regression test if a new one turns up)."""
    return None


# ----------------------------------------------------------------------------------------
# comparisons
# ----------------------------------------------------------------------------------------
def _ordered_ints(a):
    """Map floats to integers whose difference is the ULP distance."""
    if a.dtype == np.float64:
        i = a.view(np.int64)
        return np.where(i < 0, np.int64(np.iinfo(np.int64).min) - i, i)
    if a.dtype == F16:
        i = a.view(np.int16).astype(np.int64)
        return np.where(i < 0, np.int64(np.iinfo(np.int16).min) - i, i)
    i = a.view(np.int32).astype(np.int64)
    return np.where(i < 0, np.int64(np.iinfo(np.int32).min) - i, i)


def ulp_distance(a, b):
    shape = np.shape(a)
    a = np.ascontiguousarray(a).reshape(-1)  # (ascontiguousarray makes 0-d arrays 1-d)
    b = np.ascontiguousarray(b).reshape(-1)
    oa, ob = _ordered_ints(a), _ordered_ints(b)
    ua, ub = oa.view(np.uint64), ob.view(np.uint64)
    return np.where(oa >= ob, ua - ub, ub - ua).reshape(shape)


def assert_same_nonfinite(got, ref, where=None, msg=""):
    if got.dtype.kind != "f":
        return
    m = np.ones(ref.shape, bool) if where is None else where
    nan_mismatch = m & (np.isnan(got) != np.isnan(ref))
    inf_mismatch = m & (np.isinf(got) | np.isinf(ref)) & ~(got == ref) & ~np.isnan(ref)
    bad = nan_mismatch | inf_mismatch
    if bad.any():
        idx = tuple(np.argwhere(bad)[0])
        raise AssertionError(
            f"{msg}\nnon-finite mismatch at {idx}: got {got[idx]!r}, expected {ref[idx]!r} ({int(bad.sum())} elements)"
        )


def assert_max_ulp(got, ref, maxulp=MAX_ULP, msg=""):
    assert got.dtype == ref.dtype, f"{msg}\ndtype {got.dtype} != {ref.dtype}"
    assert got.shape == ref.shape, f"{msg}\nshape {got.shape} != {ref.shape}"
    assert_same_nonfinite(got, ref, msg=msg)
    fin = np.isfinite(ref) & np.isfinite(got)
    d = ulp_distance(got, ref)
    bad = fin & (d > maxulp)
    if bad.any():
        idx = tuple(np.argwhere(bad)[0])
        raise AssertionError(
            f"{msg}\n{int(bad.sum())} elements differ by more than {maxulp} ULP;"
            f" first at {idx}: got {got[idx]!r}, expected {ref[idx]!r}"
            f" ({int(d[idx])} ULP)"
        )


def assert_exact(got, ref, msg=""):
    assert got.dtype == ref.dtype, f"{msg}\ndtype {got.dtype} != {ref.dtype}"
    assert got.shape == ref.shape, f"{msg}\nshape {got.shape} != {ref.shape}"
    if ref.dtype.kind == "f":
        same = (got == ref) | (np.isnan(got) & np.isnan(ref))
    else:
        same = got == ref
    if not np.all(same):
        idx = tuple(np.argwhere(~same)[0])
        raise AssertionError(
            f"{msg}\n{int((~same).sum())} of {ref.size} elements differ; first at"
            f" {idx}: got {got[idx]!r}, expected {ref[idx]!r}"
        )


def assert_lazy_equal(got, ref, what):
    """A lazy result has NumPy's shape and, evaluated, exactly its values."""
    assert got.shape == ref.shape, f"{what}: {got.shape} != {ref.shape}"
    assert_exact(b2np(got), ref, what)


def raises_naming(exc, call, words):
    """call() raises `exc` whose message contains every one of `words`."""
    with pytest.raises(exc) as e:
        call()
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def assert_close(got, ref, mag, rtol, msg=""):
    """|got - ref| <= rtol * mag where mag is finite; non-finite values must agree there."""
    assert got.dtype == ref.dtype, f"{msg}\ndtype {got.dtype} != {ref.dtype}"
    assert got.shape == ref.shape, f"{msg}\nshape {got.shape} != {ref.shape}"
    with np.errstate(all="ignore"):
        mag = np.broadcast_to(np.asarray(mag, np.float64), ref.shape)
        check = np.isfinite(mag)
        assert_same_nonfinite(got, ref, where=check, msg=msg)
        g = got.astype(np.float64)
        r = ref.astype(np.float64)
        tiny = 4 * np.finfo(ref.dtype).smallest_normal
        diff = np.abs(g - r)
        ok = (g == r) | (np.isnan(g) & np.isnan(r)) | (diff <= rtol * mag + tiny)
        bad = check & ~ok
    if bad.any():
        idx = tuple(np.argwhere(bad)[0])
        raise AssertionError(
            f"{msg}\n{int(bad.sum())} elements out of tolerance (rtol={rtol});"
            f" first at {idx}: got {got[idx]!r}, expected {ref[idx]!r},"
            f" allowed {rtol * mag[idx]:.3g}"
        )


# ----------------------------------------------------------------------------------------
# values, shapes, chunks
# ----------------------------------------------------------------------------------------
def random_values(rng, dtype, shape, special=True, lo=None, hi=None):
    """Random values of `dtype`; a mix of small, large and extreme/special values."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == np.bool_:
        return (rng.random(n) < 0.5).reshape(shape)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo_ = info.min if lo is None else lo
        hi_ = info.max if hi is None else hi
        small = rng.integers(max(lo_, -10), min(hi_, 10) + 1, n, dtype=np.int64).astype(dtype)
        if lo is not None or hi is not None:
            return small.reshape(shape)
        full = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        out = np.where(rng.random(n) < 0.6, small, full)
        if special and n:
            ext = np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1], dtype=dtype)
            mask = rng.random(n) < 0.08
            out[mask] = rng.choice(ext, int(mask.sum()))
        return out.reshape(shape)
    # floats
    kind = rng.random(n)
    vals = np.where(
        kind < 0.5,
        rng.normal(0, 3, n),
        np.where(
            kind < 0.75,
            rng.uniform(-1.2, 1.2, n),
            np.where(
                kind < 0.9, np.round(rng.normal(0, 20, n)), rng.normal(0, 1, n) * 10.0 ** rng.integers(-30, 30, n)
            ),
        ),
    )
    if lo is not None:
        vals = rng.uniform(lo, hi, n)
    out = vals.astype(dtype)
    if special and lo is None and n:
        fi = np.finfo(dtype)
        ext = np.array(
            [
                np.nan,
                np.inf,
                -np.inf,
                -0.0,
                0.0,
                fi.max,
                -fi.max,
                fi.smallest_normal,
                fi.smallest_subnormal,
                0.5,
                -0.5,
                1.5,
                2.5,
                1.0,
                -1.0,
            ],
            dtype=dtype,
        )
        mask = rng.random(n) < 0.08
        out[mask] = rng.choice(ext, int(mask.sum()))
    return out.reshape(shape)


@st.composite
def base_shapes(draw, min_ndim=1, max_ndim=4, allow_zero=True):
    ndim = draw(st.integers(min_ndim, max_ndim))
    maxdim = {0: 1, 1: 40, 2: 12, 3: 7, 4: 5}[ndim]
    shape = [draw(st.integers(1, maxdim)) for _ in range(ndim)]
    if allow_zero and ndim and draw(st.integers(0, 24)) == 0:
        shape[draw(st.integers(0, ndim - 1))] = 0
    return tuple(shape)


@st.composite
def chunks_blocks(draw, shape, source=False):
    chunks = tuple(draw(st.integers(1, max(1, s))) for s in shape)
    blocks = tuple(draw(st.integers(1, c)) for c in chunks)
    return chunks, blocks


def np_dtype_strategy(dtypes=DTYPES):
    return st.sampled_from(dtypes)


SOURCE_KINDS = ["numpy", "numpy_view", "mem", "disk", "sparse"]


_file_counter = itertools.count()


def make_source(draw, arr, kind, tmpdir):
    """Wrap NumPy array `arr` as a b2lazy source of the given kind. Returns (lazy, descr)."""
    if kind == "numpy":
        return b2lazy.asarray(arr), "numpy"
    if kind == "numpy_view":
        # a non-contiguous view with the same values: strided, reversed or Fortran order
        how = draw(st.sampled_from(["strided", "reversed", "fortran"]))
        if arr.ndim == 0:
            how = "copy"
        if how == "strided":
            big = np.zeros(arr.shape[:-1] + (arr.shape[-1] * 2 + 1,), arr.dtype)
            big[..., 1::2] = arr
            view = big[..., 1::2]
        elif how == "reversed":
            view = arr[::-1].copy()[::-1]
        elif how == "fortran":
            view = np.asfortranarray(arr)
        else:
            view = arr.copy()
        assert np.array_equal(view, arr, equal_nan=arr.dtype.kind in "fc")
        return b2lazy.asarray(view), f"numpy[{how}]"
    chunks, blocks = draw(chunks_blocks(arr.shape, source=True))
    if kind == "mem":
        return b2lazy.asarray(arr, chunks=chunks, blocks=blocks), f"mem{chunks}{blocks}"
    n = next(_file_counter)
    if kind == "disk":
        path = os.path.join(tmpdir, f"src{n}.b2nd")
        b2lazy.asarray(arr).compute(urlpath=path, chunks=chunks, blocks=blocks)
    else:
        path = os.path.join(tmpdir, f"src{n}")
        b2lazy.asarray(arr).compute(urlpath=path, chunks=chunks, blocks=blocks, contiguous=False)
    return b2lazy.open(path), f"{kind}{chunks}{blocks}"


# ----------------------------------------------------------------------------------------
# expression trees
# ----------------------------------------------------------------------------------------
@dataclass
class Node:
    lazy: object  # b2lazy.Array, or a Python scalar
    ref: object  # np.ndarray, or the same Python scalar
    desc: str
    exact: bool = True
    mag: object = 0.0  # error scale (float64 array/number), only for inexact nodes
    rtol: float = 0.0
    ulp: bool = False  # single transcendental over exact inputs
    scalar: bool = False
    depth: int = 0

    @property
    def dtype(self):
        return type(self.ref) if self.scalar else self.ref.dtype


def _finite_abs(x):
    with np.errstate(all="ignore"):
        x = np.asarray(x, dtype=np.float64)
        return np.where(np.isfinite(x), np.abs(x), 0.0)


def _abs64(x):
    with np.errstate(all="ignore"):
        return np.abs(np.asarray(x, dtype=np.float64))


class ExprBuilder:
    """Draws random expression trees; `draw` is hypothesis' data.draw."""

    def __init__(self, draw, tmpdir, kinds=SOURCE_KINDS, max_depth=4, use_scalars=True):
        self.draw = draw
        self.tmpdir = tmpdir
        self.kinds = list(kinds)
        self.max_depth = max_depth
        self.use_scalars = use_scalars
        self.base = draw(base_shapes())
        self.leaves: list[Node] = []
        self.rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        self.type_error_checks = 0

    # --- leaves -------------------------------------------------------------------------
    def leaf_shape(self):
        d = self.draw
        nd = d(st.integers(0, len(self.base)))
        if nd == 0 and d(st.booleans()):
            nd = len(self.base)  # 0-d operands: rarer
        shape = list(self.base[len(self.base) - nd :])
        for i in range(nd):
            if d(st.integers(0, 3)) == 0:
                shape[i] = 1
        return tuple(shape)

    def leaf(self, dtype=None, shape=None, lo=None, hi=None, fresh=False):
        d = self.draw
        if not fresh and self.leaves and dtype is None and d(st.integers(0, 5)) == 0:
            return self.leaves[d(st.integers(0, len(self.leaves) - 1))]  # reuse a source
        dtype = dtype if dtype is not None else d(np_dtype_strategy())
        shape = shape if shape is not None else self.leaf_shape()
        arr = random_values(self.rng, dtype, shape, lo=lo, hi=hi)
        kind = d(st.sampled_from(self.kinds))
        lazy, how = make_source(d, arr, kind, self.tmpdir)
        node = Node(lazy, arr, f"{how}<{dtype},{shape}>")
        if lo is None and hi is None:
            self.leaves.append(node)
        return node

    def scalar_for(self, other_dtype, kind=None, lo=None, hi=None):
        """A Python scalar whose value fits `other_dtype` (NEP 50 weak scalar)."""
        d = self.draw
        kind = kind or d(st.sampled_from(["bool", "int", "float"]))
        if kind == "bool":
            v = d(st.booleans())
        elif kind == "int":
            if lo is not None:
                v = d(st.integers(lo, hi))
            else:
                info = np.iinfo(other_dtype if np.dtype(other_dtype).kind in "iu" else np.int64)
                v = d(
                    st.one_of(
                        st.integers(-5, 5), st.integers(max(info.min, -(2**63)), min(info.max, 2**63 - 1))
                    ).filter(lambda x: info.min <= x <= info.max)
                )
        else:
            v = d(
                st.one_of(
                    st.floats(-10, 10, width=32),
                    st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([0.5, -0.0, 2.0, 1e-3]),
                )
            )
        return Node(v, v, repr(v), scalar=True)

    # --- applying an op -----------------------------------------------------------------
    def _np_apply(self, name, refs):
        f = np_func(name)
        with np.errstate(all="ignore"):
            out = np.asarray(f(*refs))
            if name == "reciprocal" and out.dtype.kind in "iu":
                out = np.where(np.asarray(refs[0]) == 0, 0, out).astype(out.dtype)
        return out

    def _b2_apply(self, name, lazies, use_op):
        if use_op and name in BINARY_OPERATORS and len(lazies) == 2:
            return BINARY_OPERATORS[name](*lazies)
        if use_op and name in UNARY_OPERATORS and len(lazies) == 1:
            return UNARY_OPERATORS[name](*lazies)
        return b2_func(name)(*lazies)

    def apply(self, name, args):
        """Node for name(*args), or None if NumPy rejects it (then b2lazy must too)."""
        refs = [a.ref for a in args]
        use_op = self.draw(st.booleans())
        if all(a.scalar for a in args):
            return None
        if known_bug(name, refs):
            return None
        lazies = [a.lazy for a in args]
        desc = f"{name}({', '.join(a.desc for a in args)})"
        try:
            ref = self._np_apply(name, refs)
        except TypeError:
            # NumPy has no loop for these dtypes (e.g. bool subtract, float bitwise ops)
            with pytest.raises(TypeError):
                self._b2_apply(name, lazies, use_op)
            self.type_error_checks += 1
            return None
        except OverflowError:
            # deviation (c): out-of-range Python int -> ValueError in b2lazy
            with pytest.raises(ValueError):
                self._b2_apply(name, lazies, use_op)
            return None
        lazy = self._b2_apply(name, lazies, use_op)
        assert isinstance(lazy, b2lazy.Array), desc
        assert lazy.dtype == ref.dtype, f"dtype of {desc}: b2lazy {lazy.dtype}, NumPy {ref.dtype}"
        assert lazy.shape == ref.shape, f"shape of {desc}: b2lazy {lazy.shape}, NumPy {ref.shape}"
        node = Node(lazy, ref, desc, depth=1 + max(a.depth for a in args))
        self._accuracy(node, name, args)
        return node

    def _accuracy(self, node, name, args):
        ref = node.ref
        exact_in = all(a.exact for a in args)
        transcendental = name in TRANSCENDENTAL or (name == "pow" and ref.dtype.kind == "f")
        if transcendental:
            assert exact_in, name
            node.exact = False
            node.ulp = True
            node.rtol = RTOL[ref.dtype]
            node.mag = _finite_abs(ref)
            if name == "logaddexp":
                # max(a, b) + log1p(exp(-|a - b|)): the error is absolute, relative to the
                # inputs' magnitude (NumPy itself is thousands of ULP off near a result of 0)
                node.ulp = False
                node.rtol = MAX_ULP * float(np.finfo(ref.dtype).eps)
                node.mag = node.mag + sum(_finite_abs(a.ref) for a in args)
            return
        if exact_in:
            return
        # continuous op over approximate inputs: propagate the error scale
        assert name in APPROX_OK, name
        node.exact = False
        node.rtol = max([a.rtol for a in args] + [RTOL.get(ref.dtype, 0.0)])
        ms = [np.asarray(a.mag, np.float64) if not a.exact else 0.0 for a in args]
        r = _finite_abs(ref)
        with np.errstate(all="ignore"):
            if name in ("negative", "positive", "abs"):
                node.mag = ms[0]
            elif name == "square":
                node.mag = 2 * _abs64(args[0].ref) * ms[0] + r
            elif name in ("add", "subtract"):
                node.mag = ms[0] + ms[1] + r
            elif name == "multiply":
                a, b = _abs64(args[0].ref), _abs64(args[1].ref)
                node.mag = ms[0] * b + ms[1] * a + ms[0] * ms[1] * node.rtol + r
            elif name == "divide":
                b = _abs64(args[1].ref)
                m = (ms[0] + r * ms[1]) / b + r
                # divisor indistinguishable from 0: anything goes
                node.mag = np.where(node.rtol * np.asarray(ms[1]) * 2 >= b, np.inf, m)
            elif name in ("maximum", "minimum"):
                node.mag = np.maximum(ms[0], ms[1])
            else:  # pragma: no cover
                raise AssertionError(name)

    # --- tree ---------------------------------------------------------------------------
    def build(self, depth=None):
        d = self.draw
        if depth is None:
            depth = d(st.integers(1, self.max_depth))
        if depth == 0 or d(st.integers(0, 4)) == 0:
            return self.leaf()
        for _ in range(6):
            kind = d(st.sampled_from(["unary", "binary", "binary", "binary", "where", "clip", "astype"]))
            node = getattr(self, f"_{kind}")(depth)
            if node is not None:
                return node
        return self.leaf()

    def _unary(self, depth):
        child = self.build(depth - 1)
        ops = UNARY_OPS if child.exact else sorted(APPROX_OK & set(UNARY_OPS))
        return self.apply(self.draw(st.sampled_from(ops)), [child])

    def _operand(self, depth, other_dtype, exact_only=False, array_only=False):
        d = self.draw
        choice = d(
            st.sampled_from(["tree", "leaf", "scalar"] if self.use_scalars and not array_only else ["tree", "leaf"])
        )
        if choice == "scalar":
            return self.scalar_for(other_dtype)
        if choice == "leaf":
            return self.leaf()
        node = self.build(depth - 1)
        if exact_only and not node.exact:
            return self.leaf()
        return node

    def _binary(self, depth):
        d = self.draw
        name = d(st.sampled_from(BINARY_OPS))
        left = self.build(depth - 1)
        if not left.exact and name not in APPROX_OK:
            left = self.leaf()
        ldt = left.dtype
        if name in ("bitwise_left_shift", "bitwise_right_shift") and _is_intlike(ldt):
            # counts in [0, bits of the result)
            if d(st.booleans()):
                right = self.scalar_for(ldt, "int", 0, 8 * np.dtype(ldt).itemsize - 1)
            else:
                cdt = d(st.sampled_from([t for t in INT_DTYPES]))
                res = np.result_type(ldt, cdt)
                bits = 8 * res.itemsize if res.kind in "iu" else 8
                right = self.leaf(cdt, self.leaf_shape(), 0, min(bits - 1, np.iinfo(cdt).max), fresh=True)
        elif name == "pow" and _is_intlike(ldt):
            # integer pow: non-negative exponents only (float exponents are fine)
            c = d(st.sampled_from(["int_scalar", "int_leaf", "other"]))
            if c == "int_scalar":
                right = self.scalar_for(ldt, "int", 0, 6)
            elif c == "int_leaf":
                edt = d(st.sampled_from(INT_DTYPES + [np.dtype(bool)]))
                right = self.leaf(edt, self.leaf_shape(), *((None, None) if edt == np.bool_ else (0, 6)), fresh=True)
            else:
                right = (
                    self.leaf(d(st.sampled_from(FLOAT_DTYPES)), self.leaf_shape(), fresh=True)
                    if d(st.booleans())
                    else self.scalar_for(ldt, "float")
                )
        else:
            exact_only = name not in APPROX_OK or name in TRANSCENDENTAL
            right = self._operand(depth, ldt, exact_only=exact_only)
            if (
                name == "pow"
                and _is_intlike(right.dtype)
                and not right.scalar
                and np.result_type(left.ref, right.ref).kind in "biu"
            ):
                return None  # would need non-negative integer exponents
            if name == "pow" and isinstance(right.ref, (bool, int)) and _is_intlike(ldt):
                return None
        if not left.exact and name in TRANSCENDENTAL | {"pow"}:
            return None
        args = [left, right]
        if d(st.booleans()) and name not in ("bitwise_left_shift", "bitwise_right_shift", "pow"):
            args.reverse()
        if name in ("bitwise_left_shift", "bitwise_right_shift", "pow") and args[0].scalar:
            return None
        return self.apply(name, args)

    def _where(self, depth):
        d = self.draw
        cond = self.build(depth - 1)
        if not cond.exact:
            cond = self.leaf(np.dtype(bool), self.leaf_shape(), fresh=True)
        if d(st.integers(0, 7)) == 0:  # both branches Python scalars
            x = self.scalar_for(np.int64)
            y = self.scalar_for(np.int64)
        else:
            x = self._operand(depth, None, array_only=True)
            y = self._operand(depth, x.dtype)
            if d(st.booleans()):
                x, y = y, x
        with np.errstate(all="ignore"):
            try:
                ref = np.asarray(np.where(cond.ref, x.ref, y.ref))
            except OverflowError:
                with pytest.raises(ValueError):
                    b2lazy.where(cond.lazy, x.lazy, y.lazy)
                return None
        lazy = b2lazy.where(cond.lazy, x.lazy, y.lazy)
        desc = f"where({cond.desc}, {x.desc}, {y.desc})"
        assert lazy.dtype == ref.dtype, f"dtype of {desc}: b2lazy {lazy.dtype}, NumPy {ref.dtype}"
        assert lazy.shape == ref.shape, f"shape of {desc}: b2lazy {lazy.shape}, NumPy {ref.shape}"
        node = Node(lazy, ref, desc, depth=1 + max(cond.depth, x.depth, y.depth))
        if not (x.exact and y.exact):
            node.exact = False
            node.rtol = max(x.rtol, y.rtol, RTOL.get(ref.dtype, 0.0))
            c = np.asarray(cond.ref).astype(bool)
            node.mag = np.where(
                c,
                np.asarray(x.mag if not x.exact else 0.0, np.float64),
                np.asarray(y.mag if not y.exact else 0.0, np.float64),
            )
            node.mag = node.mag + _finite_abs(ref)  # a rounding cast may be involved
        return node

    def _clip(self, depth):
        d = self.draw
        x = self.build(depth - 1)
        bounds = []
        for _ in range(2):
            c = d(st.sampled_from(["none", "scalar", "leaf"]))
            if c == "none":
                bounds.append(None)
            elif c == "scalar":
                bounds.append(self.scalar_for(x.dtype))
            else:
                bounds.append(self.leaf())
        lo, hi = bounds
        if lo is None and hi is None:
            return None
        refs = [None if b is None else b.ref for b in (lo, hi)]
        desc = f"clip({x.desc}, {None if lo is None else lo.desc}, {None if hi is None else hi.desc})"
        with np.errstate(all="ignore"):
            try:
                ref = np.asarray(np.clip(x.ref, *refs))
            except TypeError:
                return None
            except OverflowError:
                with pytest.raises(ValueError):
                    b2lazy.clip(x.lazy, None if lo is None else lo.lazy, None if hi is None else hi.lazy)
                return None
        lazy = b2lazy.clip(x.lazy, None if lo is None else lo.lazy, None if hi is None else hi.lazy)
        assert lazy.dtype == ref.dtype, f"dtype of {desc}: b2lazy {lazy.dtype}, NumPy {ref.dtype}"
        assert lazy.shape == ref.shape, f"shape of {desc}: b2lazy {lazy.shape}, NumPy {ref.shape}"
        node = Node(lazy, ref, desc, depth=1 + x.depth)
        if not x.exact:
            node.exact = False
            node.rtol = max(x.rtol, RTOL.get(ref.dtype, 0.0))
            node.mag = np.asarray(x.mag, np.float64) + _finite_abs(ref)
        return node

    def _astype(self, depth):
        d = self.draw
        x = self.build(depth - 1)
        if x.scalar:
            return None
        target = d(np_dtype_strategy())
        src = x.ref
        if src.dtype.kind == "f" and target.kind in "biu":
            if not x.exact:
                return None
            if target.kind in "iu":
                info = np.iinfo(target)
                with np.errstate(all="ignore"):
                    ok = np.isfinite(src) & (src > float(info.min) - 1) & (src < float(info.max))
                    # float(info.max) may round up to 2**bits: stay clearly inside
                    ok &= np.abs(src) < 2.0 ** (8 * target.itemsize - 2)
                if not ok.all():
                    return None
        if not x.exact and target.kind != "f":
            return None
        with np.errstate(all="ignore"):
            ref = src.astype(target)
        lazy = x.lazy.astype(target) if d(st.booleans()) else b2lazy.astype(x.lazy, target)
        desc = f"astype({x.desc}, {target})"
        assert lazy.dtype == ref.dtype, f"dtype of {desc}: b2lazy {lazy.dtype}, NumPy {ref.dtype}"
        assert lazy.shape == ref.shape
        node = Node(lazy, ref, desc, depth=1 + x.depth)
        if not x.exact:
            node.exact = False
            node.rtol = max(x.rtol, RTOL[target])
            node.mag = np.asarray(x.mag, np.float64) + _finite_abs(ref)
        return node


def check_node(got, node, what=""):
    """Compare an evaluated result to the reference of `node` with its accuracy class."""
    got = np.asarray(got)
    ref = np.asarray(node.ref)
    msg = f"{what}: {node.desc}"
    if node.exact:
        assert_exact(got, ref, msg)
    elif node.ulp:
        assert_max_ulp(got, ref, MAX_ULP, msg)
    else:
        assert_close(got, ref, node.mag, node.rtol, msg)


@pytest.fixture
def tmpdir_factory_fn():
    """Returns a function creating a fresh temporary directory (cleaned up at the end)."""
    dirs = []

    def make():
        td = tempfile.TemporaryDirectory(prefix="b2lazy-test-")
        dirs.append(td)
        return td.name

    yield make
    for td in dirs:
        td.cleanup()


@pytest.fixture(scope="module")
def client():
    """A dask.distributed LocalCluster of two one-thread worker processes, one per test
    module (tests/python/distributed)."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def evaluations(lazy, draw, tmpdir):
    """Evaluate `lazy` in several ways; yields (description, ndarray)."""
    how = draw(st.sampled_from(["asarray", "file", "dir", "chunks"]))
    if how == "chunks":
        chunks, blocks = draw(chunks_blocks(lazy.shape))
    yield "to_numpy()", b2np(lazy)
    r = lazy.compute()
    assert set(r.stats) >= {"chunks_decompressed", "output_chunks", "cache_hits", "cache_misses", "peak_scratch_bytes"}
    assert r.shape == lazy.shape and r.dtype == lazy.dtype
    yield "compute().to_numpy()", b2np(r)
    n = next(_file_counter)
    if how == "asarray":
        yield "np.asarray()", b2np(lazy, "asarray")
    elif how == "file":
        path = os.path.join(tmpdir, f"out{n}.b2nd")
        r = lazy.compute(urlpath=path)
        assert os.path.isfile(path)
        yield "compute(urlpath=file)", b2np(r)
        yield "open(compute(urlpath=file))", b2np(b2lazy.open(path))
    elif how == "dir":
        path = os.path.join(tmpdir, f"out{n}")
        lazy.compute(urlpath=path, contiguous=False)
        assert os.path.isdir(path)
        yield "open(compute(urlpath=dir, contiguous=False))", b2np(b2lazy.open(path))
    else:
        r = lazy.compute(chunks=chunks, blocks=blocks)
        yield f"compute(chunks={chunks}, blocks={blocks})", b2np(r)


_BUDGET_REFUSED = re.compile(
    r"max_memory of .* is too small for this evaluation: .*the smallest budget that works is (\d+) MiB"
)


def within_budget(call, max_memory):
    """call(max_memory), or — when that budget is refused as too small (issue #12:
    max_memory is a limit, refused before any work with the smallest budget that works) —
    call(that smallest budget), which must then work."""
    try:
        return call(max_memory)
    except ValueError as e:
        m = _BUDGET_REFUSED.search(str(e))
        if not m or max_memory is None:
            raise
        return call(int(m.group(1)) << 20)


# ----------------------------------------------------------------------------------------
# Real servers for remote data (tests/python/remote_servers.py), one each per session:
# nginx (HTTP + HTTPS with a self-signed certificate), moto's S3 server (plain, and strict:
# signatures and permissions checked), and a fault-injecting proxy in front of nginx.
# ----------------------------------------------------------------------------------------
sys.path.insert(0, os.path.dirname(__file__))
import remote_servers  # noqa: E402


@pytest.fixture(scope="session")
def nginx_server():
    yield from remote_servers.nginx_server_fixture()


@pytest.fixture(scope="session")
def moto_s3():
    yield from remote_servers.moto_server_fixture()


@pytest.fixture(scope="session")
def moto_s3_strict():
    yield from remote_servers.moto_server_fixture(strict=True)


@pytest.fixture(scope="session")
def fault_proxy(nginx_server):
    yield from remote_servers.fault_proxy_fixture(nginx_server)


@pytest.fixture
def faults(fault_proxy):
    """The fault proxy, back to passing everything through after the test."""
    fault_proxy.reset()
    yield fault_proxy
    fault_proxy.reset()
