"""Dask's map_blocks and blockwise over b2lazy arrays.

Both become one lazy user-function node (lazyudf on a block grid, b2lazy/udf_grid.hpp):
the arrays are laid out along one list of index symbols — the output's, then the
contracted ones — and the node's calls see whole blocks of that grid, whatever region an
evaluation pulls, so `func` is called on exactly the blocks Dask would give it (the
arrays' chunks, unified), with NumPy blocks in each array's own axis order. What does not
map onto that honestly (blocks whose shape the function changes, repeated indices) is
refused with an error naming the argument.
"""

from __future__ import annotations

import bisect
import inspect
import itertools
import threading

import numpy as np

__all__ = ["map_blocks", "blockwise"]


def _b2():
    import b2lazy

    return b2lazy


def _accepts(func, name):
    """Does func take a keyword `name` (as Dask's has_keyword)?"""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return name in params


def _starts(lengths):
    return [0, *itertools.accumulate(lengths)]


class _Layout:
    """The arrays along the symbols `syms` (out_ind, then the contracted ones): each
    symbol's length and block lengths, and for each array argument how its blocks are cut
    from the node's inputs."""

    def __init__(self, fn, out_ind, argpairs, new_axes):
        self.fn = fn
        self.out = tuple(out_ind)
        if len(set(self.out)) != len(self.out):
            raise ValueError(f"{fn}: out_ind {self.out} repeats an index")
        arrays = [(i, a, tuple(ind)) for i, (a, ind) in enumerate(argpairs) if ind is not None]
        if not arrays:
            raise ValueError(f"{fn}: give at least one array argument")
        for i, a, ind in arrays:
            if len(ind) != a.ndim:
                raise ValueError(f"{fn}: argument {i} has {a.ndim} axes but the index {ind} names {len(ind)}")
            if len(set(ind)) != len(ind):
                raise ValueError(f"{fn}: argument {i}'s index {ind} repeats an index (diagonals are not supported)")
        contracted = []
        for _, _, ind in arrays:
            contracted += [s for s in ind if s not in self.out and s not in contracted]
        self.contracted = tuple(contracted)
        self.syms = self.out + self.contracted
        new_axes = dict(new_axes or {})
        self.length, self.blocks = {}, {}
        for s in self.syms:
            have = [(i, a.shape[ind.index(s)], a.chunks[ind.index(s)]) for i, a, ind in arrays if s in ind]
            if not have:
                if s not in new_axes:
                    raise ValueError(f"{fn}: output index {s!r} is in no argument; give its length in new_axes")
                n = new_axes[s]
                n = sum(n) if isinstance(n, tuple) else int(n)
                self.length[s], self.blocks[s] = n, (n,)
                continue
            if s in new_axes:
                raise ValueError(f"{fn}: new_axes names {s!r}, which argument {have[0][0]} already has")
            n = max(h[1] for h in have)
            bad = [(i, m) for i, m, _ in have if m not in (1, n)]
            if bad:
                raise ValueError(
                    f"{fn}: index {s!r} has length {n} in one argument and {bad[0][1]} in argument {bad[0][0]}"
                )
            self.length[s] = n
            if s in self.contracted or n == 0:
                self.blocks[s] = (n,)  # contracted axes are concatenated: one block
                continue
            bounds = sorted({b for _, m, c in have if m == n for b in _starts(c)})
            self.blocks[s] = tuple(np.diff(bounds).tolist())
        self.shape = tuple(self.length[s] for s in self.syms)
        self.starts = [_starts(self.blocks[s]) for s in self.syms]
        self.arrays = arrays

    def inputs(self):
        """Each array argument laid out along syms, broadcast to the whole shape."""
        b2 = _b2()
        out = []
        for _, a, ind in self.arrays:
            perm = sorted(range(a.ndim), key=lambda j: self.syms.index(ind[j]))
            x = b2.permute_dims(a, tuple(perm)) if perm != list(range(a.ndim)) else a
            full = tuple(a.shape[ind.index(s)] if s in ind else 1 for s in self.syms)
            if x.shape != full:
                x = b2.reshape(x, full)
            if x.shape != self.shape:
                x = b2.broadcast_to(x, self.shape)
            out.append(x)
        return out

    def cutters(self):
        """For each array argument: (key into a node input's block, the transpose back to the
        argument's axis order)."""
        out = []
        for _, a, ind in self.arrays:
            key = []
            for s in self.syms:
                if s not in ind:
                    key.append(0)  # an axis the argument does not have
                elif a.shape[ind.index(s)] == 1 and self.length[s] != 1:
                    key.append(slice(0, 1))  # broadcast: the argument's own length-1 axis
                else:
                    key.append(slice(None))
            kept = sorted(ind, key=self.syms.index)
            back = tuple(kept.index(s) for s in ind)
            out.append((tuple(key), None if back == tuple(range(len(back))) else back))
        return out

    def block_info(self, loc, dtype):
        """Dask's block_info for the block at `loc` (one block index per symbol)."""
        at = dict(zip(self.syms, loc))
        info = {}
        for i, a, ind in self.arrays:
            nchunks, where, span = [], [], []
            for s, m in zip(ind, a.shape):
                if m == 1 and self.length[s] != 1 or s in self.contracted:
                    nchunks.append(1), where.append(0), span.append((0, m))
                else:
                    st = self.starts[self.syms.index(s)]
                    nchunks.append(len(st) - 1), where.append(at[s]), span.append((st[at[s]], st[at[s] + 1]))
            info[i] = {
                "shape": a.shape,
                "num-chunks": tuple(nchunks),
                "chunk-location": tuple(where),
                "array-location": span,
            }
        nout = len(self.out)
        oloc = tuple(loc[:nout])
        info[None] = {
            "shape": self.shape[:nout],
            "num-chunks": tuple(len(self.blocks[s]) for s in self.out),
            "chunk-location": oloc,
            "array-location": [(st[j], st[j + 1]) for st, j in zip(self.starts, oloc)],
            "chunk-shape": tuple(self.blocks[s][j] for s, j in zip(self.out, oloc)),
            "dtype": dtype,
        }
        return info


