"""Lazy random arrays, NumPy's ``default_rng`` API over a counter-based generator.

Every element's value is a function of ``(seed, stream, flat index)`` alone
(Philox4x32-10, Salmon et al. 2011, from Random123): an array is a source like ``arange``,
computed for whatever region an evaluation asks, so its values are the same whatever the
chunking, the thread count or the region (``x[a:b]`` equals the same slice of the whole).
Each call of a :class:`Generator` method takes the next stream number, so two calls give
different values; the same seed and the same sequence of calls give the same arrays.

The values are not NumPy's (NumPy's ``Generator`` is sequential): same distributions,
other bits. Arrays are built by the namespace functions :func:`b2lazy.random_uniform`,
:func:`b2lazy.random_normal` and :func:`b2lazy.random_integers`, which is also how they
save and pickle (with their seed and stream). In expression strings, call those.
"""

from __future__ import annotations

import numbers
import os
import threading

import numpy as np

__all__ = ["default_rng", "Generator"]


def _ns():
    import b2lazy  # (at call time: the recording wrappers of the namespace)

    return b2lazy


def _size(size):
    return () if size is None else size


def _scalar(v, name, fn):
    if isinstance(v, (np.ndarray, list, tuple)) or hasattr(v, "shape") and getattr(v, "shape") != ():
        raise TypeError(f"Generator.{fn}(): {name} must be a scalar, got {v!r}")
    return v


def _is_scalar(v):
    return not isinstance(v, (np.ndarray, list, tuple)) and getattr(v, "shape", ()) == ()


def _params(fn, size, *values):
    """Array parameters (read now, as NumPy arrays: they are small) and the result's shape:
    `size`, which they must broadcast to, or their broadcast shape."""
    arrays = [np.asarray(v, dtype=np.float64) for v in values]
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
        if size is not None:
            size = (size,) if isinstance(size, (numbers.Integral, np.integer)) else tuple(size)
            if np.broadcast_shapes(size, shape) != size:
                raise ValueError
            shape = size
    except ValueError:
        raise ValueError(
            f"Generator.{fn}(): parameters of shapes {[a.shape for a in arrays]} do not broadcast to size={size}"
        ) from None
    return arrays, shape


