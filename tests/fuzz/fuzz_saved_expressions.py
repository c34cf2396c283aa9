"""Fuzzes saved lazy expressions (docs/user-guide/saving.md) read through b2lazy.open, with
atheris (libFuzzer for Python).

    python tests/fuzz/fuzz_saved_expressions.py                      # bounded run (~1 min)
    python tests/fuzz/fuzz_saved_expressions.py -max_total_time=600  # longer; any libFuzzer flag
    python tests/fuzz/fuzz_saved_expressions.py CRASH_FILE           # replay one input

An input is either raw bytes for the file (first byte odd) or, structure-aware, the choice
of a valid saved form (FORMS: expressions over b2nd, Zarr, HDF5 and .b2z operands, inline
NumPy arrays and frames, python-blosc2's saved LazyExpr, mask selections, nonzero, unique,
evaluate, indexing, x[k] = v) and of up to four mutations of it: a field replaced by another value (ids out of range,
self-references and cycles, wrong types, tags with bad payloads, other function names and
URLs), a key or item deleted, two calls or nodes swapped, a byte of an inline frame or
.npy flipped. The file is opened; an expression whose every saved node is small is
evaluated with to_numpy(), saved again and reopened.

The run fails on a crash, a hang past -timeout, past -rss_limit_mb, or an exception other
than those the format documents: at open a ValueError or OSError naming the file; at
evaluation ValueError, OSError, TypeError or IndexError (an operand's own errors name the
operand). Outcomes feed the coverage signal of fuzz_feedback.py.
"""

from __future__ import annotations

import base64
import copy
import json
import math
import os
import tempfile

import atheris
import numpy as np

from fuzz_feedback import feedback, fuzz

with atheris.instrument_imports():
    import b2lazy

OPEN_ERRORS = (ValueError, OSError)
EVAL_ERRORS = (ValueError, OSError, TypeError, IndexError)
MAX_ITEMS = 100_000
INPUT = None  # the file each input is written to (set in main)
FORMS = []  # valid saved forms (set in main)
FUNCTIONS = [
    "add",
    "sin",
    "sum",
    "nonzero",
    "unique_values",
    "unique_all",
    "reshape",
    "arange",
    "open",
    "evaluate",
    "zeros",
    "full",
    "concat",
    "matmul",
    "where",
    "take",
    "sort",
    "repeat",
    "cumsum",
    "broadcast_to",
    ".getitem",
    ".vindex",
    ".oindex",
    ".cframe",
    ".maskselect",
    ".setitem",
    "Plan",
    "Array",
    "_core",
    "lazyudf",
    "bool",
    "float64",
    "e",
    "linspace",
    "meshgrid",
    "astype",
    "eye",
    "",
]
STRINGS = [
    "float64",
    "int8",
    "bool",
    "object",
    "nan",
    "inf",
    "-inf",
    "1e400",
    "a + 1",
    "nonzero(a > 0)[0]",
    "a[a > 1]",
    "a\ud800",
    "/dev/zero",
    "/proc/self/mem",
    "http://x/a.b2nd",
    "zarr:",
    "hdf5:x#/",
    "b2z:s.b2z#/",
    "a.b2nd",
    "../a.b2nd",
    "le.b2nd",
    "z.zarr",
    "f.h5#/g/x",
    "s.b2z#/x",
    "input.b2lazy",
    "AAAA",
    "!!",
    "",
]
TAGS = [
    "array",
    "float",
    "complex",
    "tuple",
    "dict",
    "slice",
    "ellipsis",
    "dtype",
    "npscalar",
    "ndarray",
    "blosc2",
    "bogus",
]


