"""einsum, pad and rechunk: lazy like every b2lazy function. The C++ engine
lowers einsum onto its products, sums and transposes (src/graph/einsum_builder.cpp), pads
through a node that maps each output region to the input it reads (src/ops/shape/pad_node.*),
and carries rechunk's chunks to the evaluation's output (src/ops/shape/rechunk_node.hpp)."""

from __future__ import annotations

import types

import numpy as np

from . import Array, _core, asarray
from ._registry import registered as _registered

__all__ = ["einsum", "einsum_path", "pad", "rechunk", "sliding_window_view", "lib"]


def _interleaved(args):
    """NumPy's other form, einsum(op0, sublist0, op1, sublist1, ..., [sublistout]), as a
    subscript string and the operands."""

    def letters(sub):
        out = ""
        for s in sub:
            if s is Ellipsis:
                out += "..."
            elif isinstance(s, (int, np.integer)) and not isinstance(s, bool) and 0 <= s < 52:
                out += chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26)
            else:
                raise ValueError(f"einsum: subscript {s!r} in a sublist must be an int in [0, 52) or Ellipsis")
        return out

    ops, subs = list(args[0::2]), list(args[1::2])
    out = None
    if len(ops) > len(subs):  # an output sublist was given last
        out = ops.pop()
    text = ",".join(letters(s) for s in subs)
    return (text if out is None else text + "->" + letters(out)), ops


def _optimize_arg(optimize):
    if optimize is True or optimize == "greedy":
        return "greedy"
    if optimize is False or optimize is None:
        return "none"
    if optimize == "optimal":
        return "optimal"
    if isinstance(optimize, (list, tuple)):
        steps = list(optimize)
        if steps and steps[0] == "einsum_path":
            steps = steps[1:]
        path = []
        for s in steps:
            if (
                not isinstance(s, (list, tuple))
                or len(s) != 2
                or not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) and i >= 0 for i in s)
            ):
                raise ValueError(f"einsum: optimize path step {s!r} is not a pair of operand positions")
            path.append((int(min(s)), int(max(s))))
        return path
    raise TypeError(f"einsum: optimize must be True, False, 'greedy', 'optimal' or a path, got {optimize!r}")


def _subscripts_and_operands(subscripts, operands, fn):
    if isinstance(subscripts, str):
        return subscripts, operands
    if operands:  # the interleaved form
        return _interleaved((subscripts,) + tuple(operands))
    raise TypeError(f"{fn}: subscripts must be a string such as 'ij,jk->ik', got {subscripts!r}")


@_registered
def einsum(subscripts, /, *operands, optimize):
    """Einstein summation over the operands, lazily (NumPy's ``einsum``).

    Repeated indices in one operand take its diagonal, indices only one operand has (and
    the output lacks) are summed, length-1 axes broadcast, and ``...`` stands for the
    broadcast leading axes. The pairwise contractions run on b2lazy's products (a batched
    matmul node for shared batch indices), in an order chosen by cost.

    Parameters
    ----------
    subscripts : str
        NumPy's subscripts, e.g. ``'ij,jk->ik'``, ``'ii'``, ``'...i,...i->...'``. Without
        ``->`` the output holds the indices seen once, sorted, after the ellipsis axes.
        NumPy's interleaved form ``einsum(a, [0, 1], b, [1, 2])`` is accepted too.
    *operands : array_like
        The operands, one per comma-separated term.
    optimize : bool, str or list, optional
        The contraction order for three or more operands: True or ``'greedy'`` (the
        default: opt_einsum's greedy choice, ties broken by fewest operations),
        ``'optimal'`` (fewest operations over all orders), False (left to right), or an
        explicit path as :func:`einsum_path` returns it.

    Returns
    -------
    Array
        The lazy result, in the operands' promoted dtype (NumPy's ``result_type``).

    Examples
    --------
    >>> import numpy as np, b2lazy as bl
    >>> a = np.arange(6).reshape(2, 3)
    >>> b = np.arange(12).reshape(3, 4)
    >>> bl.einsum('ij,jk->ik', a, b).to_numpy()
    array([[20, 23, 26, 29],
           [56, 68, 80, 92]])
    >>> bl.einsum('ii', np.eye(3)).to_numpy()
    array(3.)
    >>> bl.einsum('...i,...i->...', a, a).to_numpy()
    array([ 5, 50])
    """
    subscripts, operands = _subscripts_and_operands(subscripts, operands, "einsum")
    ops = [asarray(o)._a for o in operands]
    how = _optimize_arg(optimize)
    if isinstance(how, list):
        return Array(_core.einsum_with_path(subscripts, ops, how))
    return Array(_core.einsum(subscripts, ops, how))


