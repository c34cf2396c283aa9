#include "ops/shape/axis_map_node.hpp"

#include <algorithm>
#include <cstring>

#include "core/strided_copy.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

AxisMapNode::AxisMapNode(NodePtr input, Shape shape, std::vector<AxisMap> maps)
    : Node(input->dtype(), std::move(shape), {input}), maps_(std::move(maps)) {}

std::string AxisMapNode::kind() const {
  for (auto& m : maps_)
    if (m.kind == AxisMap::Kind::Repeat) return "repeat";
  return "tile";
}

std::string AxisMapNode::describe() const {
  std::string s = kind() + " " + shape_str(inputs()[0]->shape()) + " -> " + shape_str(shape()) + " (";
  for (size_t d = 0; d < maps_.size(); ++d) {
    const AxisMap& m = maps_[d];
    s += d ? ", " : "";
    s += m.kind == AxisMap::Kind::Identity ? "="
         : m.kind == AxisMap::Kind::Tile   ? "tile"
         : m.ends                          ? "repeat counts"
                                           : "repeat " + std::to_string(m.each);
  }
  return s + ")";
}

int64_t AxisMapNode::map(size_t d, int64_t i) const {
  const AxisMap& m = maps_[d];
  switch (m.kind) {
    case AxisMap::Kind::Identity: return i;
    case AxisMap::Kind::Tile: return i % inputs()[0]->shape()[d];
    case AxisMap::Kind::Repeat:
      if (!m.ends) return i / m.each;
      return std::upper_bound(m.ends->begin(), m.ends->end(), i) - m.ends->begin();
  }
  return i;
}

Region AxisMapNode::input_region(const Region& r) const {
  const size_t nd = ndim();
  Region in{Shape(nd, 0), Shape(nd, 1), Shape(nd, 0)};
  if (r.size() == 0) return in;  // nothing selected: nothing read
  const Shape& ishape = inputs()[0]->shape();
  for (size_t d = 0; d < nd; ++d) {
    const AxisMap& m = maps_[d];
    if (m.kind == AxisMap::Kind::Identity) {
      in.start[d] = r.start[d], in.step[d] = r.step[d], in.count[d] = r.count[d];
      continue;
    }
    const int64_t a = std::min(r.start[d], r.last(d)), b = std::max(r.start[d], r.last(d));
    if (m.kind == AxisMap::Kind::Tile && a / ishape[d] != b / ishape[d]) {
      in.start[d] = 0, in.count[d] = ishape[d];  // the region crosses a period: the whole axis
      continue;
    }
    // Within one period, or a repeat: the map is monotone over [a, b].
    const int64_t lo = map(d, a), hi = map(d, b);
    in.start[d] = lo, in.count[d] = hi - lo + 1;
  }
  return in;
}

namespace {
// out[j0, ..., jn] = src[idx0[j0], ..., idxn[jn]] for dense C-order src of shape
// `src_shape` and out with byte strides `out_st` (unit stride on the last axis), copying
// runs of consecutive indices on the last axis at once.
void gather(const char* src, const Shape& src_shape, const std::vector<std::vector<int64_t>>& idx, char* out,
            const Shape& out_st, size_t isz) {
  const size_t nd = idx.size();
  const Shape st = byte_strides(src_shape, isz);
  const std::vector<int64_t>& last = idx[nd - 1];
  std::vector<std::pair<size_t, size_t>> runs;  // (first output position, length)
  for (size_t j = 0; j < last.size();) {
    size_t e = j + 1;
    while (e < last.size() && last[e] == last[e - 1] + 1) ++e;
    runs.emplace_back(j, e - j);
    j = e;
  }
  std::vector<size_t> pos(nd - 1, 0);
  for (;;) {
    int64_t off = 0, ooff = 0;
    for (size_t d = 0; d + 1 < nd; ++d) off += idx[d][pos[d]] * st[d], ooff += static_cast<int64_t>(pos[d]) * out_st[d];
    for (auto [j, n] : runs) std::memcpy(out + ooff + j * isz, src + off + last[j] * st[nd - 1], n * isz);
    size_t d = nd - 1;
    while (d-- > 0) {
      if (++pos[d] < idx[d].size()) break;
      pos[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}
}  // namespace

std::vector<AxisMapNode::Segment> AxisMapNode::segments(const Region& r, size_t d) const {
  const int64_t n = inputs()[0]->shape()[d];
  if (maps_[d].kind == AxisMap::Kind::Tile) {
    // Runs of output positions within one period; a tiled axis crossing one boundary is
    // pulled as its two pieces, not as the whole axis between them.
    std::vector<Segment> s;
    for (int64_t j = 0; j < r.count[d];) {
      const int64_t period = (r.start[d] + j * r.step[d]) / n;
      int64_t e = j + 1;
      while (e < r.count[d] && (r.start[d] + e * r.step[d]) / n == period) ++e;
      s.push_back({j, e});
      j = e;
      if (s.size() > 2) return {{0, r.count[d]}};  // many periods: the whole axis, pulled once
    }
    return s;
  }
  return {{0, r.count[d]}};
}

void AxisMapNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const size_t nd = ndim(), isz = itemsize(dtype());
  if (nd == 0) {
    inputs()[0]->pull(region, out, ts);
    return;
  }
  std::vector<std::vector<Segment>> segs(nd);
  for (size_t d = 0; d < nd; ++d) segs[d] = segments(region, d);
  const Shape out_st = byte_strides(region.count, isz);
  std::vector<size_t> which(nd, 0);
  for (;;) {
    // The part of the region with segment which[d] along each axis.
    Region part = region;
    int64_t out_off = 0;
    for (size_t d = 0; d < nd; ++d) {
      const Segment& g = segs[d][which[d]];
      part.start[d] = region.start[d] + g.begin * region.step[d];
      part.count[d] = g.end - g.begin;
      out_off += g.begin * out_st[d];
    }
    fill_part(part, static_cast<char*>(out) + out_off, out_st, ts);
    size_t d = nd;
    while (d-- > 0) {
      if (++which[d] < segs[d].size()) break;
      which[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

void AxisMapNode::fill_part(const Region& part, char* out, const Shape& out_st, ThreadState& ts) const {
  const size_t nd = ndim(), isz = itemsize(dtype());
  const Region in = input_region(part);
  std::vector<std::vector<int64_t>> idx(nd);  // per axis, the box position of each output index
  bool direct = true;
  for (size_t d = 0; d < nd; ++d) {
    idx[d].resize(static_cast<size_t>(part.count[d]));
    for (int64_t j = 0; j < part.count[d]; ++j) {
      const int64_t v =
          maps_[d].kind == AxisMap::Kind::Identity ? j : map(d, part.start[d] + j * part.step[d]) - in.start[d];
      idx[d][static_cast<size_t>(j)] = v;
      direct = direct && v == j;
    }
    direct = direct && in.count[d] == part.count[d];
  }
  ScratchScope scope(ts.scratch);
  const bool dense_out = out_st == byte_strides(part.count, isz);
  if (direct && dense_out) {  // one to one onto the box (within one tile, repeats of 1)
    inputs()[0]->pull(in, out, ts);
    return;
  }
  char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(in.size()) * isz));
  inputs()[0]->pull(in, buf, ts);
  gather(buf, in.count, idx, out, out_st, isz);
}

}  // namespace b2lazy
