"""Linear algebra of the namespace: matmul, tensordot, vecdot, outer and matrix_transpose
(numpy.linalg's extras are in _numpy_linalg.py)."""

from __future__ import annotations

import numpy as np

from . import _core
from ._array import Array
from ._registry import registered as _registered
from ._serial import namespace as _ns
from ._shape_functions import _axis, _int_axes

__all__ = ["tensordot", "vecdot"]


@_registered
def tensordot(x1, x2, /, axes):
    """Contract the last `axes` axes of x1 with the first of x2, or the axes given as
    a pair of sequences; lazy."""
    a, b = _ns().asarray(x1)._a, _ns().asarray(x2)._a
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        return Array(_core.tensordot(a, b, _axis(axes, "tensordot: axes")))
    try:
        xa, xb = axes
    except (TypeError, ValueError):
        raise TypeError(f"tensordot: axes must be an int or a pair of sequences, got {axes!r}") from None
    return Array(_core.tensordot_axes(a, b, _int_axes(xa, "tensordot: axes[0]"), _int_axes(xb, "tensordot: axes[1]")))


@_registered
def vecdot(x1, x2, /, *, axis):
    """Dot product of vectors along `axis`, broadcasting the other axes; lazy."""
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"vecdot: axis must be an int, got {axis!r}")
    return Array(_core.vecdot(_ns().asarray(x1)._a, _ns().asarray(x2)._a, _axis(axis, "vecdot")))
