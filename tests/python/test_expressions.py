"""Expression strings (b2lazy.evaluate, parsed in C++ by src/expr): Python's precedence
against Python's own parser, every function of the expression table against the Python
API, the ways operands are given, and malformed input (the error type, the column and the
caret, close matches for unknown names), with crash checks in a subprocess.

The oracle of the precedence test is Python's `eval` of the same string on the NumPy
operands, here in the test only (the library never calls eval). Two rewrites of Python's
syntax tree make the oracle mean what b2lazy means: a comparison chain `a < b < c` is
`(a < b) & (b < c)` (Python's `and` of arrays raises), and `**`, `<<`, `>>` go through
guards that skip what NumPy leaves undefined (shift counts outside the bit width) or what
would make Python itself hang (`3 ** 3 ** 3 ** 3` on Python ints). Integer powers with
negative exponents are a documented deviation (b2lazy gives 0, NumPy raises): only checked
not to crash.
"""

from __future__ import annotations

import ast
import re
import warnings

import numpy as np
import pytest
from numpy.exceptions import AxisError
from hypothesis import assume, given
from hypothesis import strategies as st

import b2lazy
from conftest import assert_exact, b2np, examples, run_python

# The exceptions a user error may raise (never anything else, never a crash).
USER_ERRORS = (SyntaxError, NameError, TypeError, ValueError, IndexError, OverflowError, ZeroDivisionError)


# ----------------------------------------------------------------------------------------
# precedence: random flat token sequences against Python's parser and NumPy
# ----------------------------------------------------------------------------------------
BINOPS = ["+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>", "<", "<=", ">", ">=", "==", "!="]
UNOPS = ["-", "+", "~"]
LITERALS = ["0", "1", "2", "3", "0.5", "1.5", "2.0", "True", "False", "0x2", "1_0", ".5", "2e0"]
OPERAND_DTYPES = ["bool", "int8", "int32", "int64", "uint8", "float32", "float64"]


class Undefined(Exception):
    """The oracle reached something NumPy leaves undefined: the example is skipped."""


class Deviation(Exception):
    """A documented deviation from NumPy: b2lazy must only not crash."""


def _is_int(x):
    return isinstance(x, (bool, int, np.integer, np.bool_)) or (isinstance(x, np.ndarray) and x.dtype.kind in "biu")


def _guard_pow(x, y):
    if isinstance(x, (bool, int, float)) and isinstance(y, (bool, int, float)):  # Python's own **
        if isinstance(x, (bool, int)) and isinstance(y, (bool, int)) and abs(y) > 64 and abs(x) > 1:
            raise Undefined("a huge Python int")
        return x**y
    if _is_int(x) and _is_int(y) and not (isinstance(x, (bool, int)) and isinstance(y, (bool, int))):
        if np.any(np.asarray(y) < 0) and np.result_type(x, y).kind in "biu":
            raise Deviation("integer power with a negative exponent")
    # np.power, not ndarray.__pow__: NumPy's operator turns bool_array ** 2 into square
    # (int8) where np.power gives int64; b2lazy's ** is np.power.
    return np.power(x, y)


def _guard_shift(x, y, left):
    if _is_int(x) and _is_int(y):
        if isinstance(x, (bool, int)) and isinstance(y, (bool, int)):
            if y > 64:
                raise Undefined("a huge Python int")
        else:
            t = np.result_type(x, y)
            bits = 8 * t.itemsize if t.kind in "iu" else 8
            yy = np.asarray(y)
            if np.any(yy < 0) or np.any(yy >= bits):
                raise Undefined("shift count outside the bit width")
    return x << y if left else x >> y


class _Oracle(ast.NodeTransformer):
    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        operands = [node.left] + node.comparators
        parts = [
            ast.Compare(left=operands[k], ops=[op], comparators=[operands[k + 1]]) for k, op in enumerate(node.ops)
        ]
        out = parts[0]
        for p in parts[1:]:
            out = ast.BinOp(left=out, op=ast.BitAnd(), right=p)
        return out

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Pow):
            return ast.Call(func=ast.Name("_pow", ast.Load()), args=[node.left, node.right], keywords=[])
        if isinstance(node.op, (ast.LShift, ast.RShift)):
            return ast.Call(
                func=ast.Name("_shift", ast.Load()),
                args=[node.left, node.right, ast.Constant(isinstance(node.op, ast.LShift))],
                keywords=[],
            )
        return node


def oracle(text, env):
    """Python's own parse of `text`, evaluated on NumPy with b2lazy's meaning of chains."""
    tree = ast.fix_missing_locations(_Oracle().visit(ast.parse(text, mode="eval")))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's and the compiler's ("'int' object is not subscriptable")
        code = compile(tree, "<expression>", "eval")
        # as 0-d arrays, not NumPy scalars (whose methods differ: np.int64(0).mean(axis=-1) works)
        funcs = {name: (lambda f: lambda *args: np.asarray(f(*args)))(getattr(np, name)) for name in FUNCTIONS}
        return eval(code, {"_pow": _guard_pow, "_shift": _guard_shift, **funcs}, dict(env))  # noqa: S307


# postfix operations on a name or a parenthesized group (NumPy has them all)
# (not .sum(axis=-1): NumPy's sum accepts axis 0 / -1 on 0-d arrays, b2lazy's does not)
POSTFIX = [
    ".T",
    ".mT",
    "[::-1]",
    "[1:]",
    "[..., 0]",
    "[None]",
    ".sum()",
    ".mean(axis=-1)",
    ".astype('float32')",
    "[[0, 0]]",
    ".reshape(-1)",
]
# functions with NumPy's own result dtypes (the math functions of small ints differ: float16)
FUNCTIONS = {"maximum": 2, "minimum": 2, "where": 3, "abs": 1, "negative": 1, "square": 1}


@st.composite
def flat_expressions(draw, names, depth=0):
    """Operands and literals joined by random binary operators, with random unary
    prefixes, few parentheses, a few calls and postfix operations, and random spacing:
    precedence decides everything."""
    parts = []
    for k in range(draw(st.integers(1, 5))):
        if k:
            parts.append(draw(st.sampled_from(BINOPS)))
        parts.extend(draw(st.lists(st.sampled_from(UNOPS), max_size=2)))
        kind = draw(st.integers(0, 19)) if depth < 2 else 19
        if kind == 0:
            parts.append("(" + draw(flat_expressions(names, depth + 1)) + ")")
        elif kind == 1:
            fn = draw(st.sampled_from(sorted(FUNCTIONS)))
            args = [draw(flat_expressions(names, depth + 1)) for _ in range(FUNCTIONS[fn])]
            parts.append(f"{fn}({', '.join(args)})")
        else:
            parts.append(draw(st.sampled_from(names + LITERALS)))
        if (kind == 0 or parts[-1] in names) and draw(st.integers(0, 5)) == 0:
            parts[-1] += draw(st.sampled_from(POSTFIX))
    out = parts[0]
    for p in parts[1:]:
        out += draw(st.sampled_from(["", " "])) + p
    return out


