"""Lazy expressions that serialise: an Array remembers the call of the
namespace that made it (function name, arguments), and that call tree is its saved form.

The form (JSON, version 1, docs/user-guide/saving.md) names functions of the b2lazy
namespace — the same registry a user calls — never Python code: reopening replays the
calls through ``getattr(b2lazy, name)`` and nothing else, so a saved file cannot run
arbitrary code (unlike a pickle of the graph). Operands appear by URL (arrays opened
from or computed into storage) or inline (NumPy arrays, in-memory compressed arrays) up
to ``INLINE_LIMIT`` bytes; a larger in-memory operand is refused with a clear error.
Every array of the tree is saved with its shape and dtype, and reopening checks them:
an operand changed on disk since is an error, not silently different results.

Saved files may come from other people: the whole structure is checked
before anything is replayed (an error names the file and the position in it), the tree
is walked with explicit stacks (no depth limit but memory), and reopening does no work
proportional to data: a call that would compute now (nonzero, unique_*, a mask counted
again, an index array read) is deferred to the first use of its values (_Deferred).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import math
import os
import re
import stat
import sys
import threading
import types

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
# without counting again when the mask's operands are unchanged (their "stamp").
_MASKSELECT = ".maskselect"
# The keyword under which a .maskselect call is recorded with the stamps of its mask's
# stored operands, taken when it was counted (saved on those operands' open calls).
STAMPS = "_stamps"
# x[key] = value on a lazy array (args: the old x, key, value): the updated array.
_SETITEM = ".setitem"
# The internal calls and how many arguments each takes.
_INTERNAL_ARITY = {_GETITEM: 2, _VINDEX: 2, _OINDEX: 2, _CFRAME: 1, _MASKSELECT: 4, _SETITEM: 3}
# URL schemes b2lazy.open reads ("zarr:PATH", "hdf5:f#/x", ...); any other "x://" is refused.
_SCHEMES = ("file", "b2nd", "zarr", "hdf5", "b2z")
# Values (tuples, lists, dicts) nest at most this deep in a saved form.
_MAX_NESTING = 64
_FLOAT_WORDS = ("nan", "inf", "-inf")

_local = threading.local()  # .opening: replaying a saved form; .max_memory: a deferred call's budget
# storage_options of remote operands opened in this process, by URL: shipped with pickles
# (dask tasks) so workers open their own connections; never written by save().
_storage_by_url = {}
_storage_lock = threading.Lock()


def is_remote(url):
    """Does `url` name a remote store (https://, s3://, gs://, memory://, simplecache::...)?"""
    from . import _core

    if not isinstance(url, str):
        return False
    try:
        url.encode("utf-8")
    except UnicodeEncodeError:
        return False  # not a URL; opening it as a path names the bad character
    return _core.is_remote_url(url)


def remember_storage(url, storage_options):
    """Records the storage_options a remote URL was opened with (None: forgets them)."""
    with _storage_lock:
        if storage_options:
            _storage_by_url[url] = dict(storage_options)
        else:
            _storage_by_url.pop(url, None)


def _leaf_urls(a):
    """The URLs of the stored operands Array `a` is made of, each node visited once."""
    seen, todo = set(), [a]
    while todo:
        x = todo.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        url = _leaf_url(x)
        if url is not None:
            yield url
        else:
            todo.extend(_Encoder.operands(x))


def storage_of(a):
    """{URL: storage_options} of the remote operands Array `a` reads, as opened here."""
    out = {}
    for url in _leaf_urls(a):
        with _storage_lock:
            if url in _storage_by_url:
                out[url] = _storage_by_url[url]
    return out


class WouldCompute(BaseException):
    """Raised by b2lazy._context while a saved form is replayed: the call would compute
    now, so it is deferred instead. (BaseException: no `except Exception` may swallow it.)"""


def opening():
    """Is a saved form being replayed on this thread (where nothing may be computed)?"""
    return bool(getattr(_local, "opening", 0))


def max_memory():
    """The max_memory of the compute()/to_numpy() that runs a deferred call, or None."""
    return getattr(_local, "max_memory", None)


class _Flag:
    def __init__(self, name, value):
        self.name, self.value = name, value

    def __enter__(self):
        self.old = getattr(_local, self.name, None)
        setattr(_local, self.name, self.value)

    def __exit__(self, *exc):
        setattr(_local, self.name, self.old)


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


def namespace():
    """The b2lazy package, for the modules defining its parts: its functions as callers get
    them (each records its call, see recording below), looked up when called (the modules
    are loaded before all of them exist)."""
    return sys.modules[__package__]


def record(result, fn, args, kwargs=None):
    """Remember on `result` (an Array, or a tuple/list of them) the call that made it,
    unless an inner call already did."""
    from . import Array

    if (kwargs or {}).get("out") is not None:  # written into `out`: not a call to replay
        return result
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


# --- operand URLs --------------------------------------------------------------------------
_SCHEME_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")


def _split_scheme(url):
    """(prefix, path) of an operand URL: "zarr:", "hdf5://" and "zarr:file://" prefixes are
    b2lazy's schemes; other "x:..." are paths, as for b2lazy.open. A URL of another scheme
    ("ftp://...") is a ValueError unless a byte store takes it (is_remote): remote URLs are
    kept whole."""
    if is_remote(url):
        return "", url
    m = _SCHEME_RE.match(url)
    if not m:
        return "", url
    scheme = m.group(1).lower()
    if scheme not in _SCHEMES:
        if url.startswith("://", m.end() - 1):
            raise ValueError(f"'{url}' is a URL of scheme '{scheme}', which no byte store takes")
        return "", url
    n = m.end()
    if url.startswith("//", n):
        n += 2
    if scheme != "file" and url.startswith("file://", n):
        n += 7
    return url[:n], url[n:]


def absolute_url(url, base):
    """`url` with its path made absolute against directory `base` (not normalised: a
    member key after '#' stays as written)."""
    if is_remote(url):
        return url
    prefix, path = _split_scheme(url)
    if path and not path.startswith("/"):
        path = os.path.join(base, path)
    return prefix + path


def _file_part(path):
    """The file or directory an operand path names (a container's path without its
    "#/member" key), or None when nothing there exists."""
    if os.path.lexists(path):
        return path
    hash_ = path.rfind("#")
    while hash_ > 0:
        if os.path.lexists(path[:hash_]):
            return path[:hash_]
        hash_ = path.rfind("#", 0, hash_)
    return None


def stamp(path):
    """What identifies the content at `path` without reading it: [size, mtime_ns, inode,
    ctime_ns] of a file (a file replaced has another inode, one written in place another
    mtime and ctime); for a directory (Zarr, sparse b2nd) ["dir", a digest of its files'
    names and stamps]."""
    st = os.stat(path)
    if not stat.S_ISDIR(st.st_mode):
        return [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]
    h = hashlib.sha256()
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            p = os.path.join(root, name)
            try:
                s = os.stat(p)
            except OSError:
                continue
            h.update(
                f"{os.path.relpath(p, path)}\0{s.st_size}\0{s.st_mtime_ns}\0{s.st_ino}\0{s.st_ctime_ns}\n".encode(
                    "utf-8", "surrogateescape"
                )
            )
    return ["dir", h.hexdigest()]


def _operand_stamp(url):
    if is_remote(url):
        return None  # (not looked at: a remote operand is counted again at reopening)
    try:
        part = _file_part(_split_scheme(url)[1])
        return None if part is None else stamp(part)
    except (OSError, ValueError):
        return None


def _leaf_url(a):
    """The URL Array `a` is saved by when it is a stored operand (an open call, or computed
    into storage), absolute; else None."""
    if isinstance(a._call, tuple):
        (fn, args, kwargs), _ = a._call
        if fn != "open":
            return None
        url = os.fspath(args[0])
        member = kwargs.get("key", kwargs.get("dataset"))
        if member is not None:
            url = f"{url}#{member if member.startswith('/') else '/' + member}"
        return absolute_url(url, os.getcwd())
    if _is_deferred(a) or not a.urlpath:
        return None
    url = a.urlpath
    kind = a._a.kind
    if kind in ("zarr", "hdf5") and _split_scheme(url)[0] == "":
        url = f"{kind}:{url}"  # (a Zarr directory or HDF5 file of any name)
    return absolute_url(url, os.getcwd())


def source_stamps(a):
    """{URL: stamp} of the stored operands Array `a` is made of (what its values are read
    from: taken before counting a mask, they identify the data the counts are of)."""
    out = {}
    for url in _leaf_urls(a):
        s = _operand_stamp(url)
        if s is not None:
            out[url] = s
    return out


# --- saving --------------------------------------------------------------------------------
def _is_deferred(a):
    return isinstance(a, _Deferred) and a._core_a is None


class _Encoder:
    def __init__(self, inline_limit):
        self.inline_limit = inline_limit
        self.calls, self.nodes = [], []
        self.call_ids, self.node_ids = {}, {}
        self.held = []  # what the ids above name stays alive (ids stay unique) while encoding

    @staticmethod
    def key(a):
        """One entry per distinct array: shared operands stay shared (frozen copies keep
        the core and the call), a copy (asarray) of an array is a node of its own."""
        return ("deferred", id(a)) if _is_deferred(a) else (id(a._a), id(a._call))

    def node(self, root):
        """The id of Array `root`'s node, its operands' first (an explicit stack: chains of
        any length)."""
        stack, pending = [root], set()
        while stack:
            a = stack[-1]
            k = self.key(a)
            if k in self.node_ids:
                stack.pop()
                continue
            deps = [d for d in self.operands(a) if self.key(d) not in self.node_ids]
            if deps:
                if k in pending:
                    raise ValueError("cannot save an expression whose call tree has a cycle")
                pending.add(k)
                stack.extend(deps)
                continue
            stack.pop()
            self.emit(a)
        return self.node_ids[self.key(root)]

    @staticmethod
    def operands(a):
        """The Arrays among the arguments of the call that made `a`."""
        from . import Array

        if not isinstance(a._call, tuple):
            return []
        (_, args, kwargs), _ = a._call
        out, todo = [], [(v, 0) for v in (*args, *kwargs.values())]
        while todo:
            v, depth = todo.pop()
            if isinstance(v, Array):
                out.append(v)
            elif isinstance(v, (tuple, list)) and depth < _MAX_NESTING:
                todo.extend((x, depth + 1) for x in v)
            elif isinstance(v, dict) and depth < _MAX_NESTING:
                todo.extend((x, depth + 1) for kv in v.items() for x in kv)
        return out

    def emit(self, a):
        entry = {"shape": list(a.shape), "dtype": a.dtype.name}
        if isinstance(a._call, tuple):
            call, item = a._call
            entry["call"] = self.call(call)
            if item is not None:
                entry["item"] = item
        elif a.urlpath:  # computed into (or opened from) storage
            entry["call"] = self.call(("open", (_leaf_url(a),), {}))
        else:  # computed in memory: its compressed frame, inline
            frame = a.to_cframe()
            self.check_inline(len(frame), f"an in-memory array of shape {a.shape} ({a.dtype})")
            entry["call"] = self.call((_CFRAME, (base64.b64encode(frame).decode(),), {}))
        self.nodes.append(entry)
        self.node_ids[self.key(a)] = len(self.nodes) - 1
        self.held.append(a)

    def call(self, call):
        key = id(call)
        if key in self.call_ids:
            return self.call_ids[key]
        fn, args, kwargs = call
        if fn == "open":  # one URL, absolute, with the member key in it
            url = os.fspath(args[0])
            member = kwargs.get("key", kwargs.get("dataset"))
            if member is not None:
                url = f"{url}#{member if member.startswith('/') else '/' + member}"
            args, kwargs = (absolute_url(url, os.getcwd()),), {}
        stamps = None
        if fn == _MASKSELECT:
            kwargs = dict(kwargs)
            stamps = kwargs.pop(STAMPS, None) or {}
        entry = {
            "fn": fn,
            "args": [self.value(v) for v in args],
            "kwargs": {k: self.value(v) for k, v in kwargs.items()},
        }
        if stamps is not None:  # the counts hold for the mask's operands as they were counted
            self.stamp_operands(entry["args"][1]["array"], stamps)
        self.calls.append(entry)
        self.call_ids[key] = len(self.calls) - 1
        self.held.append(call)
        return self.call_ids[key]

    def stamp_operands(self, node_id, stamps):
        """Records on the stored operands under node `node_id` the stamps `stamps` gives
        ({URL: stamp}, taken when the counts were): an operand without one, or stamped
        differently by another selection, is counted again at reopening."""
        for c in _leaf_calls(self.nodes, self.calls, node_id):
            if c["fn"] == "open":
                s = stamps.get(c["args"][0])
                if "stamp" not in c and s is not None:
                    c["stamp"] = s
                elif c.get("stamp") != s:
                    c["stamp"] = ["dir", "conflicting stamps"]  # (matches nothing)

    def check_inline(self, nbytes, what):
        if nbytes > self.inline_limit:
            raise ValueError(
                f"cannot save {what}: it is {nbytes / 2**20:.1f} MiB in memory, above the inline limit of "
                f"{self.inline_limit / 2**20:.1f} MiB; store it first (b2lazy.asarray(x).compute(urlpath=...)) "
                f"so that the saved expression refers to it by path"
            )

    def value(self, v, depth=0):
        from . import Array

        if depth > _MAX_NESTING:
            raise ValueError(f"cannot save an argument nested deeper than {_MAX_NESTING} levels")
        if isinstance(v, Array):
            k = self.key(v)
            return {"array": self.node_ids[k] if k in self.node_ids else self.node(v)}
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int):
            return v
        if isinstance(v, float):
            return v if math.isfinite(v) else {"float": repr(v)}
        if isinstance(v, complex):  # (parts as repr: inf and nan included)
            return {"complex": [repr(v.real), repr(v.imag)]}
        if isinstance(v, tuple):
            return {"tuple": [self.value(x, depth + 1) for x in v]}
        if isinstance(v, list):
            return [self.value(x, depth + 1) for x in v]
        if isinstance(v, dict):
            return {"dict": [[self.value(k, depth + 1), self.value(x, depth + 1)] for k, x in v.items()]}
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
        if hasattr(v, "unsaved_reason"):  # a region source's reader (b2lazy/_wrapping.py)
            raise TypeError(v.unsaved_reason())
        raise TypeError(f"cannot save an expression holding a {type(v).__name__} ({v!r:.60})")


