// lazyudf and lazyudf_on_grid: a user function over blocks, checked here and run by UdfNode.
#include <string>
#include <vector>

#include "b2lazy/array.hpp"
#include "b2lazy/error.hpp"
#include "b2lazy/udf.hpp"
#include "b2lazy/udf_grid.hpp"
#include "ops/udf/udf_node.hpp"

namespace b2lazy {

namespace {
// The inputs' nodes, once checked: a function, a shape, inputs of that shape (or 0-d).
std::vector<NodePtr> udf_inputs(const UdfFunction& fn, const std::vector<Array>& inputs, const Shape& shape) {
  if (!fn) throw ValueError("lazyudf: no function given");
  for (int64_t s : shape)
    if (s < 0) throw ValueError("lazyudf: shape " + shape_str(shape) + " has a negative extent");
  std::vector<NodePtr> nodes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Array& a = inputs[i];
    if (a.ndim() != 0 && a.shape() != shape)
      throw ValueError("lazyudf: input " + std::to_string(i) + " has shape " + shape_str(a.shape()) +
                       "; inputs must have the result's shape " + shape_str(shape) + " (or be 0-d)");
    nodes.push_back(a.node());
  }
  return nodes;
}
}  // namespace

Array lazyudf(UdfFunction fn, const std::vector<Array>& inputs, DType dtype, const Shape& shape, const Shape& depth,
              const std::string& name, UdfAllocator allocate, const Shape& chunks) {
  std::vector<NodePtr> nodes = udf_inputs(fn, inputs, shape);
  Shape d = depth.empty() ? Shape(shape.size(), 0) : depth;
  if (d.size() == 1 && shape.size() > 1) d.assign(shape.size(), depth[0]);
  if (d.size() != shape.size())
    throw ValueError("lazyudf: depth " + shape_str(depth) + " needs one entry per axis of " + shape_str(shape) +
                     " (or one for all)");
  for (int64_t x : d)
    if (x < 0) throw ValueError("lazyudf: depth " + shape_str(depth) + " must not be negative");
  if (!chunks.empty()) {
    if (chunks.size() != shape.size())
      throw ValueError("lazyudf: chunks " + shape_str(chunks) + " needs one entry per axis of " + shape_str(shape));
    for (int64_t c : chunks)
      if (c < 1) throw ValueError("lazyudf: chunks " + shape_str(chunks) + " must be at least 1 along every axis");
  }
  return Array(std::make_shared<UdfNode>(std::move(fn), std::move(nodes), dtype, shape, std::move(d), name,
                                         std::move(allocate), chunks));
}

Array lazyudf_on_grid(UdfFunction fn, const std::vector<Array>& inputs, DType dtype, const Shape& shape,
                      const std::vector<GridAxis>& grid, const std::string& name, UdfAllocator allocate) {
  if (grid.size() != shape.size())
    throw ValueError("lazyudf: the block grid has " + std::to_string(grid.size()) + " axes; the shape " +
                     shape_str(shape) + " has " + std::to_string(shape.size()));
  for (size_t d = 0; d < grid.size(); ++d) {
    const GridAxis& g = grid[d];
    bool ok = g.size() >= 2 && g.front() == 0 && g.back() == shape[d];
    for (size_t i = 1; ok && i < g.size(); ++i) ok = g[i] > g[i - 1];
    if (!ok)
      throw ValueError("lazyudf: the block boundaries of axis " + std::to_string(d) + " must rise from 0 to " +
                       std::to_string(shape[d]));
  }
  std::vector<NodePtr> nodes = udf_inputs(fn, inputs, shape);
  auto node = std::make_shared<UdfNode>(std::move(fn), std::move(nodes), dtype, shape, Shape(shape.size(), 0), name,
                                        std::move(allocate));
  node->set_grid(grid);
  return Array(std::move(node));
}

}  // namespace b2lazy
