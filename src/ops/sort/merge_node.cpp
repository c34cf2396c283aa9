#include "ops/sort/merge_node.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/dispatch.hpp"
#include "ops/sort/runs_node.hpp"
#include "ops/sort/sort_keys.hpp"
#include "runtime/memory_model.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {
// A strided region is merged in contiguous pieces of at most this many elements.
constexpr int64_t kPiece = int64_t(1) << 20;
// The windows the samples narrow an output boundary to hold about this many keys in all
// (an eighth of a preferred output chunk: two boundaries read a quarter more).
constexpr int64_t kWindow = kPiece / 8;

Region lane_rows(const Region& region, const Shape& shape) {
  Region r = Region::whole(shape);
  r.start[0] = region.start[0], r.step[0] = region.step[0], r.count[0] = region.count[0];
  return r;
}
}  // namespace

MergeNode::MergeNode(NodePtr runs, NodePtr samples, DType values, int64_t n, int64_t every, bool descending, bool flat)
    : Node(runs->ndim() == 4 ? DType::I64 : values, flat ? Shape{n} : Shape{runs->shape()[0], n}, {runs, samples}),
      every_(every),
      descending_(descending) {}

std::string MergeNode::describe() const {
  const Shape& r = inputs()[0]->shape();
  return kind() + " of " + std::to_string(r[1]) + " runs of " + std::to_string(r[2]) +
         (descending_ ? " descending" : "") + " -> " + std::string(dtype_name(dtype())) + " " + shape_str(shape());
}

Region MergeNode::lanes_region(const Region& region) const {
  if (ndim() == 2) return region;
  return Region{{0, region.start[0]}, {1, region.step[0]}, {1, region.count[0]}};
}

Region MergeNode::run_slice(int64_t row, int64_t j, int64_t lo, int64_t hi, bool keys_only) const {
  Region r{{row, j, lo}, {1, 1, 1}, {1, 1, hi - lo}};
  if (positions()) r.start.push_back(keys_only ? 1 : 0), r.step.push_back(1), r.count.push_back(keys_only ? 1 : 2);
  return r;
}

// Every run of the lanes asked for: which part of each a region needs depends on the values.
std::vector<Region> MergeNode::input_regions(const Region& region_in) const {
  const Region region = lanes_region(region_in);
  std::vector<Region> in;
  for (const NodePtr& i : inputs()) {
    Region r = lane_rows(region, i->shape());
    if (region.size() == 0) std::fill(r.count.begin(), r.count.end(), 0);
    in.push_back(r);
  }
  return in;
}

std::vector<Region> MergeNode::pull_pieces(const Region& region_in, size_t input, size_t /*worker_bytes*/) const {
  const Region region = lanes_region(region_in);
  if (input == 1 || region.size() == 0) return {};
  const Shape& rs = inputs()[0]->shape();
  const int64_t k = rs[1], run = rs[2], n = shape().back();
  const Box b = region.bounds();
  const int64_t s = b.start[1], e = b.stop[1];
  const int64_t window = 2 * (2 * k + 1) * every_ / k;  // two boundaries' windows, each run's share
  const int64_t lo = s * run / std::max<int64_t>(1, n);
  const int64_t hi = std::min(run, std::max(lo + 1, (e * run + n - 1) / std::max<int64_t>(1, n) + window));
  std::vector<Region> pieces;
  for (int64_t r = 0; r < region.count[0]; ++r)
    for (int64_t j = 0; j < k; ++j) {
      const int64_t row = region.start[0] + r * region.step[0];
      pieces.push_back(run_slice(row, j, lo, hi, false));
    }
  return pieces;
}

// One lane's pieces at a time: its samples, the windows of one boundary, the slices of
// the runs (keys, and positions with their (key, position) pairs), beside the output.
int64_t MergeNode::fill_bytes(const Region& region_in, const MemoryModel& m) const {
  const Region region = lanes_region(region_in);
  if (region.size() == 0) return 0;
  const int64_t span = region.step[1] == 1 ? region.count[1] : std::min(region.bounds().shape()[1], kPiece);
  const int64_t per = positions() ? 16 : 8;
  int64_t held = sat_mul(region.count[0], inputs()[1]->shape()[1] * 8);
  held = sat_add(held, sat_add(sat_mul(span, per), (kWindow + 2 * inputs()[0]->shape()[1] * every_) * 8));
  if (region.step[1] != 1) held = sat_add(held, sat_mul(span, static_cast<int64_t>(itemsize(dtype()))));
  const Shape& rs = inputs()[0]->shape();
  return sat_add(held, m.pull_bytes(*inputs()[0], run_slice(region.start[0], 0, 0, rs[2], false)));
}