def _leaf_calls(nodes, calls, node_id):
    """The calls of the nodes without array operands under `node_id` (each once)."""
    seen, todo, out = set(), [node_id], []
    while todo:
        i = todo.pop()
        if i in seen:
            continue
        seen.add(i)
        c = calls[nodes[i]["call"]]
        refs = _refs(c)
        if refs:
            todo.extend(refs)
        else:
            out.append(c)
    return out


def _refs(call):
    """The node ids a (checked) call entry names."""
    out, todo = [], [*call["args"], *call["kwargs"].values()]
    while todo:
        v = todo.pop()
        if isinstance(v, list):
            todo.extend(v)
        elif isinstance(v, dict):
            ((tag, x),) = v.items()
            if tag == "array":
                out.append(x)
            elif tag in ("tuple", "slice", "dict", "npscalar"):
                todo.append(x)
    return out


def _open_path(path):
    from . import open as b2open

    return b2open(path)


def to_dict(a, inline_limit=None):
    """The saved form of Array `a` (a JSON-able dict)."""
    enc = _Encoder(INLINE_LIMIT if inline_limit is None else inline_limit)
    root = enc.node(a)
    return {"format": FORMAT, "version": VERSION, "root": root, "calls": enc.calls, "nodes": enc.nodes}


# --- reopening: the structure, checked before anything runs ----------------------------------
class _Checker:
    """Checks a saved form's structure: every field's type and range, each value's tag,
    the functions named, and that the nodes form no cycle. Errors are ValueErrors naming
    `where` (the file) and the position ("calls[3].args[1]")."""

    def __init__(self, d, where):
        self.d, self.where = d, where

    def bad(self, pos, problem):
        return ValueError(f"{self.where}: malformed at {pos}: {problem}")

    def check(self):
        from ._dtypes import ACCEPTED

        self.dtypes = set(ACCEPTED)
        d = self.d
        for field, kind in (("calls", list), ("nodes", list)):
            if not isinstance(d.get(field), kind):
                raise self.bad(field, f"a list is needed, got {_kind(d.get(field))}")
        self.ncalls, self.nnodes = len(d["calls"]), len(d["nodes"])
        root = d.get("root")
        if not _is_int(root) or not 0 <= root < self.nnodes:
            raise self.bad("root", f"{root!r:.40} names no node (there are {self.nnodes})")
        for i, n in enumerate(d["nodes"]):
            self.node(n, f"nodes[{i}]")
        self.refs = [None] * self.ncalls
        for k, c in enumerate(d["calls"]):
            self.refs[k] = self.call(c, f"calls[{k}]")
        return self.order(root)

    def is_dtype(self, name):
        return isinstance(name, str) and name in self.dtypes

    def node(self, n, pos):
        if not isinstance(n, dict):
            raise self.bad(pos, f"a node is an object, got {_kind(n)}")
        shape = n.get("shape")
        if not isinstance(shape, list) or len(shape) > 64 or not all(_is_int(s) and 0 <= s < 2**63 for s in shape):
            raise self.bad(f"{pos}.shape", f"a list of at most 64 sizes (integers >= 0), got {shape!r:.60}")
        if not self.is_dtype(n.get("dtype")):
            raise self.bad(f"{pos}.dtype", f"{n.get('dtype')!r:.40} is not a dtype b2lazy reads")
        if not _is_int(n.get("call")) or not 0 <= n["call"] < self.ncalls:
            raise self.bad(f"{pos}.call", f"{n.get('call')!r:.40} names no call (there are {self.ncalls})")
        if "item" in n and (not _is_int(n["item"]) or not 0 <= n["item"] < 64):
            raise self.bad(f"{pos}.item", f"an integer in 0..63, got {n['item']!r:.40}")

    def call(self, c, pos):
        if not isinstance(c, dict):
            raise self.bad(pos, f"a call is an object, got {_kind(c)}")
        fn, args, kwargs = c.get("fn"), c.get("args"), c.get("kwargs")
        if not isinstance(fn, str):
            raise self.bad(f"{pos}.fn", f"a function name, got {_kind(fn)}")
        if not isinstance(args, list):
            raise self.bad(f"{pos}.args", f"a list is needed, got {_kind(args)}")
        if not isinstance(kwargs, dict):
            raise self.bad(f"{pos}.kwargs", f"an object is needed, got {_kind(kwargs)}")
        if not _namespace_function(fn) and fn not in _INTERNAL_ARITY:
            raise ValueError(
                f"{self.where}: {pos}.fn: unknown function {fn!r:.60} (not a function of the b2lazy namespace)"
            )
        refs = []
        for i, v in enumerate(args):
            self.value(v, f"{pos}.args[{i}]", refs)
        for k, v in kwargs.items():
            self.value(v, f"{pos}.kwargs[{k!r:.40}]", refs)
        if fn in _INTERNAL_ARITY:
            if len(args) != _INTERNAL_ARITY[fn] or kwargs:
                raise self.bad(
                    pos,
                    f"{fn} takes {_INTERNAL_ARITY[fn]} arguments and no keywords, got {len(args)} and {len(kwargs)}",
                )
            if fn == _CFRAME:
                if not isinstance(args[0], str):
                    raise self.bad(f"{pos}.args[0]", f"base64 text of a frame, got {_kind(args[0])}")
            elif not (isinstance(args[0], dict) and "array" in args[0]):
                raise self.bad(f"{pos}.args[0]", f'an array ({{"array": node}}) is needed, got {args[0]!r:.60}')
            if fn == _MASKSELECT and not (isinstance(args[1], dict) and "array" in args[1]):
                raise self.bad(f"{pos}.args[1]", f"the mask, an array, is needed, got {args[1]!r:.60}")
        elif fn == "open":
            if len(args) != 1 or not isinstance(args[0], str) or set(kwargs) - {"key", "dataset", "mode"}:
                raise self.bad(pos, "open takes one URL (a string) and no other arguments")
            if any(not isinstance(v, str) for v in kwargs.values()):
                raise self.bad(f"{pos}.kwargs", "open's key, dataset and mode are strings")
            if "stamp" in c and not _is_stamp(c["stamp"]):
                raise self.bad(
                    f"{pos}.stamp", f'[size, mtime_ns, inode, ctime_ns] or ["dir", digest], got {c["stamp"]!r:.60}'
                )
        elif fn == "evaluate":  # operands always given: never the caller's variables
            if (
                len(args) != 2
                or not isinstance(args[0], str)
                or not (isinstance(args[1], dict) and "dict" in args[1])
                or kwargs
            ):
                raise self.bad(pos, "evaluate takes an expression string and a dict of operands")
        return refs

    def value(self, v, pos, refs, depth=0):
        if depth > _MAX_NESTING:
            raise self.bad(pos, f"values nest at most {_MAX_NESTING} levels deep")
        if v is None or isinstance(v, (bool, int, float, str)):
            return
        if isinstance(v, list):
            for i, x in enumerate(v):
                self.value(x, f"{pos}[{i}]", refs, depth + 1)
            return
        if not isinstance(v, dict):  # pragma: no cover - JSON has no other types
            raise self.bad(pos, f"unexpected {_kind(v)}")
        if len(v) != 1:
            raise self.bad(pos, f"a tagged value has one key, got {sorted(v)[:4]!r:.80}")
        ((tag, x),) = v.items()
        p = f"{pos}.{tag}"
        if tag == "array":
            if not _is_int(x) or not 0 <= x < self.nnodes:
                raise self.bad(p, f"{x!r:.40} names no node (there are {self.nnodes})")
            refs.append(x)
        elif tag == "float":
            if not _is_float_text(x):
                raise self.bad(p, f"a float as text ('nan', 'inf', '-inf' or a number), got {x!r:.40}")
        elif tag == "complex":
            if not (isinstance(x, list) and len(x) == 2 and all(_is_float_text(y) for y in x)):
                raise self.bad(p, f"two floats as text, got {x!r:.60}")
        elif tag in ("tuple", "slice"):
            if not isinstance(x, list) or (tag == "slice" and len(x) != 3):
                raise self.bad(p, f"a list{' of 3' if tag == 'slice' else ''} is needed, got {x!r:.60}")
            for i, y in enumerate(x):
                self.value(y, f"{p}[{i}]", refs, depth + 1)
        elif tag == "dict":
            if not isinstance(x, list) or not all(isinstance(kv, list) and len(kv) == 2 for kv in x):
                raise self.bad(p, f"a list of [key, value] pairs is needed, got {x!r:.60}")
            for i, (k, y) in enumerate(x):
                if not isinstance(k, (str, int, float, bool, type(None))):
                    raise self.bad(f"{p}[{i}][0]", f"a key is a string or number, got {_kind(k)}")
                self.value(y, f"{p}[{i}][1]", refs, depth + 1)
        elif tag == "ellipsis":
            if x is not True:
                raise self.bad(p, f"true is needed, got {x!r:.40}")
        elif tag == "dtype":
            if not self.is_dtype(x):
                raise self.bad(p, f"{x!r:.40} is not a dtype b2lazy reads")
        elif tag == "npscalar":
            if not (isinstance(x, list) and len(x) == 2 and self.is_dtype(x[1]) and not isinstance(x[0], (str, list))):
                raise self.bad(p, f"[value, dtype] is needed, got {x!r:.60}")
            self.value(x[0], f"{p}[0]", refs, depth + 1)
        elif tag in ("ndarray", "blosc2"):
            if not isinstance(x, str):
                raise self.bad(p, f"base64 text is needed, got {_kind(x)}")
        else:
            raise self.bad(pos, f"unknown value tag {tag!r:.40}")

    def order(self, root):
        """The nodes `root` needs, each after those it refers to (an explicit stack); a
        cycle is a ValueError naming where it closes."""
        nodes = self.d["nodes"]
        state, order = {root: 1}, []
        stack = [(root, iter(self.refs[nodes[root]["call"]]))]
        while stack:
            i, it = stack[-1]
            for j in it:
                if state.get(j) == 1:
                    raise self.bad(
                        f"calls[{nodes[i]['call']}]",
                        f"nodes[{i}] refers to nodes[{j}], which needs nodes[{i}]: a cycle"
                        if j != i
                        else f"nodes[{i}] refers to itself",
                    )
                if j not in state:
                    state[j] = 1
                    stack.append((j, iter(self.refs[nodes[j]["call"]])))
                    break
            else:
                stack.pop()
                state[i] = 2
                order.append(i)
        return order


