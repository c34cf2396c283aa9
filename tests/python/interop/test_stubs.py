"""b2lazy's type stubs (python/b2lazy/__init__.pyi, distributed.pyi, py.typed): the
committed files are scripts/gen_stubs.py's output for the installed package, they are
installed with it, and type checkers see the real signatures: mypy (and pyright, whose
PyPI package runs its bundled checker on the system's node, offline) accept correct calls
and report a wrong keyword, a wrong number of arguments and an unknown function."""

from __future__ import annotations

import importlib.util
import pathlib
import shutil
import subprocess
import sys

import pytest

import b2lazy

ROOT = pathlib.Path(__file__).resolve().parents[3]

GOOD = """
import numpy as np
import b2lazy as bl
import b2lazy.distributed as bld

a = bl.asarray(np.arange(6.0).reshape(2, 3))
s: bl.Array = bl.sum(a, axis=0, keepdims=True)
m = a.mean(axis=(0, 1)) + 1
q = bl.quantile(a, 0.5, axis=1, method="nearest")
parts: tuple[bl.Array, ...] = bl.nonzero(a > 2)
z = bl.zeros((2, 3), dtype=bl.float32, chunks=(1, 3))
r = bl.reshape(a, (3, 2)).T @ a
v = bl.where(a > 1, a, 0.0).compute(chunks=(1, 3)).to_numpy()
p: bl.Plan = a.plan(chunks=(1, 3))
out = p.execute(first_task=0)
shape: tuple[int, ...] = a.shape
counts: bl.Array = bl.unique_counts(a).counts
c = bl.concat([a, a], axis=None)
n = bld.to_numpy(a, scheduler="local:1")
f: float = bl.finfo(bl.float32).eps
"""

# (line, what a checker must report there)
BAD = [
    ("bl.sum(a, axes=0)", "axes"),
    ("bl.matmul(a, a, a)", "argument"),
    ("bl.no_such_function(a)", "no_such_function"),
    ("a.mean(axes=1)", "axes"),
    ("x: str = bl.sum(a)", "str"),
]
BAD_SOURCE = "import numpy as np\nimport b2lazy as bl\n\na = bl.asarray(np.arange(6.0))\n" + "".join(
    line + "\n" for line, _ in BAD
)
FIRST_BAD_LINE = 5


def _generator():
    spec = importlib.util.spec_from_file_location("gen_stubs", ROOT / "scripts" / "gen_stubs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_committed_stubs_are_the_generators_output():
    for fname, text in _generator().stubs().items():
        committed = (ROOT / "python" / "b2lazy" / fname).read_text()
        assert committed == text, f"python/b2lazy/{fname} is stale: run scripts/gen_stubs.py"


def test_stubs_are_installed_with_the_package():
    installed = pathlib.Path(b2lazy.__file__).parent
    for fname in ("py.typed", "__init__.pyi", "distributed.pyi"):
        assert (installed / fname).is_file(), f"{fname} is not installed in {installed}"
        assert (installed / fname).read_text() == (ROOT / "python" / "b2lazy" / fname).read_text()


def test_every_public_name_is_in_the_stub():
    stub = (ROOT / "python" / "b2lazy" / "__init__.pyi").read_text()
    for name in b2lazy.__all__:
        assert f"def {name}(" in stub or f"\n{name}: " in stub or f"class {name}" in stub, name


def _check_reports(run, tmp_path):
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(BAD_SOURCE)
    rc, out = run(tmp_path / "good.py")
    assert rc == 0, out
    rc, out = run(tmp_path / "bad.py")
    assert rc != 0
    for i, (line, what) in enumerate(BAD):
        lineno = FIRST_BAD_LINE + i
        reported = [r for r in out.splitlines() if f"bad.py:{lineno}:" in r]
        assert reported and any(what in r for r in reported), f"not reported: {line!r}\n{out}"


def test_mypy_sees_the_signatures(tmp_path):
    def run(path):
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "mypy",
                "--no-incremental",
                "--python-executable",
                sys.executable,
                "--cache-dir",
                str(tmp_path / "cache"),
                str(path),
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        return p.returncode, p.stdout + p.stderr

    _check_reports(run, tmp_path)


def test_pyright_sees_the_signatures(tmp_path):
    pytest.importorskip("pyright")
    if shutil.which("node") is None:  # the PyPI package would download Node.js
        pytest.skip("pyright needs node on PATH (scripts/install.sh installs Debian's nodejs)")

    def run(path):
        p = subprocess.run(
            [sys.executable, "-m", "pyright", "--pythonpath", sys.executable, str(path)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        # pyright writes "path:line:col - error: ..."
        return p.returncode, p.stdout.replace(f"{path}:", f"{path.name}:") + p.stderr

    _check_reports(run, tmp_path)


def test_the_stubs_themselves_pass_mypy_strict(tmp_path):
    pkg = tmp_path / "b2lazy"
    pkg.mkdir()
    for fname in ("py.typed", "__init__.pyi", "distributed.pyi"):
        shutil.copy(ROOT / "python" / "b2lazy" / fname, pkg / fname)
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--no-incremental",
            "--strict",
            "--cache-dir",
            str(tmp_path / "cache"),
            "-p",
            "b2lazy",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stdout + p.stderr
