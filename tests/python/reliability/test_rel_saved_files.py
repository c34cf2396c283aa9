"""Issue #36: hostile and unlucky saved expressions (docs/serialization.md).

A saved expression is a small JSON file that other people may have made: opening it must
not crash, hang, do work proportional to data, read paths it does not name, or give values
of other data quietly. Each test checks one of the issue's defects against NumPy."""
from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import b2lazy as bl

TIMEOUT = 300


def b64(b):
    return base64.b64encode(bytes(b)).decode()


def saved(path, calls, nodes, root=None):
    d = {"format": "b2lazy-expression", "version": 1, "root": len(nodes) - 1 if root is None else root,
         "calls": calls, "nodes": nodes}
    with open(path, "w") as f:
        json.dump(d, f)
    return str(path)


def run(code, cwd):
    """`code` in a fresh interpreter (a crash is its exit status, not ours)."""
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, capture_output=True, text=True,
                       timeout=TIMEOUT)
    return p.returncode, p.stdout, p.stderr


# --- item 1: a corrupt inline frame is a clean error, never a crash ---------------------------
MUTATIONS = """
import base64, json, random
import numpy as np, b2lazy as bl
ref = np.arange(256.).reshape(16, 16)
frame = bl.asarray(ref, chunks=(8, 8), blocks=(4, 4)).to_cframe()
def open_saved(f, tag):
    call = ({"fn": ".cframe", "args": [base64.b64encode(bytes(f)).decode()], "kwargs": {}} if tag == ".cframe" else
            {"fn": "asarray", "args": [{"blosc2": base64.b64encode(bytes(f)).decode()}], "kwargs": {}})
    d = {"format": "b2lazy-expression", "version": 1, "root": 0, "calls": [call],
         "nodes": [{"shape": [16, 16], "dtype": "float64", "call": 0}]}
    with open("e.b2lazy", "w") as fh:
        json.dump(d, fh)
    return bl.open("e.b2lazy").to_numpy()
f = bytearray(frame); f[634] = 1   # the issue's recipe
for tag in (".cframe", "blosc2"):
    try:
        open_saved(f, tag)
    except (OSError, ValueError) as e:
        print("recipe", tag, type(e).__name__, e)
rng = random.Random(36)
outcomes = {"values": 0, "error": 0}
for i in range(400):
    f = bytearray(frame)
    f[rng.randrange(len(f))] = rng.randrange(256)
    try:
        got = open_saved(f, ".cframe" if i % 2 else "blosc2")
        assert got.shape == ref.shape and got.dtype == ref.dtype
        outcomes["values"] += 1
    except (OSError, ValueError, TypeError) as e:
        outcomes["error"] += 1
print("outcomes", outcomes)
"""


def test_corrupt_inline_frames_are_clean_errors(tmp_path):
    """The issue's recipe (byte 634 of a frame set to 1) and 400 random single-byte
    mutations of an inline frame, as `.cframe` and as a `blosc2` value: the process ends
    normally, each mutation either opens (a frame has no checksum: a byte of compressed data
    may change values, never shape or dtype) or is an OSError/ValueError (TypeError for a
    dtype b2lazy does not handle, as for b2nd files)."""
    rc, out, err = run(MUTATIONS, tmp_path)
    assert rc == 0, f"exit status {rc}: {err[-2000:]}"
    assert "recipe .cframe OSError 'memory#" in out and "recipe blosc2 OSError 'memory#" in out, out
    assert "outcomes" in out, out


# --- item 8: stale saved selections ---------------------------------------------------------
N = 1_100_000  # float64: three strips of the mask's counts (about 4 MiB of values each)


def test_stale_mask_counts_are_never_reused(tmp_path):
    """a[a > 5] saved while only the first strip held Trues (64 of them); a.b2nd rewritten
    with the same shape and dtype: 128 Trues now, or 64 in another strip. The counts taken
    from the old data are not reused: the mask is counted again when the values are
    needed, and a selection of another length than saved is refused naming the change."""
    path = str(tmp_path / "a.b2nd")
    x = np.zeros(N)
    x[:64] = 10
    bl.asarray(x).compute(urlpath=path)
    a = bl.open(path)
    sel = a[a > 5]
    assert sel.shape == (64,)
    saved_path = str(tmp_path / "sel.b2lazy")
    sel.save(saved_path)
    np.testing.assert_array_equal(bl.open(saved_path).to_numpy(), x[x > 5])  # unchanged: counts reused

    x[-64:] = 10  # 128 Trues: another length
    bl.asarray(x).compute(urlpath=path)
    back = bl.open(saved_path)
    with pytest.raises(ValueError, match=r"a\.b2nd'.*saved with shape \(64,\).*now has shape \(128,\).*changed since"):
        back.to_numpy()

    y = np.zeros(N)
    y[-64:] = 7  # 64 Trues again, all in the last strip
    bl.asarray(y).compute(urlpath=path)
    np.testing.assert_array_equal(bl.open(saved_path).to_numpy(), y[y > 5])
    np.testing.assert_array_equal(bl.open(saved_path).compute().to_numpy(), y[y > 5])


