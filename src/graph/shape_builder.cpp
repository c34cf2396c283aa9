// Shape functions built from slices, permutations and broadcasts (NumPy / Array API).
#include <algorithm>
#include <set>

#include "b2lazy/array.hpp"
#include "b2lazy/error.hpp"
#include "ops/shape/broadcast_node.hpp"

namespace b2lazy {

namespace {
int checked_axis(int axis, size_t ndim, const char* fn, const Shape& shape) {
  const int n = static_cast<int>(ndim);
  if (axis < -n || axis >= n)
    throw ValueError(std::string(fn) + ": axis " + std::to_string(axis) + " is out of bounds for an array of shape " +
                     shape_str(shape) + " (" + std::to_string(ndim) + " dimensions)");
  return axis < 0 ? axis + n : axis;
}

std::vector<int> checked_axes(const std::vector<int>& axes, size_t ndim, const char* fn, const Shape& shape) {
  std::vector<int> out;
  std::set<int> seen;
  for (int a : axes) {
    int d = checked_axis(a, ndim, fn, shape);
    if (!seen.insert(d).second) throw ValueError(std::string(fn) + ": repeated axis " + std::to_string(a));
    out.push_back(d);
  }
  return out;
}
}  // namespace

Array expand_dims(const Array& x, int axis) {
  const int d = checked_axis(axis, x.ndim() + 1, "expand_dims", x.shape());
  std::vector<Index> ix(static_cast<size_t>(d), Index::slice());
  ix.push_back(Index::newaxis());
  return x[ix];
}

Array squeeze(const Array& x, const std::optional<std::vector<int>>& axes) {
  std::vector<bool> drop(x.ndim(), false);
  if (!axes) {
    for (size_t d = 0; d < x.ndim(); ++d) drop[d] = x.shape()[d] == 1;
  } else {
    for (int d : checked_axes(*axes, x.ndim(), "squeeze", x.shape())) {
      if (x.shape()[static_cast<size_t>(d)] != 1)
        throw ValueError("squeeze: cannot select axis " + std::to_string(d) + " of shape " + shape_str(x.shape()) +
                         ": its length is not 1");
      drop[static_cast<size_t>(d)] = true;
    }
  }
  std::vector<Index> ix;
  for (size_t d = 0; d < x.ndim(); ++d) ix.push_back(drop[d] ? Index::at(0) : Index::slice());
  return x[ix];
}

Array flip(const Array& x, const std::optional<std::vector<int>>& axes) {
  std::vector<bool> rev(x.ndim(), !axes.has_value());
  if (axes)
    for (int d : checked_axes(*axes, x.ndim(), "flip", x.shape())) rev[static_cast<size_t>(d)] = true;
  std::vector<Index> ix;
  for (size_t d = 0; d < x.ndim(); ++d) ix.push_back(rev[d] ? Index::slice({}, {}, -1) : Index::slice());
  return x[ix];
}

Array moveaxis(const Array& x, const std::vector<int>& source, const std::vector<int>& destination) {
  if (source.size() != destination.size())
    throw ValueError("moveaxis: source and destination must have the same number of axes");
  std::vector<int> src = checked_axes(source, x.ndim(), "moveaxis", x.shape());
  std::vector<int> dst = checked_axes(destination, x.ndim(), "moveaxis", x.shape());
  std::vector<int> rest;
  for (int d = 0; d < static_cast<int>(x.ndim()); ++d)
    if (std::find(src.begin(), src.end(), d) == src.end()) rest.push_back(d);
  std::vector<int> perm(x.ndim(), -1);
  for (size_t i = 0; i < src.size(); ++i) perm[static_cast<size_t>(dst[i])] = src[i];
  size_t r = 0;
  for (auto& p : perm)
    if (p < 0) p = rest[r++];
  return permute_dims(x, perm);
}

Array broadcast_to(const Array& x, const Shape& shape) {
  Shape b;
  try {
    b = broadcast_shapes(x.shape(), shape);
  } catch (const ValueError&) {
    b.clear();
  }
  if (b != shape || x.ndim() > shape.size())
    throw ValueError("broadcast_to: an array of shape " + shape_str(x.shape()) + " cannot be broadcast to " +
                     shape_str(shape));
  if (x.shape() == shape) return x;
  return Array(std::make_shared<BroadcastNode>(x.node(), shape));
}

}  // namespace b2lazy