class _BlockCall:
    """The node's function: for a pulled region, func on every grid block it meets (from
    whole blocks of the inputs), each result copied where the region wants it. The last
    few blocks pulled only in part are kept, so that regions smaller than a block (a
    slice of the result) do not call func again for the same block."""

    KEEP = 8

    def __init__(self, func, args, kwargs, layout, dtype, with_info, with_id):
        self.func, self.args, self.kwargs, self.layout = func, args, kwargs, layout
        self.dtype, self.with_info, self.with_id = dtype, with_info, with_id
        self.cutters = layout.cutters()
        self.kept = {}
        self.lock = threading.Lock()

    def block(self, views, vstart, loc):
        lay = self.layout
        lo = [st[j] for st, j in zip(lay.starts, loc)]
        hi = [st[j + 1] for st, j in zip(lay.starts, loc)]
        box = tuple(slice(a - v, b - v) for a, b, v in zip(lo, hi, vstart))
        args = list(self.args)
        for (i, _, _), view, (key, back) in zip(lay.arrays, views, self.cutters):
            b = view[box][key]
            args[i] = b if back is None else b.transpose(back)
        kwargs = dict(self.kwargs)
        if self.with_info:
            kwargs["block_info"] = lay.block_info(loc, self.dtype)
        if self.with_id:
            kwargs["block_id"] = tuple(loc[: len(lay.out)])
        r = np.asarray(self.func(*args, **kwargs))
        want = tuple(b - a for a, b in zip(lo, hi))[: len(lay.out)]
        if r.shape != want:
            raise ValueError(
                f"the function returned a block of shape {r.shape} for the block {tuple(loc)} of shape "
                f"{want}; b2lazy's map_blocks/blockwise keep every block's shape (chunks= cannot "
                f"change it)"
            )
        return r.reshape(r.shape + (1,) * len(lay.contracted)), lo

    def __call__(self, views, out, offset):
        lay = self.layout
        stop = [o + n for o, n in zip(offset, out.shape)]
        first = [bisect.bisect_right(st, o) - 1 for st, o in zip(lay.starts, offset)]
        last = [bisect.bisect_left(st, e) - 1 for st, e in zip(lay.starts, stop)]
        vstart = [st[j] for st, j in zip(lay.starts, first)]
        for loc in itertools.product(*[range(a, b + 1) for a, b in zip(first, last)]):
            with self.lock:
                hit = self.kept.get(loc)
            if hit is None:
                hit = self.block(views, vstart, loc)
                lo = hit[1]
                hi = [st[j + 1] for st, j in zip(lay.starts, loc)]
                if any(o > a or e < b for o, e, a, b in zip(offset, stop, lo, hi)):
                    with self.lock:  # only part of it is pulled now: the rest may be asked for next
                        if len(self.kept) >= self.KEEP:
                            self.kept.pop(next(iter(self.kept)))
                        self.kept[loc] = hit
            r, lo = hit
            dst, src = [], []
            for d, (o, e, a) in enumerate(zip(offset, stop, lo)):
                s, t = max(o, a), min(e, a + lay.blocks[lay.syms[d]][loc[d]])
                dst.append(slice(s - o, t - o))
                src.append(slice(0, 1) if d >= len(lay.out) else slice(s - a, t - a))
            out[tuple(dst)] = r[tuple(src)]


