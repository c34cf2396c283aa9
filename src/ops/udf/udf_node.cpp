#include "ops/udf/udf_node.hpp"

#include <algorithm>

#include "b2lazy/error.hpp"
#include "core/strided_copy.hpp"
#include "exec/scratch.hpp"
#include "exec/thread_state.hpp"

namespace b2lazy {

UdfNode::UdfNode(UdfFunction fn, std::vector<NodePtr> inputs, DType dtype, Shape shape, Shape depth, std::string name,
                 UdfAllocator allocate, Shape chunks)
    : Node(dtype, std::move(shape), std::move(inputs)),
      fn_(std::move(fn)),
      allocate_(std::move(allocate)),
      depth_(std::move(depth)),
      name_(std::move(name)),
      chunks_(std::move(chunks)) {
  if (!chunks_.empty()) storage_grid_ = ChunkGrid(this->shape(), chunks_);
}

std::string UdfNode::describe() const {
  std::string s = "udf " + name_ + " -> " + std::string(dtype_name(dtype())) + " " + shape_str(shape());
  bool halo = false;
  for (int64_t d : depth_) halo = halo || d > 0;
  return halo ? s + ", depth " + shape_str(depth_) : s;
}

Box UdfNode::widened(const Box& b) const {
  Box w = b;
  if (!grid_.empty()) {
    for (size_t d = 0; d < w.ndim(); ++d) {
      const GridAxis& g = grid_[d];
      // The last boundary at or before the start, the first at or after the stop.
      w.start[d] = *std::prev(std::upper_bound(g.begin(), g.end(), b.start[d]));
      w.stop[d] = *std::lower_bound(g.begin(), g.end(), b.stop[d]);
    }
    return w;
  }
  for (size_t d = 0; d < w.ndim(); ++d) {
    w.start[d] = std::max<int64_t>(0, b.start[d] - depth_[d]);
    w.stop[d] = std::min(shape()[d], b.stop[d] + depth_[d]);
  }
  return w;
}

Shape UdfNode::preferred_chunks() const {
  if (grid_.empty()) return Node::preferred_chunks();
  Shape chunks;
  for (const GridAxis& g : grid_) {
    const int64_t first = g.size() > 1 ? g[1] - g[0] : 0;
    for (size_t i = 1; i + 1 < g.size(); ++i)  // every block as long as the first, the last no longer
      if (g[i + 1] - g[i] != first && (i + 2 < g.size() || g[i + 1] - g[i] > first)) return {};
    chunks.push_back(first);
  }
  return chunks;
}

std::vector<Region> UdfNode::input_regions(const Region& region) const {
  std::vector<Region> out;
  const Box w = region.size() ? widened(region.bounds()) : Box{Shape(ndim(), 0), Shape(ndim(), 0)};
  for (const NodePtr& in : inputs())
    out.push_back(in->ndim() == 0 ? Region::whole({}) : Region::from_box(w));
  return out;
}

void UdfNode::fill_box(const Box& b, void* out, ThreadState& ts) const {
  ScratchScope scope(ts.scratch);
  const Box w = widened(b);
  std::vector<UdfInput> ins;
  for (const NodePtr& in : inputs()) {
    const Region r = in->ndim() == 0 ? Region::whole({}) : Region::from_box(w);
    const size_t nbytes = static_cast<size_t>(r.size()) * itemsize(in->dtype());
    std::shared_ptr<void> owner = allocate_ ? allocate_(nbytes) : nullptr;
    void* buf = owner ? owner.get() : scope.alloc(nbytes);
    in->pull(r, buf, ts);
    ins.push_back({buf, in->dtype(), in->ndim() == 0 ? Shape{} : w.shape(), in->ndim() == 0 ? Shape{} : w.start,
                   std::move(owner)});
  }
  fn_(ins, out, dtype(), b.shape(), b.start);
}

void UdfNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  bool unit = true;
  for (size_t d = 0; d < region.ndim(); ++d) unit = unit && (region.count[d] <= 1 || region.step[d] == 1);
  if (unit) {
    fill_box(region.bounds(), out, ts);
    return;
  }
  // A strided region: the function fills the box around it, the region is picked from it.
  const Box h = region.bounds();
  const size_t isz = itemsize(dtype());
  ScratchScope scope(ts.scratch);
  char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(h.size()) * isz));
  fill_box(h, buf, ts);
  const Shape hs = byte_strides(h.shape(), isz);
  Shape src_st(region.ndim());
  const char* src = buf;
  for (size_t d = 0; d < region.ndim(); ++d) {
    src += (region.start[d] - h.start[d]) * hs[d];
    src_st[d] = region.step[d] * hs[d];
  }
  const Shape dst_st = byte_strides(region.count, isz);
  copy_strided(region.ndim(), region.count.data(), src, src_st.data(), static_cast<char*>(out), dst_st.data(), isz);
}

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
