#include "ops/index/take_node.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "core/chunk_shapes.hpp"
#include "core/saturating.hpp"
#include "runtime/alignment.hpp"
#include "runtime/graph_queries.hpp"
#include "runtime/memory_model.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {
Shape taken_shape(const Shape& in, size_t axis, size_t naxes, const Shape& index_shape) {
  Shape s(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(axis));
  s.insert(s.end(), index_shape.begin(), index_shape.end());
  s.insert(s.end(), in.begin() + static_cast<std::ptrdiff_t>(axis + naxes), in.end());
  return s;
}

// The storage block length along `axis` of the stored inputs reached through elementwise
// nodes (the smallest, if several), 0 if there is none.
int64_t block_length(const Node& root, size_t axis) {
  int64_t best = 0;
  std::unordered_set<const Node*> visited;  // each shared subexpression once
  std::vector<const Node*> todo{&root};
  while (!todo.empty()) {
    const Node& n = *todo.back();
    todo.pop_back();
    if (!visited.insert(&n).second) continue;
    Shape b = n.storage_blocks();
    if (!b.empty()) {
      if (b[axis] > 0) best = best ? std::min(best, b[axis]) : b[axis];
      continue;
    }
    if (n.is_elementwise())
      for (auto& in : n.inputs())
        if (in->shape() == n.shape()) todo.push_back(in.get());
  }
  return best;
}
}  // namespace

TakeNode::TakeNode(NodePtr input, size_t axis, std::vector<std::shared_ptr<const std::vector<int64_t>>> indices,
                   Shape index_shape)
    : Node(input->dtype(), taken_shape(input->shape(), axis, indices.size(), index_shape), {input}),
      axis_(axis),
      naxes_(indices.size()),
      indices_(std::move(indices)),
      index_shape_(std::move(index_shape)) {
  // Without storage chunks, group by cells whose box stays small: 4096 along one axis,
  // 64 x 64 (x 64 ...) for points over several axes.
  for (size_t t = 0; t < naxes_; ++t) {
    int64_t c = storage_alignment(*inputs()[0], axis_ + t);
    cell_.push_back(c > 0 ? c : naxes_ == 1 ? 4096 : 64);
  }
  if (naxes_ == 1) block_ = block_length(*inputs()[0], axis_);
  preferred_ = compute_preferred_chunks();
}

std::string TakeNode::describe() const {
  return "take axes " + std::to_string(axis_) + ".." + std::to_string(axis_ + naxes_ - 1) + " indices " +
         shape_str(index_shape_) + " -> " + shape_str(shape());
}

Shape TakeNode::compute_preferred_chunks() const {
  const Shape c = preferred_chunks_of(inputs()[0]);
  if (c.empty()) return {};
  Shape out(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(axis_));
  const Shape cells = contiguous_chunks(index_shape_, 1, static_cast<size_t>(std::max<int64_t>(1, c[axis_])));
  out.insert(out.end(), cells.begin(), cells.end());
  out.insert(out.end(), c.begin() + static_cast<std::ptrdiff_t>(axis_ + naxes_), c.end());
  return out;
}