def _kind(v):
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        type(None): "null",
    }.get(type(v), type(v).__name__)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_float_text(x):
    if not isinstance(x, str) or len(x) > 64:
        return False
    try:
        float(x)
    except ValueError:
        return False
    return True


def _is_stamp(s):
    return (
        isinstance(s, list)
        and 2 <= len(s) <= 4
        and ((s[0] == "dir" and isinstance(s[1], str) and len(s) == 2) or all(_is_int(x) for x in s))
    )


# Namespace functions a saved file may not call: they write into files and arrays
# (store, to_zarr), or read URLs of any scheme through zarr-python (from_zarr; a local
# from_zarr is saved as the open() it makes).
NOT_REPLAYED = frozenset({"store", "to_zarr", "from_zarr"})


def _namespace_function(fn):
    """Is `fn` a public function of the b2lazy namespace (not a class, module, constant,
    dtype or private name) that a saved file may call?"""
    import b2lazy

    return (
        isinstance(fn, str)
        and not fn.startswith("_")
        and fn in b2lazy.__all__
        and fn not in NOT_REPLAYED
        and isinstance(getattr(b2lazy, fn, None), types.FunctionType)
    )


# --- reopening: the replay ---------------------------------------------------------------
def _array_class():
    from . import Array

    return Array


