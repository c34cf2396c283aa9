// Builds integer-array indexing nodes: axis normalisation and bounds checks.
#include "b2lazy/array.hpp"
#include "b2lazy/error.hpp"
#include "ops/index/take_node.hpp"
#include "ops/shape/flatten_node.hpp"

namespace b2lazy {

Array take(const Array& x_in, const std::vector<int64_t>& indices, const Shape& index_shape, std::optional<int> axis) {
  if (prod(index_shape) != static_cast<int64_t>(indices.size()))
    throw ValueError("take: " + std::to_string(indices.size()) + " indices do not fill the index shape " +
                     shape_str(index_shape));
  Array x = x_in;
  int a = 0;
  if (!axis) {
    if (x.ndim() != 1) x = Array(std::make_shared<FlattenNode>(x.node()));
  } else {
    const int n = static_cast<int>(x.ndim());
    if (*axis < -n || *axis >= n)
      throw ValueError("take: axis " + std::to_string(*axis) + " is out of bounds for an array of shape " +
                       shape_str(x.shape()));
    a = *axis < 0 ? *axis + n : *axis;
  }
  const int64_t len = x.shape()[static_cast<size_t>(a)];
  auto norm = std::make_shared<std::vector<int64_t>>(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) {
    const int64_t v = indices[i];
    if (v < -len || v >= len)
      throw IndexError("take: index " + std::to_string(v) + " is out of bounds for axis " + std::to_string(a) +
                       " with size " + std::to_string(len));
    (*norm)[i] = v < 0 ? v + len : v;
  }
  return Array(std::make_shared<TakeNode>(x.node(), static_cast<size_t>(a), std::move(norm), index_shape));
}

}  // namespace b2lazy
