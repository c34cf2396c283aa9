// Builds integer-array indexing nodes: axis normalisation and bounds checks.
#include "b2lazy/array.hpp"
#include "b2lazy/error.hpp"
#include "graph/axes.hpp"
#include "ops/index/mask_node.hpp"
#include "ops/index/take_node.hpp"
#include "plan/chunking.hpp"
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
    a = normalize_axis(*axis, x.ndim(), "take", x.shape());
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
  return Array(std::make_shared<TakeNode>(x.node(), static_cast<size_t>(a),
                                         std::vector<std::shared_ptr<const std::vector<int64_t>>>{std::move(norm)},
                                         index_shape));
}

Array take_points(const Array& x, size_t axis, const std::vector<std::vector<int64_t>>& indices,
                  const Shape& index_shape) {
  if (indices.empty() || axis + indices.size() > x.ndim())
    throw IndexError("take_points: " + std::to_string(indices.size()) + " index arrays from axis " +
                     std::to_string(axis) + " do not fit an array of shape " + shape_str(x.shape()));
  std::vector<std::shared_ptr<const std::vector<int64_t>>> norm;
  for (size_t t = 0; t < indices.size(); ++t) {
    if (prod(index_shape) != static_cast<int64_t>(indices[t].size()))
      throw ValueError("take_points: index array " + std::to_string(t) + " does not fill the index shape " +
                       shape_str(index_shape));
    const int64_t len = x.shape()[axis + t];
    auto v = std::make_shared<std::vector<int64_t>>(indices[t].size());
    for (size_t i = 0; i < v->size(); ++i) {
      const int64_t w = indices[t][i];
      if (w < -len || w >= len)
        throw IndexError("index " + std::to_string(w) + " is out of bounds for axis " + std::to_string(axis + t) +
                         " with size " + std::to_string(len));
      (*v)[i] = w < 0 ? w + len : w;
    }
    norm.push_back(std::move(v));
  }
  return Array(std::make_shared<TakeNode>(x.node(), axis, std::move(norm), index_shape));
}

Array mask_select(const Array& x, const Array& mask, Context* ctx) {
  if (mask.dtype() != DType::Bool)
    throw IndexError("a mask must be boolean, got " + std::string(dtype_name(mask.dtype())));
  if (mask.shape() != x.shape())
    throw IndexError("boolean index did not match indexed array: array shape is " + shape_str(x.shape()) +
                     " but the mask's is " + shape_str(mask.shape()));
  // Row strips of ~4 MiB of values: contiguous in C order, so strip order is NumPy's.
  Shape strip = contiguous_chunks(x.shape(), itemsize(x.dtype()), size_t(4) << 20);
  // First pass: the True values per strip (this is what fixes the result's length).
  std::vector<double> c = Array(std::make_shared<MaskCountsNode>(mask.node(), strip)).to_vector(ctx);
  std::vector<int64_t> counts(c.begin(), c.end());
  return Array(std::make_shared<MaskSelectNode>(x.node(), mask.node(), strip, std::move(counts)));
}

}  // namespace b2lazy