class _Deferred:
    """Placeholder; replaced by the Array subclass below on first use (b2lazy imports
    this module before it defines Array)."""

    _core_a = None


def _make_deferred_class():
    Array = _array_class()

    class Deferred(Array):
        """An array of a reopened saved form whose call would compute when made (nonzero,
        unique_*, a mask counted again, an index array read...): its shape and dtype are the
        saved ones, and the call runs at the first use of its values (compute(), to_numpy(),
        or an expression made from it), under that compute's max_memory. Its result must
        have the saved shape and dtype."""

        def __init__(self, build, deps, shape, dtype, what, where):
            self._core_a, self._build, self._deps = None, build, deps
            self._saved = (shape, dtype)
            self._what, self._where = what, where
            self.stats, self._call, self._writable = None, None, None

        @property
        def _a(self):
            if self._core_a is None:
                if opening():
                    raise WouldCompute
                _materialise(self, None)
            return self._core_a

        @_a.setter
        def _a(self, core):
            self._core_a = core

        @property
        def shape(self):
            return self._saved[0] if self._core_a is None else self._core_a.shape

        @property
        def dtype(self):
            return self._saved[1] if self._core_a is None else np.dtype(self._core_a.dtype)

        @property
        def ndim(self):
            return len(self.shape)

        @property
        def size(self):
            return math.prod(self.shape)

        def __repr__(self):
            if self._core_a is None:
                return f"b2lazy.Array(shape={self.shape}, dtype={self.dtype}, kind=deferred {self._what})"
            return super().__repr__()

        def compute(self, *args, **kwargs):
            if kwargs.get("scheduler") is None:  # (on a cluster, the workers run it)
                _materialise(self, _memory_arg(args, kwargs, 5))
            return super().compute(*args, **kwargs)

        def to_numpy(self, *args, **kwargs):
            if kwargs.get("scheduler") is None:
                _materialise(self, _memory_arg(args, kwargs, 1))
            return super().to_numpy(*args, **kwargs)

        def plan(self, *args, **kwargs):
            _materialise(self, _memory_arg(args, kwargs, 5))
            return super().plan(*args, **kwargs)

    return Deferred


