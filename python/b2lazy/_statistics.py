"""Counting, binning and NaN-skipping quantiles: isin, digitize, bincount,
histogram, histogram2d, nanmedian, nanquantile, nanpercentile, and the counter-based
random sources that :mod:`b2lazy.random` builds on.

The data stays lazy and is streamed chunk by chunk when a result is evaluated. What a
result's shape or lookup table depends on is evaluated when the function is called:
isin's ``test_elements`` and digitize's ``bins`` (at most 2**24 values, held sorted),
bincount's ``max(x)`` (one pass: NumPy's output length, so ``minlength`` is optional), and a
histogram's range when ``range=None`` (one pass for the min and max, as NumPy computes
them). A saved expression defers those passes to its first evaluation, like nonzero's.
"""

from __future__ import annotations

import numbers

import numpy as np

from . import Array, _check_axis, _context, _core, asarray, reshape, stack
from ._dtypes import as_dtype
from ._registry import registered as _registered

__all__ = [
    "nanmedian",
    "nanquantile",
    "nanpercentile",
    "isin",
    "digitize",
    "bincount",
    "histogram",
    "histogram2d",
    "random_uniform",
    "random_normal",
    "random_integers",
]


def _flag(v, name, fn):
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{fn}(): {name} must be True or False, got {v!r}")
    return bool(v)


def _int(v, name, fn):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Integral, np.integer)):
        raise TypeError(f"{fn}(): {name} must be an int, got {type(v).__name__} {v!r}")
    return int(v)


def _nan_holistic(name, q, x, axis, keepdims, method):
    _flag(keepdims, "keepdims", name)
    if not isinstance(method, str):
        raise TypeError(f"{name}(): method must be a string, got {method!r}")
    x = asarray(x)
    qs = np.asarray(q, dtype=np.float64)
    ax = _check_axis(axis, name)  # None, an int or a tuple of ints
    axes = None if ax is None else list(ax) if isinstance(ax, tuple) else [ax]
    if qs.ndim == 0:
        r = Array(_core.nanquantile(name, x._a, float(qs), axes, bool(keepdims), method))
        weak = type(q) in (int, float)  # a Python number keeps float32 (np.float64 does not: NEP 50)
        return r if weak or r.dtype != np.float32 or method not in ("linear", "midpoint") else r.astype("float64")
    one = globals()[name]  # several quantiles: stacked along a new first axis, as NumPy's
    parts = [one(x, float(v), axis=axis, method=method, keepdims=keepdims) for v in qs.ravel()]
    r = reshape(stack(parts), qs.shape + parts[0].shape)
    # NumPy (NEP 50): a q array is float64, so interpolated float32 values become float64.
    return r.astype("float64") if r.dtype == np.float32 and method in ("linear", "midpoint") else r


@_registered
def nanmedian(x, /, axis, *, keepdims):
    """Median over `axis`, leaving NaNs out, as :func:`numpy.nanmedian`; lazy.

    Parameters
    ----------
    x : array_like
        Input values.
    axis : int or tuple of ints, optional
        Axes to reduce (None: all).
    keepdims : bool, optional
        Keep the reduced axes with length 1.

    Returns
    -------
    Array
        The medians; NaN where a slice holds only NaN (NumPy also warns there).

    Examples
    --------
    >>> import numpy as np, b2lazy as bl
    >>> bl.nanmedian(np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]]), axis=1).to_numpy()
    array([ 2., nan])
    """
    return _nan_holistic("nanmedian", 0.5, x, axis, keepdims, "linear")


@_registered
def nanquantile(x, /, q, axis, *, method, keepdims):
    """The q-th quantile(s), 0 <= q <= 1, over `axis` leaving NaNs out, as
    :func:`numpy.nanquantile`; lazy.

    Parameters
    ----------
    x : array_like
        Input values.
    q : float or array_like of floats
        Quantiles in [0, 1]; several are stacked along a new first axis.
    axis : int or tuple of ints, optional
        Axes to reduce (None: all).
    method : {'linear', 'lower', 'higher', 'nearest', 'midpoint'}, optional
        NumPy's interpolation methods.
    keepdims : bool, optional
        Keep the reduced axes with length 1.

    Returns
    -------
    Array
        The quantiles; NaN where a slice holds only NaN.

    Examples
    --------
    >>> import numpy as np, b2lazy as bl
    >>> bl.nanquantile(np.array([1.0, np.nan, 2.0, 4.0]), [0.25, 0.5]).to_numpy()
    array([1.5, 2. ])
    """
    return _nan_holistic("nanquantile", q, x, axis, keepdims, method)