def _seed_forms(work):
    """Saved forms of expressions over every kind of operand (written into `work`)."""
    import blosc2
    import h5py
    import zarr

    x = np.arange(24.0).reshape(4, 6) % 5
    a_path = os.path.join(work, "a.b2nd")
    b2lazy.asarray(x, chunks=(2, 3), blocks=(1, 3)).compute(urlpath=a_path)
    zarr.save_array(os.path.join(work, "z.zarr"), x * 2)
    with h5py.File(os.path.join(work, "f.h5"), "w") as f:
        f["g/x"] = x + 1
    s = blosc2.DictStore(os.path.join(work, "s.b2z"), mode="w")
    s["/x"] = x - 1
    s.close()
    (blosc2.open(a_path) * 2 + 1).save(urlpath=os.path.join(work, "le.b2nd"))  # python-blosc2's LazyExpr
    a = b2lazy.open(a_path)
    z = b2lazy.open(os.path.join(work, "z.zarr"))
    h = b2lazy.open(os.path.join(work, "f.h5#/g/x"))
    b = b2lazy.open(os.path.join(work, "s.b2z#/x"))
    idx = b2lazy.asarray(np.array([2, 0, 1]))
    inline = b2lazy.asarray(x, chunks=(2, 3), blocks=(1, 3))
    w = b2lazy.asarray(x) + 0
    w[1:3, 2] = 7.5
    exprs = [
        a + 1,
        b2lazy.sin(a) * 2 + z,
        a[a > 2],
        b2lazy.nonzero(a > 2)[1],
        b2lazy.unique_values(h),
        b2lazy.sum(a, axis=0) + b,
        a[1:3, ::2],
        a.vindex[idx, idx],
        a.oindex[idx, :],
        a[idx + 0],
        b2lazy.evaluate("a * 2 + b", a=a, b=z),
        inline + 1,
        b2lazy.asarray(x) * a,
        w,
        b2lazy.concat([a, h], axis=0),
        b2lazy.matmul(a, b2lazy.matrix_transpose(z)),
        b2lazy.where(a > 1, a, -h),
        b2lazy.take(a, np.array([0, 5]), axis=1),
        b2lazy.reshape(a, (6, 4)).astype(np.float32),
        b2lazy.sort(b, axis=1),
        b2lazy.cumsum(a, axis=1),
        b2lazy.repeat(a, 2, axis=0),
        b2lazy.full((3,), np.int16(4)) + b2lazy.linspace(0, 1, 3),
        a[..., None, 1:2],
        a * (1 + 2j),
        b2lazy.open(os.path.join(work, "le.b2nd")) - a,
    ]
    return [b2lazy._serial.to_dict(e) for e in exprs]


def _paths(v, out, prefix=()):
    """Every (container, key) in a JSON value."""
    if isinstance(v, dict):
        for k, x in v.items():
            out.append((v, k))
            _paths(x, out)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out.append((v, i))
            _paths(x, out)
    return out


def _value(fdp, d):
    n = max(len(d.get("nodes", [])) if isinstance(d.get("nodes"), list) else 1, 1)
    kind = fdp.ConsumeIntInRange(0, 11)
    if kind == 0:
        return fdp.PickValueInList([-2, -1, 0, 1, 2, 3, 7, n - 1, n, 2**31, 2**63, -(2**63), 10**12, 10**30])
    if kind == 1:
        return fdp.PickValueInList(STRINGS + FUNCTIONS)
    if kind == 2:
        return fdp.PickValueInList([None, True, False, [], {}, 0.5, math.nan, math.inf, 1e308])
    if kind == 3:
        return {"array": fdp.ConsumeIntInRange(-1, n)}
    if kind == 4:
        tag = fdp.PickValueInList(TAGS)
        return {tag: _value(fdp, d) if fdp.ConsumeBool() else fdp.PickValueInList([[], [1, 2, 3], "nan", True, 0])}
    if kind == 5:
        return {"tuple": [_value(fdp, d) for _ in range(fdp.ConsumeIntInRange(0, 3))]}
    if kind == 6:
        return [_value(fdp, d) for _ in range(fdp.ConsumeIntInRange(0, 3))]
    if kind == 7:
        paths = _paths(d, [])
        if paths:
            c, k = paths[fdp.ConsumeIntInRange(0, len(paths) - 1)]
            return copy.deepcopy(c[k])
        return None
    if kind == 8:
        return fdp.ConsumeUnicodeNoSurrogates(12)
    if kind == 9:
        return {
            "shape": [fdp.ConsumeIntInRange(0, 10**6) for _ in range(fdp.ConsumeIntInRange(0, 3))],
            "dtype": fdp.PickValueInList(STRINGS[:6]),
            "call": fdp.ConsumeIntInRange(-1, n),
        }
    if kind == 10:
        return {"fn": fdp.PickValueInList(FUNCTIONS), "args": [_value(fdp, d)], "kwargs": {}}
    return fdp.ConsumeIntInRange(-3, 10)


def _flip_inline(d, fdp):
    """Flips a byte of an inline frame or .npy (base64 text) of the form."""
    texts = [(c, k) for c, k in _paths(d, []) if isinstance(c[k], str) and len(c[k]) > 40]
    if not texts:
        return
    c, k = texts[fdp.ConsumeIntInRange(0, len(texts) - 1)]
    try:
        raw = bytearray(base64.b64decode(c[k]))
    except ValueError:
        return
    if raw:
        raw[fdp.ConsumeIntInRange(0, len(raw) - 1)] = fdp.ConsumeIntInRange(0, 255)
        c[k] = base64.b64encode(bytes(raw)).decode()


