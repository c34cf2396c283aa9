#include "ops/shape/reshape_node.hpp"

#include "core/saturating.hpp"
#include "runtime/memory_model.hpp"

#include <algorithm>
#include <cstring>

#include "core/chunk_shapes.hpp"
#include "core/strided_copy.hpp"
#include "runtime/graph_queries.hpp"
#include "runtime/thread_state.hpp"

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

namespace {
// Smallest and largest flat position (in `cs` strides) of a region.
std::pair<int64_t, int64_t> flat_bounds(const Region& r, const Shape& cs) {
  int64_t lo = 0, hi = 0;
  for (size_t d = 0; d < r.ndim(); ++d) {
    const int64_t a = r.start[d] * cs[d], b = r.last(d) * cs[d];
    lo += std::min(a, b);
    hi += std::max(a, b);
  }
  return {lo, hi};
}
}  // namespace

ReshapeNode::ReshapeNode(NodePtr input, Shape shape) : Node(input->dtype(), std::move(shape), {input}) {
  cstrides_.assign(ndim(), 1);
  for (size_t d = ndim(); d-- > 1;) cstrides_[d - 1] = cstrides_[d] * this->shape()[d];
  preferred_ = compute_preferred_chunks();
}

std::string ReshapeNode::describe() const {
  return "reshape " + shape_str(inputs()[0]->shape()) + " -> " + shape_str(shape());
}

Shape ReshapeNode::compute_preferred_chunks() const {
  const Shape& s = inputs()[0]->shape();
  Shape c = preferred_chunks_of(inputs()[0]);
  if (c.empty() || s.empty() || ndim() == 0) return {};
  int64_t row = 1;
  for (size_t d = 1; d < s.size(); ++d) row *= s[d];
  int64_t rows = c[0];
  // Keep a segment within ~2 Mi elements, halving the chunk row while it divides.
  while (rows * row > (int64_t(2) << 20) && rows % 2 == 0) rows /= 2;
  // The output box with about that many elements: whole trailing axes, then part of one.
  return contiguous_chunks(shape(), 1, static_cast<size_t>(std::max<int64_t>(1, rows * row)));
}

// Whole input rows (axis 0) around flat positions [lo, hi], when that at most doubles the
// span: one box, contiguous in C order, so each input chunk is read once (the range's own
// boxes would read the chunks of its first and last rows again).
std::optional<Box> ReshapeNode::rows_around(int64_t lo, int64_t hi) const {
  const Shape& is = inputs()[0]->shape();
  if (is.empty()) return std::nullopt;
  int64_t inner = 1;
  for (size_t d = 1; d < is.size(); ++d) inner *= is[d];
  const int64_t r0 = lo / inner, r1 = hi / inner + 1;
  if ((r1 - r0) * inner > 2 * (hi - lo + 1)) return std::nullopt;
  Box b = Box::whole(is);
  b.start[0] = r0;
  b.stop[0] = r1;
  return b;
}

std::vector<Region> ReshapeNode::input_regions(const Region& r) const {
  // For planning: what fill pulls, as one box (bounding the flat range's boxes).
  if (r.size() == 0) return {};
  auto [lo, hi] = flat_bounds(r, cstrides_);
  if (auto rows = rows_around(lo, hi)) return {Region::from_box(*rows)};
  auto boxes = flat_range_boxes(inputs()[0]->shape(), lo, hi + 1);
  Box h = boxes.front();
  for (auto& x : boxes)
    for (size_t d = 0; d < h.ndim(); ++d) {
      h.start[d] = std::min(h.start[d], x.start[d]);
      h.stop[d] = std::max(h.stop[d], x.stop[d]);
    }
  return {Region::from_box(h)};
}

// What fill_rec holds: a region spread thinly over the flat order is filled in slices
// along its first axis (each alike: the first is counted), else the flat range or rows
// around it, copied out unless they are the region itself.
int64_t ReshapeNode::fill_bytes(const Region& r, const MemoryModel& m) const {
  if (r.size() == 0) return 0;
  auto [lo, hi] = flat_bounds(r, cstrides_);
  const int64_t span = hi - lo + 1, n = r.size();
  if (span > std::max<int64_t>(4 * n, int64_t(1) << 16)) {
    size_t d = 0;
    while (r.count[d] == 1) ++d;
    Region sub = r;
    sub.count[d] = 1;
    return fill_bytes(sub, m);
  }
  bool dense = span == n;
  for (size_t d = 0; d < r.ndim(); ++d) dense = dense && r.step[d] > 0;
  const std::optional<Box> rows = rows_around(lo, hi);
  const int64_t len = rows ? rows->size() : span;
  const int64_t held = dense && len == span ? 0 : sat_mul(len, static_cast<int64_t>(itemsize(dtype())));
  return sat_add(held, m.pull_bytes(*inputs()[0], input_regions(r)[0]));
}

void ReshapeNode::fill(const Region& r, void* out, ThreadState& ts) const {
  if (r.size() == 0) return;
  fill_rec(r, static_cast<char*>(out), ts);
}

