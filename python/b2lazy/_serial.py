"""Lazy expressions that serialise (issue #14): an Array remembers the call of the
namespace that made it (function name, arguments), and that call tree is its saved form.

The form (JSON, version 1, docs/serialization.md) names functions of the b2lazy
namespace — the same registry a user calls — never Python code: reopening replays the
calls through ``getattr(b2lazy, name)`` and nothing else, so a saved file cannot run
arbitrary code (unlike a pickle of the graph). Operands appear by URL (arrays opened
from or computed into storage) or inline (NumPy arrays, in-memory compressed arrays) up
to ``INLINE_LIMIT`` bytes; a larger in-memory operand is refused with a clear error.
Every array of the tree is saved with its shape and dtype, and reopening checks them:
an operand changed on disk since is an error, not silently different results.
"""

from __future__ import annotations

import base64
import io
import json
import math
import os
import stat

import numpy as np

FORMAT = "b2lazy-expression"
VERSION = 1
# In-memory operands (NumPy arrays, compressed arrays without a path) up to this many
# bytes travel inline; above it saving refuses (store the operand first).
INLINE_LIMIT = 64 << 20

# Marks an Array saved by its contents (an in-memory compressed array made from a NumPy
# array: its frame, not the NumPy array, which need not stay alive).
LEAF = "leaf"
# Calls replayed by other means than a namespace function.
_GETITEM, _VINDEX, _OINDEX, _CFRAME = ".getitem", ".vindex", ".oindex", ".cframe"
# x[mask] with the mask's counts per strip (args: x, mask, strip shape, counts): reopened
# without counting again.
_MASKSELECT = ".maskselect"
# x[key] = value on a lazy array (args: the old x, key, value): the updated array.
_SETITEM = ".setitem"


def _frozen(v):
    """An argument as it is now: Arrays replaced by copies of their current state, since
    x[key] = value rebinds an Array object later (the record must keep the old x)."""
    from . import Array
    if isinstance(v, Array):
        f = Array(v._a, v.stats)
        f._call = v._call
        return f
    if type(v) in (list, tuple):
        return type(v)(_frozen(x) for x in v)
    return v


def record(result, fn, args, kwargs=None):
    """Remember on `result` (an Array, or a tuple/list of them) the call that made it,
    unless an inner call already did."""
    from . import Array
    call = (fn, _frozen(tuple(args)), {k: _frozen(v) for k, v in (kwargs or {}).items()})
    if isinstance(result, Array):
        if result._call is None:
            result._call = (call, None)
    elif isinstance(result, (tuple, list)):
        for i, r in enumerate(result):
            if isinstance(r, Array) and r._call is None:
                r._call = (call, i)
    return result


def recording(name, f):
    """f, remembering on the Arrays it returns the call `name(*args, **kwargs)`."""
    import functools

    @functools.wraps(f)
    def g(*args, **kwargs):
        return record(f(*args, **kwargs), name, args, kwargs)
    return g