Shape MergeNode::preferred_chunks() const {
  const int64_t c = std::clamp<int64_t>(shape().back(), 1, kPiece);
  return ndim() == 1 ? Shape{c} : Shape{1, c};
}

std::vector<int64_t> MergeNode::splits(int64_t row, int64_t s, const int64_t* samples, ThreadState& ts) const {
  const Node& keys = *inputs()[0];
  const int64_t k = keys.shape()[1], run = keys.shape()[2], g = every_;
  const int64_t nsamples = inputs()[1]->shape()[1];
  std::vector<int64_t> p(static_cast<size_t>(k), 0);
  if (s <= 0) return p;
  if (s >= k * run) return std::vector<int64_t>(static_cast<size_t>(k), run);
  // How many of each run's samples are among the first r in sorted order.
  auto counts = [&](int64_t r) {
    std::vector<int64_t> t(static_cast<size_t>(k), 0);
    for (int64_t i = 0; i < std::min(r, nsamples); ++i) ++t[static_cast<size_t>(samples[i])];
    return t;
  };
  // The (s / g)-th sample ranks at most s, so each run's element before its last sample
  // counted there comes before the s-th; the (s / g + k + 1)-th ranks above s.
  const std::vector<int64_t> below = counts(s / g);
  const int64_t upper = s / g + k + 1;
  const std::vector<int64_t> above = upper < nsamples ? counts(upper) : std::vector<int64_t>{};
  std::vector<int64_t> lo(static_cast<size_t>(k)), hi(static_cast<size_t>(k)), off(static_cast<size_t>(k) + 1, 0);
  int64_t before = 0;
  for (size_t j = 0; j < static_cast<size_t>(k); ++j) {
    lo[j] = std::max<int64_t>(0, (below[j] - 1) * g);
    hi[j] = above.empty() ? run : std::min(run, above[j] * g);
    hi[j] = std::max(hi[j], lo[j]);
    off[j + 1] = off[j] + hi[j] - lo[j];
    before += lo[j];
  }
  ScratchScope scope(ts.scratch);
  auto* w = static_cast<uint64_t*>(scope.alloc(static_cast<size_t>(std::max<int64_t>(1, off[k])) * sizeof(uint64_t)));
  for (size_t j = 0; j < static_cast<size_t>(k); ++j)
    if (hi[j] > lo[j]) keys.pull(run_slice(row, static_cast<int64_t>(j), lo[j], hi[j], true), w + off[j], ts);
  // The s-th element is the within-windows rank `want`: find its key x (the least key
  // with more than `want` keys at or below it), then share its ties by run.
  const int64_t want = s - before;
  auto at_or_below = [&](uint64_t x) {
    int64_t c = 0;
    for (size_t j = 0; j < static_cast<size_t>(k); ++j)
      c += std::upper_bound(w + off[j], w + off[j + 1], x) - (w + off[j]);
    return c;
  };
  uint64_t a = 0, b = sortkey::kLast;
  while (a < b) {
    const uint64_t mid = a + (b - a) / 2;
    if (at_or_below(mid) > want) b = mid;
    else a = mid + 1;
  }
  int64_t ties = want;
  std::vector<int64_t> less(static_cast<size_t>(k)), equal(static_cast<size_t>(k));
  for (size_t j = 0; j < static_cast<size_t>(k); ++j) {
    const uint64_t* first = w + off[j];
    const uint64_t* last = w + off[j + 1];
    const auto [l, u] = std::equal_range(first, last, a);
    less[j] = l - first, equal[j] = u - l;
    ties -= less[j];
  }
  for (size_t j = 0; j < static_cast<size_t>(k); ++j) {
    const int64_t take = std::min(ties, equal[j]);
    p[j] = lo[j] + less[j] + take;
    ties -= take;
  }
  return p;
}

