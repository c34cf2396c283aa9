#include "ops/index/mask_node.hpp"

#include <algorithm>
#include <cstring>

#include "b2lazy/error.hpp"
#include "core/saturating.hpp"
#include "runtime/memory_model.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {
// Tiles of grouped strips hold about this many mask elements (wider than a unit when the
// unit is a thin column strip).
constexpr int64_t kTileItems = int64_t(1) << 20;
}  // namespace

MaskCountsNode::MaskCountsNode(NodePtr mask, Shape strip, const Shape& unit)
    : Node(DType::I64, Shape{ChunkGrid(mask->shape(), strip).nchunks()}, {mask}), strip_(std::move(strip)) {
  const Shape& sh = inputs()[0]->shape();
  const size_t nd = sh.size();
  bool rows = nd >= 1 && unit.size() == nd && strip_[0] > 0 && strip_[0] < unit[0] && unit[0] % strip_[0] == 0;
  for (size_t d = 1; rows && d < nd; ++d) rows = strip_[d] == sh[d] && unit[d] > 0;
  if (!rows) return;
  group_ = unit[0] / strip_[0];
  tile_.assign(unit.begin() + 1, unit.end());
  for (size_t d = 0; d < tile_.size(); ++d) tile_[d] = std::min(tile_[d], sh[d + 1]);
  if (!tile_.empty()) {  // widened along the last axis, in whole units
    const int64_t per = std::max<int64_t>(1, unit[0] * prod(tile_));
    tile_.back() = std::min(sh.back(), tile_.back() * std::max<int64_t>(1, kTileItems / per));
  }
}

std::vector<Box> MaskCountsNode::pieces(const Region& r) const {
  std::vector<Box> out;
  const ChunkGrid g(inputs()[0]->shape(), strip_);
  if (group_ == 1 || r.step[0] != 1) {
    for (int64_t i = 0; i < r.count[0]; ++i) out.push_back(g.chunk_box(r.start[0] + i * r.step[0]));
    return out;
  }
  const Shape& sh = inputs()[0]->shape();
  const Shape trailing(sh.begin() + 1, sh.end());
  const ChunkGrid tiles(trailing, tile_);
  const int64_t first = r.start[0], last = r.start[0] + r.count[0];  // strips [first, last)
  for (int64_t s = first; s < last;) {
    const int64_t e = std::min(last, (s / group_ + 1) * group_);  // to the end of its unit's rows
    const int64_t r0 = g.chunk_box(s).start[0], r1 = g.chunk_box(e - 1).stop[0];
    for (int64_t t = 0; t < (trailing.empty() ? 1 : tiles.nchunks()); ++t) {
      Box b;
      b.start.push_back(r0), b.stop.push_back(r1);
      if (!trailing.empty()) {
        const Box tb = tiles.chunk_box(t);
        b.start.insert(b.start.end(), tb.start.begin(), tb.start.end());
        b.stop.insert(b.stop.end(), tb.stop.begin(), tb.stop.end());
      }
      out.push_back(std::move(b));
    }
    s = e;
  }
  return out;
}

std::vector<Region> MaskCountsNode::pull_pieces(const Region& region, size_t, size_t) const {
  std::vector<Region> out;
  if (region.size() == 0) return out;
  for (const Box& b : pieces(region)) out.push_back(Region::from_box(b));
  return out;
}

int64_t MaskCountsNode::fill_bytes(const Region& region, const MemoryModel& m) const {
  int64_t most = 0;
  if (region.size() == 0) return 0;
  const std::vector<Box> ps = pieces(region);
  for (size_t k = 0; k < ps.size() && k < 2; ++k) {  // one held at a time; the first two are the largest
    const Region r = Region::from_box(ps[k]);
    most = std::max(most, sat_add(r.size(), m.pull_bytes(*inputs()[0], r)));
  }
  return most;
}

std::vector<Region> MaskCountsNode::input_regions(const Region& r) const {
  ChunkGrid g(inputs()[0]->shape(), strip_);
  if (r.size() == 0) return {Region::from_box(Box::whole(Shape(strip_.size(), 0)))};
  Box b = g.chunk_box(r.start[0]);
  Box e = g.chunk_box(r.last(0));
  for (size_t d = 0; d < b.ndim(); ++d)
    b.start[d] = std::min(b.start[d], e.start[d]), b.stop[d] = std::max(b.stop[d], e.stop[d]);
  return {Region::from_box(b)};
}

void MaskCountsNode::fill(const Region& region, void* out, ThreadState& ts) const {
  int64_t* o = static_cast<int64_t*>(out);
  std::fill(o, o + region.count[0], int64_t(0));
  const ChunkGrid g(inputs()[0]->shape(), strip_);
  const bool grouped = group_ > 1 && region.step[0] == 1;
  int64_t i = 0;  // the strip of a piece (strip by strip)
  for (const Box& b : pieces(region)) {
    ScratchScope scope(ts.scratch);
    const int64_t n = b.size();
    bool* m = scope.alloc_n<bool>(static_cast<size_t>(n));
    inputs()[0]->pull(Region::from_box(b), m, ts);
    if (!grouped) {
      o[i++] = std::count(m, m + n, true);
      continue;
    }
    // A tile of whole strips' rows: each strip's rows are a contiguous range of it.
    const int64_t row = b.stop[0] > b.start[0] ? n / (b.stop[0] - b.start[0]) : 0;
    for (int64_t s = region.start[0]; s < region.start[0] + region.count[0]; ++s) {
      const Box sb = g.chunk_box(s);
      const int64_t r0 = std::max(sb.start[0], b.start[0]), r1 = std::min(sb.stop[0], b.stop[0]);
      if (r0 < r1) o[s - region.start[0]] += std::count(m + (r0 - b.start[0]) * row, m + (r1 - b.start[0]) * row, true);
    }
  }
}

