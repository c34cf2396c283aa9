"""xarray's ffill / bfill on b2lazy arrays. xarray fills NumPy arrays with bottleneck or
numbagg and Dask arrays with its own push; any other chunked array reaches bottleneck,
which loads it whole. Wrapping xarray's ``push`` (as _groupby wraps GroupBy.reduce) sends
b2lazy arrays to ``forward_fill``: the engine's scan with "last valid value" as its
operation, carried across chunks like cumsum's totals. bfill is xarray's flip / push /
flip, lazy too."""

from __future__ import annotations

import numpy as np

from . import Array, _core

_installed = False


def forward_fill(x, axis, limit=None):
    """Each NaN of `x` replaced by the last non-NaN value before it along `axis`, at most
    `limit` steps back (None: any); NaN where there is none (bottleneck.push)."""
    import b2lazy as bl

    axis = int(axis)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"ffill: axis {axis} is out of bounds for an array of {x.ndim} dimensions")
    axis %= x.ndim
    if limit is not None and (not isinstance(limit, (int, np.integer)) or limit < 0):
        raise ValueError(f"ffill: limit must be a non-negative int or None, got {limit!r}")
    if x.dtype.kind not in "f":
        if x.dtype.kind == "c":
            raise TypeError("ffill: complex arrays are not supported on b2lazy arrays")
        return x  # integers and bools hold no NaN: nothing to fill
    filled = Array(_core.scan("push", x._a, axis, None, False, False))
    n = x.shape[axis]
    if limit is None or limit >= n:
        return filled
    # How far back the value came from: the index of the last valid element, forward-filled.
    index = bl.reshape(bl.arange(n, dtype="float64"), tuple(n if d == axis else 1 for d in range(x.ndim)))
    index = bl.broadcast_to(index, x.shape)
    last = Array(_core.scan("push", bl.where(bl.isnan(x), np.nan, index)._a, axis, None, False, False))
    return bl.where(index - last <= limit, filled, bl.asarray(np.nan, dtype=x.dtype))


def _install_xarray_fill():
    """xarray's push (called by ffill and bfill) sends b2lazy arrays to forward_fill; other
    arrays reach xarray's own push untouched."""
    global _installed
    if _installed:
        return
    from xarray.core import duck_array_ops, missing

    original = duck_array_ops.push

    def push(array, n, axis, method="blelloch", _original=original):
        if isinstance(array, Array):
            return forward_fill(array, axis, n)
        return _original(array, n, axis, method=method) if method != "blelloch" else _original(array, n, axis)

    push.__doc__ = original.__doc__
    duck_array_ops.push = push
    if getattr(missing, "push", None) is original:
        missing.push = push
    _installed = True
