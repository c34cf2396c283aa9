"""The installed `b2lazy` command: eval / explain / info / demo on generated files,
outputs compared with NumPy through python-blosc2; exit statuses and messages; Ctrl-C."""

import os
import subprocess

import blosc2
import numpy as np
import pytest

import b2lazy
from conftest import B2LAZY_COMMAND

EXE = B2LAZY_COMMAND
pytestmark = pytest.mark.skipif(EXE is None, reason="the b2lazy command is not on PATH (pip install .)")


def run(*args, timeout=120):
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(3)
    a = rng.random((300, 200))
    b = rng.random((200, 150))
    a3 = rng.random((300, 4, 200))
    paths = {}
    for name, x in [("a", a), ("b", b), ("a3", a3)]:
        p = str(tmp_path / f"{name}.b2nd")
        blosc2.asarray(x, urlpath=p, chunks=tuple(max(1, s // 3) for s in x.shape), mode="w")
        paths[name] = p
    return {"a": a, "b": b, "a3": a3}, paths, tmp_path


@pytest.mark.parametrize(
    "expr, ref",
    [
        ("matmul(a, b) + 1", lambda v: v["a"] @ v["b"] + 1),
        ("matmul(sum(a3, axis=1), b)", lambda v: v["a3"].sum(axis=1) @ v["b"]),
        ("sum(a) + a", lambda v: v["a"].sum() + v["a"]),
        ("cumsum(a)", lambda v: np.cumsum(v["a"])),
        ("(sin(a) + 1)[[5, 0, 299, 5], ::3]", lambda v: (np.sin(v["a"]) + 1)[[5, 0, 299, 5], ::3]),
        ("a[a > 0.9]", lambda v: v["a"][v["a"] > 0.9]),
        ("a.T.mean(axis=1, keepdims=True)", lambda v: v["a"].T.mean(axis=1, keepdims=True)),
    ],
)
def test_eval_matches_numpy(files, expr, ref):
    vals, paths, tmp = files
    out = str(tmp / "out.b2nd")
    ops = [f"{n}={p}" for n, p in paths.items() if n in b2lazy._core.expression_names(expr)]
    r = run("eval", expr, *ops, "-o", out, "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "wrote" in r.stdout
    got = blosc2.open(out)[...]
    np.testing.assert_allclose(got, ref(vals), rtol=1e-12, atol=1e-12)


def test_eval_options_reach_the_file(files):
    vals, paths, tmp = files
    out = str(tmp / "o.b2nd")
    r = run(
        "eval",
        "a * 2",
        f"a={paths['a']}",
        "-o",
        out,
        "--chunks",
        "100,50",
        "--blocks",
        "20,50",
        "--codec",
        "lz4",
        "--clevel",
        "5",
        "--threads",
        "1",
        "--filter",
        "bitshuffle",
    )
    assert r.returncode == 0, r.stderr
    x = blosc2.open(out)
    assert x.chunks == (100, 50) and x.blocks == (20, 50)
    assert x.schunk.cparams.codec == blosc2.Codec.LZ4 and x.schunk.cparams.clevel == 5
    np.testing.assert_array_equal(x[...], vals["a"] * 2)
    info = run("info", out)
    assert info.returncode == 0
    for word in ["(300, 200)", "float64", "(100, 50)", "(20, 50)", "lz4", "clevel 5", "bitshuffle", "ratio"]:
        assert word in info.stdout, (word, info.stdout)


def test_explain_prints_the_plan(files):
    _, paths, _ = files
    r = run("explain", "matmul(a, b) + 1", f"a={paths['a']}", f"b={paths['b']}")
    assert r.returncode == 0, r.stderr
    for word in ["plan:", "matmul", "fused elementwise", "asked", "estimates:", "read (decompressed)", "peak memory"]:
        assert word in r.stdout, (word, r.stdout)


@pytest.mark.parametrize(
    "args, status, words",
    [
        ([], 2, ["usage"]),
        (["frobnicate"], 2, ["unknown command", "frobnicate"]),
        (["eval", "a + 1", "a=X"], 2, ["-o"]),
        (["eval", "a +", "a=X", "-o", "o.b2nd"], 2, ["column 4", "^"]),
        (["eval", "a + c", "a={a}", "-o", "o.b2nd"], 2, ["c", "NAME=PATH"]),
        (["eval", "sinn(a)", "a={a}", "-o", "o.b2nd"], 2, ["sin"]),
        (["eval", "a + 1", "a", "-o", "o.b2nd"], 2, ["NAME=PATH"]),
        (["eval", "a + 1", "a={a}", "-o", "o.b2nd", "--chunks", "1,x"], 2, ["--chunks"]),
        (["eval", "a + 1", "a={a}", "-o", "o.b2nd", "--bogus"], 2, ["unknown option", "--bogus"]),
        (["eval", "a + 1", "a=/no/such.b2nd", "-o", "o.b2nd"], 1, ["operand 'a'", "/no/such.b2nd"]),
        (["eval", "a @ a", "a={a}", "-o", "o.b2nd"], 1, ["matmul", "(300, 200)"]),
        (["eval", "a + 1", "a={a}", "-o", "/no/dir/o.b2nd"], 1, ["/no/dir"]),
        (["info", "/no/such.b2nd"], 1, ["/no/such.b2nd"]),
        (["info"], 2, ["info takes one path"]),
    ],
)
def test_errors_exit_status_and_message(files, args, status, words):
    _, paths, tmp = files
    args = [a.format(**paths) for a in args]
    r = subprocess.run([EXE, *args], capture_output=True, text=True, cwd=tmp, timeout=60)
    assert r.returncode == status, (r.returncode, r.stderr)
    assert r.stderr.startswith("b2lazy: ") or "usage" in r.stderr
    assert "Traceback" not in r.stderr
    for w in words:
        assert w in r.stderr, (w, r.stderr)
    assert not os.path.exists(tmp / "o.b2nd")


def test_progress_callback_and_bar(capsys):
    a = b2lazy.asarray(np.arange(10000.0).reshape(100, 100), chunks=(10, 100))
    seen = []
    (a + 1).compute(progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (10, 10) and sorted(seen) == seen
    r = (a + 1).compute(progress=True)
    np.testing.assert_array_equal(r.to_numpy(), np.arange(10000.0).reshape(100, 100) + 1)
    with pytest.raises(TypeError, match="progress"):
        (a + 1).compute(progress="yes")


def test_explain_after_compute_has_measured_stats(tmp_path):
    x = np.random.default_rng(1).random((400, 300))
    p = str(tmp_path / "x.b2nd")
    b2lazy.asarray(x).compute(urlpath=p, chunks=(100, 100), blocks=(20, 100))
    a = b2lazy.open(p)
    e = b2lazy.sum(a, axis=0) + a
    plan = e.explain()
    assert "computed once" in plan and "sum(axis=0)" in plan and "kept in memory" in plan
    assert "measured" not in plan
    r = e.compute()
    measured = r.explain()
    assert "measured:" in measured and "chunk reads" in measured
    assert "estimates:" in measured


def test_demo_runs(tmp_path):
    r = run("demo", "--n", "256", "--dir", str(tmp_path), "--no-progress", timeout=300)
    assert r.returncode == 0, r.stderr
    for e in ["matmul(a, b) + b", "matmul(sum(a3, axis=1), b)", "sum(a) + a", "cumsum(a)", "a[a > 0.99]"]:
        assert e in r.stdout, (e, r.stdout)
    assert "NumPy would hold" in r.stdout


def test_eval_on_a_local_cluster(files):
    """--scheduler local:2: the same evaluation on a dask.distributed LocalCluster (the
    command hands it to the Python package); the options still reach the file."""
    pytest.importorskip("distributed")
    vals, paths, tmp = files
    for out in (str(tmp / "d.b2nd"), str(tmp / "d.zarr")):
        r = run(
            "eval",
            "matmul(a, b) + sum(a)",
            f"a={paths['a']}",
            f"b={paths['b']}",
            "-o",
            out,
            "--chunks",
            "100,50",
            "--scheduler",
            "local:2",
            "--no-progress",
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
        assert "wrote" in r.stdout and "on local:2" in r.stdout
        got = b2lazy.open(out)
        assert "(100, 50)" in run("info", out).stdout
        np.testing.assert_allclose(got.to_numpy(), vals["a"] @ vals["b"] + vals["a"].sum(), rtol=1e-12)
    r = run("eval", "a - mea(a)", f"a={paths['a']}", "-o", str(tmp / "x.b2nd"), "--scheduler", "local:2")
    assert r.returncode == 2 and "did you mean 'mean'" in r.stderr  # checked before any cluster starts
    assert not os.path.exists(tmp / "x.b2nd")


def test_eval_on_local_processes(files):
    """--scheduler processes:2: local worker processes (b2lazy._processes), no dask."""
    vals, paths, tmp = files
    out = str(tmp / "p.b2nd")
    r = run("eval", "a - mean(a, axis=0)", f"a={paths['a']}", "-o", out, "--scheduler", "processes:2", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "wrote" in r.stdout and "on processes:2" in r.stdout
    np.testing.assert_allclose(b2lazy.open(out).to_numpy(), vals["a"] - vals["a"].mean(axis=0), rtol=1e-12, atol=1e-12)
    assert sorted(os.listdir(tmp)) == ["a.b2nd", "a3.b2nd", "b.b2nd", "p.b2nd"]


def test_functions_lists_the_registry():
    """`b2lazy functions` prints every registry function with the Python package's
    signature; NAME shows its family, dtype rule, aliases."""
    import inspect

    out = run("functions")
    assert out.returncode == 0
    lines = set(out.stdout.splitlines())
    for entry in b2lazy._core.functions():
        assert f"{entry['name']}{inspect.signature(getattr(b2lazy, entry['name']))}" in lines
    one = run("functions", "max")
    assert one.returncode == 0 and "aliases: amax" in one.stdout and "also a method" in one.stdout
    bad = run("functions", "nope")
    assert bad.returncode == 2 and "no function 'nope'" in bad.stderr