def _memory_arg(args, kwargs, position):
    return kwargs.get("max_memory", args[position] if len(args) > position else None)


def _materialise(root, max_mem):
    """Runs the deferred calls `root` needs, operands first (an explicit stack)."""
    stack = [root]
    while stack:
        d = stack[-1]
        if d._core_a is not None:
            stack.pop()
            continue
        pending = [x for x in d._deps if _is_deferred(x)]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        with _Flag("opening", 0), _Flag("max_memory", max_mem):
            r = d._build()
        shape, dtype = d._saved
        _check_shape(r, shape, dtype, d._where, d._what, changed=True)
        d._core_a, d.stats = r._a, r.stats
        if isinstance(r._call, tuple):  # (a mask counted again: saved with its new counts)
            d._call = r._call


def _check_shape(out, shape, dtype, where, what, changed=False):
    if tuple(out.shape) != shape or out.dtype != dtype:
        raise ValueError(
            f"{where}: {what} was saved with shape {shape} and dtype {dtype}, but now has shape "
            f"{tuple(out.shape)} and dtype {out.dtype}; "
            f"{'its operands changed since it was saved, and ' if changed else ''}the expression "
            f"would give different results, so it is not reopened"
        )


class _Decoder:
    def __init__(self, d, where, base, operands, storage_options=None, storage_by_url=None):
        self.d, self.where, self.base = d, where, base
        # Remote operands open with storage_options if given, else with those of
        # storage_by_url (a pickle's) or of this process's earlier open, else the environment.
        self.storage_options, self.storage_by_url = storage_options, storage_by_url or {}
        self.operands = operands  # {URL as written: substitute}
        self.used = set()
        self.calls, self.nodes = {}, {}
        self.changed = {}  # call id of an open -> its operand is not the one stamped
        self.notes = {}  # call id -> how errors name it, when not by its function
        self.resolved = {}  # call id of an open -> the URL it opened

    def build(self, order):
        global _Deferred
        if not isinstance(_Deferred, type) or not issubclass(_Deferred, _array_class()):
            _Deferred = _make_deferred_class()
        for i in order:
            self.node(i)
        unused = set(self.operands) - self.used
        if unused:
            named = sorted({c["args"][0] for c in self.d["calls"] if c["fn"] == "open"})
            raise ValueError(
                f"{self.where}: operands={{...}} names {sorted(unused)}, which the saved expression does "
                f"not read (its operands: {named})"
            )
        return self.nodes[order[-1]]

    def what(self, k):
        if k in self.notes:
            return self.notes[k]
        c = self.d["calls"][k]
        return f"operand '{c['args'][0]}'" if c["fn"] == "open" else f"{c['fn']}(...) (calls[{k}])"

    def node(self, i):
        entry = self.d["nodes"][i]
        k = entry["call"]
        shape, dtype = tuple(entry["shape"]), np.dtype(entry["dtype"])
        item = entry.get("item")
        if k not in self.calls:
            self.calls[k] = self.call(k)
        out = self.calls[k]
        if isinstance(out, _Thunk):  # computes when used
            d = _Deferred(lambda: self.pick(out.result(), k, i, item), out.deps, shape, dtype, self.what(k), self.where)
            d._call = out.saved_call(item)
            self.nodes[i] = d
            return
        out = self.pick(out, k, i, item)
        _check_shape(out, shape, dtype, self.where, self.what(k))
        if out._call is None:  # (an inline frame: saved again as one, not as the call that opened the file)
            out._call = LEAF
        self.nodes[i] = out

    def pick(self, out, k, i, item):
        Array = _array_class()
        if item is not None:
            if not isinstance(out, (tuple, list)) or item >= len(out):
                raise ValueError(f"{self.where}: nodes[{i}].item: calls[{k}] does not return {item + 1} arrays")
            out = out[item]
        if not isinstance(out, Array):
            raise ValueError(
                f"{self.where}: nodes[{i}]: calls[{k}] ({self.d['calls'][k]['fn']}) returns "
                f"{type(out).__name__}, not an array"
            )
        return out

    def call(self, k):
        entry = self.d["calls"][k]
        fn = entry["fn"]
        pos = f"calls[{k}]"
        args = [self.value(v, f"{pos}.args[{j}]") for j, v in enumerate(entry["args"])]
        kwargs = {key: self.value(v, f"{pos}.kwargs[{key!r}]") for key, v in entry["kwargs"].items()}
        if fn == "open":
            return self.open(k, entry)
        if fn == _MASKSELECT:
            changed = self.changed_operands(entry)
            if changed:  # counted again, at first use
                fn, args = _GETITEM, args[:2]
                self.notes[k] = (
                    f"x[mask] (calls[{k}], its counts saved for operand(s) "
                    f"{', '.join(repr(u) for u in changed)}, which changed since)"
                )
        deps = [a for a in _arrays((args, kwargs)) if _is_deferred(a)]
        if not deps:
            try:
                with _Flag("opening", 1):
                    return self.run(k, fn, args, kwargs)
            except WouldCompute:
                pass
        return _Thunk(lambda: self.run(k, fn, args, kwargs), deps, (fn, tuple(args), kwargs))

    def run(self, k, fn, args, kwargs):
        """The call, its errors naming the file and the call."""
        import b2lazy

        try:
            if fn == _GETITEM:
                return args[0][args[1]]
            if fn == _VINDEX:
                return args[0].vindex[args[1]]
            if fn == _OINDEX:
                return args[0].oindex[args[1]]
            if fn == _MASKSELECT:
                return b2lazy._mask_select_counted(*args, self.verified_stamps(k))
            if fn == _SETITEM:
                x, key, value = args
                items = key if isinstance(key, tuple) else (key,)
                return b2lazy._assigned(
                    x,
                    key,
                    value if isinstance(value, b2lazy.Array) else b2lazy.asarray(value),
                    b2lazy._setitem_mask(x, items),
                )
            if fn == _CFRAME:
                return b2lazy.Array(b2lazy._core.from_cframe(_b64(args[0], f"calls[{k}].args[0]", self.where)))
            return getattr(b2lazy, fn)(*args, **kwargs)
        except (WouldCompute, MemoryError):
            raise
        except Exception as e:  # noqa: BLE001 - every error names the file and the call
            raise _named(e, f"{self.where}: calls[{k}] ({fn}): {e}") from e

    def open(self, k, entry):
        """An operand: its URL resolved against the saved file's directory, or the
        substitute operands={...} gives; a stored saved expression is not followed."""
        import b2lazy

        written = entry["args"][0]
        kwargs = entry["kwargs"]
        member = kwargs.get("key", kwargs.get("dataset"))
        if written in self.operands:
            self.used.add(written)
            sub = self.operands[written]
            self.changed[k] = True
            if isinstance(sub, b2lazy.Array):
                return sub
            url = os.fspath(sub)
        else:
            try:
                url = absolute_url(written, self.base)
            except ValueError as e:
                raise ValueError(f"{self.where}: calls[{k}].args[0]: {e}") from None
            if member is not None:
                url = f"{url}#{member if member.startswith('/') else '/' + member}"
        if "\0" in url:
            raise ValueError(f"{self.where}: calls[{k}]: the operand URL {url!r:.80} holds a NUL character")
        try:
            path = _split_scheme(url)[1]
        except ValueError as e:
            raise ValueError(f"{self.where}: operands={{...}}: {e}") from None
        if is_remote(url):
            return self.open_remote(k, entry, url)
        part = _file_part(path)
        if part is None:
            raise FileNotFoundError(f"{self.where}: operand '{url}' does not exist")
        if is_saved_expression(part):
            raise ValueError(
                f"{self.where}: operand '{url}' is itself a saved expression; saved expressions name stored arrays only"
            )
        self.resolved[k] = url
        if "stamp" in entry and k not in self.changed:
            self.changed[k] = _operand_stamp(url) != entry["stamp"]
        else:
            self.changed.setdefault(k, True)
        try:
            return b2lazy.open(url)
        except Exception as e:  # noqa: BLE001
            raise _named(e, f"{self.where}: operand '{url}': {e}") from e

    def open_remote(self, k, entry, url):
        import b2lazy

        self.resolved[k] = url
        self.changed[k] = True
        so = self.storage_options
        if so is None:
            with _storage_lock:
                so = self.storage_by_url.get(url, _storage_by_url.get(url))
        try:
            return b2lazy.open(url, storage_options=so)
        except Exception as e:  # noqa: BLE001
            raise _named(e, f"{self.where}: operand '{url}': {e}") from e

    def verified_stamps(self, k):
        """{URL: stamp} of the operands under calls[k]'s mask, as checked at reopening."""
        nodes, calls = self.d["nodes"], self.d["calls"]
        ids = {id(c): j for j, c in enumerate(calls)}
        out = {}
        for c in _leaf_calls(nodes, calls, calls[k]["args"][1]["array"]):
            j = ids[id(c)]
            if c["fn"] == "open" and "stamp" in c and j in self.resolved:
                out[absolute_url(self.resolved[j], os.getcwd())] = c["stamp"]
        return out

    def changed_operands(self, entry):
        """The stored operands under a .maskselect's mask whose content may differ from
        the one its counts were taken from: without the stamp it had when saved, or with
        another, or substituted (operands=). Its counts hold when there are none."""
        nodes, calls = self.d["nodes"], self.d["calls"]
        mask = entry["args"][1]["array"]
        ids = {id(c): j for j, c in enumerate(calls)}
        return [
            c["args"][0]
            for c in _leaf_calls(nodes, calls, mask)
            if c["fn"] == "open" and self.changed.get(ids[id(c)], True)
        ]

    def value(self, v, pos):
        """A checked value (_Checker.value) as the Python value it stands for."""
        if isinstance(v, list):
            return [self.value(x, pos) for x in v]
        if not isinstance(v, dict):
            return v
        ((tag, x),) = v.items()
        if tag == "array":
            return self.nodes[x]
        if tag == "float":
            return float(x)
        if tag == "complex":
            return complex(float(x[0]), float(x[1]))
        if tag == "tuple":
            return tuple(self.value(y, pos) for y in x)
        if tag == "dict":
            return {k: self.value(y, pos) for k, y in x}
        if tag == "slice":
            return slice(*(self.value(y, pos) for y in x))
        if tag == "ellipsis":
            return Ellipsis
        if tag == "dtype":
            return np.dtype(x)
        if tag == "npscalar":
            try:
                return np.dtype(x[1]).type(self.value(x[0], pos))
            except (TypeError, ValueError, OverflowError) as e:
                raise ValueError(f"{self.where}: {pos}: not a {x[1]} scalar: {e}") from None
        if tag == "ndarray":
            try:
                return np.load(io.BytesIO(_b64(x, pos, self.where)), allow_pickle=False)
            except ValueError as e:
                raise ValueError(f"{self.where}: {pos}: not an .npy array: {e}") from None
            except Exception as e:  # noqa: BLE001 - np.load's other complaints (EOFError, ...)
                raise ValueError(f"{self.where}: {pos}: not an .npy array: {type(e).__name__}: {e}") from None
        if tag == "blosc2":  # (read as b2lazy reads frames, validated: not by python-blosc2)
            import b2lazy

            try:
                return b2lazy.Array(b2lazy._core.from_cframe(_b64(x, pos, self.where)))
            except Exception as e:  # noqa: BLE001
                raise _named(e, f"{self.where}: {pos}: {e}") from e
        raise ValueError(f"{self.where}: {pos}: unknown value tag '{tag}'")  # pragma: no cover - checked