void MergeNode::merge(int64_t row, int64_t s, int64_t e, const int64_t* samples, void* out, ThreadState& ts) const {
  const Node& keys = *inputs()[0];
  const int64_t k = keys.shape()[1];
  const std::vector<int64_t> from = splits(row, s, samples, ts), to = splits(row, e, samples, ts);
  const int64_t total = e - s;
  // each run's slice, one after another: keys, or (position, key) pairs
  const size_t bytes = positions() ? sizeof(sortkey::KeyPos) : sizeof(uint64_t);
  ScratchScope scope(ts.scratch);
  char* slices = static_cast<char*>(scope.alloc(static_cast<size_t>(total) * bytes));
  char* at = slices;
  for (int64_t j = 0; j < k; ++j) {
    const size_t u = static_cast<size_t>(j);
    if (to[u] <= from[u]) continue;
    keys.pull(run_slice(row, j, from[u], to[u], false), at, ts);
    at += static_cast<size_t>(to[u] - from[u]) * bytes;
  }
  if (positions()) {  // sorted by key, then position (stable)
    auto* pairs = reinterpret_cast<sortkey::KeyPos*>(slices);
    sortkey::sort_pairs(pairs, static_cast<size_t>(total));
    int64_t* o = static_cast<int64_t*>(out);
    for (int64_t i = 0; i < total; ++i) o[i] = static_cast<int64_t>(pairs[i].pos);
    return;
  }
  auto* kb = reinterpret_cast<uint64_t*>(slices);
  sortkey::sort_keys(kb, static_cast<size_t>(total));  // values: keys alone
  dispatch_real(dtype(), "sort", [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* o = static_cast<T*>(out);
    for (int64_t i = 0; i < total; ++i) o[i] = sortkey::from_key<T>(kb[i], descending_);
  });
}

void MergeNode::fill(const Region& region_in, void* out, ThreadState& ts) const {
  const Region region = lanes_region(region_in);
  if (region.size() == 0) return;
  ScratchScope scope(ts.scratch);
  const Region sr = lane_rows(region, inputs()[1]->shape());
  auto* samples = static_cast<int64_t*>(scope.alloc(static_cast<size_t>(sr.size()) * sizeof(int64_t)));
  inputs()[1]->pull(sr, samples, ts);
  const size_t isz = itemsize(dtype());
  const int64_t cnt = region.count[1], step = region.step[1];
  for (int64_t r = 0; r < region.count[0]; ++r) {
    const int64_t row = region.start[0] + r * region.step[0];
    const int64_t* rs = samples + r * sr.count[1];
    char* o = static_cast<char*>(out) + static_cast<size_t>(r * cnt) * isz;
    if (step == 1) {
      merge(row, region.start[1], region.start[1] + cnt, rs, o, ts);
      continue;
    }
    // strided (either way): merge pieces from each position asked for, in increasing
    // order, and keep the positions inside each piece
    ScratchScope inner(ts.scratch);
    char* piece = static_cast<char*>(inner.alloc(static_cast<size_t>(kPiece) * isz));
    const int64_t first = step > 0 ? 0 : cnt - 1, dir = step > 0 ? 1 : -1;
    const int64_t end = region.bounds().stop[1];
    for (int64_t i = first; i >= 0 && i < cnt;) {
      const int64_t s = region.start[1] + i * step;
      const int64_t e = std::min(s + kPiece, end);
      merge(row, s, e, rs, piece, ts);
      for (; i >= 0 && i < cnt && region.start[1] + i * step < e; i += dir)
        std::memcpy(o + static_cast<size_t>(i) * isz, piece + static_cast<size_t>(region.start[1] + i * step - s) * isz,
                    isz);
    }
  }
}

int64_t MergeNode::sample_spacing(int64_t n, int64_t run) {
  const int64_t k = std::max<int64_t>(1, (n + run - 1) / run);
  return std::max<int64_t>(1, std::min(run / 8, kWindow / (2 * k + 1)));
}

}  // namespace b2lazy
