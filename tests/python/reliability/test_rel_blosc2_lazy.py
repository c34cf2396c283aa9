"""Issue #36, item 6: python-blosc2's saved LazyExpr opened as the expression it holds
(zeros before), its LazyUDF refused by name; hostile carriers (the same b2nd frames made by
hand) give clear errors, never Python's eval, a loop or work at open.

The oracle: python-blosc2 itself, opening the file with deserialize="full"."""

from __future__ import annotations

import os
import shutil
import subprocess

import blosc2
import numpy as np
import pytest

import b2lazy as bl
from conftest import B2LAZY_COMMAND


def reference(path):
    return blosc2.open(path, deserialize="full")[:]


@pytest.fixture
def operands(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x = np.arange(16.0).reshape(4, 4)
    y = np.linspace(-1, 1, 16).reshape(4, 4)
    (tmp_path / "sub").mkdir()
    a = blosc2.asarray(x, urlpath="a.b2nd", mode="w", chunks=(2, 4), blocks=(1, 4))
    b = blosc2.asarray(y, urlpath="sub/b.b2nd", mode="w")
    return a, b, x, y


def test_lazyexpr_opens_as_its_expression(operands, tmp_path):
    """The issue's recipe, and expressions over two operands (one in a subdirectory)
    with functions: b2lazy gives python-blosc2's values (it gave zeros)."""
    a, b, x, y = operands
    cases = {
        "le.b2nd": (a + 1, x + 1),
        "le2.b2nd": (a * b + 2, x * y + 2),
        "le3.b2nd": (blosc2.sin(a) ** 2 - b / 3, np.sin(x) ** 2 - y / 3),
    }
    for name, (lazy, ref) in cases.items():
        lazy.save(urlpath=name)
        got = bl.open(name).to_numpy()
        np.testing.assert_allclose(got, reference(name), rtol=1e-14, err_msg=name)
        np.testing.assert_allclose(got, ref, rtol=1e-14, err_msg=name)
    # python-blosc2 saves where(c, x, y) as its condition alone (and reads bools back):
    # refused, since it disagrees with the dtype saved.
    blosc2.where(a > 5, a, b).save(urlpath="le4.b2nd")
    with pytest.raises(ValueError, match=r"'le4.b2nd'.*'\(o0 > 5\)'.*dtype bool here.*saved .*dtype float64"):
        bl.open("le4.b2nd")
    # Relative operand paths follow the carrier when the directory moves.
    shutil.copytree(tmp_path, tmp_path.parent / (tmp_path.name + "-moved"))
    moved = str(tmp_path.parent / (tmp_path.name + "-moved") / "le2.b2nd")
    os.remove(tmp_path / "a.b2nd")
    np.testing.assert_allclose(bl.open(moved).to_numpy(), x * y + 2, rtol=1e-14)
    # An expression over it saves and reopens (by the carrier's path).
    e = bl.open(moved) * 2
    e.save(str(tmp_path / "e.b2lazy"))
    np.testing.assert_allclose(bl.open(str(tmp_path / "e.b2lazy")).to_numpy(), 2 * (x * y + 2), rtol=1e-14)


def test_lazyudf_is_refused_by_name(operands):
    a, _, _, _ = operands
    u = blosc2.lazyudf(lambda inputs, output, offset: np.add(inputs[0], 1, output), (a,), dtype=np.float64)
    u.save(urlpath="udf.b2nd")
    with pytest.raises(
        ValueError, match=r"'udf.b2nd': a python-blosc2 LazyUDF \(Python code, which b2lazy does not run\)"
    ):
        bl.open("udf.b2nd")


def test_command_reads_lazyexpr_and_refuses_lazyudf(operands, tmp_path):
    if B2LAZY_COMMAND is None:
        pytest.skip("no b2lazy command")
    a, _, x, _ = operands
    (a + 1).save(urlpath="le.b2nd")
    r = subprocess.run(
        [B2LAZY_COMMAND, "eval", "e * 2", "e=le.b2nd", "-o", "out.b2nd", "--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(bl.open("out.b2nd").to_numpy(), (x + 1) * 2)
    u = blosc2.lazyudf(lambda inputs, output, offset: np.add(inputs[0], 1, output), (a,), dtype=np.float64)
    u.save(urlpath="udf.b2nd")
    r = subprocess.run(
        [B2LAZY_COMMAND, "eval", "e * 2", "e=udf.b2nd", "-o", "out2.b2nd", "--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode != 0 and "LazyUDF" in r.stderr, r.stderr


def carrier(path, expression, operands, shape=(4, 4), dtype=np.float64, kind="lazyexpr"):
    """A python-blosc2 LazyExpr carrier written by hand (as a hostile file could be)."""
    arr = blosc2.empty(shape, dtype=dtype, urlpath=str(path), mode="w", meta={"b2o": {"kind": kind, "version": 1}})
    arr.schunk.vlmeta["b2o"] = {"kind": kind, "version": 1, "expression": expression, "operands": operands}
    return str(path)


def ref(p):
    return {"kind": "urlpath", "version": 1, "urlpath": p}


HOSTILE = [
    ("nonzero(o0 > 3)[0]", {"o0": ref("a.b2nd")}, (12,), np.int64, "computes when built"),
    ("o0[o0 > 3]", {"o0": ref("a.b2nd")}, (12,), np.float64, "computes when built"),
    ("unique_values(o0)", {"o0": ref("a.b2nd")}, (16,), np.float64, r"computes when built|unique_values"),
    ("o0 + 1", {"o0": ref("a.b2nd")}, (4, 5), np.float64, r"gives shape \(4, 4\).*saved shape \(4, 5\)"),
    ("o0 + 1", {"o0": ref("a.b2nd")}, (4, 4), np.float32, r"dtype float64.*dtype float32"),
    ("__import__('os').system('true')", {"o0": ref("a.b2nd")}, (4, 4), np.float64, r"LazyExpr '__import__"),
    ("o0 + o1", {"o0": ref("a.b2nd")}, (4, 4), np.float64, r"o1"),
    ("o0 + 1", {"o0": ref("missing.b2nd")}, (4, 4), np.float64, r"operand 'o0'.*missing\.b2nd"),
    (
        "o0 + 1",
        {"o0": {"kind": "c2array", "path": "x", "urlbase": "http://example.com"}},
        (4, 4),
        np.float64,
        r"operand 'o0'.*kind 'c2array'",
    ),
    ("o0 + 1", {"o0": ref("self.b2nd")}, (4, 4), np.float64, r"nested more than 8 deep"),
    ("o0 + 1", {"o0": 5}, (4, 4), np.float64, r"not a reference to a stored array"),
    (5, {"o0": ref("a.b2nd")}, (4, 4), np.float64, r"without an expression string"),
]


@pytest.mark.parametrize("case", range(len(HOSTILE)))
def test_hostile_carriers_are_clear_errors(operands, tmp_path, case):
    expression, ops, shape, dtype, words = HOSTILE[case]
    name = "self.b2nd" if "self.b2nd" in str(ops) else "h.b2nd"
    path = carrier(tmp_path / name, expression, ops, shape, dtype)
    with pytest.raises((ValueError, OSError)) as e:
        bl.open(path).to_numpy()
    assert path in str(e.value) or name in str(e.value), str(e.value)
    import re

    assert re.search(words, str(e.value)), str(e.value)


def test_other_persisted_kinds_are_refused_by_name(tmp_path):
    path = carrier(tmp_path / "k.b2nd", "o0", {}, kind="something")
    with pytest.raises(ValueError, match="persisted object of kind 'something'"):
        bl.open(path)
