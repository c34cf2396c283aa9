// The rewrite of a reduction over a sliding window view's window axis into a moving
// reduction (rolling_builder.cpp), asked by the reduction builder.
#pragma once
#include <optional>

#include "b2lazy/array.hpp"

namespace b2lazy {

// reduce(r, x, o) as one moving-reduction node, when x is a sliding_window_view (its
// window axis last), o reduces that axis alone, and r is one a moving node computes
// exactly as NumPy would (sum, mean, min, max, var, std and their nan* forms, real
// dtypes); `out`: the dtype the plain reduction would give. nullopt otherwise.
std::optional<Array> reduce_over_window(Reduction r, const Array& x, const ReduceOptions& o, DType out);

}  // namespace b2lazy
