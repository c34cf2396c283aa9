"""Every public function, class, method and property of b2lazy has a numpydoc docstring
(a summary; Parameters naming every parameter, when it takes any; Returns; Examples), and
every docstring's examples run as doctests. A new public name without one fails here.

Sections are read by a small parser (numpydoc's own, numpydoc.docscrape, would bring
Sphinx and a docutils that conflicts with packages of the system Python)."""

from __future__ import annotations

import doctest
import inspect
import re

import numpy as np
import pytest

import b2lazy
import b2lazy.distributed

# Names whose docstrings are being written elsewhere (skipped until they come).
PENDING = set()


def _public_objects():
    """(qualified name, object, kind) of everything public: the namespace's functions and
    classes, the classes' methods and properties, b2lazy.distributed's functions."""
    seen, out = set(), []
    for name in sorted(set(b2lazy.__all__)):
        obj = getattr(b2lazy, name)
        if isinstance(obj, type):
            out.append((name, obj, "class"))
            for attr, member in sorted(vars(obj).items()):
                if attr.startswith("_"):
                    continue
                if isinstance(member, property):
                    out.append((f"{name}.{attr}", member, "property"))
                elif callable(member):
                    out.append((f"{name}.{attr}", member, "method"))
        elif inspect.isfunction(obj) and id(obj) not in seen:  # an alias is its function's object
            seen.add(id(obj))
            out.append((name, obj, "function"))
    submodules = [b2lazy.distributed] + [
        getattr(b2lazy, n) for n in b2lazy.__all__ if inspect.ismodule(getattr(b2lazy, n))
    ]
    for mod in submodules:  # b2lazy.distributed, and public submodules such as b2lazy.random
        short = mod.__name__.removeprefix("b2lazy.")
        names = getattr(mod, "__all__", [n for n in dir(mod) if not n.startswith("_")])
        for name in sorted(names):
            obj = getattr(mod, name)
            if inspect.isfunction(obj) and obj.__module__.startswith("b2lazy"):
                out.append((f"{short}.{name}", obj, "function"))
            elif isinstance(obj, type) and obj.__module__.startswith("b2lazy"):
                out.append((f"{short}.{name}", obj, "class"))
                out += [
                    (f"{short}.{name}.{a}", m, "method")
                    for a, m in sorted(vars(obj).items())
                    if not a.startswith("_") and callable(m)
                ]
    return out


OBJECTS = _public_objects()
IDS = [name for name, _, _ in OBJECTS]


def sections(doc):
    """{section title: its lines} of a numpydoc docstring; the summary under ''."""
    lines = inspect.cleandoc(doc).splitlines()
    out, title = {"": []}, ""
    i = 0
    while i < len(lines):
        if (
            i + 1 < len(lines)
            and lines[i].strip()
            and re.fullmatch(r"-{3,}", lines[i + 1].strip())
            and len(lines[i + 1].strip()) == len(lines[i].strip())
        ):
            title = lines[i].strip()
            out[title] = []
            i += 2
            continue
        out[title].append(lines[i])
        i += 1
    return out


def documented_params(lines):
    """The names a Parameters section lists ("x1, x2 : array_like" lists two)."""
    names = []
    for line in lines:
        if line and not line[0].isspace():
            head = line.split(" : ")[0].strip()
            names += [n.strip().lstrip("*") for n in head.split(",")]
    return names


def signature_params(obj, kind):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    names = [p.name for p in sig.parameters.values()]
    if kind == "method" and names and names[0] == "self":
        names = names[1:]
    return names


def test_the_list_covers_the_namespace():
    names = set(IDS)
    for expected in (
        "sum",
        "sin",
        "open",
        "evaluate",
        "Array",
        "Plan",
        "Array.compute",
        "Array.explain",
        "Array.shape",
        "Plan.execute",
        "distributed.compute",
        "unique_all",
        "finfo",
    ):
        assert expected in names


@pytest.mark.parametrize("name,obj,kind", OBJECTS, ids=IDS)
def test_numpydoc_sections(name, obj, kind):
    if name in PENDING:
        pytest.skip("its docstring is being written elsewhere")
    doc = obj.__doc__
    assert doc and doc.strip(), f"{name} has no docstring"
    s = sections(doc)
    summary = [line for line in s[""] if line.strip()]
    assert summary, f"{name}: no summary line"
    assert "Examples" in s and any(line.lstrip().startswith(">>>") for line in s["Examples"]), (
        f"{name}: no Examples section with >>> lines"
    )
    if kind in ("class", "property"):
        return
    assert "Returns" in s or "Yields" in s, f"{name}: no Returns section"
    params = signature_params(obj, kind)
    if params:
        assert "Parameters" in s, f"{name}: takes {params} but has no Parameters section"
        listed = documented_params(s["Parameters"])
        assert listed == params, f"{name}: Parameters lists {listed}, the signature has {params}"


def _doctests():
    finder = doctest.DocTestFinder(recurse=False)
    out = []
    for name, obj, _ in OBJECTS:
        if name in PENDING:
            continue
        target = obj.fget if isinstance(obj, property) else obj
        for t in finder.find(target, name, globs={"np": np, "bl": b2lazy}):
            if t.examples:
                out.append(t)
    return out


DOCTESTS = _doctests()


@pytest.mark.parametrize("test", DOCTESTS, ids=[t.name for t in DOCTESTS])
def test_examples_run(test):
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    out = []
    result = runner.run(test, out=out.append)
    assert result.failed == 0, "".join(out)


def test_registry_rows_get_their_docstring_from_the_registry():
    # A generated docstring (b2lazy/_docs.py) states the row's dtype rule and parameters.
    from b2lazy import _registry

    for entry in _registry.ENTRIES.values():
        doc = " ".join(getattr(b2lazy, entry["name"]).__doc__.split())
        if "Lazy: computed by compute() or to_numpy()" in doc:
            assert " ".join(entry["dtype_rule"].split()) in doc, entry["name"]