class _Encoder:
    def __init__(self, inline_limit):
        self.inline_limit = inline_limit
        self.calls, self.nodes = [], []
        self.call_ids, self.node_ids = {}, {}
        self.held = []  # what the ids above name stays alive (ids stay unique) while encoding

    def node(self, a):
        key = id(a._a)  # one entry per distinct array (shared operands stay shared)
        if key in self.node_ids:
            return self.node_ids[key]
        entry = {"shape": list(a.shape), "dtype": a.dtype.name}
        if isinstance(a._call, tuple):
            call, item = a._call
            entry["call"] = self.call(call)
            if item is not None:
                entry["item"] = item
        elif a.urlpath:  # computed into (or opened from) storage
            entry["call"] = self.call(("open", (a.urlpath,), {}))  # (made absolute there)
        else:  # computed in memory: its compressed frame, inline
            frame = a.to_cframe()
            self.check_inline(len(frame), f"an in-memory array of shape {a.shape} ({a.dtype})")
            entry["call"] = self.call((_CFRAME, (base64.b64encode(frame).decode(),), {}))
        self.nodes.append(entry)
        self.node_ids[key] = len(self.nodes) - 1
        self.held.append(a)
        return self.node_ids[key]

    def call(self, call):
        key = id(call)
        if key in self.call_ids:
            return self.call_ids[key]
        fn, args, kwargs = call
        if fn == "open":
            args = (os.path.abspath(os.fspath(args[0])),) + tuple(args[1:])
        entry = {"fn": fn, "args": [self.value(v) for v in args],
                 "kwargs": {k: self.value(v) for k, v in kwargs.items()}}
        self.calls.append(entry)
        self.call_ids[key] = len(self.calls) - 1
        self.held.append(call)
        return self.call_ids[key]

    def check_inline(self, nbytes, what):
        if nbytes > self.inline_limit:
            raise ValueError(
                f"cannot save {what}: it is {nbytes / 2**20:.1f} MiB in memory, above the inline limit of "
                f"{self.inline_limit / 2**20:.1f} MiB; store it first (b2lazy.asarray(x).compute(urlpath=...)) "
                f"so that the saved expression refers to it by path")

    def value(self, v):
        from . import Array
        if isinstance(v, Array):
            return {"array": self.node(v)}
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int):
            return v
        if isinstance(v, float):
            return v if math.isfinite(v) else {"float": repr(v)}
        if isinstance(v, complex):  # (parts as repr: inf and nan included)
            return {"complex": [repr(v.real), repr(v.imag)]}
        if isinstance(v, tuple):
            return {"tuple": [self.value(x) for x in v]}
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, dict):
            return {"dict": [[self.value(k), self.value(x)] for k, x in v.items()]}
        if isinstance(v, slice):
            return {"slice": [self.value(v.start), self.value(v.stop), self.value(v.step)]}
        if v is Ellipsis:
            return {"ellipsis": True}
        if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
            return {"dtype": np.dtype(v).name}
        if isinstance(v, np.generic):
            return {"npscalar": [self.value(v.item()), v.dtype.name]}
        if isinstance(v, np.ndarray):
            self.check_inline(v.nbytes, f"a NumPy operand of shape {v.shape} ({v.dtype})")
            buf = io.BytesIO()
            np.save(buf, v, allow_pickle=False)
            return {"ndarray": base64.b64encode(buf.getvalue()).decode()}
        try:
            import blosc2
            if isinstance(v, blosc2.NDArray):
                if v.schunk.urlpath:
                    return {"array": self.node(_open_path(v.schunk.urlpath))}
                frame = v.to_cframe()
                self.check_inline(len(frame), f"an in-memory blosc2 array of shape {v.shape}")
                return {"blosc2": base64.b64encode(frame).decode()}
        except ImportError:  # pragma: no cover - blosc2 is a dependency
            pass
        raise TypeError(f"cannot save an expression holding a {type(v).__name__} ({v!r:.60})")


def _open_path(path):
    from . import open as b2open
    return b2open(path)


def to_dict(a, inline_limit=None):
    """The saved form of Array `a` (a JSON-able dict)."""
    enc = _Encoder(INLINE_LIMIT if inline_limit is None else inline_limit)
    root = enc.node(a)
    return {"format": FORMAT, "version": VERSION, "root": root, "calls": enc.calls, "nodes": enc.nodes}


