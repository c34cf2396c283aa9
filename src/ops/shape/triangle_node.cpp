#include "ops/shape/triangle_node.hpp"

#include <algorithm>
#include <cstring>

#include "runtime/graph_queries.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

TriangleNode::TriangleNode(NodePtr input, int64_t k, bool lower)
    : Node(input->dtype(), input->shape(), {input}), k_(k), lower_(lower), preferred_(preferred_chunks_of(input)) {}

std::string TriangleNode::describe() const { return kind() + " k=" + std::to_string(k_) + " " + shape_str(shape()); }

bool TriangleNode::keep(int64_t row, int64_t col) const {
  const int64_t diff = col - row;
  return lower_ ? diff <= k_ : diff >= k_;
}

TriangleNode::Cover TriangleNode::cover(const Region& r) const {
  const size_t nd = ndim();
  const int64_t r_lo = std::min(r.start[nd - 2], r.last(nd - 2)), r_hi = std::max(r.start[nd - 2], r.last(nd - 2));
  const int64_t c_lo = std::min(r.start[nd - 1], r.last(nd - 1)), c_hi = std::max(r.start[nd - 1], r.last(nd - 1));
  // The extreme column - row differences in the region decide.
  const int64_t dmin = c_lo - r_hi, dmax = c_hi - r_lo;
  if (lower_) return dmax <= k_ ? Cover::All : dmin > k_ ? Cover::None : Cover::Some;
  return dmin >= k_ ? Cover::All : dmax < k_ ? Cover::None : Cover::Some;
}

std::vector<Region> TriangleNode::input_regions(const Region& region) const {
  Region in = region;
  if (region.size() > 0 && cover(region) == Cover::None) in.count.assign(in.count.size(), 0);  // read nothing
  return {in};
}

void TriangleNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const size_t nd = ndim(), isz = itemsize(dtype());
  const Cover c = cover(region);
  if (c == Cover::None) {
    std::memset(out, 0, static_cast<size_t>(region.size()) * isz);
    return;
  }
  inputs()[0]->pull(region, out, ts);
  if (c == Cover::All) return;
  const int64_t rows = region.count[nd - 2], cols = region.count[nd - 1];
  const int64_t mats = region.size() / (rows * cols);
  char* o = static_cast<char*>(out);
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t row = region.start[nd - 2] + i * region.step[nd - 2];
      char* line = o + static_cast<size_t>((m * rows + i) * cols) * isz;
      for (int64_t j = 0; j < cols; ++j)
        if (!keep(row, region.start[nd - 1] + j * region.step[nd - 1]))
          std::memset(line + static_cast<size_t>(j) * isz, 0, isz);
    }
}

}  // namespace b2lazy
