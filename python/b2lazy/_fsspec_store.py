"""fsspec filesystems as b2lazy byte stores: every protocol fsspec knows that
b2lazy does not read natively (memory://, zip::, simplecache::..., sftp://, abfs://, ...),
and any URL opened with storage_options={"use_fsspec": True}.

The C++ side (python/src/python_store_bindings.cpp) calls one FsspecStore per opened URL,
taking the GIL only around these calls; fsspec does the I/O. http(s)://, s3:// and gs://
stay on b2lazy's libcurl stores unless use_fsspec asks otherwise.
"""

from __future__ import annotations

import re

# Read natively by b2lazy's libcurl stores (src/io/remote/) or as local paths.
NATIVE = frozenset({"http", "https", "s3", "gs", "gcs", "file", "local"})
# Protocols fsspec lists that name no filesystem of bytes b2lazy can hold arrays in.
_SKIPPED = frozenset({"fsspec", "generic", "reference", "dask", "tar", "git", "github", "jupyter", "dir"})
_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(\d+\.\d*|\.\d+)([eE][+-]?\d+)?")


def options_from_values(values):
    """StoreOptions values (flattened by the binding: "client_kwargs.endpoint_url", strings)
    back as fsspec's nested storage_options, flags and numbers typed again."""
    out = {}
    for name, text in values.items():
        if name == "use_fsspec":
            continue
        if text in ("true", "false"):
            value = text == "true"
        elif _INT.fullmatch(text):
            value = int(text)
        elif _FLOAT.fullmatch(text):
            value = float(text)
        else:
            value = text
        d = out
        *outer, last = name.split(".")
        for part in outer:
            d = d.setdefault(part, {})
        d[last] = value
    return out


def _without_secrets(url):
    """The URL as messages and root() show it: no user:password@ and no query string."""
    url = re.sub(r"(://)[^/@]*@", r"\1", url)
    return url.split("?", 1)[0]


class FsspecStore:
    """One URL's objects through an fsspec filesystem: keys are paths under the URL."""

    def __init__(self, url, values):
        import fsspec.core

        self.root = _without_secrets(url).rstrip("/")
        try:
            self.fs, path = fsspec.core.url_to_fs(url, **options_from_values(values))
        except ImportError as e:  # fsspec knows the protocol, its package is missing
            raise OSError(f"fsspec reads '{self.root}' with a package that is not installed: {e}") from None
        self.path = path.rstrip("/")

    def _path(self, key):
        return f"{self.path}/{key}" if key else self.path

    def read_many(self, requests):
        """[(key, [(offset, length)])] -> per request a list of bytes, or None (missing)."""
        paths, starts, ends, where = [], [], [], []
        for i, (key, ranges) in enumerate(requests):
            for offset, length in ranges:
                paths.append(self._path(key))
                starts.append(offset)
                ends.append(None if length < 0 else offset + length)
                where.append(i)
        try:
            got = self.fs.cat_ranges(paths, starts, ends, on_error="return") if paths else []
        except FileNotFoundError:  # (some filesystems, simplecache's, raise instead of returning it)
            if len(requests) == 1:
                return [None]
            return [self.read_many([r])[0] for r in requests]
        out = [[] for _ in requests]
        for i, data in zip(where, got):
            if out[i] is None:
                continue
            if isinstance(data, FileNotFoundError):
                out[i] = None
            elif isinstance(data, BaseException):
                raise OSError(f"reading '{self.root}/{requests[i][0]}': {type(data).__name__}: {data}")
            else:
                out[i].append(bytes(data))
        return out

    @staticmethod
    def _version(info):
        for name in ("ETag", "etag", "md5", "mtime", "LastModified", "created"):
            v = info.get(name)
            if v is not None:
                return str(v.timestamp() if hasattr(v, "timestamp") else v)  # (datetimes as numbers)
        return ""

    def stat(self, key):
        try:
            info = self.fs.info(self._path(key))
        except FileNotFoundError:
            return None
        if info.get("type") == "directory":
            return None
        return {"size": int(info.get("size") or 0), "version": self._version(info)}

    def list(self, prefix):
        base = self.path + "/" if self.path else ""
        try:
            found = self.fs.find(self.path, detail=True)
        except FileNotFoundError:
            return []
        out = []
        for name, info in sorted(found.items()):
            name = name.lstrip("/") if not self.path.startswith("/") else name
            key = name[len(base) :] if name.startswith(base) else name.rsplit("/", 1)[-1]
            if key.startswith(prefix) and info.get("type", "file") != "directory":
                out.append({"key": key, "size": int(info.get("size") or 0), "version": self._version(info)})
        return out

    def write(self, key, data):
        path = self._path(key)
        parent = path.rsplit("/", 1)[0]
        if parent and parent != path:
            self.fs.makedirs(parent, exist_ok=True)
        self.fs.pipe_file(path, data)

    def remove(self, key):
        try:
            self.fs.rm_file(self._path(key))
        except FileNotFoundError:
            pass


def register(core):
    """Registers FsspecStore for fsspec's protocols b2lazy does not read natively, for
    chained URLs ("simplecache::http://...": their first protocol), and as "fsspec"
    (storage_options={"use_fsspec": True}). Without fsspec installed: nothing."""
    try:
        from fsspec.registry import known_implementations
    except ImportError:
        return
    core.register_store("fsspec", FsspecStore)
    for scheme in known_implementations:
        if scheme not in NATIVE and scheme not in _SKIPPED:
            core.register_store(scheme, FsspecStore)