class _Decoder:
    def __init__(self, d, where):
        self.d, self.where = d, where
        self.calls, self.nodes = {}, {}

    def node(self, i):
        if i in self.nodes:
            return self.nodes[i]
        entry = self.d["nodes"][i]
        call = self.d["calls"][entry["call"]]
        out = self.call(entry["call"])
        if "item" in entry:
            out = out[entry["item"]]
        shape, dtype = tuple(entry["shape"]), np.dtype(entry["dtype"])
        if tuple(out.shape) != shape or out.dtype != dtype:
            what = f"operand '{call['args'][0]}'" if call["fn"] == "open" else f"{call['fn']}(...)"
            raise ValueError(f"{self.where}: {what} was saved with shape {shape} and dtype {dtype}, "
                             f"but now has shape {tuple(out.shape)} and dtype {out.dtype}; the expression "
                             f"would give different results, so it is not reopened")
        self.nodes[i] = out
        return out

    def call(self, k):
        if k in self.calls:
            return self.calls[k]
        import b2lazy
        entry = self.d["calls"][k]
        fn = entry["fn"]
        args = [self.value(v) for v in entry["args"]]
        kwargs = {key: self.value(v) for key, v in entry["kwargs"].items()}
        if fn == _GETITEM:
            out = args[0][args[1]]
        elif fn == _VINDEX:
            out = args[0].vindex[args[1]]
        elif fn == _OINDEX:
            out = args[0].oindex[args[1]]
        elif fn == _MASKSELECT:
            out = b2lazy._mask_select_counted(*args)
        elif fn == _SETITEM:
            x, key, value = args
            items = key if isinstance(key, tuple) else (key,)
            out = b2lazy._assigned(x, key, value if isinstance(value, b2lazy.Array) else b2lazy.asarray(value),
                                   b2lazy._setitem_mask(x, items))
        elif fn == _CFRAME:
            out = b2lazy.Array(b2lazy._core.from_cframe(base64.b64decode(args[0])))
        elif fn in b2lazy.__all__ and callable(getattr(b2lazy, fn, None)) and fn != "Array":
            if fn == "open" and not os.path.exists(args[0]):
                raise FileNotFoundError(f"{self.where}: operand '{args[0]}' does not exist")
            out = getattr(b2lazy, fn)(*args, **kwargs)
        else:
            raise ValueError(f"{self.where}: unknown function '{fn}' (not in the b2lazy namespace)")
        self.calls[k] = out
        return out

    def value(self, v):
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if not isinstance(v, dict):
            return v
        (tag, x), = v.items()
        if tag == "array":
            return self.node(x)
        if tag == "float":
            return float(x)
        if tag == "complex":
            return complex(float(x[0]), float(x[1]))
        if tag == "tuple":
            return tuple(self.value(y) for y in x)
        if tag == "dict":
            return {self.value(k): self.value(y) for k, y in x}
        if tag == "slice":
            return slice(*(self.value(y) for y in x))
        if tag == "ellipsis":
            return Ellipsis
        if tag == "dtype":
            return np.dtype(x)
        if tag == "npscalar":
            return np.dtype(x[1]).type(self.value(x[0]))
        if tag == "ndarray":
            return np.load(io.BytesIO(base64.b64decode(x)), allow_pickle=False)
        if tag == "blosc2":  # (read as b2lazy reads frames, validated: not by python-blosc2)
            import b2lazy
            return b2lazy.Array(b2lazy._core.from_cframe(base64.b64decode(x)))
        raise ValueError(f"{self.where}: unknown value tag '{tag}'")


def from_dict(d, where="b2lazy expression"):
    """The Array a saved form describes (checking each array's shape and dtype)."""
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise ValueError(f"{where}: not a saved b2lazy expression")
    if d.get("version") != VERSION:
        raise ValueError(f"{where}: saved with format version {d.get('version')}; this b2lazy reads version {VERSION}")
    try:
        return _Decoder(d, where).node(d["root"])
    except (KeyError, IndexError) as e:
        raise ValueError(f"{where}: a malformed saved expression ({type(e).__name__}: {e})") from None


def dumps(a, inline_limit=None):
    return json.dumps(to_dict(a, inline_limit), separators=(",", ":"))


def loads(s, where="b2lazy expression"):
    return from_dict(json.loads(s), where)


def save(a, urlpath, inline_limit=None):
    """Writes the saved form of `a` to `urlpath` (whole, or not at all)."""
    text = dumps(a, inline_limit)
    path = os.fspath(urlpath)
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def is_saved_expression(path):
    """Is the file at `path` a saved expression (JSON starting with its format tag)? Only a
    regular file is looked into: opening a FIFO or a device to read could block or consume."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and FORMAT.encode() in head


def load(path):
    with open(path) as f:
        try:
            d = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"'{path}': not a saved b2lazy expression ({e})") from None
    return from_dict(d, f"'{path}'")
