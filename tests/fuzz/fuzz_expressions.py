"""Fuzzes the expression parser and builder (src/expr) through b2lazy.evaluate with atheris
(libFuzzer for Python).

    python tests/fuzz/fuzz_expressions.py                      # bounded run, what CI does (~1 min)
    python tests/fuzz/fuzz_expressions.py -max_total_time=600  # longer; any libFuzzer flag works
    python tests/fuzz/fuzz_expressions.py CRASH_FILE           # replay one input

Every input is decoded as UTF-8 (invalid bytes dropped) and evaluated on small operands;
a small result is also computed with .to_numpy(). The run fails on a crash (libFuzzer
catches the signal), on a hang past -timeout, past -rss_limit_mb, or on any exception
other than the user errors the library documents (SyntaxError, NameError, TypeError,
ValueError, IndexError, OverflowError, ZeroDivisionError), and on a SyntaxError or
NameError whose message has no column and caret.

The corpus starts from SEEDS (valid expressions over every feature, plus one call of every
function the engine has), written to a temporary directory, and a libFuzzer dictionary of
the grammar's tokens. The C++ extension is not built with libFuzzer's instrumentation, so
the harness makes its own coverage signal: what an input led to (the error with its
variable parts blanked, or each line of the result's explain() with numbers blanked) is
hashed to one of 1024 leaves of a generated, atheris-instrumented decision tree
(fuzz_feedback.py), so an input reaching a new error or a new kind of node is kept in the
corpus.

Legitimate but huge work is skipped, not failed (see `too_big`): b2lazy builds lazily,
but some functions run a pass over their input when they are built (a lazy mask a[a > 0],
nonzero, where(cond), a lazy integer index array), and constructors and broadcasting can
describe arrays of 10**18 elements from a short text (zeros(10**9) [zeros(10**9) > 0]).
An input is skipped when it calls a constructor or broadcast_to (which make a size from
numbers) and holds a number above 64, an exponent (1e9), ** or <<, or more than two *;
or when it multiplies sizes by nesting: more than two outer / tensordot, or more than six
None (new axes broadcast against each other). Results are evaluated only up to MAX_RESULT
elements; within these rules an input runs in well under a second.
"""

from __future__ import annotations

import os
import re
import tempfile

import atheris
import numpy as np

from fuzz_feedback import feedback, fuzz

with atheris.instrument_imports():
    import b2lazy

USER_ERRORS = (SyntaxError, NameError, TypeError, ValueError, IndexError, OverflowError, ZeroDivisionError)
MAX_RESULT = 100_000

OPERANDS = {
    "a": np.arange(6.0).reshape(2, 3) - 2.5,
    "b": np.array([1, 2, 3], np.int32),
    "m": np.array([[True, False, True], [False, True, True]]),
    "i": np.array([[0, 1, -1], [2, -2, 0]], np.int64),
    "u": np.array([0, 7, 255], np.uint8),
    "f": np.array([0.5, -1.5, 2.0], np.float32),
}

SEEDS = [
    "a + b * 2",
    "-a ** 2 + ~i & 3 | i ^ 1",
    "a < b <= 3 != m",
    "a @ b",
    "a.T @ a",
    "a.mT",
    "sum(a, axis=0) + mean(a, axis=-1, keepdims=True)",
    "a.sum(axis=(0, 1), dtype='float32')",
    "var(a, axis=1, correction=1)",
    "std(a, ddof=1)",
    "cumulative_sum(b, include_initial=True)",
    "cumsum(a, axis=1)",
    "a.reshape(3, -1)",
    "reshape(a, (6,))",
    "a.astype('int8')",
    "astype(a, float32)",
    "a[1, ::-1]",
    "a[..., None, 1:3:2]",
    "a[[1, 0, 1]]",
    "a[[True, False]]",
    "a[a > 0]",
    "a[m]",
    "a[:, [2, 0]]",
    "b[i[0] % 3]",
    "a[(1, 2)]",
    "nonzero(m)[0]",
    "where(m, a, 0)",
    "where(m)[1]",
    "clip(a, -1, max=1.5)",
    "tensordot(a, a.T, axes=1)",
    "tensordot(a, a, axes=([0, 1], [0, 1]))",
    "vecdot(a, a)",
    "outer(b, f)",
    "permute_dims(a, (1, 0))",
    "transpose(a)",
    "matrix_transpose(a)",
    "take(a, [2, 0], axis=1)",
    "take_along_axis(a, [[0], [2]], axis=1)",
    "expand_dims(b, 0)",
    "squeeze(a[:1], axis=0)",
    "flip(a, axis=1)",
    "moveaxis(a, 0, -1)",
    "broadcast_to(b, (2, 3))",
    "concat([a, a], axis=None)",
    "stack((b, b), axis=1)",
    "roll(a, 1, axis=0)",
    "zeros((2, 3)) + ones(3)",
    "full(3, 7, dtype='int16')",
    "arange(1, 10, 3)",
    "linspace(0, 1, 5, endpoint=False)",
    "[1, 2.5, True] + f",
    "[[1, 2, 3], [4, 5, 6]] @ b",
    "0x1f + 0b101 + 1_000 + 1e-3 + .5",
    "2 ** -1 * u",
    "u << 2 >> 1",
    "i // 3 % 2",
    "f / 0.0",
    "isnan(a) | isinf(a)",
    "count_nonzero(m, axis=0)",
    "argmin(a, axis=1)",
    "a.argmax()",
    "any(m) & all(m)",
    "real(a) + imag(a)",
    "a.flatten()",
    "ravel(a)",
]


