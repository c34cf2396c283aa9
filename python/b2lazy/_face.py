"""How an Array presents itself: its repr and HTML repr, its size, and the chunks its plan
evaluates on (Array.chunks), cached per Array."""

from __future__ import annotations

import html

import numpy as np

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def human_bytes(n):
    """``7.6 MiB`` for 8_000_000: binary units, one decimal (whole bytes below 1 KiB)."""
    n = float(n)
    for unit in _UNITS:
        if n < 1024 or unit == _UNITS[-1]:
            return f"{int(n)} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


# Above this size .chunks and repr report the preferred chunks instead of planning: a plan
# holds one task per output chunk (16 GiB of them for an array of 2**60 elements).
_MOST_PLANNED_BYTES = 1 << 40


def plan_chunks(x):
    """The chunk shape x's default plan evaluates on, cached on x for the core array it
    holds (x[key] = value rebinds that, and the cache with it). Planning reads no data;
    an array that cannot be planned (a saved expression still being reopened) reports
    its preferred chunks, uncached."""
    cached = x.__dict__.get("_plan_chunks")
    if cached is not None and cached[0] is x._a:
        return cached[1]
    from . import _serial

    if x.size == 0 or x.ndim == 0:
        chunks = tuple(x.shape)
    elif _serial.opening():  # (planning would count as computing while a saved form replays)
        return tuple(x._a.preferred_chunks() or x.shape)
    elif x.nbytes > _MOST_PLANNED_BYTES:  # a plan lists every task: not for a repr of 2**60 elements
        return tuple(x._a.preferred_chunks() or x.shape)
    elif requested := _core_requested(x):  # a rechunk's: known without listing every task
        chunks = requested
    else:
        try:
            chunks = tuple(int(c) for c in x.plan().chunks)
        except Exception:  # noqa: BLE001 - a plan that cannot be made: what the array prefers
            return tuple(x._a.preferred_chunks() or x.shape)
    x._plan_chunks = (x._a, chunks)
    return chunks


def _core_requested(x):
    from . import _core

    return tuple(int(c) for c in _core.requested_output_chunks(x._a))


def dask_chunks(x):
    """x's plan chunks as Dask normalizes them: a tuple of block lengths per axis."""
    from ._xarray_chunks import normalized

    return normalized(plan_chunks(x), x.shape)


def operation(x):
    """The root operation's name: a function (``add``, ``sum``) when the namespace call
    that made x is known, else the engine's node kind (``b2nd``, ``numpy``, ``udf``)."""
    if x.urlpath:  # a stored source: its format (b2nd, zarr, hdf5), not the call that opened it
        return str(x._a.kind)
    call = x._call
    if isinstance(call, tuple) and call and isinstance(call[0], tuple) and call[0]:
        name = call[0][0]
        if isinstance(name, str) and name.lstrip("."):
            return name.lstrip(".")  # (".getitem": an internal call)
    return str(x._a.kind)


def _shape_text(shape):
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def array_repr(x):
    """``b2lazy.Array<add>(shape=(1000, 1000), dtype=float64, chunks=(250, 1000), nbytes=7.6 MiB)``;
    a stored source also names its format and path: ``b2lazy.Array<zarr>(..., urlpath='a.zarr')``."""
    where = f", urlpath={x.urlpath!r}" if x.urlpath else ""
    return (
        f"b2lazy.Array<{operation(x)}>(shape={_shape_text(x.shape)}, dtype={x.dtype}, "
        f"chunks={_shape_text(plan_chunks(x))}, nbytes={human_bytes(x.nbytes)}{where})"
    )


def array_html(x):
    """A small table, as Dask's: bytes, shape, dtype and count of the array and one chunk,
    and the root operation."""
    chunks = plan_chunks(x)
    nchunks = int(np.prod([-(-s // c) if c else 0 for s, c in zip(x.shape, chunks)], dtype=np.int64))
    chunk_bytes = int(np.prod(chunks, dtype=np.int64)) * x.dtype.itemsize
    rows = [
        ("Bytes", human_bytes(x.nbytes), human_bytes(chunk_bytes)),
        ("Shape", _shape_text(x.shape), _shape_text(chunks)),
        ("Count", f"{nchunks} chunk" + ("" if nchunks == 1 else "s"), ""),
        ("Type", f"{x.dtype}", "numpy.ndarray"),
    ]
    body = "".join(f"<tr><th>{h}</th><td>{html.escape(a)}</td><td>{html.escape(c)}</td></tr>" for h, a, c in rows)
    return (
        "<table><thead><tr><td></td><th>Array</th><th>Chunk</th></tr></thead>"
        f"<tbody>{body}</tbody></table>"
        f"<p>b2lazy.Array, operation <code>{html.escape(operation(x))}</code></p>"
    )


def package_version():
    """The installed distribution's version (pyproject.toml's), else "0+unknown" (a
    source tree that was not installed)."""
    from importlib import metadata

    try:
        return metadata.version("b2lazy")
    except metadata.PackageNotFoundError:
        return "0+unknown"
