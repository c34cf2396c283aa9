#include "graph/axes.hpp"

#include <set>

#include "b2lazy/error.hpp"

namespace b2lazy {

int normalize_axis(int axis, size_t ndim, const std::string& fn, const Shape& shape) {
  const int n = static_cast<int>(ndim);
  if (axis < -n || axis >= n)
    throw AxisError(fn + ": axis " + std::to_string(axis) + " is out of bounds for an array of shape " +
                    shape_str(shape) + " (" + std::to_string(ndim) + " dimensions)");
  return axis < 0 ? axis + n : axis;
}

std::vector<int> normalize_axis_list(const std::vector<int>& axes, size_t ndim, const std::string& fn,
                                     const Shape& shape) {
  std::vector<int> out;
  std::set<int> seen;
  for (int a : axes) {
    int d = normalize_axis(a, ndim, fn, shape);
    if (!seen.insert(d).second) throw ValueError(fn + ": repeated axis " + std::to_string(a));
    out.push_back(d);
  }
  return out;
}

}  // namespace b2lazy