@_registered
def nanpercentile(x, /, q, axis, *, method, keepdims):
    """The q-th percentile(s), 0 <= q <= 100, over `axis` leaving NaNs out, as
    :func:`numpy.nanpercentile`; lazy.

    Parameters
    ----------
    x : array_like
        Input values.
    q : float or array_like of floats
        Percentiles in [0, 100].
    axis : int or tuple of ints, optional
        Axes to reduce (None: all).
    method : {'linear', 'lower', 'higher', 'nearest', 'midpoint'}, optional
        NumPy's interpolation methods.
    keepdims : bool, optional
        Keep the reduced axes with length 1.

    Returns
    -------
    Array
        The percentiles; NaN where a slice holds only NaN.

    Examples
    --------
    >>> import numpy as np, b2lazy as bl
    >>> bl.nanpercentile(np.array([[np.nan, 1.0, 3.0]]), 50, axis=1).to_numpy()
    array([2.])
    """
    return _nan_holistic("nanpercentile", q, x, axis, keepdims, method)


@_registered
def isin(element, test_elements, *, assume_unique, invert):
    """Whether each element of `element` is in `test_elements`, as :func:`numpy.isin`.

    ``test_elements`` is evaluated now into a sorted set (at most 2**24 values, else a
    ValueError names its size); the lookup is lazy over `element`. Values are compared in
    their promoted dtype; NaN is never found.

    Parameters
    ----------
    element : array_like
        The values looked up.
    test_elements : array_like
        The values looked for.
    assume_unique : bool, optional
        Accepted for NumPy's signature (the set is made unique anyway).
    invert : bool, optional
        Whether an element is *not* in the set instead.

    Returns
    -------
    Array
        bool, of `element`'s shape.

    Examples
    --------
    >>> import numpy as np, b2lazy as bl
    >>> bl.isin(np.arange(6), [1, 4, 9]).to_numpy()
    array([False,  True, False, False,  True, False])
    """
    return Array(
        _core.isin(
            asarray(element)._a,
            asarray(test_elements)._a,
            _flag(assume_unique, "assume_unique", "isin"),
            _flag(invert, "invert", "isin"),
            _context(None),
        )
    )


@_registered
def digitize(x, bins, right):
    """The index of the bin each value of `x` falls in, as :func:`numpy.digitize`; lazy.

    Parameters
    ----------
    x : array_like
        Values to bin.
    bins : array_like
        1-d, monotonically increasing or decreasing (else ValueError); evaluated now (at
        most 2**24 values).
    right : bool, optional
        Whether a bin holds its right edge instead of its left.

    Returns
    -------
    Array
        int64 indices, of `x`'s shape.

    Examples
    --------
    >>> import numpy as np, b2lazy as bl
    >>> bl.digitize(np.array([0.2, 6.4, 3.0, 1.6]), [0.0, 1.0, 2.5, 4.0, 10.0]).to_numpy()
    array([1, 4, 3, 2])
    """
    return Array(_core.digitize(asarray(x)._a, asarray(bins)._a, _flag(right, "right", "digitize"), _context(None)))