class _Thunk:
    """A call deferred to the first use of its result (run once for all its nodes)."""

    def __init__(self, run, deps, call):
        self.run, self.deps, self.call = run, deps, call
        self.done = None

    def result(self):
        if self.done is None:
            self.done = (self.run(),)
        return self.done[0]

    def saved_call(self, item):
        return (self.call, item)


def _arrays(v):
    Array = _array_class()
    out, todo = [], [v]
    while todo:
        x = todo.pop()
        if isinstance(x, Array):
            out.append(x)
        elif isinstance(x, (tuple, list)):
            todo.extend(x)
        elif isinstance(x, dict):
            todo.extend(x.values())
            todo.extend(x.keys())
        elif isinstance(x, slice):
            todo.extend((x.start, x.stop, x.step))
    return out


def _b64(text, pos, where):
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as e:
        raise ValueError(f"{where}: {pos}: not base64 text ({e})") from None


def _named(e, msg):
    """The error for `e` raised while replaying a saved form, with message `msg`: an
    operand that cannot be read is an OSError (FileNotFoundError when missing); anything
    else the file asks for that fails (wrong arguments, types or values) a ValueError."""
    if isinstance(e, FileNotFoundError):
        return FileNotFoundError(msg)
    if isinstance(e, OSError):
        return OSError(msg)
    return ValueError(msg)


