"""xarray's weighted(w) with lazy b2lazy weights. xarray checks the weights for missing
values when the Weighted object is made: for Dask weights inside map_blocks (at compute),
for any other array at once, which evaluates lazy weights here. Wrapping Weighted.__init__
(as _groupby wraps GroupBy.reduce) defers the check for b2lazy weights as Dask does: the
weights pass through a block-wise check that raises xarray's ValueError when a block
holding NaN is evaluated."""

from __future__ import annotations

import numpy as np

from . import Array

_installed = False
_MESSAGE = (
    "`weights` cannot contain missing values. Missing values can be replaced by `weights.fillna(0)`."  # xarray's words
)


def checked_weights(w):
    """`w` (lazy) whose evaluation raises ValueError where a block holds NaN."""
    if w.dtype.kind not in "fc":
        return w  # integers and bools hold no NaN
    import b2lazy as bl

    def block(inputs, out, offset):
        if np.isnan(inputs[0]).any():
            raise ValueError(_MESSAGE)
        out[...] = inputs[0]

    return bl.lazyudf(block, [w], w.dtype, shape=w.shape, name="weights_check")


def _install_xarray_weighted():
    global _installed
    if _installed:
        return
    from xarray.computation import weighted

    original = weighted.Weighted.__init__

    def __init__(self, obj, weights, _original=original):
        from xarray.core.dataarray import DataArray

        if not isinstance(weights, DataArray) or not isinstance(weights.data, Array):
            return _original(self, obj, weights)  # (xarray's own checks and errors)
        self.obj = obj
        self.weights = weights.copy(data=checked_weights(weights.data), deep=False)

    __init__.__doc__ = original.__doc__
    weighted.Weighted.__init__ = __init__
    _installed = True