@_registered
def bincount(x, /, weights, minlength):
    """Occurrences of each value of a 1-d non-negative integer array, as :func:`numpy.bincount`.

    The result's length is ``max(max(x) + 1, minlength)``: ``max(x)`` is found now (one
    pass over `x`, as NumPy needs it too), refused above 2**28. The counts are lazy: a
    reduction streaming `x` in slabs when evaluated.

    Parameters
    ----------
    x : array_like
        1-d, of an integer dtype, no negative values.
    weights : array_like, optional
        Of `x`'s shape: their sums are counted instead (float64).
    minlength : int, optional
        The least length of the result.

    Returns
    -------
    Array
        int64 counts, or float64 sums of weights.

    Examples
    --------
    >>> import numpy as np, b2lazy as bl
    >>> bl.bincount(np.array([0, 1, 1, 3, 2, 1, 7])).to_numpy()
    array([1, 3, 1, 1, 0, 0, 0, 1])
    """
    w = None if weights is None else asarray(weights)._a
    return Array(_core.bincount(asarray(x)._a, w, _int(minlength, "minlength", "bincount"), _context(None)))


def _axis_bins(bins, fn, name="bins"):
    """NumPy's bins= of one axis: (count, edges or None)."""
    if isinstance(bins, str):
        raise ValueError(f"{fn}(): bins={bins!r} (a binning rule by name) is not supported; give a count or the edges")
    if isinstance(bins, (numbers.Integral, np.integer)) and not isinstance(bins, (bool, np.bool_)):
        return int(bins), None
    if isinstance(bins, Array):
        bins = bins.to_numpy()
    e = np.asarray(bins)
    if e.ndim != 1:
        raise ValueError(f"{fn}(): {name} must be an int or 1-d bin edges, got shape {e.shape}")
    if e.dtype.kind not in "biuf":
        raise TypeError(f"{fn}(): {name} must be numbers, got dtype {e.dtype}")
    return 0, [float(v) for v in e.astype(np.float64)]


def _range(r, fn, name="range"):
    if r is None:
        return None
    try:
        lo, hi = r
        return float(lo), float(hi)
    except (TypeError, ValueError):
        raise ValueError(f"{fn}(): {name} must be None or a (min, max) pair, got {r!r}") from None


def _density(d, fn):
    return False if d is None else _flag(d, "density", fn)


@_registered
def histogram(a, bins, range, weights, density):
    """The histogram of `a` (flattened), as :func:`numpy.histogram`: ``(hist, bin_edges)``.

    Bin ``i`` holds the values in ``[edges[i], edges[i + 1])``, the last bin its right edge
    too; values outside the edges and NaN are not counted. `hist` is lazy (one pass over
    the data, in chunks, when evaluated); `bin_edges` is a NumPy array. With
    ``range=None`` the min and max of `a` are found now (one pass), as NumPy does.

    Parameters
    ----------
    a : array_like
        Input data.
    bins : int or sequence of scalars, optional
        The number of equal-width bins, or the bin edges (increasing). Named binning rules
        ('auto', ...) are not supported.
    range : (float, float), optional
        The lower and upper edges when `bins` is a count.
    weights : array_like, optional
        Of `a`'s shape: each value counts its weight.
    density : bool, optional
        Normalise to a probability density (hist / bin width / total).

    Returns
    -------
    hist : Array
        The counts (int64; the weights' dtype; float64 with `density`).
    bin_edges : numpy.ndarray
        The ``len(hist) + 1`` edges (float32 for float32 `a`, else float64).

    Examples
    --------
    >>> import numpy as np, b2lazy as bl
    >>> hist, edges = bl.histogram(np.array([1, 2, 1, 4]), bins=3)
    >>> hist.to_numpy(), edges
    (array([2, 1, 1]), array([1., 2., 3., 4.]))
    """
    count, edges = _axis_bins(bins, "histogram")
    w = None if weights is None else asarray(weights)._a
    hist, e, edge_dtype = _core.histogram(
        asarray(a)._a, count, edges, _range(range, "histogram"), w, _density(density, "histogram"), _context(None)
    )
    return Array(hist), _edges(bins, edges, e[0], edge_dtype)


def _edges(bins, given, made, edge_dtype):
    """NumPy's bin_edges: the given edges as given (their dtype), or the ones made."""
    if given is not None:
        return np.array(bins.to_numpy() if isinstance(bins, Array) else bins)
    return np.asarray(made, dtype=np.float64).astype(edge_dtype)


