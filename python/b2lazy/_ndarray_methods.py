"""NumPy ndarray methods that xarray calls on a variable's data: with b2lazy
Arrays as data, ``DataArray.round(2)``, ``.conj()``, ``.real``/``.imag`` (and so
``xr.cov``/``xr.corr``, which conjugate) and ``.argsort()`` call these by name. Each is
the lazy b2lazy function with NumPy's method signature."""

from __future__ import annotations

import numpy as np

__all__ = ["attach"]


def _bl():
    import b2lazy

    return b2lazy


def round(self, decimals=0, out=None):  # noqa: A001  (ndarray's name)
    """Each element rounded to `decimals` decimal places, as ``numpy.ndarray.round``.

    Halves go to the even neighbour, and decimals other than 0 compute as NumPy does:
    ``rint(x * 10**decimals) / 10**decimals`` (``rint(x / 10**-decimals) * 10**-decimals``
    for negative decimals), so the results equal NumPy's bit for bit.

    Parameters
    ----------
    decimals : int, optional
        Decimal places (0 by default; negative rounds to tens, hundreds, ...).
    out : None
        Only None: a lazy Array has no buffer to write into.

    Returns
    -------
    Array
        Lazy, of the input's dtype.

    Examples
    --------
    >>> x = bl.asarray(np.array([1.25, -0.35, 12.5]))
    >>> x.round(1).to_numpy()
    array([ 1.2, -0.4, 12.5])
    >>> x.round(-1).to_numpy()
    array([ 0., -0., 10.])
    """
    bl = _bl()
    if out is not None:
        raise TypeError("Array.round: out= is not supported (the result is a new lazy Array)")
    if isinstance(decimals, (bool, np.bool_)) or not isinstance(decimals, (int, np.integer)):
        raise TypeError(f"Array.round: decimals must be an int, got {type(decimals).__name__} {decimals!r}")
    x = self
    if decimals == 0:
        return bl.round(x)
    if x.dtype.kind in "iub":
        if decimals > 0:
            return bl.asarray(x)  # NumPy returns integers unchanged
        raise NotImplementedError(
            f"Array.round: decimals={decimals} on {x.dtype} is not supported lazily "
            f"(round a float copy: x.astype('f8').round({decimals}))"
        )
    if decimals > 0:
        scale = 10.0 ** int(decimals)
        return (bl.round(x * scale) / scale).astype(x.dtype)
    scale = 10.0 ** -int(decimals)
    return (bl.round(x / scale) * scale).astype(x.dtype)


def conj(self):
    """The complex conjugate, element by element, as ``numpy.ndarray.conj``.

    Returns
    -------
    Array
        Lazy; for real dtypes the values are the input's.

    Examples
    --------
    >>> bl.asarray(np.array([1 + 2j, 3 - 1j])).conj().to_numpy()
    array([1.-2.j, 3.+1.j])
    """
    return _bl().conj(self)


def conjugate(self):
    """The complex conjugate, element by element (``conj``'s other name, as NumPy's).

    Returns
    -------
    Array
        Lazy; for real dtypes the values are the input's.

    Examples
    --------
    >>> bl.asarray(np.array([1 + 2j])).conjugate().to_numpy()
    array([1.-2.j])
    """
    return _bl().conj(self)


def real(self):
    """The real part, as ``numpy.ndarray.real``.

    Returns
    -------
    Array
        Lazy; of the matching real dtype (the input itself for real dtypes).

    Examples
    --------
    >>> bl.asarray(np.array([1 + 2j, 3 - 1j])).real.to_numpy()
    array([1., 3.])
    """
    return _bl().real(self)


def imag(self):
    """The imaginary part, as ``numpy.ndarray.imag``.

    Returns
    -------
    Array
        Lazy; of the matching real dtype (zeros for real dtypes).

    Examples
    --------
    >>> bl.asarray(np.array([1 + 2j, 3 - 1j])).imag.to_numpy()
    array([ 2., -1.])
    """
    return _bl().imag(self)


def argsort(self, axis=-1, kind=None, order=None, *, stable=None):
    """Indices that sort the array along `axis`, as ``numpy.ndarray.argsort``.

    The sort is stable whatever `kind` says (a stable order is one of the orders any
    NumPy kind may give; ties keep their order).

    Parameters
    ----------
    axis : int or None, optional
        The axis (-1 by default); None sorts the flattened array.
    kind : {None, "quicksort", "mergesort", "heapsort", "stable"}, optional
        Accepted for NumPy's signature.
    order : None
        Only None: b2lazy arrays have no fields.
    stable : bool or None, optional
        Accepted for NumPy's signature (the sort is stable).

    Returns
    -------
    Array
        Lazy int64 indices.

    Examples
    --------
    >>> bl.asarray(np.array([3, 1, 2, 1])).argsort().to_numpy()
    array([1, 3, 2, 0])
    """
    bl = _bl()
    if order is not None:
        raise ValueError("Array.argsort: order= needs a structured dtype; b2lazy arrays have none")
    if kind not in (None, "quicksort", "mergesort", "heapsort", "stable"):
        raise ValueError(f"Array.argsort: kind must be quicksort, mergesort, heapsort or stable, got {kind!r}")
    x = self
    if axis is None:
        x, axis = bl.reshape(x, (-1,)), 0
    return bl.argsort(x, axis=axis, stable=True)


def attach(array_cls):
    """The methods and properties above on b2lazy's Array (NumPy's names)."""
    for f in (round, conj, conjugate, argsort):
        f.__qualname__ = f"Array.{f.__name__}"
        setattr(array_cls, f.__name__, f)
    for f in (real, imag):
        setattr(array_cls, f.__name__, property(f, doc=f.__doc__))
