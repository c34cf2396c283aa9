"""gradient: NumPy's second-order central differences, lazy. xarray's
``DataArray.differentiate`` calls ``xp.gradient(f, coord, axis=, edge_order=)`` on the
array's namespace; with b2lazy data that is this function. Built from slices along the
axis (interior, first and last element) joined by concat: one pass over the input."""

from __future__ import annotations

import numpy as np

__all__ = ["gradient"]


def _bl():
    import b2lazy

    return b2lazy


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool) else tuple(axis)
    out = []
    for a in axes:
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or not -ndim <= a < ndim:
            raise ValueError(f"gradient: axis {a!r} is out of bounds for an array of {ndim} dimensions")
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"gradient: repeated axis in {axis!r}")
    return tuple(out)


def _spacings(varargs, f, axes):
    """One spacing per axis: a float (uniform) or a float64 array of the n-1 differences
    (as NumPy, coordinates whose differences are all equal count as uniform)."""
    if len(varargs) == 0:
        return [1.0] * len(axes)
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        return [float(np.asarray(varargs[0]))] * len(axes)
    if len(varargs) != len(axes):
        raise TypeError(f"gradient: give no spacing, one scalar, or one per axis ({len(axes)}), got {len(varargs)}")
    out = []
    for d, ax in zip(varargs, axes):
        d = d.to_numpy() if isinstance(d, _bl().Array) else np.asarray(d)
        if d.ndim == 0:
            out.append(float(d))
            continue
        if d.ndim != 1:
            raise ValueError("gradient: spacing coordinates must be 0- or 1-dimensional")
        if len(d) != f.shape[ax]:
            raise ValueError(f"gradient: coordinates of length {len(d)} for axis {ax} of length {f.shape[ax]}")
        if d.dtype.kind in "iu":
            d = d.astype(np.float64)
        diff = np.diff(d)
        out.append(float(diff[0]) if diff.size and (diff == diff[0]).all() else diff.astype(np.float64))
    return out


def _along(x, axis, start, stop):
    key = [slice(None)] * x.ndim
    key[axis] = slice(start, stop)
    return x[tuple(key)]


def _shaped(c, ndim, axis):
    """A 1-D coefficient array broadcast along `axis`."""
    shape = [1] * ndim
    shape[axis] = -1
    return np.asarray(c, dtype=np.float64).reshape(shape)


def _one_axis(f, axis, dx, edge_order, otype):
    bl = _bl()
    n = f.shape[axis]

    def part(a, b):
        return _along(f, axis, a, b)

    if np.ndim(dx) == 0:
        interior = (part(2, None) - part(None, -2)) / np.float64(2.0 * dx)
        if edge_order == 1:
            first = (part(1, 2) - part(0, 1)) / np.float64(dx)
            last = (part(n - 1, n) - part(n - 2, n - 1)) / np.float64(dx)
        else:
            first = (-1.5 * part(0, 1) + 2.0 * part(1, 2) - 0.5 * part(2, 3)) / np.float64(dx)
            last = (0.5 * part(n - 3, n - 2) - 2.0 * part(n - 2, n - 1) + 1.5 * part(n - 1, n)) / np.float64(dx)
    else:
        dx1, dx2 = dx[:-1], dx[1:]
        a = -dx2 / (dx1 * (dx1 + dx2))
        b = (dx2 - dx1) / (dx1 * dx2)
        c = dx1 / (dx2 * (dx1 + dx2))
        nd = f.ndim
        interior = (
            _shaped(a, nd, axis) * part(None, -2)
            + _shaped(b, nd, axis) * part(1, -1)
            + _shaped(c, nd, axis) * part(2, None)
        )
        if edge_order == 1:
            first = (part(1, 2) - part(0, 1)) / np.float64(dx[0])
            last = (part(n - 1, n) - part(n - 2, n - 1)) / np.float64(dx[-1])
        else:
            d1, d2 = dx[0], dx[1]
            first = (
                -(2.0 * d1 + d2) / (d1 * (d1 + d2)) * part(0, 1)
                + (d1 + d2) / (d1 * d2) * part(1, 2)
                - d1 / (d2 * (d1 + d2)) * part(2, 3)
            )
            d1, d2 = dx[-2], dx[-1]
            last = (
                d2 / (d1 * (d1 + d2)) * part(n - 3, n - 2)
                - (d2 + d1) / (d1 * d2) * part(n - 2, n - 1)
                + (2.0 * d2 + d1) / (d2 * (d1 + d2)) * part(n - 1, n)
            )
    pieces = [first, interior, last] if n > 2 else [first, last]
    return bl.concat([p.astype(otype) for p in pieces], axis=axis)


def gradient(f, /, *varargs, axis=None, edge_order=1):
    """The gradient of `f` by second-order central differences, as ``numpy.gradient``.

    Interior points use central differences (exact for quadratics, also on uneven
    coordinates); the first and last points one-sided differences of order `edge_order`.
    Lazy: slices of `f` combined elementwise and joined along each axis.

    Parameters
    ----------
    f : array_like
        The sampled values (integers are differenced in float64).
    *varargs : scalar or 1-D array_like, optional
        Spacing: none (1 everywhere), one scalar for every axis, or one per axis in
        `axis` — a scalar step or the 1-D coordinates along that axis.
    axis : int or tuple of int, optional
        The axes to differentiate along (default: all).
    edge_order : {1, 2}, optional
        Order of the one-sided differences at the boundaries (1 by default).

    Returns
    -------
    Array or tuple of Array
        One lazy Array per axis (an Array when one axis is asked for), of `f`'s float
        dtype (float64 for integers).

    Examples
    --------
    >>> f = bl.asarray(np.array([1.0, 2.0, 4.0, 7.0, 11.0]))
    >>> bl.gradient(f).to_numpy()
    array([1. , 1.5, 2.5, 3.5, 4. ])
    >>> bl.gradient(f, np.array([0.0, 1.0, 1.5, 3.5, 4.0]), edge_order=2).to_numpy()
    array([-1. ,  3. ,  3.5,  6.7,  9.3])
    """
    bl = _bl()
    f = bl.asarray(f)
    if edge_order not in (1, 2) or isinstance(edge_order, bool):
        raise ValueError(f"gradient: edge_order must be 1 or 2, got {edge_order!r}")
    if f.ndim == 0:
        raise ValueError("gradient: f must have at least one dimension")
    kind = f.dtype.kind
    if kind not in "iufc":
        raise TypeError(f"gradient: f of dtype {f.dtype} is not supported (numbers only)")
    otype = np.dtype(np.float64) if kind in "iu" else f.dtype
    if kind in "iu":
        f = f.astype(np.float64)
    axes = _axes(axis, f.ndim)
    spacings = _spacings(varargs, f, axes)
    out = []
    for ax, dx in zip(axes, spacings):
        if f.shape[ax] < edge_order + 1:
            raise ValueError(
                f"gradient: axis {ax} has {f.shape[ax]} elements; at least edge_order + 1 = "
                f"{edge_order + 1} are required"
            )
        out.append(_one_axis(f, ax, dx, edge_order, otype))
    return out[0] if len(out) == 1 else tuple(out)