def test_stale_mask_in_place_write_is_detected(tmp_path):
    """The same through mode="r+" (the file keeps its inode; its mtime and ctime change)."""
    path = str(tmp_path / "a.b2nd")
    x = np.zeros(N)
    x[:64] = 10
    bl.asarray(x).compute(urlpath=path, chunks=(100_000,))
    a = bl.open(path)
    saved_path = str(tmp_path / "sel.b2lazy")
    a[a > 5].save(saved_path)
    w = bl.open(path, mode="r+")
    w[-64:] = 10
    with pytest.raises(ValueError, match=r"saved with shape \(64,\).*now has shape \(128,\)"):
        bl.open(saved_path).to_numpy()


# --- item 9: every operand URL round-trips ---------------------------------------------------
def _url_operands(tmp_path):
    import blosc2
    import h5py
    import zarr
    x = np.arange(12.0).reshape(3, 4)
    with h5py.File(tmp_path / "f.h5", "w") as f:
        f["g/x"] = x
    zarr.save_array(str(tmp_path / "z.zarr"), x)
    zarr.save_array(str(tmp_path / "zd" / "arr"), x)
    s = blosc2.DictStore(str(tmp_path / "s.b2z"), mode="w")
    s["/x"] = x
    s.close()
    bl.asarray(x).compute(urlpath=str(tmp_path / "a.b2nd"))
    return x, ["f.h5#/g/x", "hdf5:f.h5#/g/x", "z.zarr", "zarr:z.zarr", "zarr:zd/arr", "s.b2z#/x",
               "b2z:s.b2z#/x", "a.b2nd", "b2nd:a.b2nd", ("s.b2z", {"key": "x"}), ("f.h5", {"dataset": "/g/x"})]


def test_every_operand_url_round_trips(tmp_path, monkeypatch):
    """Expressions over each URL b2lazy.open accepts (relative to the working directory
    when made) save, reopen from another working directory, and pickle."""
    import pickle
    monkeypatch.chdir(tmp_path)
    x, urls = _url_operands(tmp_path)
    for u in urls:
        a = bl.open(u[0], **u[1]) if isinstance(u, tuple) else bl.open(u)
        e = a * 2 + 1
        e.save("e.b2lazy")
        monkeypatch.chdir("/")
        np.testing.assert_array_equal(bl.open(str(tmp_path / "e.b2lazy")).to_numpy(), 2 * x + 1, err_msg=str(u))
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(e)).to_numpy(), 2 * x + 1, err_msg=str(u))
        monkeypatch.chdir(tmp_path)


# --- item 10: depth ----------------------------------------------------------------------------
@pytest.mark.parametrize("depth", [250, 1000])
def test_long_chains_save_pickle_and_reopen(tmp_path, depth):
    import pickle
    x = np.arange(6.0)
    y = bl.asarray(x)
    for _ in range(depth):
        y = y + 1
    path = str(tmp_path / "chain.b2lazy")
    y.save(path)
    np.testing.assert_array_equal(bl.open(path).to_numpy(), x + depth)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(y)).to_numpy(), x + depth)
    z = bl.open(path)
    z.save(path)  # a reopened chain saves again
    np.testing.assert_array_equal(bl.open(path).to_numpy(), x + depth)


def _chain_file(path, n, last_ref):
    calls = [{"fn": "arange", "args": [4], "kwargs": {}}]
    nodes = [{"shape": [4], "dtype": "int64", "call": 0}]
    for i in range(1, n):
        calls.append({"fn": "negative", "args": [{"array": i - 1}], "kwargs": {}})
        nodes.append({"shape": [4], "dtype": "int64", "call": i})
    calls[0] = {"fn": "negative", "args": [{"array": last_ref}], "kwargs": {}}
    return saved(path, calls, nodes)


def test_cycles_and_self_references_are_named(tmp_path):
    path = tmp_path / "cycle.b2lazy"
    saved(path, [{"fn": "negative", "args": [{"array": 0}], "kwargs": {}}], [{"shape": [4], "dtype": "int64", "call": 0}])
    with pytest.raises(ValueError, match=r"cycle\.b2lazy'.*calls\[0\].*nodes\[0\] refers to itself"):
        bl.open(str(path))
    _chain_file(path, 5000, 4999)  # a cycle through 5000 nodes
    with pytest.raises(ValueError, match=r"cycle\.b2lazy'.*a cycle"):
        bl.open(str(path))
    chain = _chain_file(tmp_path / "ok.b2lazy", 5000, 0)  # a DAG: node 0 made by arange again
    d = json.load(open(chain))
    d["calls"][0] = {"fn": "arange", "args": [4], "kwargs": {}}
    json.dump(d, open(chain, "w"))
    np.testing.assert_array_equal(bl.open(chain).to_numpy(), -np.arange(4))  # 4999 negations


