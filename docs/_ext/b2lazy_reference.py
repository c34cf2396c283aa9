"""Generated pages of the API reference, and the check that every public name has one.

At ``config-inited`` this writes (into folders that are not kept in git):

- ``reference/api/``: autosummary lists of ``b2lazy.__all__``, grouped by the function
  registry's families (``b2lazy._core.functions()``), and of the submodules
  ``b2lazy.linalg``, ``b2lazy.fft``, ``b2lazy.random``, ``b2lazy.distributed`` and
  ``b2lazy.executors``; autosummary then writes a page per name;
- ``reference/cli/``: a page per subcommand of the ``b2lazy`` command, its ``--help`` run now,
  and the function table ``b2lazy functions`` prints;
- ``reference/cpp/``: a page per public C++ header of ``include/b2lazy/``, its text.

At ``env-check-consistency`` the build fails when a name of ``b2lazy.__all__`` (or of a
submodule's ``__all__``) is not a documented Python object, or when a function or class has
no page of its own.
"""

from __future__ import annotations

import collections
import os
import shutil
import subprocess
import sys
import sysconfig

from sphinx.errors import ExtensionError

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.dirname(HERE)
ROOT = os.path.dirname(DOCS)

SUBMODULES = {
    "linalg": "The Array API's linear algebra extension, with NumPy's additions.",
    "fft": "The Array API's fft extension, over FFTW.",
    "random": "Random arrays whose values depend only on the seed and the index.",
    "distributed": "Evaluation on a dask.distributed cluster (``scheduler=``).",
    "executors": "Where an evaluation runs: the executors ``scheduler=`` names.",
}

# Names of b2lazy.__all__ that are not registry functions, by topic (the rest of the
# namespace is grouped by the registry's family).
TOPICS = [
    ("Arrays and plans", ["Array", "Plan", "EagerEvaluationWarning"]),
    ("Opening, wrapping and creating arrays", ["open", "asarray", "from_array", "from_zarr", "from_dlpack"]),
    ("Evaluating and storing", ["evaluate", "compute", "store", "to_zarr", "persist", "rechunk"]),
    ("Functions on blocks", ["lazyudf", "map_blocks", "blockwise"]),
    ("Data types", ["can_cast", "finfo", "iinfo", "isdtype", "result_type", "__array_namespace_info__"]),
]
FAMILY_TITLES = {
    "creation": "Creating arrays",
    "elementwise": "Elementwise functions",
    "reduction": "Reductions",
    "holistic reduction": "Quantiles, sorting, searching, counting and binning",
    "scan": "Cumulative sums and products",
    "shape": "Shapes, indexing and manipulation",
    "indexing": "Selections",
    "linear algebra": "Linear algebra",
}
DATA_PAGE = "reference/constants"


def command_path():
    """The ``b2lazy`` command the reference documents: $B2LAZY_COMMAND, else the one
    ``pip install .`` put beside this Python (scripts/install.sh), else the one on PATH."""
    cand = [os.environ.get("B2LAZY_COMMAND"), os.path.join(sysconfig.get_path("scripts"), "b2lazy")]
    cand.append(os.path.join(os.path.dirname(sys.executable), "b2lazy"))
    cand.append(shutil.which("b2lazy"))
    for c in cand:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise ExtensionError("the b2lazy command was not found (install b2lazy, or set B2LAZY_COMMAND)")


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    old = None
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
    if old != text:  # unchanged files keep their time: Sphinx does not re-read them
        with open(path, "w") as f:
            f.write(text)


def _autosummary(names, prefix=""):
    lines = [".. autosummary::", "   :toctree: generated", ""]
    lines += [f"   {prefix}{n}" for n in names]
    return "\n".join(lines) + "\n"


def _heading(text, ch):
    return f"{text}\n{ch * len(text)}\n"


def callable_names(mod):
    return [n for n in mod.__all__ if callable(getattr(mod, n)) and not _is_dtype(getattr(mod, n))]


def _is_dtype(obj):
    import numpy as np

    return isinstance(obj, np.dtype) or type(obj).__module__ == "numpy.dtypes"


def grouped_namespace():
    """The namespace's functions by topic, then by registry family, in __all__'s order."""
    import b2lazy
    from b2lazy import _core

    names = callable_names(b2lazy)
    family = {}
    for e in _core.functions():
        family[e["name"]] = e["family"]
        for a in e["aliases"]:
            family[a] = e["family"]
    placed = set()
    groups = []
    for title, members in TOPICS:
        got = [n for n in members if n in names]
        placed.update(got)
        groups.append((title, got))
    by_family = collections.OrderedDict((f, []) for f in FAMILY_TITLES)
    rest = []
    for n in names:
        if n in placed:
            continue
        f = family.get(n)
        if f in by_family:
            by_family[f].append(n)
        else:
            rest.append(n)
    groups += [(FAMILY_TITLES[f], v) for f, v in by_family.items() if v]
    if rest:
        groups.append(("More functions", rest))
    return groups