def einsum_path(subscripts, /, *operands, optimize="greedy"):
    """The contraction order :func:`einsum` uses, as NumPy's ``einsum_path`` returns it.

    Parameters
    ----------
    subscripts : str
        As for :func:`einsum`.
    *operands : array_like
        The operands (only their shapes are read).
    optimize : bool or str, optional
        ``'greedy'`` (True), ``'optimal'`` or False (left to right).

    Returns
    -------
    path : list
        ``['einsum_path', (i, j), ...]``: at each step operands i and j of the current list
        are contracted and their result appended.
    report : str
        The estimated operations of this order and of left to right.

    Examples
    --------
    >>> import numpy as np, b2lazy as bl
    >>> A, B, v = np.ones((100, 100)), np.ones((100, 100)), np.ones(100)
    >>> bl.einsum_path('ij,jk,k->i', A, B, v)[0]
    ['einsum_path', (1, 2), (0, 1)]
    """
    subscripts, operands = _subscripts_and_operands(subscripts, operands, "einsum_path")
    how = _optimize_arg(optimize)
    if isinstance(how, list):
        raise TypeError("einsum_path: optimize must be True, False, 'greedy' or 'optimal'")
    path, flops, naive = _core.einsum_path(subscripts, [asarray(o)._a for o in operands], how)
    report = f"  Optimized operations (multiply-adds): {flops:.6g}\n  Left-to-right operations:             {naive:.6g}"
    return ["einsum_path", *[tuple(p) for p in path]], report


@_registered
def pad(x, /, pad_width, mode, *, constant_values, reflect_type):
    """Pad an array, lazily (NumPy's ``pad``).

    An output region reads only the input it maps to: a small region near an edge of a
    large stored array decompresses only the chunks there.

    Parameters
    ----------
    x : array_like
        The array to pad.
    pad_width : int or sequence
        NumPy's forms: ``n``, ``(before, after)``, or one ``(before, after)`` per axis.
    mode : str, optional
        ``'constant'`` (the default), ``'edge'``, ``'reflect'``, ``'symmetric'``,
        ``'wrap'`` or ``'empty'`` (zeros). Widths beyond the axis repeat the reflection or
        wrap as NumPy's do. NumPy's linear_ramp, maximum, mean, median and minimum are
        refused with a ValueError.
    constant_values : scalar or array_like, optional
        The fill of constant mode, one value or one per axis and side (broadcast to
        ``(ndim, 2)``); cast to x's dtype. Default 0.
    reflect_type : str, optional
        ``'even'`` only (NumPy's default).

    Returns
    -------
    Array
        The padded array, x's dtype.

    Examples
    --------
    >>> import numpy as np, b2lazy as bl
    >>> bl.pad(np.array([1, 2, 3]), (2, 1)).to_numpy()
    array([0, 0, 1, 2, 3, 0])
    >>> bl.pad(np.array([1, 2, 3]), 4, mode='reflect').to_numpy()
    array([1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3])
    >>> bl.pad(np.array([1., 2.]), 1, constant_values=np.nan).to_numpy()
    array([nan,  1.,  2., nan])
    """
    if not isinstance(mode, str):
        raise TypeError(f"pad: mode must be a string such as 'constant', got {mode!r}")
    if reflect_type != "even":
        raise ValueError(f"pad: reflect_type={reflect_type!r} is not supported (only 'even', NumPy's default)")
    w = pad_width.to_numpy() if isinstance(pad_width, Array) else np.asarray(pad_width)
    if w.dtype.kind not in "iu" or w.dtype == np.bool_:
        raise TypeError(f"pad: pad_width must be of integral type, got {w.dtype}")
    w = w.astype(np.int64)
    a = asarray(x)
    values = None
    if mode == "constant":
        values = asarray(constant_values)._a
    return Array(_core.pad(a._a, [int(v) for v in w.reshape(-1)], list(w.shape), mode, values))


