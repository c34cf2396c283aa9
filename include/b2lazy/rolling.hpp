// Moving-window (rolling) reductions along one axis, lazily: xarray's
// rolling(...).sum/mean/min/max/var/std/count semantics (NaN-skipping, a window with
// fewer valid values than min_periods gives NaN, trailing or centred windows).
#pragma once
#include <cstdint>
#include <optional>

#include "b2lazy/array.hpp"

namespace b2lazy {

// out[i] = op over x[i - w + 1 .. i] along `axis` (centred: x[i - w//2 .. i - w//2 + w - 1]),
// positions outside the axis missing. Same shape as x; float result (float64 for integer
// input, the input's float type otherwise; count: float64). w may exceed the axis.
Array moving_reduce(const Array& x, int64_t window, MovingOp op, const MovingOptions& o = {});

}  // namespace b2lazy