# --- item 13: malformed files name the file and the position -----------------------------------
GOOD_CALLS = [{"fn": "arange", "args": [6], "kwargs": {}},
              {"fn": "add", "args": [{"array": 0}, 1.5], "kwargs": {}}]
GOOD_NODES = [{"shape": [6], "dtype": "int64", "call": 0}, {"shape": [6], "dtype": "float64", "call": 1}]

MALFORMED = [  # (what is changed, the position named)
    (lambda d: d.update(calls={"x": 1}), r"malformed at calls: a list is needed"),
    (lambda d: d.update(nodes=[1, 2]), r"malformed at nodes\[0\]: a node is an object"),
    (lambda d: d.update(root="0"), r"malformed at root"),
    (lambda d: d.update(root=7), r"malformed at root: 7 names no node"),
    (lambda d: d["nodes"][1].update(shape=[6, "x"]), r"malformed at nodes\[1\]\.shape"),
    (lambda d: d["nodes"][1].update(shape=[-1]), r"malformed at nodes\[1\]\.shape"),
    (lambda d: d["nodes"][1].update(dtype="object"), r"malformed at nodes\[1\]\.dtype"),
    (lambda d: d["nodes"][1].update(call=9), r"malformed at nodes\[1\]\.call: 9 names no call"),
    (lambda d: d["nodes"][1].update(item="a"), r"malformed at nodes\[1\]\.item"),
    (lambda d: d["calls"].__setitem__(1, [1, 2, 3]), r"malformed at calls\[1\]: a call is an object"),
    (lambda d: d["calls"][1].update(args={"a": 1}), r"malformed at calls\[1\]\.args: a list"),
    (lambda d: d["calls"][1].update(kwargs=[1]), r"malformed at calls\[1\]\.kwargs"),
    (lambda d: d["calls"][1].update(fn=3), r"malformed at calls\[1\]\.fn"),
    (lambda d: d["calls"][1]["args"].__setitem__(0, {"array": 5}), r"malformed at calls\[1\]\.args\[0\]\.array: 5 names no node"),
    (lambda d: d["calls"][1]["args"].__setitem__(0, {"array": "0"}), r"calls\[1\]\.args\[0\]\.array"),
    (lambda d: d["calls"][1]["args"].__setitem__(0, {"array": 0, "x": 1}), r"calls\[1\]\.args\[0\]: a tagged value has one key"),
    (lambda d: d["calls"][1]["args"].__setitem__(1, {"slice": [1, 2]}), r"calls\[1\]\.args\[1\]\.slice: a list of 3"),
    (lambda d: d["calls"][1]["args"].__setitem__(1, {"dict": [[1, 2, 3]]}), r"calls\[1\]\.args\[1\]\.dict"),
    (lambda d: d["calls"][1]["args"].__setitem__(1, {"float": "x"}), r"calls\[1\]\.args\[1\]\.float"),
    (lambda d: d["calls"][1]["args"].__setitem__(1, {"complex": ["1"]}), r"calls\[1\]\.args\[1\]\.complex"),
    (lambda d: d["calls"][1]["args"].__setitem__(1, {"npscalar": [1, "object"]}), r"calls\[1\]\.args\[1\]\.npscalar"),
    (lambda d: d["calls"][1]["args"].__setitem__(1, {"npscalar": [300, "int8"]}), r"calls\[1\]\.args\[1\]: not a int8 scalar"),
    (lambda d: d["calls"][1]["args"].__setitem__(1, {"ndarray": "!!"}), r"calls\[1\]\.args\[1\]: not base64"),
    (lambda d: d["calls"][1]["args"].__setitem__(1, {"ndarray": "AAAA"}), r"calls\[1\]\.args\[1\]: not an \.npy array"),
    (lambda d: d["calls"][1]["args"].__setitem__(1, {"bogus": 1}), r"calls\[1\]\.args\[1\]: unknown value tag"),
    (lambda d: d["calls"][1]["args"].__setitem__(1, {"tuple": json.loads("[" * 70 + "1" + "]" * 70)}), r"nest at most"),
    (lambda d: d["calls"].__setitem__(1, {"fn": ".getitem", "args": [1, 2], "kwargs": {}}), r"calls\[1\]\.args\[0\]: an array"),
    (lambda d: d["calls"].__setitem__(1, {"fn": ".getitem", "args": [{"array": 0}], "kwargs": {}}), r"calls\[1\]: \.getitem takes 2 arguments"),
    (lambda d: d["calls"].__setitem__(1, {"fn": ".cframe", "args": [5], "kwargs": {}}), r"calls\[1\]\.args\[0\]: base64 text"),
    (lambda d: d["calls"].__setitem__(1, {"fn": "open", "args": [{"array": 0}], "kwargs": {}}), r"calls\[1\]: open takes one URL"),
    (lambda d: d["calls"].__setitem__(1, {"fn": "evaluate", "args": ["a + 1"], "kwargs": {}}), r"calls\[1\]: evaluate takes"),
    (lambda d: d["calls"][1].update(fn="Plan"), r"calls\[1\]\.fn: unknown function 'Plan'"),
    (lambda d: d["calls"][1].update(fn="float64"), r"calls\[1\]\.fn: unknown function"),
    (lambda d: d["calls"][1].update(fn="bool"), r"calls\[1\]\.fn: unknown function"),
    (lambda d: d["calls"][1].update(fn="pi"), r"calls\[1\]\.fn: unknown function"),
    (lambda d: d["calls"][1].update(fn="_core"), r"calls\[1\]\.fn: unknown function"),
    (lambda d: d["calls"][1].update(fn="_serial"), r"calls\[1\]\.fn: unknown function"),
    (lambda d: d["calls"][1].update(fn="np"), r"calls\[1\]\.fn: unknown function"),
    (lambda d: d["calls"][1].update(fn="result_type"), r"nodes\[1\]: calls\[1\] \(result_type\) returns Float64DType, not an array"),
    (lambda d: d["nodes"][1].update(item=1), r"nodes\[1\]\.item: calls\[1\] does not return 2 arrays"),
    (lambda d: d["calls"][1]["args"].append(3), r"calls\[1\] \(add\): "),
    (lambda d: d["calls"][1]["kwargs"].update(bogus=1), r"calls\[1\] \(add\): "),
    (lambda d: d["calls"].__setitem__(0, {"fn": "reshape", "args": [{"array": 1}, "x"], "kwargs": {}}), r"cycle"),
    (lambda d: d["calls"].__setitem__(1, {"fn": "evaluate", "args": ["a\ud800 + 1", {"dict": [["a", {"array": 0}]]}], "kwargs": {}}),
     r"calls\[1\] \(evaluate\): evaluate: the expression: not valid text: a lone surrogate"),
]