def _infer_dtype(fn, func, argpairs, kwargs):
    """Dask's way: func on one-element arrays of the arguments' dtypes."""
    args = [np.ones((1,) * len(ind), dtype=a.dtype) if ind is not None else a for a, ind in argpairs]
    try:
        return np.asarray(func(*args, **kwargs)).dtype
    except Exception as e:  # noqa: BLE001 - any failure: ask for the dtype
        raise ValueError(
            f"{fn}: could not infer the output dtype by calling the function on one-element "
            f"blocks ({type(e).__name__}: {e}); give dtype="
        ) from None


def _build(fn, func, out_ind, argpairs, dtype, new_axes, kwargs, name, extras):
    b2 = _b2()
    if not callable(func):  # (blockwise's check; map_blocks made it already)
        raise TypeError(f"{fn}: func must be callable, got {type(func).__name__}")
    argpairs = [(b2.asarray(a) if ind is not None else a, ind) for a, ind in argpairs]
    lay = _Layout(fn, out_ind, argpairs, new_axes)
    if dtype is None:
        dtype = _infer_dtype(fn, func, argpairs, kwargs)
    dtype = np.dtype(dtype)
    out_shape = lay.shape[: len(lay.out)]
    if 0 in out_shape:
        return b2.zeros(out_shape, dtype=dtype)  # no block: func is never called (as in Dask)
    if 0 in lay.shape:
        raise ValueError(
            f"{fn}: a contracted index has length 0 (every call would see an empty axis); b2lazy does not support it"
        )
    with_info = extras and _accepts(func, "block_info")
    with_id = extras and _accepts(func, "block_id")
    call = _BlockCall(func, [a for a, _ in argpairs], kwargs, lay, dtype, with_info, with_id)
    label = name or getattr(func, "__name__", type(func).__name__)
    grid = [list(st) for st in lay.starts]
    r = b2.Array(b2._core.lazyudf_on_grid(call, [x._a for x in lay.inputs()], dtype.name, list(lay.shape), grid, label))
    if lay.contracted:
        r = r[(slice(None),) * len(lay.out) + (0,) * len(lay.contracted)]
    return r


def _axes(v, what, ndim, fn):
    if v is None:
        return []
    v = [v] if isinstance(v, (int, np.integer)) else list(v)
    for a in v:
        if not -ndim <= a < ndim:
            raise ValueError(f"{fn}: {what}={v} is out of range for {ndim} axes")
    return sorted({int(a) % ndim for a in v})