def write_python_reference(app):
    import importlib

    out = os.path.join(DOCS, "reference", "api")
    parts = [
        _heading("The b2lazy namespace", "="),
        ".. currentmodule:: b2lazy\n",
        "Every function, class and method of ``import b2lazy``, a page each. Functions made from the "
        "engine's function registry take the registry's signature (``inspect.signature(b2lazy.add)`` "
        "is ``(x1, x2, /)``) and are also callable in expression strings (:func:`b2lazy.evaluate`, "
        "``b2lazy eval``). The data types and constants are on :doc:`/reference/constants`.\n",
    ]
    for title, names in grouped_namespace():
        parts.append(_heading(title, "-"))
        parts.append(_autosummary(names))
    _write(os.path.join(out, "namespace.rst"), "\n".join(parts))
    index = [_heading("Python API", "="), ".. toctree::", "   :maxdepth: 1", "", "   namespace"]
    for sub, blurb in SUBMODULES.items():
        mod = importlib.import_module(f"b2lazy.{sub}")
        names = getattr(mod, "__all__", None) or [
            n for n in dir(mod) if not n.startswith("_") and getattr(getattr(mod, n), "__module__", "") == mod.__name__
        ]
        page = [
            _heading(f"b2lazy.{sub}", "="),
            f".. automodule:: b2lazy.{sub}\n   :no-members:\n",
            f".. currentmodule:: b2lazy.{sub}\n",
            blurb + "\n",
            _autosummary(sorted(names, key=str.lower)),
        ]
        _write(os.path.join(out, f"{sub}.rst"), "\n".join(page))
        index.append(f"   {sub}")
    index.append("   /reference/constants")
    _write(os.path.join(out, "index.rst"), "\n".join(index) + "\n")


def write_cli_reference(app):
    exe = command_path()
    out = os.path.join(DOCS, "reference", "cli")

    def run(*args):
        r = subprocess.run([exe, *args], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise ExtensionError(f"`b2lazy {' '.join(args)}` exited with {r.returncode}: {r.stderr}")
        return r.stdout + r.stderr

    def block(text):
        return ".. code-block:: text\n\n" + "".join(f"   {line}\n" if line else "\n" for line in text.splitlines())

    subs = ["eval", "explain", "info", "functions", "demo"]
    index = [
        _heading("The b2lazy command", "="),
        "The text each subcommand prints for ``--help``, run when this site was built "
        f"(``{os.path.basename(exe)} --help``). How to use it: :doc:`/user-guide/command-line`.\n",
        block(run("--help")),
        ".. toctree::",
        "   :maxdepth: 1",
        "",
    ]
    for sub in subs:
        index.append(f"   {sub}")
        page = [_heading(f"b2lazy {sub}", "="), block(run(sub, "--help"))]
        if sub == "functions":
            page += [
                "\n",
                "The functions an expression can call (``b2lazy functions``), with their signatures:\n",
                block(run("functions")),
            ]
        _write(os.path.join(out, f"{sub}.rst"), "\n".join(page))
    _write(os.path.join(out, "index.rst"), "\n".join(index) + "\n")


def _header_summary(text):
    """The header's leading comment, as prose."""
    lines = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#pragma"):
            continue
        if s.startswith("//"):
            lines.append(s[2:].strip())
        elif lines or s:
            break
    return " ".join(lines)


def write_cpp_reference(app):
    inc = os.path.join(ROOT, "include", "b2lazy")
    out = os.path.join(DOCS, "reference", "cpp")
    headers = sorted(h for h in os.listdir(inc) if h.endswith(".hpp"))
    index = [
        _heading("C++ headers", "="),
        "The public C++ API, a page per header of ``include/b2lazy/`` with its text and comments. "
        "``#include <b2lazy/b2lazy.hpp>`` includes the main ones; how to use them: "
        ":doc:`/user-guide/cpp`.\n",
        ".. toctree::",
        "   :maxdepth: 1",
        "",
    ]
    for h in headers:
        with open(os.path.join(inc, h)) as f:
            text = f.read()
        stem = h[: -len(".hpp")]
        index.append(f"   {stem}")
        summary = _header_summary(text)
        page = [
            _heading(f"b2lazy/{h}", "="),
            (summary + "\n") if summary else "",
            f".. literalinclude:: ../../../include/b2lazy/{h}\n   :language: cpp\n",
        ]
        _write(os.path.join(out, f"{stem}.rst"), "\n".join(page))
    _write(os.path.join(out, "index.rst"), "\n".join(index) + "\n")


def generate(app, config=None):
    write_python_reference(app)
    write_cli_reference(app)
    write_cpp_reference(app)


def check_coverage(app, env):
    """Every public name is a documented object; functions and classes have a page."""
    import importlib

    import b2lazy

    objects = env.get_domain("py").objects
    missing, no_page = [], []
    mods = [("b2lazy", b2lazy)] + [(f"b2lazy.{s}", importlib.import_module(f"b2lazy.{s}")) for s in SUBMODULES]
    for modname, mod in mods:
        for n in getattr(mod, "__all__", []):
            full = f"{modname}.{n}"
            entry = objects.get(full)
            if entry is None:
                missing.append(full)
                continue
            obj = getattr(mod, n)
            if (callable(obj) and not _is_dtype(obj)) and "/generated/" not in "/" + entry.docname:
                no_page.append(f"{full} (documented on {entry.docname})")
    if "Array" in b2lazy.__all__:
        for m in dir(b2lazy.Array):
            if not m.startswith("_") and f"b2lazy.Array.{m}" not in objects:
                missing.append(f"b2lazy.Array.{m}")
    if missing or no_page:
        raise ExtensionError(
            "public names without a reference page: "
            + ", ".join(missing + no_page)
            + " (docs/_ext/b2lazy_reference.py writes the lists; data goes on docs/reference/constants.rst)"
        )


def setup(app):
    app.connect("config-inited", generate)  # before Sphinx lists the source files
    app.connect("env-check-consistency", check_coverage)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
