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
_KINDS = {
    "positional_only": _P.POSITIONAL_ONLY,
    "positional_or_keyword": _P.POSITIONAL_OR_KEYWORD,
    "var_positional": _P.VAR_POSITIONAL,
    "keyword_only": _P.KEYWORD_ONLY,
}

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
    if [(p.name, p.kind) for p in have] != [(p.name, p.kind) for p in want] or any(
        p.default is not _P.empty for p in have
    ):
        raise TypeError(
            f"b2lazy.{body.__name__}{inspect.signature(body)} does not match its registry "
            f"entry {sig} (same parameters and kinds, no defaults: the registry holds them)"
        )


def call_error(name, sig, args, kwargs):
    """Why `args` and `kwargs` do not bind to `sig`, in the words expression strings use
    for the same mistake (src/expr/value.cpp, Args::bind): the function's name, and for an
    unknown keyword the parameters it takes. None when they bind."""
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)]
    star = any(p.kind == _P.VAR_POSITIONAL for p in params)
    if len(args) > len(positional) and not star:
        n = len(positional)
        return f"{name}() takes at most {n} positional argument{'' if n == 1 else 's'}, got {len(args)}"
    bound = {p.name for p in positional[: len(args)]}
    for k in kwargs:
        p = sig.parameters.get(k)
        if p is not None and p.kind == _P.POSITIONAL_ONLY:
            return f"{name}() got a positional-only argument passed by keyword: '{k}'"
        if p is None or p.kind == _P.VAR_POSITIONAL:
            names = [q.name for q in params if q.kind not in (_P.VAR_POSITIONAL, _P.POSITIONAL_ONLY)]
            return (
                f"{name}() got an unexpected keyword argument '{k}' "
                f"({'it takes ' + ', '.join(names) if names else 'it takes none'})"
            )
        if k in bound:
            return f"{name}() got multiple values for argument '{k}'"
        bound.add(k)
    for p in params:
        if p.name not in bound and p.default is _P.empty and p.kind != _P.VAR_POSITIONAL:
            return f"{name}() missing required argument '{p.name}'"
    return None


def _bind(name, sig, args, kwargs):
    """sig.bind(*args, **kwargs), defaults filled in; a TypeError naming the function
    when they do not bind."""
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(call_error(name, sig, args, kwargs) or f"{name}(): {e}") from None
    bound.apply_defaults()
    return bound


_NO_OUT = object()


@functools.lru_cache(maxsize=None)
def numpy_takes_out(name):
    """Whether NumPy's function of this name takes ``out=`` (every ufunc does)."""
    import numpy as np

    f = getattr(np, name, None)
    if f is None:
        return False
    if isinstance(f, np.ufunc):
        return True
    try:
        return "out" in inspect.signature(f).parameters
    except (TypeError, ValueError):
        return False


def _pop_out(name, sig, kwargs):
    """NumPy's ``out=`` taken from `kwargs` where NumPy takes it and the registry does not
    (xarray passes ``out=None`` to the namespace's reductions): _NO_OUT when absent."""
    if "out" not in kwargs or "out" in sig.parameters or not numpy_takes_out(name):
        return _NO_OUT
    return kwargs.pop("out")


def _with_out(name, result, out):
    """`result`, or written into `out` as NumPy does when one is given."""
    if out is _NO_OUT or out is None:
        return result
    from ._numpy_protocol import store_out

    return store_out(name, result, out)


def registered(body):
    """`body` as the namespace function of its name: called through the registry's
    signature, defaults filled in; arguments that do not bind are a TypeError naming the
    function (and its parameters), as in expression strings."""
    sig = signature(body.__name__)
    _check_body(body, sig)

    @functools.wraps(body)
    def fn(*args, **kwargs):
        out = _pop_out(body.__name__, sig, kwargs)
        bound = _bind(body.__name__, sig, args, kwargs)
        return _with_out(body.__name__, body(*bound.args, **bound.kwargs), out)

    fn.__signature__ = sig
    del fn.__wrapped__  # help() and inspect show the registry's signature
    return fn


def _wrapped(v):
    """A call's result as the package's objects: engine arrays as b2lazy Arrays, tuples
    and lists item by item."""
    if isinstance(v, _core.Array):
        from ._array import Array

        return Array(v)
    if isinstance(v, (tuple, list)):
        return type(v)(_wrapped(x) for x in v)
    return v


def called(name):
    """The namespace function of a registry row that needs nothing of Python's own: the
    arguments bound to the row's signature here (with the messages expression strings
    give), then ``_core.call`` runs the row's call — the one expression strings run."""
    sig = signature(name)

    def fn(*args, **kwargs):
        out = _pop_out(name, sig, kwargs)
        bound = _bind(name, sig, args, kwargs)
        return _with_out(name, _wrapped(_core.call(name, bound.args, bound.kwargs)), out)

    fn.__name__ = fn.__qualname__ = name
    fn.__signature__ = sig
    return fn


def generated(name, body, doc):
    """A namespace function made for a whole family (elementwise, reductions): `body`
    takes the entry's parameters by keyword, defaults filled in."""
    sig = signature(name)

    def fn(*args, **kwargs):
        out = _pop_out(name, sig, kwargs)
        return _with_out(name, body(**_bind(name, sig, args, kwargs).arguments), out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    fn.__signature__ = sig
    return fn