def _chunks_like(fn, chunks, expected, skip):
    """Refuses output `chunks` that differ from the blocks the function keeps."""
    if len(chunks) != len(expected):
        raise ValueError(f"{fn}: chunks has {len(chunks)} axes; the output has {len(expected)}")
    for d, (c, e) in enumerate(zip(chunks, expected)):
        if d in skip:
            continue
        got = tuple(int(v) for v in c) if isinstance(c, (tuple, list)) else (int(c),) * len(e)
        if got != tuple(e):
            raise ValueError(
                f"{fn}: chunks={tuple(chunks)} asks for blocks of other lengths than the inputs' "
                f"{tuple(expected)} along axis {d}; b2lazy's map_blocks keeps each block's shape "
                f"(rechunk the inputs to change the blocks)"
            )


def map_blocks(
    func,
    *args,
    name=None,
    token=None,
    dtype=None,
    chunks=None,
    drop_axis=None,
    new_axis=None,
    enforce_ndim=False,
    meta=None,
    **kwargs,
):
    """Apply a function to every block of one or more arrays, lazily (``dask.array.map_blocks``).

    The blocks are the arrays' chunks (``Array.chunks``), unified across the arrays;
    arrays of fewer axes align to the right and length-1 axes broadcast, as in Dask.
    ``func`` gets NumPy blocks and returns the output block; when it takes the keywords
    ``block_info`` or ``block_id`` they are supplied as Dask supplies them. Other
    arguments are passed to every call as they are.

    Parameters
    ----------
    func : callable
        ``func(*blocks, **kwargs)`` returning a block of the output's block shape.
    *args : Array or object
        b2lazy arrays are cut into blocks; anything else is passed whole.
    name, token : str, optional
        The node's name in ``explain()`` (default: func's name).
    dtype : dtype, optional
        The output dtype (default: from `meta`, else from calling func on one-element
        arrays, as Dask does).
    chunks : tuple, optional
        The output's chunks: must be the blocks' own (b2lazy keeps each block's shape),
        except along new axes, whose length it gives.
    drop_axis : int or sequence of int, optional
        Axes the function removes: each call sees those axes whole.
    new_axis : int or sequence of int, optional
        Axes the function adds (of length 1, or ``chunks``'s).
    enforce_ndim : bool, optional
        Accepted; every block's shape is checked anyway.
    meta : array, optional
        Its dtype is the output dtype.
    **kwargs
        Passed to every call of `func`.

    Returns
    -------
    Array
        The lazy result (it cannot be saved: its function is Python code).

    Examples
    --------
    >>> import numpy as np, b2lazy as bl
    >>> x = bl.asarray(np.arange(6.0), chunks=(3,))
    >>> bl.map_blocks(lambda b: b - b.mean(), x).to_numpy()
    array([-1.,  0.,  1., -1.,  0.,  1.])
    """
    fn = "map_blocks"
    b2 = _b2()
    if not callable(func):
        raise TypeError(f"{fn}: func must be callable, got {type(func).__name__}")
    if drop_axis is not None and new_axis is not None:
        raise ValueError(f"{fn}: drop_axis and new_axis together are not supported; use blockwise")
    arrays = [a for a in args if isinstance(a, b2.Array)]
    if not arrays:
        raise ValueError(f"{fn}: give at least one b2lazy Array among the arguments")
    if dtype is None and meta is not None:
        dtype = np.asarray(meta).dtype
    ndim = max(a.ndim for a in arrays)
    out_ind = list(range(ndim))[::-1]
    argpairs = [(a, tuple(range(a.ndim))[::-1]) if isinstance(a, b2.Array) else (a, None) for a in args]
    drop = _axes(drop_axis, "drop_axis", ndim, fn)
    out_ind = [s for d, s in enumerate(out_ind) if d not in drop]
    if new_axis is None and chunks is not None and len(chunks) > len(out_ind):
        new_axis = list(range(len(chunks) - len(out_ind)))
    nv = [] if new_axis is None else [new_axis] if isinstance(new_axis, (int, np.integer)) else list(new_axis)
    new = _axes(nv, "new_axis", len(out_ind) + len(nv), fn)
    new_axes = {}
    for ax in new:
        sym = ndim + ax  # a symbol no array has
        length = 1
        if chunks is not None:
            c = chunks[ax]
            if isinstance(c, (tuple, list)) and len(c) != 1:
                raise ValueError(f"{fn}: new axis {ax} must be one block; chunks gives it {tuple(c)}")
            length = int(c[0] if isinstance(c, (tuple, list)) else c)
        out_ind.insert(ax, sym)
        new_axes[sym] = length
    if dtype is None:
        dtype = _infer_dtype(fn, func, argpairs, kwargs)
    if chunks is not None:
        lay = _Layout(fn, out_ind, argpairs, new_axes)
        _chunks_like(fn, chunks, [lay.blocks[s] for s in out_ind], set(new))
    return _build(fn, func, out_ind, argpairs, dtype, new_axes, kwargs, name or token, extras=True)


