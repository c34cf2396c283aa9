#include "ops/index/take_node.hpp"

#include <algorithm>
#include <cstring>

#include "exec/scratch.hpp"
#include "exec/thread_state.hpp"
#include "ops/linalg/matmul_node.hpp"

namespace b2lazy {

namespace {
Shape taken_shape(const Shape& in, size_t axis, const Shape& index_shape) {
  Shape s(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(axis));
  s.insert(s.end(), index_shape.begin(), index_shape.end());
  s.insert(s.end(), in.begin() + static_cast<std::ptrdiff_t>(axis) + 1, in.end());
  return s;
}
}  // namespace

TakeNode::TakeNode(NodePtr input, size_t axis, std::shared_ptr<const std::vector<int64_t>> indices, Shape index_shape)
    : Node(input->dtype(), taken_shape(input->shape(), axis, index_shape), {input}),
      axis_(axis), indices_(std::move(indices)), index_shape_(std::move(index_shape)) {
  align_ = storage_alignment(*inputs()[0], axis_);
}

std::string TakeNode::describe() const {
  return "take axis=" + std::to_string(axis_) + " indices " + shape_str(index_shape_) + " -> " + shape_str(shape());
}

std::vector<int64_t> TakeNode::selected(const Region& r) const {
  const size_t k = index_shape_.size();
  Shape st = c_strides(index_shape_);
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(prod(Shape(r.count.begin() + static_cast<std::ptrdiff_t>(axis_),
                                             r.count.begin() + static_cast<std::ptrdiff_t>(axis_ + k)))));
  if (k == 0) return {(*indices_)[0]};
  Shape pos(k, 0);
  for (size_t d = 0; d < k; ++d)
    if (r.count[axis_ + d] == 0) return out;
  while (true) {
    int64_t flat = 0;
    for (size_t d = 0; d < k; ++d) flat += (r.start[axis_ + d] + pos[d] * r.step[axis_ + d]) * st[d];
    out.push_back((*indices_)[static_cast<size_t>(flat)]);
    size_t d = k;
    while (d-- > 0) {
      if (++pos[d] < r.count[axis_ + d]) break;
      pos[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) break;
  }
  return out;
}

// The input region: the region's axes before and after the index axes, and along the
// taken axis the span [lo, hi].
static Region input_span(const Region& r, size_t axis, size_t k, size_t in_ndim, int64_t lo, int64_t hi) {
  Region in{Shape(in_ndim), Shape(in_ndim, 1), Shape(in_ndim)};
  for (size_t d = 0; d < axis; ++d) in.start[d] = r.start[d], in.step[d] = r.step[d], in.count[d] = r.count[d];
  in.start[axis] = lo;
  in.count[axis] = hi - lo + 1;
  for (size_t d = axis + 1; d < in_ndim; ++d) {
    const size_t o = d - 1 + k;
    in.start[d] = r.start[o], in.step[d] = r.step[o], in.count[d] = r.count[o];
  }
  return in;
}

std::vector<Region> TakeNode::input_regions(const Region& r) const {
  std::vector<int64_t> sel = selected(r);
  if (sel.empty() || r.size() == 0) {
    Region empty = input_span(r, axis_, index_shape_.size(), inputs()[0]->ndim(), 0, 0);
    empty.count.assign(empty.count.size(), 0);
    return {empty};
  }
  auto [lo, hi] = std::minmax_element(sel.begin(), sel.end());
  return {input_span(r, axis_, index_shape_.size(), inputs()[0]->ndim(), *lo, *hi)};
}

void TakeNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const Node& input = *inputs()[0];
  const size_t k = index_shape_.size(), isz = itemsize(dtype());
  const std::vector<int64_t> sel = selected(region);
  int64_t pre = 1, post = 1;
  for (size_t d = 0; d < axis_; ++d) pre *= region.count[d];
  for (size_t d = axis_ + k; d < region.ndim(); ++d) post *= region.count[d];
  const int64_t nsel = static_cast<int64_t>(sel.size());
  // Selected cells ordered by index value, then cut into groups: one per storage chunk
  // along the axis (or per run of nearby values when the input has no chunks).
  std::vector<int64_t> order(sel.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return sel[a] < sel[b]; });
  const int64_t cell = align_ > 0 ? align_ : 4096;
  char* dst = static_cast<char*>(out);
  const size_t row = static_cast<size_t>(post) * isz;
  for (size_t g0 = 0; g0 < order.size();) {
    const int64_t lo = sel[static_cast<size_t>(order[g0])], group = lo / cell;
    size_t g1 = g0;
    while (g1 < order.size() && sel[static_cast<size_t>(order[g1])] / cell == group) ++g1;
    const int64_t hi = sel[static_cast<size_t>(order[g1 - 1])], span = hi - lo + 1;
    ScratchScope scope(ts.scratch);
    char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(pre * span) * row));
    input.pull(input_span(region, axis_, k, input.ndim(), lo, hi), buf, ts);
    // buf is (pre, span, post); out is (pre, nsel, post).
    for (size_t g = g0; g < g1; ++g) {
      const int64_t j = order[g], local = sel[static_cast<size_t>(j)] - lo;
      for (int64_t p = 0; p < pre; ++p)
        std::memcpy(dst + static_cast<size_t>(p * nsel + j) * row, buf + static_cast<size_t>(p * span + local) * row, row);
    }
    g0 = g1;
  }
}

}  // namespace b2lazy