def _mutate(d, fdp):
    op = fdp.ConsumeIntInRange(0, 5)
    paths = _paths(d, [])
    if op <= 1 and paths:  # a field replaced
        c, k = paths[fdp.ConsumeIntInRange(0, len(paths) - 1)]
        c[k] = _value(fdp, d)
    elif op == 2 and paths:  # a key or item deleted
        c, k = paths[fdp.ConsumeIntInRange(0, len(paths) - 1)]
        del c[k]
    elif op == 3:  # two calls or two nodes swapped
        lst = d.get(fdp.PickValueInList(["calls", "nodes"]))
        if isinstance(lst, list) and len(lst) > 1:
            i, j = fdp.ConsumeIntInRange(0, len(lst) - 1), fdp.ConsumeIntInRange(0, len(lst) - 1)
            lst[i], lst[j] = lst[j], lst[i]
    elif op == 4:
        _flip_inline(d, fdp)
    else:  # a reference pointed elsewhere: itself, a later node, the root
        refs = [(c, k) for c, k in paths if k in ("array", "call", "root")]
        if refs:
            c, k = refs[fdp.ConsumeIntInRange(0, len(refs) - 1)]
            c[k] = fdp.ConsumeIntInRange(-1, 2 + len(d.get("nodes", [])) if isinstance(d.get("nodes"), list) else 3)


def _small(d):
    """Is every node the form names small (then evaluating it is cheap: each node's shape
    is checked against the saved one before anything uses it)?"""
    try:
        nodes = d["nodes"]
        return all(len(n["shape"]) <= 8 and math.prod(n["shape"]) <= MAX_ITEMS for n in nodes)
    except Exception:  # noqa: BLE001 - malformed: open refuses it
        return True


def TestOneInput(data: bytes):
    if not data:
        return
    if data[0] & 1:
        text = data[1:]
        try:
            d = json.loads(text)
        except Exception:  # noqa: BLE001
            d = {}
    else:
        fdp = atheris.FuzzedDataProvider(data[1:])
        d = copy.deepcopy(FORMS[fdp.ConsumeIntInRange(0, len(FORMS) - 1)])
        for _ in range(fdp.ConsumeIntInRange(0, 4)):
            _mutate(d, fdp)
        text = json.dumps(d).encode("utf-8", "surrogatepass")
    with open(INPUT, "wb") as fh:
        fh.write(text)
    try:
        e = b2lazy.open(INPUT)
    except OPEN_ERRORS as err:
        assert repr(INPUT)[1:-1] in str(err) or INPUT in str(err), f"an error that does not name the file: {err!r}"
        feedback("open " + type(err).__name__ + ": " + str(err).replace(INPUT, "PATH"))
        return
    assert isinstance(e, b2lazy.Array), type(e)
    feedback(f"opened {e.dtype} {e.ndim} {type(e).__name__}")
    if not (isinstance(d, dict) and _small(d)) or math.prod(e.shape) > MAX_ITEMS:
        return
    try:
        out = e.to_numpy()
    except EVAL_ERRORS as err:
        feedback("eval " + type(err).__name__ + ": " + str(err).replace(INPUT, "PATH"))
        return
    assert out.shape == tuple(e.shape) and out.dtype == e.dtype, (out.shape, e.shape, out.dtype, e.dtype)
    again = b2lazy._serial.loads(b2lazy._serial.dumps(e))
    assert tuple(again.shape) == out.shape and again.dtype == out.dtype
    feedback("evaluated")


def _dictionary(path):
    tokens = [
        '"array"',
        '"tuple"',
        '"slice"',
        '"dict"',
        '"npscalar"',
        '"ndarray"',
        '"blosc2"',
        '".cframe"',
        '".maskselect"',
        '"stamp"',
        '"item"',
        '"root"',
        '"calls"',
        '"nodes"',
        '"fn"',
        '"args"',
        '"kwargs"',
        '"shape"',
        '"dtype"',
        '"call"',
        '"open"',
        '"evaluate"',
        '"nonzero"',
        '"unique_values"',
        '"Plan"',
        '"zarr:',
        '"hdf5:',
        '"b2z:',
        "#/",
        "\\ud800",
        "[[[[",
        "1e400",
        "-1",
        "9223372036854775808",
    ]
    with open(path, "w") as fh:
        for t in tokens:
            fh.write('"' + "".join(f"\\x{b:02x}" for b in t.encode()) + '"\n')


def _seeds(corpus):
    for i, form in enumerate(FORMS):
        with open(os.path.join(corpus, f"form{i}"), "wb") as fh:
            fh.write(bytes([0, i, 0, 0, 0]))
        with open(os.path.join(corpus, f"raw{i}"), "wb") as fh:
            fh.write(b"\x01" + json.dumps(form).encode())


def main():
    global INPUT
    work = tempfile.mkdtemp(prefix="b2lazy-fuzz-saved-")
    INPUT = os.path.join(work, "input.b2lazy")
    os.chdir(work)  # (relative URLs a mutation makes resolve here)
    FORMS.extend(_seed_forms(work))
    fuzz(TestOneInput, work, _seeds, _dictionary, max_len=16384)


if __name__ == "__main__":
    main()
