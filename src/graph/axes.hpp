// Axis arguments of the Array API functions, checked once for every builder.
#pragma once
#include <string>
#include <vector>

#include "b2lazy/box.hpp"

namespace b2lazy {

// `axis` of an array with `ndim` axes as 0..ndim-1 (negative counts from the end);
// AxisError naming `fn`, the axis and `shape` otherwise.
int normalize_axis(int axis, size_t ndim, const std::string& fn, const Shape& shape);
// Several axes, each at most once (ValueError on a repeat), in the order given.
std::vector<int> normalize_axis_list(const std::vector<int>& axes, size_t ndim, const std::string& fn,
                                     const Shape& shape);

}  // namespace b2lazy