@pytest.mark.parametrize("case", range(len(MALFORMED)))
def test_malformed_files_name_the_file_and_position(tmp_path, case):
    change, words = MALFORMED[case]
    d = {"format": "b2lazy-expression", "version": 1, "root": 1, "calls": json.loads(json.dumps(GOOD_CALLS)),
         "nodes": json.loads(json.dumps(GOOD_NODES))}
    path = tmp_path / "bad.b2lazy"
    change(d)
    path.write_text(json.dumps(d))
    with pytest.raises((ValueError, TypeError)) as e:
        bl.open(str(path))
    assert f"'{path}'" in str(e.value) and re.search(words, str(e.value)), str(e.value)
    assert e.type is ValueError, str(e.value)


def test_malformed_json_names_the_file(tmp_path):
    path = tmp_path / "bad.b2lazy"
    for text in ('{"format": "b2lazy-expression", "version": 1, ', '{"format": "b2lazy-expression"' + "[" * 100000,
                 b'{"format": "b2lazy-expression", "version": 1, "root": 0, "x": "\xff\xfe"}'):
        (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
        with pytest.raises(ValueError, match=re.escape(f"'{path}'")):
            bl.open(str(path))


def test_lone_surrogates_are_value_errors_naming_the_argument():
    a = bl.asarray(np.arange(3.0))
    with pytest.raises(ValueError, match=re.escape("evaluate: the expression: not valid text: a lone surrogate "
                                                   "'\\ud800' at position 1")):
        bl.evaluate("a\ud800", a=a)
    with pytest.raises(ValueError, match="evaluate: an operand name"):
        bl.evaluate("a + 1", {"a\udc00": a})
    with pytest.raises(ValueError, match="open\\(\\): urlpath: not valid text"):
        bl.open("x\ud800.b2nd")


def test_saved_evaluate_never_reads_the_callers_variables(tmp_path):
    """evaluate() with no operands looks names up in its caller's variables: a saved call
    always carries its operands, and a file without them is refused."""
    path = tmp_path / "e.b2lazy"
    secret = bl.asarray(np.arange(3.0))  # noqa: F841 - what a hostile file would like to read
    saved(path, [{"fn": "evaluate", "args": ["secret + 1", {"dict": []}], "kwargs": {}}],
          [{"shape": [3], "dtype": "float64", "call": 0}])
    with pytest.raises(ValueError, match=r"calls\[0\] \(evaluate\).*secret"):
        bl.open(str(path)).to_numpy()