def small_values(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "u":
        return rng.integers(0, 6, shape).astype(dtype)
    if dtype.kind == "i":
        return rng.integers(-3, 4, shape).astype(dtype)
    return (rng.integers(-12, 13, shape) / 4).astype(dtype)


def _approx(text, arrays):
    return "**" in text or "@" in text or ".sum" in text or ".mean" in text  # pow, BLAS, summation order


def check_against_python(text, env, skip=assume):
    """b2lazy.evaluate(text) against the oracle: same value and dtype, or both raise."""
    try:
        ref = oracle(text, env)
    except Undefined:
        skip(False)
    except Deviation:
        try:
            b2np(b2lazy.evaluate(text, env))
        except USER_ERRORS:
            pass
        return
    except (TypeError, ValueError, OverflowError, ZeroDivisionError, IndexError, AttributeError) as e:
        with pytest.raises(USER_ERRORS) as info:
            b2np(b2lazy.evaluate(text, env))
        # NumPy's type errors (bitwise on floats, ~ of a float, bool -) are TypeErrors too;
        # Python's `0 @ 0` is a TypeError, b2lazy's matmul of 0-d operands a ValueError (NumPy's)
        if isinstance(e, TypeError) and "for @" not in str(e):
            assert isinstance(info.value, TypeError), (text, e, info.value)
        return
    ref = np.asarray(ref)
    if ref.dtype.kind in "cO":  # complex or object (a Python int beyond uint64): b2lazy raises
        with pytest.raises(USER_ERRORS):
            b2np(b2lazy.evaluate(text, env))
        return
    got = b2np(b2lazy.evaluate(text, env))
    assert got.dtype == ref.dtype, f"{text}: dtype {got.dtype}, NumPy {ref.dtype}"
    assert got.shape == ref.shape, f"{text}: shape {got.shape}, NumPy {ref.shape}"
    if ref.dtype.kind == "f" and _approx(text, env):
        # float32 inside (a float32 pow promoted by an int operand afterwards): its ulps
        # (SLEEF's powf and NumPy's differ by one or two)
        f32 = ref.dtype == np.float32 or any(np.asarray(v).dtype == np.float32 for v in env.values())
        rtol = 1e-4 if f32 else 1e-10
        with np.errstate(all="ignore"):
            fin = np.isfinite(ref)
            scale = 1 + (np.abs(ref[fin]).max() if fin.any() else 0)
            ok = (got == ref) | (np.isnan(got) & np.isnan(ref)) | (np.abs(got - ref) <= rtol * scale)
        assert ok.all(), f"{text}:\n{got}\n!=\n{ref}"
    else:
        assert_exact(got, ref, text)


OPERAND_SHAPES = [(), (3,), (3, 3), (2, 3)]


@examples(400)
@given(data=st.data())
def test_precedence_against_python(data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    base = data.draw(st.sampled_from([(3,), (3, 3)]), label="shape")
    env = {}
    for name in ("a", "b", "c"):
        shape = data.draw(st.sampled_from([base, base, (), base[-1:]]), label=f"shape of {name}")
        env[name] = small_values(rng, data.draw(st.sampled_from(OPERAND_DTYPES), label=f"dtype of {name}"), shape)
    text = data.draw(flat_expressions(["a", "b", "c"]), label="expression")
    assume(text.count("**") <= 2)
    check_against_python(text, env)


@examples(200)
@given(data=st.data())
def test_round_trip_through_pythons_unparser(data):
    """Python's canonical spelling of an expression (ast.unparse: its own parentheses,
    spacing and literals) means the same to b2lazy as the original."""
    env = {
        "a": np.arange(9.0).reshape(3, 3) - 4,
        "b": np.arange(3, dtype=np.int32) - 1,
        "c": np.array([True, False, True]),
    }
    text = data.draw(flat_expressions(["a", "b", "c"]), label="expression")
    assume(text.count("**") <= 2)
    canonical = ast.unparse(ast.parse(text, mode="eval"))
    try:
        first = b2np(b2lazy.evaluate(text, env))
    except USER_ERRORS as e:
        with pytest.raises(type(e)):
            b2np(b2lazy.evaluate(canonical, env))
        return
    again = b2np(b2lazy.evaluate(canonical, env))
    assert_exact(again, first, f"{text!r} -> {canonical!r}")
    assert b2lazy._core.expression_names(canonical) == b2lazy._core.expression_names(text)


PRECEDENCE_CASES = [
    "a + b * c",
    "a * b + c",
    "-a ** 2",
    "a ** -b",
    "2 ** 3 ** 2",
    "-2 ** 2",
    "a - b - c",
    "a / b / c",
    "a // b * c",
    "a % b % c",
    "~a & b | c ^ a",
    "a | b & c",
    "a ^ b | c",
    "a << b + c",
    "a + b << c",
    "a & b == c",
    "a < b < c",
    "a < b == c > a",
    "a + b < c * a",
    "a @ b + c",
    "a + b @ c",
    "a @ b @ c",
    "-a @ b",
    "a ** b @ c",
    "(a + b) * c",
    "((a))",
    "+-~a",
    "a - -b",
    "a--b",
    "a**-b**c",
    "1 + 2 * 3",
    "2 ** -1",
    "a * (2 / 3)",
    "a + (True + True)",
    "1 < 2 < 3",
    "a < 2 < 4",
    "a < b < c < a",
    "~True + a",
    "a % -2",
    "a // -2",
    "7 // -2 + a",
    "-7 % 3 + a",
    "a >> 1 << 2",
]


@pytest.mark.parametrize("text", PRECEDENCE_CASES)
@pytest.mark.parametrize(
    "dtypes",
    [
        ("int64", "int64", "int64"),
        ("int8", "uint8", "int32"),
        ("float32", "float64", "float32"),
        ("bool", "int8", "float32"),
    ],
    ids="-".join,
)
def test_precedence_cases(text, dtypes):
    rng = np.random.default_rng(7)
    env = {
        n: np.abs(small_values(rng, d, (3, 3))) if d != "bool" else small_values(rng, d, (3, 3))
        for n, d in zip("abc", dtypes)
    }

    def skip(condition):
        if not condition:
            pytest.skip("undefined in NumPy for these values")

    check_against_python(text, env, skip)


def test_zero_d_boolean_index_in_a_subprocess():
    """It crashed the engine's getitem (found by the fuzzer through a[any(-22)])."""
    code = (
        "import numpy as np, b2lazy as bl\n"
        "x = np.arange(6.0).reshape(2, 3)\n"
        "assert bl.asarray(x)[np.array(True), 0].shape == (1, 3)\n"
        "assert bl.asarray(x)[np.array(True)].shape == (1, 2, 3)\n"
        "assert bl.evaluate('x[any(-22)]', x=x).to_numpy().shape == (1, 2, 3)\n"
        "assert bl.evaluate('x[x.sum() < 0, 0]', x=x).to_numpy().shape == (0, 3)\n"
    )
    p = run_python(code)
    assert p.returncode == 0, (p.returncode, p.stderr[-500:])


def test_comparison_with_out_of_range_int():
    """It raised (found by the precedence test); NumPy 2 compares by value."""
    b = np.array([0, 1, 2], np.uint8)
    for text in ("b < -1", "b == 300", "-1 < b", "b != 256"):
        assert_exact(b2np(b2lazy.evaluate(text, b=b)), eval(text))  # noqa: S307 (the oracle)


def test_bool_matmul_is_normalised():
    """A bool matmul stored the count of true products in the bool byte, so 0 + a @ c gave 2
    (found by the precedence test)."""
    a = np.array([[True, True, True]])
    c = np.array([[False], [True], [True]])
    assert_exact(b2np(b2lazy.evaluate("0 + a @ c", a=a, c=c)), 0 + a @ c)


# ----------------------------------------------------------------------------------------
# every function of the expression table, against the Python API
# ----------------------------------------------------------------------------------------
_rng = np.random.default_rng(20260)
ENV = {
    "x": _rng.uniform(0.1, 0.9, (3, 4)),  # in the domain of asin, acos, atanh, log ...
    "y": _rng.uniform(1.1, 3.0, (3, 4)),  # > 1 (acosh)
    "i": _rng.integers(-5, 6, (3, 4)),  # int64
    "j": _rng.integers(0, 4, (3, 4)),  # shift counts
    "m": _rng.random((3, 4)) < 0.5,  # bool
    "v": _rng.uniform(-1, 1, 4),
    "w": _rng.uniform(-1, 1, 4),
    "s3": _rng.uniform(-1, 1, (2, 3, 4)),
    "f32": _rng.uniform(-2, 2, (3, 4)).astype(np.float32),
}
ENV["m"][0, 0] = True  # nonzero(m) is never empty


class _Lazy:
    """The operands as b2lazy Arrays, by attribute: o.x, o.i, ..."""

    def __init__(self):
        self.__dict__.update({k: b2lazy.asarray(v) for k, v in ENV.items()})


bl = b2lazy
ARGS_OF = {
    "acosh": "y",
    "arccosh": "y",
    "bitwise_invert": "i",
    "bitwise_not": "i",
    "invert": "i",
    "logical_not": "m",
    "bitwise_and": "i, j",
    "bitwise_or": "i, j",
    "bitwise_xor": "i, j",
    "bitwise_left_shift": "i, j",
    "left_shift": "i, j",
    "bitwise_right_shift": "i, j",
    "right_shift": "i, j",
    "logical_and": "m, m",
    "logical_or": "m, x > 0.5",
    "logical_xor": "m, m",
}


def _elementwise_cases():
    cases = []
    aliases = {}
    arity_of = {}
    for entry in b2lazy._core.functions():
        if entry["family"] == "elementwise" and entry["kernel"] is not None:
            for name in [entry["name"], *entry["aliases"]]:
                aliases[name] = entry["name"]
                arity_of[name] = len(entry["params"])
    for name, base in sorted(aliases.items()):
        arity = arity_of[name]
        args = ARGS_OF.get(name, ARGS_OF.get(base, "x" if arity == 1 else "x, y"))
        names = [a.strip() for a in args.split(",")]

        def api(o, name=name, names=names):
            ops = [o.x > 0.5 if n == "x > 0.5" else getattr(o, n) for n in names]
            return getattr(b2lazy, name)(*ops)

        cases.append((f"{name}({args})", api))
    return cases


TABLE = (
    _elementwise_cases()
    + [
        # Python numbers among the arguments stay weak (NumPy 2)
        ("add(f32, 2)", lambda o: bl.add(o.f32, 2)),
        ("pow(x, 2.5)", lambda o: bl.pow(o.x, 2.5)),
        ("maximum(i, 0)", lambda o: bl.maximum(o.i, 0)),
        ("bitwise_left_shift(i, 2)", lambda o: bl.bitwise_left_shift(o.i, 2)),
        ("equal(i, [0, 1, 2, 3])", lambda o: bl.equal(o.i, np.array([0, 1, 2, 3]))),
        ("where(m, x, y)", lambda o: bl.where(o.m, o.x, o.y)),
        ("where(x > 0.5, x, 0)", lambda o: bl.where(o.x > 0.5, o.x, 0)),
        ("where(m)[1]", lambda o: bl.where(o.m)[1]),
        ("clip(x, 0.2, 0.6)", lambda o: bl.clip(o.x, 0.2, 0.6)),
        ("clip(x, min=0.3)", lambda o: bl.clip(o.x, min=0.3)),
        ("clip(i, -1, max=2)", lambda o: bl.clip(o.i, -1, 2)),
        ("x.clip(max=0.5)", lambda o: bl.clip(o.x, max=0.5)),
        ("astype(x, 'float32')", lambda o: bl.astype(o.x, "float32")),
        ("astype(i, float32)", lambda o: bl.astype(o.i, np.float32)),
        ("astype(x * 10, 'int8', copy=False)", lambda o: bl.astype(o.x * 10, np.int8, copy=False)),
        ("x.astype('int16')", lambda o: o.x.astype("int16")),
        ('i.astype("bool")', lambda o: o.i.astype(bool)),
        ("real(x)", lambda o: bl.real(o.x)),
        ("imag(i)", lambda o: bl.imag(o.i)),
        ("conj(x)", lambda o: bl.conj(o.x)),
        ("conjugate(f32)", lambda o: bl.conjugate(o.f32)),
        # reductions
        ("sum(x)", lambda o: bl.sum(o.x)),
        ("sum(x, axis=0)", lambda o: bl.sum(o.x, axis=0)),
        ("sum(s3, axis=(0, 2), keepdims=True)", lambda o: bl.sum(o.s3, axis=(0, 2), keepdims=True)),
        ("sum(i, dtype='float32')", lambda o: bl.sum(o.i, dtype="float32")),
        ("x.sum(axis=0)", lambda o: o.x.sum(axis=0)),
        ("x.sum(-1)", lambda o: o.x.sum(-1)),
        ("prod(x, axis=1)", lambda o: bl.prod(o.x, axis=1)),
        ("i.prod(dtype=float64)", lambda o: o.i.prod(dtype="float64")),
        ("min(x, axis=1)", lambda o: bl.min(o.x, axis=1)),
        ("x.min()", lambda o: o.x.min()),
        ("max(i, axis=0, keepdims=True)", lambda o: bl.max(o.i, axis=0, keepdims=True)),
        ("s3.max(axis=[0, 1])", lambda o: o.s3.max(axis=(0, 1))),
        ("amin(x, axis=0)", lambda o: bl.amin(o.x, axis=0)),
        ("amax(s3)", lambda o: bl.amax(o.s3)),
        ("mean(x)", lambda o: bl.mean(o.x)),
        ("mean(i, axis=1, dtype=float32)", lambda o: bl.mean(o.i, axis=1, dtype="float32")),
        ("x.mean(axis=0, keepdims=True)", lambda o: o.x.mean(axis=0, keepdims=True)),
        ("var(x)", lambda o: bl.var(o.x)),
        ("var(x, axis=0, correction=1)", lambda o: bl.var(o.x, axis=0, correction=1)),
        ("var(s3, ddof=1.5, axis=(1, 2))", lambda o: bl.var(o.s3, axis=(1, 2), ddof=1.5)),
        ("std(x, ddof=1)", lambda o: bl.std(o.x, ddof=1)),
        ("x.std(axis=1, correction=0, keepdims=True)", lambda o: o.x.std(axis=1, correction=0, keepdims=True)),
        ("any(m)", lambda o: bl.any(o.m)),
        ("any(m, axis=1)", lambda o: bl.any(o.m, axis=1)),
        ("m.any(axis=0, keepdims=True)", lambda o: o.m.any(axis=0, keepdims=True)),
        ("all(m, axis=0)", lambda o: bl.all(o.m, axis=0)),
        ("(x > 0).all()", lambda o: (o.x > 0).all()),
        ("count_nonzero(m)", lambda o: bl.count_nonzero(o.m)),
        ("count_nonzero(i, axis=1, keepdims=True)", lambda o: bl.count_nonzero(o.i, axis=1, keepdims=True)),
        ("argmin(x)", lambda o: bl.argmin(o.x)),
        ("argmin(x, axis=1, keepdims=True)", lambda o: bl.argmin(o.x, axis=1, keepdims=True)),
        ("argmax(s3, axis=2)", lambda o: bl.argmax(o.s3, axis=2)),
        ("x.argmax(axis=0)", lambda o: o.x.argmax(axis=0)),
        # scans
        ("nansum(x, axis=1)", lambda o: bl.nansum(o.x, axis=1)),
        ("nanprod(i, axis=0, dtype='float64')", lambda o: bl.nanprod(o.i, axis=0, dtype="float64")),
        ("nanmin(s3, axis=(0, 2))", lambda o: bl.nanmin(o.s3, axis=(0, 2))),
        ("nanmax(x, keepdims=True)", lambda o: bl.nanmax(o.x, keepdims=True)),
        ("ptp(x, axis=1)", lambda o: bl.ptp(o.x, axis=1)),
        ("nanmean(f32, axis=0)", lambda o: bl.nanmean(o.f32, axis=0)),
        ("nanvar(x, axis=1, ddof=1)", lambda o: bl.nanvar(o.x, axis=1, ddof=1)),
        ("nanstd(s3, correction=0.5)", lambda o: bl.nanstd(o.s3, correction=0.5)),
        ("nanargmin(x, axis=0)", lambda o: bl.nanargmin(o.x, axis=0)),
        ("nanargmax(s3)", lambda o: bl.nanargmax(o.s3)),
        ("logsumexp(s3, axis=1)", lambda o: bl.logsumexp(o.s3, axis=1)),
        ("median(x, axis=0)", lambda o: bl.median(o.x, axis=0)),
        ("quantile(s3, 0.3, axis=2, method='nearest')", lambda o: bl.quantile(o.s3, 0.3, axis=2, method="nearest")),
        ("percentile(i, 75, keepdims=True)", lambda o: bl.percentile(o.i, 75, keepdims=True)),
        ("cumsum(x)", lambda o: bl.cumsum(o.x)),
        ("cumsum(i, axis=1)", lambda o: bl.cumsum(o.i, axis=1)),
        ("x.cumsum(axis=0, dtype='float32')", lambda o: o.x.cumsum(axis=0, dtype="float32")),
        ("cumprod(x, axis=1)", lambda o: bl.cumprod(o.x, axis=1)),
        ("i.cumprod()", lambda o: o.i.cumprod()),
        ("cumulative_sum(v)", lambda o: bl.cumulative_sum(o.v)),
        (
            "cumulative_sum(x, axis=1, include_initial=True)",
            lambda o: bl.cumulative_sum(o.x, axis=1, include_initial=True),
        ),
        ("cumulative_sum(i, axis=0, dtype='int32')", lambda o: bl.cumulative_sum(o.i, axis=0, dtype="int32")),
        ("cumulative_prod(x, axis=0)", lambda o: bl.cumulative_prod(o.x, axis=0)),
        (
            "cumulative_prod(v, include_initial=True, dtype=float32)",
            lambda o: bl.cumulative_prod(o.v, include_initial=True, dtype="float32"),
        ),
        # linear algebra
        ("matmul(x, y.T)", lambda o: bl.matmul(o.x, o.y.T)),
        ("matmul(v, w)", lambda o: bl.matmul(o.v, o.w)),
        ("x @ v", lambda o: o.x @ o.v),
        ("s3 @ x.mT", lambda o: o.s3 @ o.x.mT),
        ("tensordot(x, y)", lambda o: bl.tensordot(o.x, o.y)),
        ("tensordot(x, y.T, axes=1)", lambda o: bl.tensordot(o.x, o.y.T, axes=1)),
        ("tensordot(s3, x, axes=([1, 2], [0, 1]))", lambda o: bl.tensordot(o.s3, o.x, axes=([1, 2], [0, 1]))),
        ("tensordot(s3, v, axes=((2,), (0,)))", lambda o: bl.tensordot(o.s3, o.v, axes=((2,), (0,)))),
        ("vecdot(x, y)", lambda o: bl.vecdot(o.x, o.y)),
        ("vecdot(x, y, axis=0)", lambda o: bl.vecdot(o.x, o.y, axis=0)),
        ("outer(v, w)", lambda o: bl.outer(o.v, o.w)),
        ("permute_dims(s3, (2, 0, 1))", lambda o: bl.permute_dims(o.s3, (2, 0, 1))),
        ("permute_dims(s3, axes=[1, 0, 2])", lambda o: bl.permute_dims(o.s3, (1, 0, 2))),
        ("transpose(s3)", lambda o: bl.transpose(o.s3)),
        ("transpose(x, axes=(1, 0))", lambda o: bl.transpose(o.x, (1, 0))),
        ("s3.transpose(1, 0, 2)", lambda o: bl.transpose(o.s3, (1, 0, 2))),
        ("s3.transpose((2, 1, 0))", lambda o: bl.transpose(o.s3, (2, 1, 0))),
        ("matrix_transpose(s3)", lambda o: bl.matrix_transpose(o.s3)),
        ("x.T", lambda o: o.x.T),
        ("s3.T", lambda o: o.s3.T),
        ("s3.mT", lambda o: o.s3.mT),
        ("(x + 1).T.mT", lambda o: (o.x + 1).T.mT),
        # shape functions
        ("take(x, [2, 0, 2], axis=1)", lambda o: bl.take(o.x, [2, 0, 2], axis=1)),
        ("take(x, [[0, 1], [11, 11]])", lambda o: bl.take(o.x, [[0, 1], [11, 11]])),
        ("take(x, j, axis=1)", lambda o: bl.take(o.x, o.j, axis=1)),
        ("x.take([1, -1], axis=0)", lambda o: bl.take(o.x, [1, -1], axis=0)),
        (
            "take_along_axis(x, [[0], [3], [2]], axis=1)",
            lambda o: bl.take_along_axis(o.x, np.array([[0], [3], [2]]), axis=1),
        ),
        ("take_along_axis(x, j)", lambda o: bl.take_along_axis(o.x, o.j)),
        ("take_along_axis(x, [3, 0], axis=None)", lambda o: bl.take_along_axis(o.x, np.array([3, 0]), axis=None)),
        ("nonzero(m)[0]", lambda o: bl.nonzero(o.m)[0]),
        ("m.nonzero()[-1]", lambda o: o.m.nonzero()[-1]),
        ("x[nonzero(m)]", lambda o: o.x[bl.nonzero(o.m)]),
        ("expand_dims(x, axis=1)", lambda o: bl.expand_dims(o.x, axis=1)),
        ("expand_dims(v, -1)", lambda o: bl.expand_dims(o.v, -1)),
        ("squeeze(expand_dims(x, 0))", lambda o: bl.squeeze(bl.expand_dims(o.x, 0))),
        ("squeeze(x[:1], axis=0)", lambda o: bl.squeeze(o.x[:1], axis=0)),
        ("x[None].squeeze(0)", lambda o: bl.squeeze(o.x[None], 0)),
        ("flip(x)", lambda o: bl.flip(o.x)),
        ("flip(x, axis=1)", lambda o: bl.flip(o.x, axis=1)),
        ("flip(s3, axis=(0, 2))", lambda o: bl.flip(o.s3, axis=(0, 2))),
        ("moveaxis(s3, 0, -1)", lambda o: bl.moveaxis(o.s3, 0, -1)),
        ("moveaxis(s3, [0, 1], [2, 0])", lambda o: bl.moveaxis(o.s3, [0, 1], [2, 0])),
        ("broadcast_to(v, (3, 4))", lambda o: bl.broadcast_to(o.v, (3, 4))),
        ("broadcast_to(v, shape=[2, 3, 4])", lambda o: bl.broadcast_to(o.v, (2, 3, 4))),
        ("broadcast_to(2.5, 3)", lambda o: bl.broadcast_to(bl.asarray(2.5), 3)),
        ("reshape(x, (4, 3))", lambda o: bl.reshape(o.x, (4, 3))),
        ("reshape(x, -1)", lambda o: bl.reshape(o.x, -1)),
        ("reshape(s3, shape=[4, -1])", lambda o: bl.reshape(o.s3, (4, -1))),
        ("x.reshape(2, -1)", lambda o: o.x.reshape(2, -1)),
        ("x.reshape((6, 2))", lambda o: o.x.reshape((6, 2))),
        ("flatten(s3)", lambda o: o.s3.flatten()),
        ("ravel(x.T)", lambda o: o.x.T.ravel()),
        ("x.flatten()", lambda o: o.x.flatten()),
        ("s3.ravel()", lambda o: o.s3.ravel()),
        ("concat([x, y])", lambda o: bl.concat([o.x, o.y])),
        ("concat((x, y), axis=1)", lambda o: bl.concat([o.x, o.y], axis=1)),
        ("concat([x, s3[0]], axis=None)", lambda o: bl.concat([o.x, o.s3[0]], axis=None)),
        ("concat([x, [[1, 2, 3, 4]]])", lambda o: bl.concat([o.x, np.array([[1, 2, 3, 4]])])),
        ("concatenate([v, w, v])", lambda o: bl.concatenate([o.v, o.w, o.v])),
        ("stack([v, w])", lambda o: bl.stack([o.v, o.w])),
        ("stack((x, y), axis=-1)", lambda o: bl.stack([o.x, o.y], axis=-1)),
        ("roll(x, 1)", lambda o: bl.roll(o.x, 1)),
        ("roll(x, shift=-1, axis=1)", lambda o: bl.roll(o.x, -1, axis=1)),
        ("roll(s3, (1, 2), axis=(0, 2))", lambda o: bl.roll(o.s3, (1, 2), axis=(0, 2))),
        # constructors
        ("zeros((2, 3))", lambda o: bl.zeros((2, 3))),
        ("zeros(4, dtype='int32')", lambda o: bl.zeros(4, dtype="int32")),
        ("ones([2, 2], dtype=bool)", lambda o: bl.ones((2, 2), dtype=bool)),
        ("ones(3) + x[0, :3]", lambda o: bl.ones(3) + o.x[0, :3]),
        ("full((2, 3), 7)", lambda o: bl.full((2, 3), 7)),
        ("full(3, 2.5, dtype='float32')", lambda o: bl.full(3, 2.5, dtype="float32")),
        ("full(shape=(2,), fill_value=True)", lambda o: bl.full((2,), True)),
        ("arange(5)", lambda o: bl.arange(5)),
        ("arange(1, 10, 3)", lambda o: bl.arange(1, 10, 3)),
        ("arange(0.5, 3)", lambda o: bl.arange(0.5, 3)),
        ("arange(5, 0, -2)", lambda o: bl.arange(5, 0, -2)),
        ("arange(6, dtype='float32')", lambda o: bl.arange(6, dtype="float32")),
        ("x + arange(4)", lambda o: o.x + bl.arange(4)),
        ("linspace(0, 1, 5)", lambda o: bl.linspace(0, 1, 5)),
        ("linspace(0, 1, 4, endpoint=False)", lambda o: bl.linspace(0, 1, 4, endpoint=False)),
        ("linspace(-1, 1, num=3, dtype='float32')", lambda o: bl.linspace(-1, 1, 3, dtype="float32")),
        # the Array API namespace (issue #15)
        ("empty((2, 3), dtype='int8')", lambda o: bl.zeros((2, 3), dtype="int8")),
        ("zeros_like(x)", lambda o: bl.zeros_like(o.x)),
        ("empty_like(i, dtype=float32, device='cpu')", lambda o: bl.zeros_like(o.i, dtype="float32")),
        ("ones_like(m)", lambda o: bl.ones_like(o.m)),
        ("full_like(i, 7)", lambda o: bl.full_like(o.i, 7)),
        ("full_like(x, fill_value=2, dtype='int16')", lambda o: bl.full_like(o.x, 2, dtype="int16")),
        ("eye(3)", lambda o: bl.eye(3)),
        ("eye(3, 4, k=1, dtype='int8')", lambda o: bl.eye(3, 4, k=1, dtype="int8")),
        ("tril(x)", lambda o: bl.tril(o.x)),
        ("triu(s3, k=-1)", lambda o: bl.triu(o.s3, k=-1)),
        ("diagonal(x, offset=1)", lambda o: bl.diagonal(o.x, offset=1)),
        ("diagonal(s3)", lambda o: bl.diagonal(o.s3)),
        ("trace(i)", lambda o: bl.trace(o.i)),
        ("trace(x, offset=-1, dtype=float32)", lambda o: bl.trace(o.x, offset=-1, dtype="float32")),
        ("tile(v, (2, 2))", lambda o: bl.tile(o.v, (2, 2))),
        ("tile(x, 3)", lambda o: bl.tile(o.x, 3)),
        ("repeat(x, 2)", lambda o: bl.repeat(o.x, 2)),
        ("repeat(x, [1, 0, 2], axis=0)", lambda o: bl.repeat(o.x, np.array([1, 0, 2]), axis=0)),
        ("diff(x)", lambda o: bl.diff(o.x)),
        (
            "diff(i, axis=0, n=2, prepend=0, append=i[:1])",
            lambda o: bl.diff(o.i, axis=0, n=2, prepend=0, append=o.i[:1]),
        ),
        ("meshgrid(v, w)[1]", lambda o: bl.meshgrid(o.v, o.w)[1]),
        ("meshgrid(v, w, indexing='ij')[0]", lambda o: bl.meshgrid(o.v, o.w, indexing="ij")[0]),
        ("broadcast_arrays(v, x)[0]", lambda o: bl.broadcast_arrays(o.v, o.x)[0]),
        ("unstack(x, axis=1)[2]", lambda o: bl.unstack(o.x, axis=1)[2]),
        ("sort(i, axis=0)", lambda o: bl.sort(o.i, axis=0)),
        ("argsort(x, descending=True)", lambda o: bl.argsort(o.x, descending=True)),
        ("searchsorted(sort(v), x, side='right')", lambda o: bl.searchsorted(bl.sort(o.v), o.x, side="right")),
        # issue #37's statistics (tests/python/interop/ checks them against NumPy)
        ("nanmedian(s3, axis=1)", lambda o: bl.nanmedian(o.s3, axis=1)),
        (
            "nanquantile(s3, 0.3, axis=(0, 2), method='higher')",
            lambda o: bl.nanquantile(o.s3, 0.3, axis=(0, 2), method="higher"),
        ),
        ("nanpercentile(x, 40, keepdims=True)", lambda o: bl.nanpercentile(o.x, 40, keepdims=True)),
        ("isin(i, [1, 3], invert=True)", lambda o: bl.isin(o.i, [1, 3], invert=True)),
        ("digitize(x, [0.0, 0.5, 1.0], right=True)", lambda o: bl.digitize(o.x, [0.0, 0.5, 1.0], right=True)),
        ("bincount(abs(i).flatten(), minlength=7)", lambda o: bl.bincount(bl.abs(o.i).flatten(), minlength=7)),
        ("histogram(x, 4, range=(0, 1), weights=y)[0]", lambda o: bl.histogram(o.x, 4, range=(0, 1), weights=o.y)[0]),
        ("histogram2d(v, w, [3, 2], density=True)[0]", lambda o: bl.histogram2d(o.v, o.w, [3, 2], density=True)[0]),
        (
            "random_uniform((3, 4), -1.0, 1.0, seed=7, stream=2) + x",
            lambda o: bl.random_uniform((3, 4), -1.0, 1.0, seed=7, stream=2) + o.x,
        ),
        (
            "random_normal(4, scale=2.0, seed=1, dtype='float32')",
            lambda o: bl.random_normal(4, scale=2.0, seed=1, dtype="float32"),
        ),
        (
            "random_integers((2, 2), -5, 5, seed=3, dtype='int16')",
            lambda o: bl.random_integers((2, 2), -5, 5, seed=3, dtype="int16"),
        ),
        # indexing: integers, slices with steps, ..., None, literal lists, masks
        ("x[1]", lambda o: o.x[1]),
        ("x[-1, 2]", lambda o: o.x[-1, 2]),
        ("x[1:3]", lambda o: o.x[1:3]),
        ("x[::2, ::-1]", lambda o: o.x[::2, ::-1]),
        ("x[-1::-2, 3:0:-2]", lambda o: o.x[-1::-2, 3:0:-2]),
        ("x[:, :]", lambda o: o.x[:, :]),
        ("x[...]", lambda o: o.x[...]),
        ("x[..., 1]", lambda o: o.x[..., 1]),
        ("x[None, :, 1]", lambda o: o.x[None, :, 1]),
        ("s3[1, ..., ::-2]", lambda o: o.s3[1, ..., ::-2]),
        ("x[:, None]", lambda o: o.x[:, None]),
        ("x[(1, 2)]", lambda o: o.x[1, 2]),
        ("x[()]", lambda o: o.x[()]),
        ("x[[2, 0, 2]]", lambda o: o.x[[2, 0, 2]]),
        ("x[[True, False, True]]", lambda o: o.x[np.array([True, False, True])]),
        ("x[[[0, 1], [2, 2]]]", lambda o: o.x[np.array([[0, 1], [2, 2]])]),
        ("x[[0, 2], [1, 3]]", lambda o: o.x[[0, 2], [1, 3]]),
        ("x[1, [3, 0, -1]]", lambda o: o.x[1, [3, 0, -1]]),
        ("x[:, [True, False, False, True]]", lambda o: o.x[:, np.array([True, False, False, True])]),
        ("s3[:, [2, 0], 1:]", lambda o: o.s3[:, [2, 0], 1:]),
        ("x[x > 0.5]", lambda o: o.x[o.x > 0.5]),
        ("s3[(s3 > 0) & (s3 < 0.5)]", lambda o: o.s3[(o.s3 > 0) & (o.s3 < 0.5)]),
        ("x[m]", lambda o: o.x[o.m]),
        ("v[j[0]]", lambda o: o.v[o.j[0]]),
        (
            "x[any(-22)]",
            lambda o: o.x[bl.any(bl.asarray(-22))],
        ),  # a 0-d boolean index: a new axis (found by the fuzzer)
        ("x[x.sum() < 0, 1:]", lambda o: o.x[o.x.sum() < 0, 1:]),
        ("x.sum()[x.sum() > 0]", lambda o: o.x.sum()[o.x.sum() > 0]),
        ("(x + y)[1:, ::3] * 2", lambda o: (o.x + o.y)[1:, ::3] * 2),
        ("sum(x, axis=0)[[3, 1]]", lambda o: bl.sum(o.x, axis=0)[[3, 1]]),
        # literals and operators
        ("[1, 2, 3]", lambda o: bl.asarray(np.array([1, 2, 3]))),
        ("[[1.5, 2], [True, 0]]", lambda o: bl.asarray(np.array([[1.5, 2], [True, 0]]))),
        ("x + [1, 2, 3, 4]", lambda o: o.x + np.array([1, 2, 3, 4])),
        ("2.5", lambda o: bl.asarray(2.5)),
        ("1e-3 * x + 0x10", lambda o: 1e-3 * o.x + 16),
        ("1_000 * i", lambda o: 1000 * o.i),
        ("0b101 + 0o17 + 0x_fF + 0XA + 00 + 1_0.2_5 + x", lambda o: 0b101 + 0o17 + 0xFF + 0xA + 0 + 10.25 + o.x),
        (
            "[5e-324, 1e400, -1e400, 1e-400, .5, 5., 1.e1, 1E+1]",
            lambda o: bl.asarray(np.array([5e-324, np.inf, -np.inf, 0.0, 0.5, 5.0, 10.0, 10.0])),
        ),
        ("[2**63, 18446744073709551615, 0]", lambda o: bl.asarray(np.array([2**63, 2**64 - 1, 0], np.uint64))),
        ("-9223372036854775808 + i", lambda o: -9223372036854775808 + o.i),
        ("-x ** 2 + abs(i) // 2 % 3", lambda o: -(o.x**2) + bl.abs(o.i) // 2 % 3),
        ("(i << j) | (i >> 1) ^ ~j & 3", lambda o: (o.i << o.j) | (o.i >> 1) ^ ~o.j & 3),
        ("x < y <= 2.5", lambda o: (o.x < o.y) & (o.y <= 2.5)),
        ("m != (x > 0.5) == True", lambda o: (o.m != (o.x > 0.5)) & ((o.x > 0.5) == True)),  # noqa: E712
        ("sin(x) ** 2 + cos(x) ** 2", lambda o: bl.sin(o.x) ** 2 + bl.cos(o.x) ** 2),
        ("matmul(sum(s3, axis=1), x.T) + 1", lambda o: bl.matmul(bl.sum(o.s3, axis=1), o.x.T) + 1),
        (
            "einsum('ijk,ik->j', s3, s3[:, 0, :], optimize='optimal')",
            lambda o: bl.einsum("ijk,ik->j", o.s3, o.s3[:, 0, :], optimize="optimal"),
        ),
        ("pad(x, ((1, 2), (0, 3)), 'reflect') + 1", lambda o: bl.pad(o.x, ((1, 2), (0, 3)), "reflect") + 1),
        ("rechunk(s3, (1, None, 'auto')) * 2", lambda o: bl.rechunk(o.s3, (1, None, "auto")) * 2),
        ("sliding_window_view(s3, (3, 2), axis=(2, 0))", lambda o: bl.sliding_window_view(o.s3, (3, 2), axis=(2, 0))),
        (
            "moving_reduce(s3, 3, 'std', axis=0, center=True, min_periods=2, ddof=1)",
            lambda o: bl.moving_reduce(o.s3, 3, "std", axis=0, center=True, min_periods=2, ddof=1),
        ),
        (
            "segment_reduce(s3, [0, 1, -1, 0], 'mean', axis=2, ngroups=3)",
            lambda o: bl.segment_reduce(o.s3, [0, 1, -1, 0], "mean", axis=2, ngroups=3),
        ),
        ("fft_fft(x, n=5, axis=0, norm='ortho')", lambda o: bl.fft_fft(o.x, n=5, axis=0, norm="ortho")),
        ("fft_ifft(fft_fft(x)) + 1", lambda o: bl.fft_ifft(bl.fft_fft(o.x)) + 1),
        (
            "fft_irfft(fft_rfft(x, axis=0), n=3, axis=0)",
            lambda o: bl.fft_irfft(bl.fft_rfft(o.x, axis=0), n=3, axis=0),
        ),
        ("fft_hfft(x, norm='forward')", lambda o: bl.fft_hfft(o.x, norm="forward")),
        ("fft_ihfft(x)", lambda o: bl.fft_ihfft(o.x)),
        ("fft_fftn(x, s=(2, 3))", lambda o: bl.fft_fftn(o.x, s=(2, 3))),
        ("fft_ifftn(x, axes=(0,))", lambda o: bl.fft_ifftn(o.x, axes=(0,))),
        (
            "fft_irfftn(fft_rfftn(s3), s=(3, 5), axes=(0, 2))",
            lambda o: bl.fft_irfftn(bl.fft_rfftn(o.s3), s=(3, 5), axes=(0, 2)),
        ),
        ("fft_fftshift(fft_fftfreq(7, d=0.5))", lambda o: bl.fft_fftshift(bl.fft_fftfreq(7, d=0.5))),
        (
            "fft_ifftshift(x, axes=0) * fft_rfftfreq(6, dtype='float32')",
            lambda o: bl.fft_ifftshift(o.x, axes=0) * bl.fft_rfftfreq(6, dtype="float32"),
        ),
        (
            "linalg_cholesky(matmul(x, matrix_transpose(x)) + eye(3))",
            lambda o: bl.linalg_cholesky(bl.matmul(o.x, bl.matrix_transpose(o.x)) + bl.eye(3)),
        ),
        (
            "linalg_det(matmul(x, matrix_transpose(x)))",
            lambda o: bl.linalg_det(bl.matmul(o.x, bl.matrix_transpose(o.x))),
        ),
        (
            "linalg_inv(matmul(x, matrix_transpose(x)) + eye(3))",
            lambda o: bl.linalg_inv(bl.matmul(o.x, bl.matrix_transpose(o.x)) + bl.eye(3)),
        ),
        (
            "linalg_slogdet(matmul(x, matrix_transpose(x)))[1]",
            lambda o: bl.linalg_slogdet(bl.matmul(o.x, bl.matrix_transpose(o.x)))[1],
        ),
        (
            "linalg_solve(matmul(x, matrix_transpose(x)) + eye(3), x)",
            lambda o: bl.linalg_solve(bl.matmul(o.x, bl.matrix_transpose(o.x)) + bl.eye(3), o.x),
        ),
        (
            "linalg_eigh(matmul(x, matrix_transpose(x)))[0]",
            lambda o: bl.linalg_eigh(bl.matmul(o.x, bl.matrix_transpose(o.x)))[0],
        ),
        (
            "linalg_eigvalsh(matmul(x, matrix_transpose(x)))",
            lambda o: bl.linalg_eigvalsh(bl.matmul(o.x, bl.matrix_transpose(o.x))),
        ),
        (
            "real(linalg_eig(matmul(x, matrix_transpose(x)))[0])",
            lambda o: bl.real(bl.linalg_eig(bl.matmul(o.x, bl.matrix_transpose(o.x)))[0]),
        ),
        (
            "real(linalg_eigvals(matmul(x, matrix_transpose(x))))",
            lambda o: bl.real(bl.linalg_eigvals(bl.matmul(o.x, bl.matrix_transpose(o.x)))),
        ),
        ("linalg_qr(x)[1]", lambda o: bl.linalg_qr(o.x)[1]),
        ("linalg_svd(x)[1]", lambda o: bl.linalg_svd(o.x)[1]),
        ("linalg_svdvals(x)", lambda o: bl.linalg_svdvals(o.x)),
        (
            "linalg_svd_compressed(x, 2, n_power_iter=1)[1]",
            lambda o: bl.linalg_svd_compressed(o.x, 2, n_power_iter=1)[1],
        ),
    ]
)

_CALLED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\(")


def test_table_covers_every_function():
    called = {n for text, _ in TABLE for n in _CALLED.findall(text)}
    missing = sorted(set(b2lazy._core.expression_functions()) - called)
    assert not missing, f"functions without a case in TABLE: {missing}"
    public = {n for n in b2lazy.__all__ if callable(getattr(b2lazy, n)) and not isinstance(getattr(b2lazy, n), type)}
    # dtype queries and the info namespace make no arrays; from_dlpack reads a Python object
    no_array = {"can_cast", "finfo", "iinfo", "isdtype", "result_type", "__array_namespace_info__", "from_dlpack"}
    # lazyudf takes a Python function, which an expression string cannot name (not built yet)
    no_array |= {"lazyudf", "map_blocks", "blockwise"}
    # writing into other arrays, reading Zarr by URL and evaluating now are not expressions
    no_array |= {"store", "to_zarr", "from_zarr", "persist", "compute"}
    # the unique functions return tuples whose length depends on the values
    no_array |= {"unique_values", "unique_counts", "unique_inverse", "unique_all"}
    # einsum_path returns einsum's contraction order (a list and a report), not an array
    no_array |= {"einsum_path"}
    # gradient returns one array per axis (a list, as NumPy's), composed in Python of slices
    no_array |= {"gradient"}
    not_in_expressions = sorted(
        public - set(b2lazy._core.expression_functions()) - no_array - {"asarray", "from_array", "open", "evaluate"}
    )
    assert not not_in_expressions, f"Python functions an expression cannot call: {not_in_expressions}"


@pytest.mark.parametrize("text,api", TABLE, ids=[t for t, _ in TABLE])
def test_every_function(text, api):
    got = b2lazy.evaluate(text, ENV)
    ref = api(_Lazy())
    assert isinstance(got, b2lazy.Array)
    assert got.shape == ref.shape and got.dtype == ref.dtype, (got, ref)
    assert_exact(b2np(got), b2np(ref), text)


# ----------------------------------------------------------------------------------------
# operands: a dict, keywords, the caller's variables; NumPy, b2lazy, python-blosc2, numbers
# ----------------------------------------------------------------------------------------
A8 = np.array([[1, -2, 3], [4, 5, -6]], np.int8)
F32 = np.array([0.5, 1.5, -2.0], np.float32)


def test_operands_as_dict_keywords_and_both():
    ref = A8 * F32 + 1
    for got in (
        b2lazy.evaluate("a * f + 1", {"a": A8, "f": F32}),
        b2lazy.evaluate("a * f + 1", a=A8, f=F32),
        b2lazy.evaluate("a * f + 1", {"a": A8}, f=F32),
        b2lazy.evaluate("a * f + 1", {"a": A8, "f": np.zeros(3)}, f=F32),
    ):  # keywords win
        assert_exact(b2np(got), ref)


MODULE_OPERAND = np.array([10, 20, 30], np.int16)


def test_operands_from_the_callers_variables():
    a, f = A8, F32
    assert_exact(b2np(b2lazy.evaluate("a * f + MODULE_OPERAND")), a * f + MODULE_OPERAND)
    lazy = b2lazy.asarray(A8)  # noqa: F841  (read by name: a local b2lazy Array, a local number, a module global)
    k = np.int16(3)
    assert_exact(b2np(b2lazy.evaluate("lazy - k + MODULE_OPERAND")), A8 - k + MODULE_OPERAND)
    with pytest.raises(NameError, match="unknown name 'not_defined_anywhere'"):
        b2lazy.evaluate("a + not_defined_anywhere")


def test_operand_kinds(tmp_path):
    import blosc2

    b2 = blosc2.asarray(A8.astype(np.float64), chunks=(1, 3))
    disk = blosc2.asarray(A8, urlpath=str(tmp_path / "a.b2nd"), mode="w")
    got = b2lazy.evaluate(
        "n + l + b2 + disk + k + x + t", n=A8, l=b2lazy.asarray(A8), b2=b2, disk=disk, k=2, x=0.5, t=True
    )
    assert_exact(b2np(got), A8 + A8 + A8.astype(np.float64) + A8 + 2 + 0.5 + True)
    assert b2lazy.evaluate("f * 2.0", f=F32).dtype == np.float32  # a literal is weak
    # a lazy expression as an operand stays lazy and fuses
    e = b2lazy.asarray(F32) * 2
    assert_exact(b2np(b2lazy.evaluate("sin(e) + e", e=e)), b2np(b2lazy.sin(e) + e))
    # only operands the expression names are needed; an unused bad one is still refused
    with pytest.raises(TypeError, match="operand 'bad'"):
        b2lazy.evaluate("a", a=A8, bad="text")


def test_python_number_operands_are_weak():
    """As F32 * 2.0 in NumPy 2 (NEP 50): a Python number operand is weak (it was a 0-d
    float64 array, found by these tests)."""
    assert b2lazy.evaluate("f * k", f=F32, k=2.0).dtype == np.float32
    assert b2lazy.evaluate("a * k", a=A8, k=2).dtype == np.int8
    assert b2lazy.evaluate("a * k", a=A8, k=True).dtype == np.int8
    assert b2lazy.evaluate("a * k", a=A8, k=2.0).dtype == np.float64


def test_numpy_scalar_operands_are_strong():
    """A NumPy scalar is strong (NEP 50), even np.float64, which subclasses Python's float."""
    for k in (np.float64(2.0), np.int16(2), np.bool_(True)):
        assert b2lazy.evaluate("a * k", a=A8, k=k).dtype == (A8 * k).dtype, k
    assert b2lazy.evaluate("f * k", f=F32, k=np.float64(2.0)).dtype == np.float64


def test_result_is_lazy():
    r = b2lazy.evaluate("sum(a, axis=0) + 1", a=A8)
    assert isinstance(r, b2lazy.Array)
    assert r.shape == (3,) and r.dtype == np.int64
    c = r.compute()
    assert_exact(b2np(c), A8.sum(axis=0) + 1)


# ----------------------------------------------------------------------------------------
# expression_names
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,names",
    [
        ("a + b * a", ["a", "b"]),
        ("sum(c, axis=0) + a.mean(axis=1) @ b", ["c", "a", "b"]),
        ("astype(x, float32) + y.astype('int8') + zeros((2,), dtype=int64)", ["x", "y"]),
        ("where(m, sin(x), cos(y))[idx]", ["m", "x", "y", "idx"]),
        ("f(g) + h.T", ["g", "h"]),  # the callee f is a function name, not an operand
        ("1 + 2.5 + True + None", []),
        ("x[..., None, ::k]", ["x", "k"]),
        ("a.b.c", ["a"]),
    ],
)
def test_expression_names(text, names):
    assert b2lazy._core.expression_names(text) == names


def test_expression_names_refuses_malformed_input():
    with pytest.raises(SyntaxError, match="column 7"):
        b2lazy._core.expression_names("a + (b")


# ----------------------------------------------------------------------------------------
# malformed input: the error type, the column, a caret under it, close matches
# ----------------------------------------------------------------------------------------
BAD_ENV = {"a": np.arange(12.0).reshape(3, 4), "b": np.ones((3, 4)), "c": np.ones(5), "i": np.arange(12).reshape(3, 4)}
DEEP = 10000

# (expression, exception, column or None, substrings of the message)
MALFORMED = [
    # truncated, unbalanced, stray tokens
    ("sum(a, axis=", SyntaxError, 13, ["unexpected end of expression"]),
    ("(a + b", SyntaxError, 7, ["expected ')'", "end of the expression"]),
    ("a + b)", SyntaxError, 6, ["unexpected ')'"]),
    ("a[1", SyntaxError, 4, ["']' to close the index"]),
    ("a[1, 2", SyntaxError, 7, ["']'"]),
    ("sum(a", SyntaxError, 6, ["')' to close the call"]),
    ("[1, 2", SyntaxError, 6, ["']' to close the list"]),
    ("a +", SyntaxError, 4, ["unexpected end of expression"]),
    ("", SyntaxError, 1, ["unexpected end of expression"]),
    ("   ", SyntaxError, 4, ["unexpected end of expression"]),
    ("a b", SyntaxError, 3, ["unexpected 'b'"]),
    ("1 +* 2", SyntaxError, 4, ["unexpected '*'"]),
    ("sin(a,,b)", SyntaxError, 7, ["unexpected ','"]),
    ("a[]", SyntaxError, 2, ["empty index"]),
    ("a..b", SyntaxError, 3, ["attribute or method name"]),
    ("a = 1", SyntaxError, 3, ["unexpected '='"]),
    ("sum(a, axis=0, axis=1)", SyntaxError, 16, ["keyword argument 'axis' repeated"]),
    ("sum(axis=0, a)", SyntaxError, 13, ["positional argument follows keyword argument"]),
    ("a\t+\n(b", SyntaxError, 7, ["expected ')'"]),
    # Python words that are not array operators
    ("a and b", SyntaxError, 3, ["'and'", "use &"]),
    ("a or b", SyntaxError, 3, ["'or'", "use |"]),
    ("not a", SyntaxError, 1, ["'not'", "use ~"]),
    ("a if b else a", SyntaxError, 3, ["'if'"]),
    ("lambda: a", SyntaxError, 1, ["'lambda'"]),
    # tokens
    ("3abc", SyntaxError, 1, ["invalid number '3a'"]),
    ("0x", SyntaxError, 1, ["invalid number"]),
    ("a + 99999999999999999999999", SyntaxError, 5, ["integer out of range of int64 and uint64"]),
    ("'abc", SyntaxError, 1, ["unterminated string"]),
    ("a $ b", SyntaxError, 3, ["unexpected character '$'"]),
    ("0b102", SyntaxError, 1, ["invalid number '0b102'"]),
    ("012", SyntaxError, 1, ["invalid number"]),
    ("1__0", SyntaxError, 1, ["invalid number"]),
    ("1_", SyntaxError, 1, ["invalid number"]),
    ("a + \u00e9", SyntaxError, 5, ["unexpected character '\u00e9'"]),
    ("\u00e9 + a", SyntaxError, 1, ["unexpected character '\u00e9'"]),
    ("'\u00e9\u20ac' + a $", SyntaxError, 10, ["unexpected character '$'"]),  # columns count characters
    ("a + b\x00", SyntaxError, 6, ["unexpected byte 0"]),
    ("a\x7f", SyntaxError, 2, ["unexpected byte 127"]),
    # deep input: an error, not a stack overflow
    ("(" * DEEP + "a" + ")" * DEEP, SyntaxError, None, ["nested too deeply"]),
    ("-" * DEEP + "a", SyntaxError, None, ["nested too deeply"]),
    ("sum(" * DEEP, SyntaxError, None, ["nested too deeply"]),
    ("[" * DEEP, SyntaxError, None, ["nested too deeply"]),
    ("a" + " + a" * DEEP, SyntaxError, None, ["nested too deeply"]),
    ("a" + ".T" * DEEP, SyntaxError, None, ["nested too deeply"]),
    ("a" + "[0]" * DEEP, SyntaxError, None, ["nested too deeply"]),
    # unknown names and functions: close matches
    ("sinn(a)", NameError, 1, ["unknown function 'sinn'", "'sin'"]),
    ("cumsun(a, axis=0)", NameError, 1, ["unknown function 'cumsun'", "'cumsum'"]),
    ("arang(5)", NameError, 1, ["'arange'"]),
    ("a + bb", NameError, 5, ["unknown name 'bb'", "'b'", "operands: a, b, c, i"]),
    ("A + b", NameError, 1, ["unknown name 'A'", "'a'"]),
    ("a.summ()", NameError, 3, ["no method 'summ'", "'sum'"]),
    ("a.tranpose()", NameError, 3, ["'transpose'"]),
    ("a.foo", NameError, 3, ["no attribute 'foo'"]),
    ("sum + a", NameError, 1, ["'sum' is a function"]),
    ("a(1)", TypeError, 1, ["'a' is an operand"]),
    # wrong arity, unknown keywords, wrong argument types: the function and the argument
    ("a.sum", TypeError, 3, ["'sum' is a method"]),
    ("sum(a, axiz=1)", TypeError, 1, ["sum()", "unexpected keyword argument 'axiz'"]),
    ("sum(a, axis=1.5)", TypeError, 1, ["sum()", "argument 'axis'", "float 1.5"]),
    ("sum(a, correction=1)", TypeError, 1, ["sum()", "'correction'"]),
    ("sin(a, b)", TypeError, 1, ["sin()", "at most 1 positional argument"]),
    ("add(a)", TypeError, 1, ["add()", "missing required argument 'x2'"]),
    ("sin()", TypeError, 1, ["sin()", "missing required argument 'x'"]),
    ("reshape(a)", TypeError, 1, ["reshape()", "'shape'"]),
    ("a.reshape(2, 'x')", TypeError, 3, ["reshape()", "argument 'shape'"]),
    ("astype(a, 'float17')", TypeError, 1, ["astype()", "argument 'dtype'", "'float17'"]),
    ("astype(a, 3)", TypeError, 1, ["astype()", "argument 'dtype'"]),
    ("sum(a, keepdims=2.5)", TypeError, 1, ["sum()", "argument 'keepdims'"]),
    ("linspace(0, 1, 2.5)", TypeError, 1, ["linspace()", "argument 'num'"]),
    ("zeros('a')", TypeError, 1, ["zeros()", "argument 'shape'"]),
    ("full((2,), 'x')", TypeError, 1, ["full()", "argument 'fill_value'"]),
    ("concat(a)", TypeError, 1, ["concat()", "argument 'arrays'"]),
    ("take(a, [1.5])", TypeError, 1, ["take()", "argument 'indices'"]),
    ("tensordot(a, b, axes='x')", TypeError, 1, ["tensordot()", "argument 'axes'"]),
    ("sum(a, 0, True)", TypeError, 1, ["sum()", "at most 2 positional arguments"]),
    ("astype(a, dtype='int8')", TypeError, 1, ["astype()", "positional-only argument passed by keyword: 'dtype'"]),
    ("a[1.5]", TypeError, 3, ["index entry 0", "float 1.5"]),
    ("a[1:2.5]", TypeError, 5, ["slice indices"]),
    ("a['x']", TypeError, 3, ["not a valid index"]),
    ("~b", TypeError, 1, ["bitwise_invert", "float64"]),
    ("a & b", TypeError, 3, ["bitwise_and"]),
    ("'abc'", TypeError, 1, ["string 'abc'", "not an array"]),
    ("(1, 2)", TypeError, 1, ["tuple"]),
    ("None", TypeError, 1, ["None"]),
    ("1.5.real", TypeError, 5, ["has no attribute 'real'"]),
    ("(a)(1)", TypeError, 2, ["'a' is an operand"]),
    ("(a + 1)(1)", TypeError, 8, ["only functions and methods can be called, not array of shape (3, 4)"]),
    ("where(a > 0)", TypeError, 1, ["tuple of 2", "not an array"]),
    ("nonzero(a)[0:1]", TypeError, 11, ["one integer index"]),
    ("2.5[0]", TypeError, 4, ["cannot be indexed"]),
    # values
    ("a + c", ValueError, 3, ["broadcast"]),
    ("a @ c", ValueError, 3, ["matmul"]),
    ("reshape(a, (5, 5))", ValueError, 1, ["reshape"]),
    ("where(a > 0, a)", ValueError, 1, ["where()"]),
    ("var(a, correction=1, ddof=1)", ValueError, 1, ["correction or ddof"]),
    ("[[1, 2], [3]]", ValueError, 1, ["ragged"]),
    ("a + [[1, 2], [3]]", ValueError, 5, ["ragged"]),
    ("a + 1 // 0", ValueError, 7, ["division by zero"]),
    ("2 ** 2 ** 2 ** 2 ** 2", ValueError, 3, ["out of range"]),
    ("i + 18446744073709551615", ValueError, 3, ["out of bounds for int64"]),
    ("[-1, 18446744073709551615]", ValueError, 1, ["int64"]),
    # axes beyond int are out of bounds, not truncated (axis=2**32 was axis 0): NumPy's AxisError
    ("sum(a, axis=4294967296)", AxisError, 1, ["sum()", "'axis'", "out of bounds"]),
    ("a.sum(axis=(0, -4294967295))", AxisError, 3, ["sum()", "out of bounds"]),
    ("expand_dims(a, 4294967296)", AxisError, 1, ["expand_dims()", "out of bounds"]),
    ("permute_dims(a, (4294967297, 0))", AxisError, 1, ["permute_dims()", "out of bounds"]),
    ("tensordot(a, b, axes=4294967296)", AxisError, 1, ["tensordot()", "out of bounds"]),
    ("tensordot(a, b, axes=([4294967296], [0]))", AxisError, 1, ["tensordot()", "out of bounds"]),
    ("stack([a, a], axis=4294967296)", AxisError, 1, ["stack()", "out of bounds"]),
    ("cumsum(a, axis=4294967297)", AxisError, 1, ["cumsum()", "out of bounds"]),
    # indices
    ("a[10]", IndexError, 2, ["out of bounds"]),
    ("a[0, 0, 0]", IndexError, 2, ["too many indices"]),
    ("a[[0, 7]]", IndexError, 2, ["out of bounds"]),
    ("a[18446744073709551615]", IndexError, 3, ["out of bounds"]),
    ("nonzero(a)[5]", IndexError, 12, ["tuple index 5 out of range"]),
]


def check_error(text, exc, column, parts, env=BAD_ENV):
    with pytest.raises(exc) as info:
        b2lazy.evaluate(text, env).to_numpy()
    assert type(info.value) is exc, f"{text!r}: {type(info.value).__name__}: {info.value}"
    msg = str(info.value)
    for p in parts:
        assert p in msg, f"{text!r}: {p!r} not in {msg!r}"
    if column is None:
        return
    assert f" at column {column}\n" in msg, f"{text!r}: column {column} not in {msg!r}"
    *_, line, caret = msg.split("\n")
    shown = re.sub(r"[\x00-\x1f\x7f]", " ", text)
    assert line == "  " + shown, f"{text!r}: expression line {line!r}"
    assert caret == "  " + " " * (column - 1) + "^", f"{text!r}: caret line {caret!r}"


@pytest.mark.parametrize("text,exc,column,parts", MALFORMED, ids=[repr(c[0])[:60] for c in MALFORMED])
def test_malformed(text, exc, column, parts):
    check_error(text, exc, column, parts)


def test_syntax_error_of_the_python_api_is_pythons():
    """A b2lazy SyntaxError is Python's SyntaxError (so `except SyntaxError` works) and the
    expression_names parse gives the same error as evaluate."""
    for text in ("sum(a, axis=", "(a + b", "a[1"):
        with pytest.raises(SyntaxError) as e1:
            b2lazy.evaluate(text, BAD_ENV)
        with pytest.raises(SyntaxError) as e2:
            b2lazy._core.expression_names(text)
        assert str(e1.value) == str(e2.value)


def test_non_string_expression():
    with pytest.raises(TypeError, match="must be a string"):
        b2lazy.evaluate(b"a + 1", a=1)
    with pytest.raises(USER_ERRORS):
        b2lazy.evaluate("a + \ud800", a=1)  # a lone surrogate: not encodable as UTF-8


@examples(300)
@given(text=st.text(alphabet=st.sampled_from(list("ab()[],.:=+-*/%@&|^~<>!'\" 0123456789eTxsum_")), max_size=30))
def test_random_text_never_crashes(text):
    """Any text: a result or a user error (the fuzz harness in tests/fuzz does this for
    much longer, with coverage guidance)."""
    try:
        r = b2lazy.evaluate(text, a=np.arange(6.0).reshape(2, 3), b=np.arange(3))
        if r.size <= 10_000:
            r.to_numpy()
    except USER_ERRORS:
        pass


def test_bad_input_in_subprocess_never_crashes():
    """The whole malformed table in a fresh interpreter: errors, never an abort."""
    code = (
        "import sys; sys.path.insert(0, %r)\n"
        "import test_expressions as t\n"
        "n = 0\n"
        "for text, exc, *_ in t.MALFORMED:\n"
        "    try:\n"
        "        t.b2lazy.evaluate(text, t.BAD_ENV).to_numpy()\n"
        "    except exc:\n"
        "        n += 1\n"
        "print('OK', n)\n"
    ) % __import__("os").path.dirname(__file__)
    p = run_python(code)
    assert p.returncode == 0 and f"OK {len(MALFORMED)}" in p.stdout, (p.returncode, p.stdout, p.stderr[-800:])


def test_lazy_index_array_values_are_exact():
    """A lazy int64 index array is read as int64 (it went through double: 2**53 + 1 was
    reported as 2**53), and uint64 values above int64 are out of bounds, not negative."""
    x = np.arange(10.0)
    with pytest.raises(IndexError, match="9007199254740993"):
        b2lazy.evaluate("x[i]", x=x, i=b2lazy.asarray(np.array([2**53 + 1], np.int64)))
    with pytest.raises(IndexError, match="9223372036854775808"):
        b2lazy.evaluate("x[i]", x=x, i=b2lazy.asarray(np.array([2**63], np.uint64)))
    i = b2lazy.asarray(np.array([9, 1, 3], np.uint8))
    assert_exact(b2np(b2lazy.evaluate("x[i]", x=x, i=i)), x[[9, 1, 3]])
