"""The C++ function registry (include/b2lazy/functions.hpp) as Python signatures.

Every namespace function that builds an array is declared once, in C++, with its
parameters, their kinds and defaults, and its aliases; expression strings bind calls by the
same table. Here each Python function gets that signature: its body names the parameters
(same names, same kinds) but declares no defaults, and ``registered`` binds every call to
the registry's signature, defaults filled in, before running the body. A body that drifts
from its entry fails at import.
"""

from __future__ import annotations

import ast
import functools
import inspect

from . import _core

_P = inspect.Parameter
_KINDS = {"positional_only": _P.POSITIONAL_ONLY, "positional_or_keyword": _P.POSITIONAL_OR_KEYWORD,
          "var_positional": _P.VAR_POSITIONAL, "keyword_only": _P.KEYWORD_ONLY}

ENTRIES = {e["name"]: e for e in _core.functions()}


def signature(name):
    """The registry's signature of function `name` as an inspect.Signature."""
    params = []
    for pname, kind, default in ENTRIES[name]["params"]:
        value = _P.empty if default is None else ast.literal_eval(default)
        params.append(_P(pname, _KINDS[kind], default=value))
    return inspect.Signature(params)


def _check_body(body, sig):
    """The body declares the entry's parameters, in order and of the same kinds, without
    defaults (the registry's are the ones that apply)."""
    have = list(inspect.signature(body).parameters.values())
    want = list(sig.parameters.values())
    if ([(p.name, p.kind) for p in have] != [(p.name, p.kind) for p in want]
            or any(p.default is not _P.empty for p in have)):
        raise TypeError(f"b2lazy.{body.__name__}{inspect.signature(body)} does not match its registry "
                        f"entry {sig} (same parameters and kinds, no defaults: the registry holds them)")


def registered(body):
    """`body` as the namespace function of its name: called through the registry's
    signature, defaults filled in."""
    sig = signature(body.__name__)
    _check_body(body, sig)
    if all(p.default is _P.empty for p in sig.parameters.values()):
        body.__signature__ = sig  # nothing to fill in: the body is the function
        return body

    @functools.wraps(body)
    def fn(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return body(*bound.args, **bound.kwargs)
    fn.__signature__ = sig
    del fn.__wrapped__  # help() and inspect show the registry's signature
    return fn


def generated(name, body, doc):
    """A namespace function made for a whole family (elementwise, reductions): `body`
    takes the entry's parameters by keyword, defaults filled in."""
    sig = signature(name)

    def fn(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return body(**bound.arguments)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    fn.__signature__ = sig
    return fn