def blockwise(
    func,
    out_ind,
    *args,
    name=None,
    token=None,
    dtype=None,
    adjust_chunks=None,
    new_axes=None,
    align_arrays=True,
    concatenate=None,
    meta=None,
    **kwargs,
):
    """Apply a function across blocks matched by index symbols (``dask.array.blockwise``).

    ``args`` alternate arrays and their index (a tuple of symbols, one per axis; None for
    an argument passed whole). Arrays sharing a symbol are cut into the same blocks (their
    chunks unified); a symbol of length 1 broadcasts. Symbols not in `out_ind` are
    contracted: with ``concatenate=True`` each call sees those axes whole and returns the
    block without them.

    Parameters
    ----------
    func : callable
        ``func(*blocks, **kwargs)``, each block in its array's own axis order.
    out_ind : iterable
        The output's index symbols.
    *args : pairs of (array or object, index or None)
    name, token : str, optional
        The node's name in ``explain()``.
    dtype : dtype, optional
        The output dtype (default: from `meta`, else from calling func on one-element
        arrays).
    adjust_chunks : None
        Must be None (b2lazy keeps each block's shape).
    new_axes : dict, optional
        Lengths of output symbols that no argument has (one block each).
    align_arrays : bool, optional
        Accepted; arrays are always aligned.
    concatenate : bool, optional
        Must be True when a symbol is contracted.
    meta : array, optional
        Its dtype is the output dtype.
    **kwargs
        Passed to every call of `func`.

    Returns
    -------
    Array
        The lazy result.

    Examples
    --------
    >>> import numpy as np, b2lazy as bl
    >>> x = bl.asarray(np.arange(6.0).reshape(2, 3), chunks=(1, 3))
    >>> bl.blockwise(lambda b: b.sum(axis=1), "i", x, "ij", concatenate=True).to_numpy()
    array([ 3., 12.])
    """
    fn = "blockwise"
    if len(args) % 2:
        raise ValueError(f"{fn}: args must be pairs of (array, index), got {len(args)} values")
    if adjust_chunks is not None:
        raise ValueError(f"{fn}: adjust_chunks is not supported (b2lazy keeps each block's shape)")
    argpairs = [(args[k], None if args[k + 1] is None else tuple(args[k + 1])) for k in range(0, len(args), 2)]
    out = tuple(out_ind)
    contracted = {s for _, ind in argpairs if ind is not None for s in ind if s not in out}
    if contracted and concatenate is not True:
        raise ValueError(
            f"{fn}: contracted indices {sorted(map(str, contracted))} need concatenate=True "
            f"(b2lazy passes whole axes, not lists of blocks)"
        )
    if dtype is None and meta is not None:
        dtype = np.asarray(meta).dtype
    return _build(fn, func, out, argpairs, dtype, new_axes, kwargs, name or token, extras=False)