@_registered
def histogram2d(x, y, bins, range, weights, density):
    """The 2-d histogram of the points ``(x[i], y[i])``, as :func:`numpy.histogram2d`:
    ``(hist, xedges, yedges)``.

    Parameters
    ----------
    x, y : array_like
        1-d, of one length.
    bins : int or [int, int] or array_like or [array, array], optional
        Counts or edges, for both axes or each (NumPy's forms).
    range : [[xmin, xmax], [ymin, ymax]], optional
        The outer edges when a count is given (None: each axis's min and max, found now).
    weights : array_like, optional
        One weight per point.
    density : bool, optional
        Normalise to a probability density.

    Returns
    -------
    hist : Array
        float64, of shape (nx, ny): lazy (one pass over the points when evaluated).
    xedges, yedges : numpy.ndarray
        The edges of each axis.

    Examples
    --------
    >>> import numpy as np, b2lazy as bl
    >>> h, xe, ye = bl.histogram2d(np.array([0.0, 1.0, 1.0]), np.array([0.0, 0.0, 1.0]), bins=2)
    >>> h.to_numpy()
    array([[1., 0.],
           [1., 1.]])
    """
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if isinstance(bins, str) or n != 2:
        bx = by = _axis_bins(bins, "histogram2d")
    else:
        bx, by = _axis_bins(bins[0], "histogram2d", "bins[0]"), _axis_bins(bins[1], "histogram2d", "bins[1]")
    rx = ry = None
    if range is not None:
        try:
            rx, ry = range
        except (TypeError, ValueError):
            raise ValueError(
                f"histogram2d(): range must be None or [[xmin, xmax], [ymin, ymax]], got {range!r}"
            ) from None
        rx, ry = _range(rx, "histogram2d", "range[0]"), _range(ry, "histogram2d", "range[1]")
    w = None if weights is None else asarray(weights)._a
    hist, e, edge_dtype = _core.histogram2d(
        asarray(x)._a,
        asarray(y)._a,
        bx[0],
        bx[1],
        rx,
        by[0],
        by[1],
        ry,
        w,
        _density(density, "histogram2d"),
        _context(None),
    )
    given = (bins, bins) if isinstance(bins, str) or n != 2 else (bins[0], bins[1])
    return (Array(hist), _edges(given[0], bx[1], e[0], edge_dtype), _edges(given[1], by[1], e[1], edge_dtype))


# --- the counter-based random sources (b2lazy.random's Generator calls these) -----------
def _shape(shape, fn):
    if isinstance(shape, (numbers.Integral, np.integer)) and not isinstance(shape, (bool, np.bool_)):
        shape = (shape,)
    try:
        shape = tuple(_int(s, "shape", fn) for s in shape)
    except TypeError:
        raise TypeError(f"{fn}(): shape must be an int or a tuple of ints, got {shape!r}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"{fn}(): negative dimensions are not allowed, got shape {shape}")
    return shape


def _key(seed, stream, fn):
    seed, stream = _int(seed, "seed", fn), _int(stream, "stream", fn)
    if not 0 <= seed < 2**64:
        raise ValueError(f"{fn}(): seed must be in [0, 2**64), got {seed}")
    if not 0 <= stream < 2**32:
        raise ValueError(f"{fn}(): stream must be in [0, 2**32), got {stream}")
    return seed, stream


def _chunks(chunks, fn):
    return [] if chunks is None else list(_shape(chunks, fn))


def _real(v, name, fn):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.number)):
        raise TypeError(f"{fn}(): {name} must be a real number, got {type(v).__name__} {v!r}")
    return float(v)


def _float_source(dist, fn, shape, a, b, seed, stream, dtype, chunks):
    name = "float64" if dtype is None else np.dtype(as_dtype(dtype, fn)).name
    seed, stream = _key(seed, stream, fn)
    return Array(
        _core.random_source(dist, list(_shape(shape, fn)), a, b, 0, 0, seed, stream, name, _chunks(chunks, fn))
    )