def from_dict(d, where="b2lazy expression", base=None, operands=None, storage_options=None, storage_by_url=None):
    """The Array a saved form describes (checking its structure, then each array's shape
    and dtype). Relative operand paths are relative to `base` (the saved file's directory;
    default: the working directory); `operands` maps operand URLs, as written in the
    form, to substitutes (paths or Arrays)."""
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise ValueError(f"{where}: not a saved b2lazy expression")
    if d.get("version") != VERSION:
        raise ValueError(
            f"{where}: saved with format version {d.get('version')!r:.40}; this b2lazy reads version {VERSION}"
        )
    ops = {}
    for k, v in (operands or {}).items():
        if not isinstance(k, str):
            raise TypeError(f"open(): operands keys are operand URLs as the saved file writes them, got {k!r}")
        if not isinstance(v, (str, os.PathLike, _array_class())):
            raise TypeError(f"open(): operands['{k}'] must be a path or a b2lazy Array, got {type(v).__name__}")
        ops[k] = v
    order = _Checker(d, where).check()
    return _Decoder(d, where, os.getcwd() if base is None else base, ops, storage_options, storage_by_url).build(order)


def dumps(a, inline_limit=None):
    return json.dumps(to_dict(a, inline_limit), separators=(",", ":"))


def loads(s, where="b2lazy expression", storage_by_url=None):
    try:
        d = json.loads(s)
    except (ValueError, RecursionError) as e:
        raise ValueError(f"{where}: not a saved b2lazy expression ({type(e).__name__}: {e})") from None
    return from_dict(d, where, storage_by_url=storage_by_url)


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
    except (OSError, ValueError):
        return False
    return head.lstrip().startswith(b"{") and FORMAT.encode() in head


def load(path, operands=None, storage_options=None):
    where = f"'{path}'"
    try:
        with open(path, "rb") as f:
            d = json.loads(f.read().decode("utf-8"))
    except (ValueError, RecursionError) as e:  # (UnicodeDecodeError and JSONDecodeError are ValueErrors)
        raise ValueError(f"{where}: not a saved b2lazy expression ({type(e).__name__}: {e})") from None
    return from_dict(d, where, os.path.dirname(os.path.abspath(path)), operands, storage_options)