std::vector<int64_t> TakeNode::selected(const Region& r) const {
  const size_t k = index_shape_.size();
  std::vector<int64_t> out;
  for (size_t d = 0; d < k; ++d)
    if (r.count[axis_ + d] == 0) return out;
  Shape st = c_strides(index_shape_), pos(k, 0);
  while (true) {
    int64_t flat = 0;
    for (size_t d = 0; d < k; ++d) flat += (r.start[axis_ + d] + pos[d] * r.step[axis_ + d]) * st[d];
    for (size_t t = 0; t < naxes_; ++t) out.push_back((*indices_[t])[static_cast<size_t>(flat)]);
    size_t d = k;
    while (d-- > 0) {
      if (++pos[d] < r.count[axis_ + d]) break;
      pos[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) break;
  }
  return out;
}

// The region's axes before and after the index axes, and [lo[t], hi[t]] on taken axis t.
Region TakeNode::input_box(const Region& r, const int64_t* lo, const int64_t* hi) const {
  const size_t nd = inputs()[0]->ndim(), k = index_shape_.size();
  Region in{Shape(nd), Shape(nd, 1), Shape(nd)};
  for (size_t d = 0; d < axis_; ++d) in.start[d] = r.start[d], in.step[d] = r.step[d], in.count[d] = r.count[d];
  for (size_t t = 0; t < naxes_; ++t) in.start[axis_ + t] = lo[t], in.count[axis_ + t] = hi[t] - lo[t] + 1;
  for (size_t d = axis_ + naxes_; d < nd; ++d) {
    const size_t o = d - naxes_ + k;
    in.start[d] = r.start[o], in.step[d] = r.step[o], in.count[d] = r.count[o];
  }
  return in;
}

std::vector<Region> TakeNode::input_regions(const Region& r) const {
  const std::vector<int64_t> sel = selected(r);
  Shape lo(naxes_, 0), hi(naxes_, 0);
  if (sel.empty() || r.size() == 0) {
    Region empty = input_box(r, lo.data(), hi.data());
    empty.count.assign(empty.count.size(), 0);
    return {empty};
  }
  for (size_t t = 0; t < naxes_; ++t) lo[t] = hi[t] = sel[t];
  for (size_t j = 0; j < sel.size(); j += naxes_)
    for (size_t t = 0; t < naxes_; ++t) lo[t] = std::min(lo[t], sel[j + t]), hi[t] = std::max(hi[t], sel[j + t]);
  return {input_box(r, lo.data(), hi.data())};
}

void TakeNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const Node& input = *inputs()[0];
  const size_t k = index_shape_.size(), isz = itemsize(dtype()), m = naxes_;
  const std::vector<int64_t> sel = selected(region);
  const int64_t nsel = static_cast<int64_t>(sel.size() / m);
  int64_t pre = 1, post = 1;
  for (size_t d = 0; d < axis_; ++d) pre *= region.count[d];
  for (size_t d = axis_ + k; d < region.ndim(); ++d) post *= region.count[d];
  // Cells ordered by their storage chunk (per taken axis), then cut into groups of one chunk.
  auto chunk_of = [&](int64_t j, size_t t) { return sel[static_cast<size_t>(j) * m + t] / cell_[t]; };
  std::vector<int64_t> order(static_cast<size_t>(nsel));
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  // With a known block length (one axis), by index within a chunk, so that a group can
  // end where a whole block is skipped.
  auto value = [&](int64_t j) { return block_ ? sel[static_cast<size_t>(j)] : 0; };
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    for (size_t t = 0; t < m; ++t)
      if (chunk_of(a, t) != chunk_of(b, t)) return chunk_of(a, t) < chunk_of(b, t);
    if (value(a) != value(b)) return value(a) < value(b);
    return a < b;
  });
  auto same_group = [&](int64_t a, int64_t prev, int64_t b) {  // a: the group's first, prev: b's predecessor
    for (size_t t = 0; t < m; ++t)
      if (chunk_of(a, t) != chunk_of(b, t)) return false;
    return !block_ || value(b) / block_ - value(prev) / block_ <= 1;
  };
  char* dst = static_cast<char*>(out);
  const size_t row = static_cast<size_t>(post) * isz;
  Shape lo(m), hi(m), span(m);
  for (size_t g0 = 0; g0 < order.size();) {
    size_t g1 = g0;
    while (g1 < order.size() && (g1 == g0 || same_group(order[g0], order[g1 - 1], order[g1]))) ++g1;
    for (size_t t = 0; t < m; ++t) {
      lo[t] = hi[t] = sel[static_cast<size_t>(order[g0]) * m + t];
      for (size_t g = g0; g < g1; ++g) {
        const int64_t v = sel[static_cast<size_t>(order[g]) * m + t];
        lo[t] = std::min(lo[t], v), hi[t] = std::max(hi[t], v);
      }
      span[t] = hi[t] - lo[t] + 1;
    }
    const int64_t box = prod(span);
    ScratchScope scope(ts.scratch);
    char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(pre * box) * row));
    input.pull(input_box(region, lo.data(), hi.data()), buf, ts);
    // buf is (pre, span..., post); out is (pre, cells, post).
    Shape sst = c_strides(span);
    for (size_t g = g0; g < g1; ++g) {
      const int64_t j = order[g];
      int64_t local = 0;
      for (size_t t = 0; t < m; ++t) local += (sel[static_cast<size_t>(j) * m + t] - lo[t]) * sst[t];
      for (int64_t p = 0; p < pre; ++p)
        std::memcpy(dst + static_cast<size_t>(p * nsel + j) * row, buf + static_cast<size_t>(p * box + local) * row,
                    row);
    }
    g0 = g1;
  }
}

int64_t TakeNode::fill_bytes(const Region& region, const MemoryModel& m) const {
  if (region.size() == 0) return 0;
  Region in = input_regions(region)[0];
  if (in.size() == 0) return 0;
  for (size_t t = 0; t < naxes_; ++t) in.count[axis_ + t] = std::min(in.count[axis_ + t], cell_[t]);
  return sat_add(MemoryModel::region_bytes(*inputs()[0], in), m.pull_bytes(*inputs()[0], in));
}

}  // namespace b2lazy