@_registered
def random_uniform(shape, /, low, high, *, seed, stream, dtype, chunks):
    """Uniform values in [low, high) from a counter-based generator (Philox4x32-10):
    element ``i`` (flat C-order index) depends on ``(seed, stream, i)`` only, so any region
    is computed on its own. :func:`b2lazy.random.default_rng` is the usual way in.

    Parameters
    ----------
    shape : int or tuple of ints
        The array's shape.
    low, high : float, optional
        The interval.
    seed : int, optional
        The generator's key, in [0, 2**64).
    stream : int, optional
        Tells apart arrays of one seed, in [0, 2**32).
    dtype : {float32, float64}, optional
        float64 by default (53 random bits; float32: 24).
    chunks : tuple of ints, optional
        The chunks evaluation prefers.

    Returns
    -------
    Array
        Lazy: computed for whatever region is asked.

    Examples
    --------
    >>> import b2lazy as bl
    >>> x = bl.random_uniform((4, 5), seed=1)
    >>> bool((x[1:3].to_numpy() == x.to_numpy()[1:3]).all())
    True
    """
    return _float_source(
        "uniform",
        "random_uniform",
        shape,
        _real(low, "low", "random_uniform"),
        _real(high, "high", "random_uniform"),
        seed,
        stream,
        dtype,
        chunks,
    )


@_registered
def random_normal(shape, /, loc, scale, *, seed, stream, dtype, chunks):
    """Normal values ``loc + scale * z`` from a counter-based generator (Philox4x32-10; z
    by Box–Muller on the element's own 128 random bits), as :func:`random_uniform`.

    Parameters
    ----------
    shape : int or tuple of ints
        The array's shape.
    loc, scale : float, optional
        Mean and standard deviation (scale >= 0).
    seed, stream : int, optional
        As :func:`random_uniform`.
    dtype : {float32, float64}, optional
        float64 by default.
    chunks : tuple of ints, optional
        The chunks evaluation prefers.

    Returns
    -------
    Array
        Lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> bl.random_normal(3, 5.0, 0.0, seed=2).to_numpy()
    array([5., 5., 5.])
    """
    return _float_source(
        "normal",
        "random_normal",
        shape,
        _real(loc, "loc", "random_normal"),
        _real(scale, "scale", "random_normal"),
        seed,
        stream,
        dtype,
        chunks,
    )


@_registered
def random_integers(shape, /, low, high, *, seed, stream, dtype, chunks):
    """Integers in [low, high) (high None: [0, low)), uniformly without modulo bias
    (Lemire's method), from a counter-based generator as :func:`random_uniform`.

    Parameters
    ----------
    shape : int or tuple of ints
        The array's shape.
    low, high : int
        The interval, high excluded; every value must fit `dtype`.
    seed, stream : int, optional
        As :func:`random_uniform`.
    dtype : integer dtype, optional
        int64 by default.
    chunks : tuple of ints, optional
        The chunks evaluation prefers.

    Returns
    -------
    Array
        Lazy.

    Examples
    --------
    >>> import b2lazy as bl
    >>> v = bl.random_integers(1000, 3, 7, seed=3).to_numpy()
    >>> sorted(set(v.tolist()))
    [3, 4, 5, 6]
    """
    fn = "random_integers"
    low = _int(low, "low", fn)
    if high is None:
        low, high = 0, low
    high = _int(high, "high", fn)
    name = "int64" if dtype is None else np.dtype(as_dtype(dtype, fn)).name
    if np.dtype(name).kind not in "iu":
        raise TypeError(f"{fn}(): dtype must be an integer dtype, got {name}")
    info = np.iinfo(name)
    if high <= low:
        raise ValueError(f"{fn}(): low >= high (low={low}, high={high})")
    if low < info.min:
        raise ValueError(f"{fn}(): low={low} is out of bounds for {name}")
    if high - 1 > info.max:
        raise ValueError(f"{fn}(): high={high} is out of bounds for {name}")
    seed, stream = _key(seed, stream, fn)
    span = (high - low) % 2**64  # 2**64 values: 0
    low64 = low - 2**64 if low >= 2**63 else low  # (uint64 lows as their two's complement)
    return Array(
        _core.random_source(
            "integers", list(_shape(shape, fn)), 0.0, 0.0, low64, span, seed, stream, name, _chunks(chunks, fn)
        )
    )
