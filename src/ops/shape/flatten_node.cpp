#include "ops/shape/flatten_node.hpp"

#include <cstring>

#include "core/strided_copy.hpp"
#include "plan/chunking.hpp"
#include "exec/thread_state.hpp"

namespace b2lazy {

namespace {
void boxes_rec(const Shape& shape, size_t d, Shape prefix, int64_t b, int64_t e, std::vector<Box>& out) {
  if (b >= e) return;
  const size_t n = shape.size();
  int64_t inner = 1;
  for (size_t k = d + 1; k < n; ++k) inner *= shape[k];
  auto whole_rows = [&](int64_t r0, int64_t r1) {  // rows [r0, r1) of axis d, all of the rest
    if (r0 >= r1) return;
    Box bx{prefix, prefix};
    bx.start.push_back(r0);
    bx.stop.push_back(r1);
    for (size_t k = d + 1; k < n; ++k) {
      bx.start.push_back(0);
      bx.stop.push_back(shape[k]);
    }
    for (size_t k = 0; k < d; ++k) bx.stop[k] = bx.start[k] + 1;
    out.push_back(bx);
  };
  int64_t r0 = b / inner, r1 = (e - 1) / inner;
  int64_t o0 = b % inner, o1 = (e - 1) % inner + 1;
  auto with = [&](int64_t r) {
    Shape p = prefix;
    p.push_back(r);
    return p;
  };
  if (r0 == r1) {
    if (o0 == 0 && o1 == inner) whole_rows(r0, r0 + 1);
    else boxes_rec(shape, d + 1, with(r0), o0, o1, out);
    return;
  }
  int64_t first_full = r0;
  if (o0 != 0) {
    boxes_rec(shape, d + 1, with(r0), o0, inner, out);
    first_full = r0 + 1;
  }
  int64_t last_full = o1 == inner ? r1 + 1 : r1;
  whole_rows(first_full, last_full);
  if (o1 != inner) boxes_rec(shape, d + 1, with(r1), 0, o1, out);
}
}  // namespace

std::vector<Box> flat_range_boxes(const Shape& shape, int64_t begin, int64_t end) {
  std::vector<Box> out;
  if (shape.empty()) {
    if (begin < end) out.push_back(Box{{}, {}});
    return out;
  }
  boxes_rec(shape, 0, {}, begin, end, out);
  return out;
}

FlattenNode::FlattenNode(NodePtr input) : Node(input->dtype(), Shape{input->size()}, {input}) {}

Shape FlattenNode::preferred_chunks() const {
  const Shape& s = inputs()[0]->shape();
  Shape c = preferred_chunks_of(inputs()[0]);
  if (c.empty() || s.empty()) return {};
  int64_t row = 1;
  for (size_t d = 1; d < s.size(); ++d) row *= s[d];
  int64_t rows = c[0];
  // Keep a segment within ~2 Mi elements, halving the chunk row while it divides.
  while (rows * row > (int64_t(2) << 20) && rows % 2 == 0) rows /= 2;
  return {std::max<int64_t>(1, rows * row)};
}

std::string FlattenNode::describe() const { return "flatten " + shape_str(inputs()[0]->shape()) + " -> " + shape_str(shape()); }

std::vector<Region> FlattenNode::input_regions(const Region& r) const {
  // For planning: the bounding box of the flat range's boxes.
  Box b = r.bounds();
  if (r.size() == 0) return {};
  auto boxes = flat_range_boxes(inputs()[0]->shape(), b.start[0], b.stop[0]);
  Box h = boxes.front();
  for (auto& x : boxes)
    for (size_t d = 0; d < h.ndim(); ++d) {
      h.start[d] = std::min(h.start[d], x.start[d]);
      h.stop[d] = std::max(h.stop[d], x.stop[d]);
    }
  return {Region::from_box(h)};
}

void FlattenNode::fill(const Region& r, void* out, ThreadState& ts) const {
  if (r.size() == 0) return;
  const Node& in = *inputs()[0];
  const size_t isz = itemsize(dtype());
  Box b = r.bounds();
  char* dst = static_cast<char*>(out);
  ScratchScope scope(ts.scratch);
  const bool unit = r.step[0] == 1;
  // Contiguous range straight into `out`; with a step, the bounding range then a gather.
  char* range = unit ? dst : static_cast<char*>(scope.alloc(b.size() * isz));
  char* p = range;
  for (const Box& bx : flat_range_boxes(in.shape(), b.start[0], b.stop[0])) {
    in.pull(Region::from_box(bx), p, ts);
    p += bx.size() * static_cast<int64_t>(isz);
  }
  if (!unit) {
    int64_t first = r.start[0] - b.start[0];
    int64_t ss = r.step[0] * static_cast<int64_t>(isz), ds = static_cast<int64_t>(isz);
    copy_strided(1, &r.count[0], range + first * static_cast<int64_t>(isz), &ss, dst, &ds, isz);
  }
}

}  // namespace b2lazy