void ReshapeNode::fill_rec(const Region& r, char* dst, ThreadState& ts) const {
  const Node& in = *inputs()[0];
  const size_t isz = itemsize(dtype());
  auto [lo, hi] = flat_bounds(r, cstrides_);
  const int64_t span = hi - lo + 1, n = r.size();
  // A region spread thinly over the flat order (a column of a wide output) is split along
  // its first axis until the flat range it spans is at most a few times its size.
  if (span > std::max<int64_t>(4 * n, int64_t(1) << 16)) {
    size_t d = 0;
    while (r.count[d] == 1) ++d;
    Region sub = r;
    sub.count[d] = 1;
    const int64_t sub_bytes = sub.size() * static_cast<int64_t>(isz);
    for (int64_t i = 0; i < r.count[d]; ++i) {
      sub.start[d] = r.start[d] + i * r.step[d];
      fill_rec(sub, dst + i * sub_bytes, ts);
    }
    return;
  }
  bool dense = span == n;
  for (size_t d = 0; d < r.ndim(); ++d) dense = dense && r.step[d] > 0;
  const std::optional<Box> rows = rows_around(lo, hi);
  const int64_t inner = rows ? prod(rows->shape()) / rows->shape()[0] : 1;
  const int64_t base = rows ? rows->start[0] * inner : lo, len = rows ? rows->size() : span;
  ScratchScope scope(ts.scratch);
  const bool direct = dense && len == span;  // the range is exactly the region: no copy
  char* range = direct ? dst : static_cast<char*>(scope.alloc(static_cast<size_t>(len) * isz));
  if (rows) {
    in.pull(Region::from_box(*rows), range, ts);
  } else {
    char* p = range;
    for (const Box& bx : flat_range_boxes(in.shape(), lo, hi + 1)) {
      in.pull(Region::from_box(bx), p, ts);
      p += bx.size() * static_cast<int64_t>(isz);
    }
  }
  if (direct) return;
  int64_t first = -base;
  std::vector<int64_t> ss(r.ndim()), ds(r.ndim());
  int64_t step_out = static_cast<int64_t>(isz);
  for (size_t d = r.ndim(); d-- > 0;) {
    first += r.start[d] * cstrides_[d];
    ss[d] = r.step[d] * cstrides_[d] * static_cast<int64_t>(isz);
    ds[d] = step_out;
    step_out *= r.count[d];
  }
  copy_strided(r.ndim(), r.count.data(), range + first * static_cast<int64_t>(isz), ss.data(), dst, ds.data(), isz);
}

// A reshape groups its axes: one input axis split into output axes (coarsen), input axes
// merged into one output axis, or the same axis. Split: the inner output axes that a
// chunk covers whole are whole, the next one is cut at (chunk / their product) when it is
// the group's outer axis or that divides it, the outer ones anywhere. Merged: inner input axes whole, the outer's chunk
// times their product.
std::optional<Shape> ReshapeNode::alignment_through_view(const Shape& in) const {
  const Shape& is = inputs()[0]->shape();
  const Shape& os = shape();
  Shape a(os.size(), 0);
  size_t i = 0, j = 0;
  while (i < is.size() || j < os.size()) {
    if (j < os.size() && os[j] == 1) {
      a[j++] = 1;
      continue;
    }
    if (i < is.size() && is[i] == 1) {
      ++i;
      continue;
    }
    if (i >= is.size() || j >= os.size()) break;
    const size_t i0 = i, j0 = j;
    int64_t pi = is[i++], po = os[j++];
    while (pi != po) {
      if (pi < po && i < is.size()) pi *= is[i++];
      else if (po < pi && j < os.size()) po *= os[j++];
      else return Shape(os.size(), 0);
    }
    if (i - i0 == 1) {  // one input axis split into [j0, j)
      const int64_t c = std::min(in[i0], is[i0]);
      if (c <= 0) continue;
      int64_t p = 1;
      size_t m = j;
      while (m > j0 && c % (p * os[m - 1]) == 0) {
        a[m - 1] = os[m - 1];
        p *= os[--m];
      }
      if (m == j0) continue;
      const int64_t q = c / p;  // (c % p == 0)
      if (m - 1 == j0) {
        a[j0] = std::min(q, os[j0]);  // the group's outer axis: cut every q
      } else if (q < os[m - 1] && os[m - 1] % q == 0) {
        a[m - 1] = q;
        for (size_t k = j0; k + 1 < m; ++k) a[k] = 1;
      } else {
        for (size_t k = j0; k < j; ++k) a[k] = 0;
      }
    } else if (j - j0 == 1) {  // input axes [i0, i) merged into one
      int64_t inner = 1;
      bool whole = true;
      for (size_t k = i0 + 1; k < i; ++k) {
        whole = whole && in[k] >= is[k];
        inner *= is[k];
      }
      if (whole && in[i0] > 0) a[j0] = std::min(in[i0], is[i0]) * inner;
    }
  }
  return a;
}

}  // namespace b2lazy
