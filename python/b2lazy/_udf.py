"""lazyudf: a lazy array computed block by block by a Python function, as python-blosc2's
lazyudf (the engine calls it on its workers, b2lazy/udf.hpp)."""

from __future__ import annotations

import numpy as np

from . import _core
from ._array import Array
from ._serial import namespace as _ns

__all__ = ["lazyudf"]


def lazyudf(func, inputs, dtype, shape=None, chunked=True, *, depth=0, name=None, chunked_eval=None):
    """A lazy array computed block by block by a Python function (python-blosc2's lazyudf).

    For each block the evaluation asks for, ``func(inputs, output, offset)`` is called with
    `inputs` a tuple of read-only NumPy arrays — each input's values over the block, widened
    by `depth` elements along every axis (clipped at the array's edges: the view of input
    axis d starts at ``max(0, offset[d] - depth)``), 0-d inputs whole — `output` the block to
    fill (a writable NumPy array of the block's shape and `dtype`) and `offset` the block's
    start. Blocks are filled on the worker threads, one call at a time under the GIL; a
    numba function jitted with ``nogil=True`` releases it and runs on all of them. The
    result nests in expressions like any array; it cannot be saved (its function is Python
    code).

    Parameters
    ----------
    func : callable
        ``func(inputs, output, offset)``, filling `output`.
    inputs : sequence of array_like
        b2lazy arrays (or anything asarray takes) of `shape`, or scalars (passed as 0-d
        arrays).
    dtype : dtype
        The result's dtype.
    shape : tuple of int, optional
        The result's shape (default: the inputs').
    chunked : bool, optional
        False shows every call the whole inputs (depth = the shape), for functions that are
        not local.
    depth : int or sequence of int, optional
        Halo width, for every axis or one per axis (stencils).
    name : str, optional
        The name shown in plans (default: the function's).
    chunked_eval : bool, optional
        python-blosc2's name for `chunked`.

    Returns
    -------
    Array
        The lazy result.

    Raises
    ------
    TypeError
        `func` is not callable.
    ValueError
        No `shape` and no array input.

    Examples
    --------
    >>> def double(inputs, output, offset):
    ...     output[...] = inputs[0] * 2
    >>> x = bl.asarray(np.arange(4.0))
    >>> bl.lazyudf(double, (x,), np.float64).to_numpy()
    array([0., 2., 4., 6.])
    """
    if chunked_eval is not None:
        chunked = chunked_eval
    if not callable(func):
        raise TypeError(f"lazyudf: func must be callable, got {type(func).__name__}")
    ins = [x if isinstance(x, Array) else _ns().asarray(x) for x in inputs]
    if shape is None:
        shapes = [x.shape for x in ins if x.ndim]
        if not shapes:
            raise ValueError("lazyudf: give shape= when no input is an array")
        shape = shapes[0]
    shape = tuple(int(s) for s in shape)
    if not chunked:
        depth = list(shape)
    depth = [int(depth)] * len(shape) if np.isscalar(depth) else [int(d) for d in depth]
    fname = name or getattr(func, "__name__", type(func).__name__)
    return Array(_core.lazyudf(func, [x._a for x in ins], np.dtype(dtype).name, list(shape), depth, fname))
