"""The documentation a newcomer reads: the README's quickstart runs as written in an empty
folder and prints what the README shows; README, the site's pages and the package's
docstrings name no issue numbers and no dates (they describe the package, not its history);
the docstrings' examples pass as doctests."""

from __future__ import annotations

import ast
import inspect
import os
import re
import subprocess
import sys

import pytest

import b2lazy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "README.md")
DOCS = os.path.join(ROOT, "docs")
# folders the build writes (generated from the package, the command and the headers)
GENERATED = {"_build", "auto_examples", "api", "cli", "cpp"}

ISSUE = re.compile(r"issue\s*#\s*\d+|(?<![\w&/#])#\d{1,4}(?![\w-])", re.IGNORECASE)
# dates of the project's own history (generated example data may start in 2000)
DATE = re.compile(r"\b20[2-9]\d-[01]\d(-[0-3]\d)?\b|\bsession of\b", re.IGNORECASE)


def quickstart():
    """The README's quickstart: the first ```python block after '## Quickstart' and the
    ```text block after it (what it prints)."""
    with open(README) as f:
        text = f.read()
    section = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(\w+)\n(.*?)```", section, re.S)
    code = next(body for lang, body in blocks if lang == "python")
    output = next(body for lang, body in blocks if lang == "text")
    return code, output


def test_readme_quickstart_runs_in_an_empty_folder(tmp_path):
    code, expected = quickstart()
    assert len(code.strip().splitlines()) <= 15
    script = tmp_path / "quickstart.py"
    script.write_text(code)
    work = tmp_path / "empty"
    work.mkdir()
    r = subprocess.run([sys.executable, str(script)], cwd=work, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout == expected


def test_readme_is_short():
    with open(README) as f:
        assert len(f.read().splitlines()) < 150


def pages():
    yield README
    for dirpath, dirnames, filenames in os.walk(DOCS):
        dirnames[:] = [d for d in dirnames if d not in GENERATED and not d.startswith(".")]
        for name in filenames:
            if name.endswith((".md", ".rst", ".py")):
                yield os.path.join(dirpath, name)
    gallery = os.path.join(ROOT, "examples", "gallery")
    for name in sorted(os.listdir(gallery)):
        yield os.path.join(gallery, name)


def offences(text):
    return [m.group(0) for m in ISSUE.finditer(text)] + [m.group(0) for m in DATE.finditer(text)]


@pytest.mark.parametrize("path", list(pages()), ids=lambda p: os.path.relpath(p, ROOT))
def test_pages_name_no_issue_numbers_or_dates(path):
    with open(path) as f:
        found = offences(f.read())
    assert not found, f"{os.path.relpath(path, ROOT)}: {found}"


def source_docstrings():
    """Module, class and function docstrings of python/b2lazy, as written."""
    pkg = os.path.join(ROOT, "python", "b2lazy")
    for name in sorted(os.listdir(pkg)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(pkg, name)) as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    yield f"{name}:{getattr(node, 'name', '<module>')}", doc


def public_docstrings():
    """The docstrings users read (some are made from the function registry)."""
    for n in b2lazy.__all__:
        doc = inspect.getdoc(getattr(b2lazy, n))
        if doc and callable(getattr(b2lazy, n)):
            yield f"b2lazy.{n}", doc
    for n in dir(b2lazy.Array):
        if not n.startswith("_"):
            doc = inspect.getdoc(getattr(b2lazy.Array, n))
            if doc:
                yield f"b2lazy.Array.{n}", doc


def test_docstrings_name_no_issue_numbers_or_dates():
    bad = [
        f"{where}: {found}" for where, doc in [*source_docstrings(), *public_docstrings()] if (found := offences(doc))
    ]
    assert not bad, "\n".join(bad)


# The names the docstrings' examples take for granted, as NumPy's do (``np``, and ``bl``
# for b2lazy), given to pytest's doctests by a plugin.
DOCTEST_PLUGIN = """
import numpy
import pytest

import b2lazy


@pytest.fixture(autouse=True)
def _b2lazy_doctest_names(doctest_namespace):
    doctest_namespace["np"] = numpy
    doctest_namespace["bl"] = b2lazy
"""


def test_doctests_of_the_package_pass(tmp_path):
    """pytest --doctest-modules over the installed package's modules, run in a temporary
    folder (examples write files such as a.b2nd there) without writing bytecode."""
    pkg = os.path.dirname(b2lazy.__file__)
    (tmp_path / "b2lazy_doctest_names.py").write_text(DOCTEST_PLUGIN)
    args = ["--doctest-modules", "--import-mode=importlib", "-q", "-p", "no:cacheprovider"]
    args += ["-p", "b2lazy_doctest_names", "-o", "doctest_optionflags=NORMALIZE_WHITESPACE ELLIPSIS"]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tmp_path), env.get("PYTHONPATH")) if p)
    r = subprocess.run(
        [sys.executable, "-m", "pytest", pkg, *args, "--rootdir", str(tmp_path), "-c", os.devnull],
        capture_output=True,
        text=True,
        timeout=1200,
        cwd=tmp_path,
        env=env,
    )
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