class Generator:
    """Lazy random arrays from one seed; made by :func:`default_rng`.

    Parameters
    ----------
    seed : int
        In [0, 2**64).

    Examples
    --------
    >>> import b2lazy as bl
    >>> rng = bl.random.default_rng(42)
    >>> a = rng.random((1000, 1000), chunks=(100, 100))
    >>> bool((a[10:20, 5].to_numpy() == a.to_numpy()[10:20, 5]).all())
    True
    """

    def __init__(self, seed):
        if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (numbers.Integral, np.integer)):
            raise TypeError(f"default_rng(): seed must be None or an int, got {type(seed).__name__} {seed!r}")
        if not 0 <= int(seed) < 2**64:
            raise ValueError(f"default_rng(): seed must be in [0, 2**64), got {seed}")
        self.seed = int(seed)
        self._stream = 0
        self._lock = threading.Lock()

    def __repr__(self):
        return f"Generator(Philox4x32-10, seed={self.seed}, next stream={self._stream})"

    def __getstate__(self):
        return {"seed": self.seed, "stream": self._stream}

    def __setstate__(self, state):
        self.seed, self._stream, self._lock = state["seed"], state["stream"], threading.Lock()

    def _next(self):
        with self._lock:
            if self._stream >= 2**32:
                raise ValueError("Generator: its 2**32 streams are used up; make another with default_rng()")
            s = self._stream
            self._stream += 1
            return s

    def random(self, size=None, dtype=np.float64, *, chunks=None):
        """Uniform floats in [0, 1).

        Parameters
        ----------
        size : int or tuple of ints, optional
            The shape (None: a 0-d array).
        dtype : {float64, float32}, optional
            53 random bits per float64 value, 24 per float32.
        chunks : tuple of ints, optional
            The chunks evaluation prefers.

        Returns
        -------
        Array
            Lazy.

        Examples
        --------
        >>> import b2lazy as bl
        >>> x = bl.random.default_rng(0).random(5, dtype="float32")
        >>> x.dtype, bool(((x.to_numpy() >= 0) & (x.to_numpy() < 1)).all())
        (dtype('float32'), True)
        """
        return _ns().random_uniform(
            _size(size), 0.0, 1.0, seed=self.seed, stream=self._next(), dtype=dtype, chunks=chunks
        )

    def uniform(self, low=0.0, high=1.0, size=None, *, dtype=np.float64, chunks=None):
        """Uniform floats in [low, high).

        Parameters
        ----------
        low, high : float or array_like of floats, optional
            The interval (arrays: broadcast, read now).
        size : int or tuple of ints, optional
            The shape (None: 0-d, or the parameters' broadcast shape).
        dtype : {float64, float32}, optional
            The result's dtype.
        chunks : tuple of ints, optional
            The chunks evaluation prefers.

        Returns
        -------
        Array
            Lazy.

        Examples
        --------
        >>> import b2lazy as bl
        >>> v = bl.random.default_rng(1).uniform(-2, 2, size=1000).to_numpy()
        >>> bool(v.min() >= -2 and v.max() < 2)
        True
        """
        if _is_scalar(low) and _is_scalar(high):
            return _ns().random_uniform(
                _size(size), low, high, seed=self.seed, stream=self._next(), dtype=dtype, chunks=chunks
            )
        # Array parameters: low + (high - low) * u, u uniform in [0, 1) (the scalar formula)
        (lo, hi), shape = _params("uniform", size, low, high)
        u = _ns().random_uniform(shape, 0.0, 1.0, seed=self.seed, stream=self._next(), chunks=chunks)
        return (lo + (hi - lo) * u).astype(dtype)

    def normal(self, loc=0.0, scale=1.0, size=None, *, dtype=np.float64, chunks=None):
        """Normal floats of mean `loc` and standard deviation `scale`.

        Parameters
        ----------
        loc, scale : float or array_like of floats, optional
            Mean and standard deviation (scale >= 0); arrays are broadcast (read now).
        size : int or tuple of ints, optional
            The shape (None: 0-d, or the parameters' broadcast shape).
        dtype : {float64, float32}, optional
            The result's dtype.
        chunks : tuple of ints, optional
            The chunks evaluation prefers.

        Returns
        -------
        Array
            Lazy.

        Examples
        --------
        >>> import b2lazy as bl
        >>> z = bl.random.default_rng(2).normal(10, 2, size=100000)
        >>> round(float(bl.mean(z).to_numpy()))
        10
        """
        if _is_scalar(loc) and _is_scalar(scale):
            return _ns().random_normal(
                _size(size), loc, scale, seed=self.seed, stream=self._next(), dtype=dtype, chunks=chunks
            )
        (mu, sigma), shape = _params("normal", size, loc, scale)  # array parameters: loc + scale * z
        if (sigma < 0).any() or not np.isfinite(sigma).all():
            raise ValueError("Generator.normal(): scale must be finite and >= 0")
        z = _ns().random_normal(shape, 0.0, 1.0, seed=self.seed, stream=self._next(), chunks=chunks)
        return (mu + sigma * z).astype(dtype)

    def standard_normal(self, size=None, dtype=np.float64, *, chunks=None):
        """Normal floats of mean 0 and standard deviation 1.

        Parameters
        ----------
        size : int or tuple of ints, optional
            The shape (None: 0-d).
        dtype : {float64, float32}, optional
            The result's dtype.
        chunks : tuple of ints, optional
            The chunks evaluation prefers.

        Returns
        -------
        Array
            Lazy.

        Examples
        --------
        >>> import b2lazy as bl
        >>> bl.random.default_rng(3).standard_normal((2, 3)).shape
        (2, 3)
        """
        return self.normal(0.0, 1.0, size, dtype=dtype, chunks=chunks)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False, *, chunks=None):
        """Uniform integers in [low, high) (``endpoint=True``: [low, high]; high None:
        from 0 to low), without modulo bias.

        Parameters
        ----------
        low, high : int
            The interval; every value must fit `dtype`.
        size : int or tuple of ints, optional
            The shape (None: 0-d).
        dtype : integer dtype, optional
            int64 by default.
        endpoint : bool, optional
            Whether `high` is included.
        chunks : tuple of ints, optional
            The chunks evaluation prefers.

        Returns
        -------
        Array
            Lazy.

        Examples
        --------
        >>> import b2lazy as bl
        >>> v = bl.random.default_rng(4).integers(1, 6, size=1000, endpoint=True).to_numpy()
        >>> sorted(set(v.tolist()))
        [1, 2, 3, 4, 5, 6]
        """
        _scalar(low, "low", "integers")
        _scalar(high, "high", "integers")
        if high is None:
            low, high = 0, low
        for name, v in (("low", low), ("high", high)):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Integral, np.integer)):
                raise TypeError(f"Generator.integers(): {name} must be an int, got {type(v).__name__} {v!r}")
        if not isinstance(endpoint, (bool, np.bool_)):
            raise TypeError(f"Generator.integers(): endpoint must be True or False, got {endpoint!r}")
        low, high = int(low), int(high) + (1 if endpoint else 0)
        if high <= low:
            raise ValueError(
                f"Generator.integers(): low >= high (low={low}, high={high - bool(endpoint)}"
                f"{', endpoint=True' if endpoint else ''})"
            )
        return _ns().random_integers(
            _size(size), low, high, seed=self.seed, stream=self._next(), dtype=dtype, chunks=chunks
        )


def default_rng(seed=None):
    """A :class:`Generator` of lazy, region-computable random arrays.

    Parameters
    ----------
    seed : int or Generator, optional
        In [0, 2**64). None draws one from the operating system, once: the arrays then
        save and pickle with that seed (``rng.seed``). A Generator is returned as is.

    Returns
    -------
    Generator

    Examples
    --------
    >>> import b2lazy as bl
    >>> a = bl.random.default_rng(7).random(3).to_numpy()
    >>> b = bl.random.default_rng(7).random(3).to_numpy()
    >>> bool((a == b).all())
    True
    """
    if isinstance(seed, Generator):
        return seed
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "little")
    return Generator(seed)