namespace {
int64_t total(const std::vector<int64_t>& counts) {
  int64_t t = 0;
  for (int64_t c : counts) t += c;
  return t;
}
}  // namespace

MaskSelectNode::MaskSelectNode(NodePtr values, NodePtr mask, Shape strip, std::vector<int64_t> counts)
    : Node(values->dtype(), Shape{total(counts)}, {values, mask}),
      strip_(std::move(strip)),
      grid_(values->shape(), strip_) {
  first_.push_back(0);
  for (int64_t c : counts) first_.push_back(first_.back() + c);
}

std::string MaskSelectNode::describe() const {
  return "mask_select " + std::to_string(first_.back()) + " of " + std::to_string(inputs()[0]->size()) +
         " values, strips " + shape_str(strip_);
}

Box MaskSelectNode::strip_box(int64_t s) const { return grid_.chunk_box(s); }

std::vector<Region> MaskSelectNode::input_regions(const Region& r) const {
  const Shape& s = inputs()[0]->shape();
  if (r.size() == 0) {
    Region e = Region::whole(s);
    e.count.assign(e.count.size(), 0);
    return {e, e};
  }
  const int64_t lo = std::min(r.start[0], r.last(0)), hi = std::max(r.start[0], r.last(0));
  const int64_t s0 = std::upper_bound(first_.begin(), first_.end(), lo) - first_.begin() - 1;
  const int64_t s1 = std::upper_bound(first_.begin(), first_.end(), hi) - first_.begin() - 1;
  Box b = strip_box(s0), e = strip_box(s1);
  for (size_t d = 0; d < b.ndim(); ++d)
    b.start[d] = std::min(b.start[d], e.start[d]), b.stop[d] = std::max(b.stop[d], e.stop[d]);
  return {Region::from_box(b), Region::from_box(b)};
}

int64_t MaskSelectNode::fill_bytes(const Region& region, const MemoryModel& m) const {
  if (region.size() == 0) return 0;
  const Region rb = Region::from_box(strip_box(0));  // the first strip is a whole one
  const int64_t held = sat_mul(rb.size(), static_cast<int64_t>(itemsize(dtype()) + 1));
  return sat_add(held, std::max(m.pull_bytes(*inputs()[0], rb), m.pull_bytes(*inputs()[1], rb)));
}

void MaskSelectNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const size_t isz = itemsize(dtype());
  const int64_t lo = std::min(region.start[0], region.last(0)), hi = std::max(region.start[0], region.last(0));
  int64_t s = std::upper_bound(first_.begin(), first_.end(), lo) - first_.begin() - 1;
  for (; s < static_cast<int64_t>(first_.size()) - 1 && first_[static_cast<size_t>(s)] <= hi; ++s) {
    if (first_[static_cast<size_t>(s) + 1] == first_[static_cast<size_t>(s)]) continue;  // nothing selected
    const Box b = strip_box(s);
    ScratchScope scope(ts.scratch);
    bool* m = scope.alloc_n<bool>(static_cast<size_t>(b.size()));
    char* v = static_cast<char*>(scope.alloc(static_cast<size_t>(b.size()) * isz));
    const Region rb = Region::from_box(b);
    inputs()[0]->pull(rb, v, ts);
    {
      LendScope lend(ts, inputs()[0].get(), rb, v);  // a mask computed from the values reuses them
      inputs()[1]->pull(rb, m, ts);
    }
    const int64_t want = first_[static_cast<size_t>(s) + 1] - first_[static_cast<size_t>(s)];
    const int64_t now = std::count(m, m + b.size(), true);
    if (now != want)  // counted before (a reopened saved expression)
      throw ValueError("x[mask]: strip " + std::to_string(s) + " of the mask (" + shape_str(b.shape()) + " at " +
                       shape_str(b.start) + ") now holds " + std::to_string(now) + " True values, but " +
                       std::to_string(want) +
                       " when it was counted: the mask's operands "
                       "changed since; build the expression again");
    compact(m, v, b.size(), first_[static_cast<size_t>(s)], region, static_cast<char*>(out));
  }
}

void MaskSelectNode::compact(const bool* m, const char* v, int64_t n, int64_t g, const Region& region,
                             char* out) const {
  // g: the result position of the strip's first selected value.
  const size_t isz = itemsize(dtype());
  const int64_t start = region.start[0], step = region.step[0], count = region.count[0];
  if (step == 1) {  // the common case: a contiguous range of the result
    int64_t e = 0;
    for (; e < n && g < start; ++e) g += m[e];  // selected values before the range
    char* o = out + (g - start) * static_cast<int64_t>(isz);
    char* end = out + count * static_cast<int64_t>(isz);
    for (; e < n && o < end; ++e) {
      std::memcpy(o, v + e * static_cast<int64_t>(isz), isz);  // written always, kept if selected
      o += m[e] ? static_cast<int64_t>(isz) : 0;
    }
    return;
  }
  for (int64_t e = 0; e < n; ++e) {
    if (!m[e]) continue;
    const int64_t off = g - start;
    if (off % step == 0) {
      const int64_t i = off / step;
      if (i >= 0 && i < count) std::memcpy(out + static_cast<size_t>(i) * isz, v + e * isz, isz);
    }
    ++g;
  }
}

}  // namespace b2lazy