def _axis_chunks(c):
    if c is None:
        return ("keep", [])
    if isinstance(c, str):
        if c == "auto":
            return ("auto", [])
        raise ValueError(f"rechunk: chunks entry {c!r} is not an int, -1, None, 'auto' or block lengths")
    if isinstance(c, (int, np.integer)) and not isinstance(c, bool):
        return ("whole", []) if c == -1 else ("length", [int(c)])
    if isinstance(c, (tuple, list)) and all(isinstance(b, (int, np.integer)) and not isinstance(b, bool) for b in c):
        return ("blocks", [int(b) for b in c])
    raise TypeError(f"rechunk: chunks entry {c!r} is not an int, -1, None, 'auto' or block lengths")


@_registered
def rechunk(x, /, chunks):
    """The same values with other chunks (Dask's ``rechunk``), lazily.

    The chunks become the array's preferred ones: ``compute()`` without ``chunks=``
    writes them (b2nd and Zarr), ``plan()`` uses them as its output chunks, and so do
    elementwise expressions of the same shape over the array.

    Parameters
    ----------
    x : array_like
        The array.
    chunks : int, tuple, dict or str
        Dask's spec: one length for every axis; per axis an int (-1: the whole axis),
        None (the current chunks), ``'auto'`` or the tuple of block lengths when they are
        regular (all equal but a shorter last one); a dict ``{axis: length}`` (other axes
        keep theirs); or ``'auto'``. Irregular block lengths are refused (ValueError).

    Returns
    -------
    Array
        x with those chunks.

    Examples
    --------
    >>> import numpy as np, b2lazy as bl
    >>> y = bl.rechunk(np.zeros((100, 60)), (30, -1))
    >>> y.chunks
    ((30, 30, 30, 10), (60,))
    >>> y.plan().chunks
    (30, 60)
    >>> bl.asarray(np.ones(10)).rechunk({0: 4}).chunks
    ((4, 4, 2),)
    """
    a = asarray(x)
    if isinstance(chunks, dict):
        spec = [("keep", [])] * a.ndim
        for axis, c in chunks.items():
            if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -a.ndim <= axis < a.ndim:
                raise ValueError(f"rechunk: axis {axis!r} in chunks is not an axis of an array of shape {a.shape}")
            spec[axis % a.ndim] = _axis_chunks(c)
    elif isinstance(chunks, (tuple, list)):
        if len(chunks) != a.ndim:
            raise ValueError(f"rechunk: chunks {chunks!r} name {len(chunks)} axes; the array has shape {a.shape}")
        spec = [_axis_chunks(c) for c in chunks]
    else:
        spec = [_axis_chunks(chunks)]
    return Array(_core.rechunk(a._a, spec))


def _ints(v, what):
    vals = (v,) if np.ndim(v) == 0 else tuple(v)
    for i in vals:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"sliding_window_view: {what} must be ints, got {v!r}")
    return [int(i) for i in vals]


@_registered
def sliding_window_view(x, window_shape, axis, *, subok, writeable):
    """Sliding windows over `x` (NumPy's ``lib.stride_tricks.sliding_window_view``), lazily.

    What xarray's ``rolling`` asks of the namespace after padding: with ``b2lazy.lib``
    (``lib.stride_tricks.sliding_window_view`` is this function),
    ``DataArray(b2lazy_array).rolling(time=8).mean()`` stays lazy.

    Parameters
    ----------
    x : array_like
        The array.
    window_shape : int or tuple of int
        The window's length along each of `axis`.
    axis : int or tuple of int, optional
        The axes windows slide along (all, by default).
    subok, writeable : bool
        NumPy's; b2lazy arrays are read-only (``writeable=True`` is refused).

    Returns
    -------
    Array
        x's axes (each windowed one shortened to ``n - w + 1``), then one axis per window
        dimension: a stack of shifted slices of x, read where a region needs them.

    Examples
    --------
    >>> import numpy as np, b2lazy as bl
    >>> bl.sliding_window_view(np.arange(5), 3).to_numpy()
    array([[0, 1, 2],
           [1, 2, 3],
           [2, 3, 4]])
    """
    if writeable:
        raise ValueError("sliding_window_view: b2lazy arrays are read-only; writeable must be False")
    axes = None if axis is None else _ints(axis, "axis")
    return Array(_core.sliding_window_view(asarray(x)._a, _ints(window_shape, "window_shape"), axes))


# numpy.lib.stride_tricks's place for the one function xarray looks up there.
lib = types.SimpleNamespace(stride_tricks=types.SimpleNamespace(sliding_window_view=sliding_window_view))
