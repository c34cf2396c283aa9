"""The b2lazy command's face (issue #37, part 6): --help on every subcommand, `info` on a
saved lazy expression, exit status 2 for every expression error (keywords too)."""

import subprocess

import numpy as np
import pytest

import b2lazy as bl
from conftest import B2LAZY_COMMAND

pytestmark = pytest.mark.skipif(B2LAZY_COMMAND is None, reason="the b2lazy command is not on PATH (pip install .)")

COMMANDS = ["eval", "explain", "info", "functions", "demo"]


def run(*args, cwd=None):
    return subprocess.run([B2LAZY_COMMAND, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.mark.parametrize("cmd", COMMANDS)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_on_every_subcommand(cmd, flag):
    r = run(cmd, flag)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"usage: b2lazy {cmd}")
    assert "-h, --help" in r.stdout and r.stderr == ""


def test_help_lists_every_option_the_subcommand_takes():
    text = run("eval", "--help").stdout
    for opt in [
        "-o, --output",
        "--chunks",
        "--blocks",
        "--shards",
        "--codec",
        "--clevel",
        "--filter",
        "--compressor",
        "--threads",
        "--max-memory",
        "--progress",
        "--no-progress",
        "--scheduler",
    ]:
        assert opt in text, opt
    demo = run("demo", "--help").stdout
    for opt in ["--n", "--dir", "--threads", "--keep"]:
        assert opt in demo, opt
    assert "--help" in run("--help").stdout


def test_help_wins_over_missing_arguments():
    # (what would otherwise be a usage error: no expression, no output)
    assert run("eval", "--help").returncode == 0
    assert run("info", "a", "b", "--help").returncode == 0


@pytest.fixture
def saved(tmp_path):
    x = np.random.default_rng(5).random((300, 200))
    path = str(tmp_path / "a.b2nd")
    bl.asarray(x).compute(urlpath=path, chunks=(100, 100))
    a = bl.open(path)
    e = bl.sum(a, axis=0) + bl.sin(a) * np.arange(200.0)
    out = str(tmp_path / "e.b2lazy")
    e.save(out)
    return out, path, e


def test_info_on_a_saved_expression(saved):
    out, path, e = saved
    r = run("info", out)
    assert r.returncode == 0, r.stderr
    plan = e.plan()
    for word in [
        out,
        "saved lazy expression",
        path,
        "shape (300, 200), float64",
        "shape (200,), float64",
        "shape     (300, 200)",
        "dtype     float64",
        f"chunks {plan.chunks}",
        f"{plan.nchunks} chunks in {plan.ntasks} tasks",
        f"{len(plan.stages)} stage",
        "computed once",
        "projected peak",
    ]:
        assert word in r.stdout, (word, r.stdout)


def test_info_on_a_saved_expression_whose_operand_changed(saved, tmp_path):
    out, path, _ = saved
    bl.zeros((3, 3)).compute(urlpath=path)  # same path, another shape
    r = run("info", out)
    assert r.returncode == 1
    assert r.stderr.startswith("b2lazy: error: ") and "Traceback" not in r.stderr
    assert "(300, 200)" in r.stderr


def test_info_on_a_stored_array_is_unchanged(saved):
    _, path, _ = saved
    r = run("info", path)
    assert r.returncode == 0 and "contiguous frame" in r.stdout and "ratio" in r.stdout


@pytest.mark.parametrize(
    "expr, words",
    [
        ("sum(a, axes=0)", ["sum()", "unexpected keyword argument 'axes'", "it takes axis, keepdims, dtype"]),
        ("sum(a, 0, 1, 2, 3)", ["sum() takes at most"]),
        ("matmul(a)", ["matmul() missing required argument"]),
        ("sin(a, b=1)", ["sin()", "'b'"]),
        ("a +", ["column"]),
        ("sinn(a)", ["sin"]),
    ],
)
def test_every_expression_error_exits_2(saved, tmp_path, expr, words):
    _, path, _ = saved
    r = run("eval", expr, f"a={path}", "-o", str(tmp_path / "o.b2nd"), cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.startswith("b2lazy: error: ")
    for w in words:
        assert w in r.stderr, (w, r.stderr)
    assert not (tmp_path / "o.b2nd").exists()
    assert run("explain", expr, f"a={path}").returncode == 2


def test_version_is_the_packages():
    r = run("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"b2lazy {bl.__version__}"
