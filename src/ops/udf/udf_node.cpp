#include "ops/udf/udf_node.hpp"

#include <algorithm>

#include "b2lazy/error.hpp"
#include "core/strided_copy.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

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
  for (const NodePtr& in : inputs()) out.push_back(in->ndim() == 0 ? Region::whole({}) : Region::from_box(w));
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

}  // namespace b2lazy