def _seed_calls():
    """One call of every function the expression language knows."""
    out = []
    for name in b2lazy._core.expression_functions():
        out.append(f"{name}(a)")
        out.append(f"{name}(a, b)")
    return out


SIZE_MAKERS = re.compile(r"zeros|ones|full|arange|linspace|broadcast_to")
NUMBER = re.compile(r"(?<![\w.])(0[xXoObB][0-9a-fA-F_]+|\d[\d_]*\.?[\d_]*|\.\d[\d_]*)")


def too_big(text):
    """True for texts that might describe an array too big to count or compute in a fuzz
    run (see the module docstring): skipped, not failed."""
    if len(re.findall(r"outer|tensordot", text)) > 2 or text.count("None") > 6:
        return True
    if not SIZE_MAKERS.search(text):
        return False
    if "**" in text or "<<" in text or text.count("*") > 2 or re.search(r"\d[eE]", text):
        return True
    for lit in NUMBER.findall(text):
        try:
            v = int(lit.replace("_", ""), 0) if lit[:2].lower() in ("0x", "0o", "0b") else float(lit.replace("_", ""))
        except ValueError:
            continue
        if abs(v) > 64:
            return True
    return False


def TestOneInput(data: bytes):
    text = data.decode("utf-8", "ignore")
    if too_big(text):
        return
    try:
        r = b2lazy.evaluate(text, OPERANDS)
    except USER_ERRORS as e:
        msg = str(e)
        if isinstance(e, (SyntaxError, NameError)):
            assert " at column " in msg and msg.rstrip().endswith("^"), f"no column or caret: {msg!r} for {text!r}"
        feedback(type(e).__name__ + ": " + msg.split(" at column ")[0])
        return
    assert isinstance(r, b2lazy.Array), (text, r)
    feedback(f"ok {r.dtype} {r.ndim}")
    if r.size <= MAX_RESULT:
        for line in r.explain().splitlines():
            if "<-" in line or "|" in line:  # the tree's nodes and fused instructions
                feedback(line.split("<-")[0].strip())
        try:
            out = r.to_numpy()
        except USER_ERRORS as e:
            feedback("to_numpy " + type(e).__name__ + ": " + str(e))
            return
        assert out.shape == r.shape and out.dtype == r.dtype, (text, out.shape, r.shape, out.dtype, r.dtype)


def _dictionary(path):
    """A libFuzzer dictionary: the grammar's tokens, every function name."""
    tokens = set(b2lazy._core.expression_functions())
    tokens |= {
        "+",
        "-",
        "*",
        "/",
        "//",
        "%",
        "**",
        "@",
        "&",
        "|",
        "^",
        "~",
        "<<",
        ">>",
        "<",
        "<=",
        ">",
        ">=",
        "==",
        "!=",
        "(",
        ")",
        "[",
        "]",
        ",",
        ":",
        "::",
        ".",
        "=",
        "...",
        "None",
        "True",
        "False",
        ".T",
        ".mT",
        "axis=",
        "keepdims=",
        "dtype=",
        "axes=",
        "correction=",
        "ddof=",
        "include_initial=",
        "shape=",
        "endpoint=",
        "num=",
        "'float32'",
        "'int8'",
        "float64",
        "uint64",
        "bool",
        "0x",
        "0b",
        "1e",
        "_",
        "-1",
        "a",
        "b",
        "m",
        "i",
        "u",
        "f",
        " and ",
        " or ",
        "not ",
        "'",
        '"',
    }
    with open(path, "w") as fh:
        for t in sorted(tokens):
            fh.write('"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"\n')
        fh.write('"\\x00"\n"\\xc3\\xa9"\n"\\xff"\n')  # NUL, a UTF-8 letter, an invalid byte


def _seed_files(corpus):
    for k, s in enumerate(SEEDS + _seed_calls()):
        with open(os.path.join(corpus, f"seed{k:04d}"), "w") as fh:
            fh.write(s)


def main():
    fuzz(TestOneInput, tempfile.mkdtemp(prefix="b2lazy-fuzz-"), _seed_files, _dictionary, max_len=160)


if __name__ == "__main__":
    main()
