#include "ops/shape/pad_node.hpp"

#include <algorithm>
#include <cstring>

#include "core/strided_copy.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {
constexpr size_t kMaxRuns = 8;  // beyond this many runs along an axis: one box around them

const char* mode_name(PadMode m) {
  switch (m) {
    case PadMode::Constant: return "constant";
    case PadMode::Edge: return "edge";
    case PadMode::Reflect: return "reflect";
    case PadMode::Symmetric: return "symmetric";
    case PadMode::Wrap: return "wrap";
    case PadMode::Empty: return "empty";
  }
  return "";
}

int64_t positive_mod(int64_t a, int64_t n) {
  const int64_t m = a % n;
  return m < 0 ? m + n : m;
}
}  // namespace

PadNode::PadNode(NodePtr input, std::vector<std::pair<int64_t, int64_t>> widths, PadMode mode,
                 std::vector<uint8_t> fill)
    : Node(input->dtype(),
           [&] {
             Shape s = input->shape();
             for (size_t d = 0; d < s.size(); ++d)
               s[d] = checked_add(checked_add(s[d], widths[d].first, "pad"), widths[d].second, "pad");
             return s;
           }(),
           {input}),
      widths_(std::move(widths)),
      mode_(mode),
      fill_(std::move(fill)) {}

std::string PadNode::describe() const {
  std::string s = std::string("pad ") + mode_name(mode_) + " " + shape_str(inputs()[0]->shape()) + " -> " +
                  shape_str(shape()) + " (";
  for (size_t d = 0; d < widths_.size(); ++d)
    s += (d ? ", " : "") + std::to_string(widths_[d].first) + "/" + std::to_string(widths_[d].second);
  return s + ")";
}

int64_t PadNode::map(size_t d, int64_t o) const {
  const int64_t n = inputs()[0]->shape()[d];
  const int64_t i = o - widths_[d].first;
  if (i >= 0 && i < n) return i;
  switch (mode_) {
    case PadMode::Constant:
    case PadMode::Empty: return -1;
    case PadMode::Edge: return i < 0 ? 0 : n - 1;
    case PadMode::Reflect: {
      if (n == 1) return 0;
      const int64_t p = 2 * (n - 1), m = positive_mod(i, p);
      return m >= n ? p - m : m;
    }
    case PadMode::Symmetric: {
      const int64_t p = 2 * n, m = positive_mod(i, p);
      return m >= n ? p - 1 - m : m;
    }
    case PadMode::Wrap: return positive_mod(i, n);
  }
  return -1;
}

std::vector<PadNode::AxisPlan> PadNode::axis_plans(const Region& r) const {
  std::vector<AxisPlan> plans(ndim());
  for (size_t d = 0; d < ndim(); ++d) {
    AxisPlan& p = plans[d];
    p.index.resize(static_cast<size_t>(r.count[d]));
    for (int64_t j = 0; j < r.count[d]; ++j) {
      const int64_t i = map(d, r.start[d] + j * r.step[d]);
      p.index[static_cast<size_t>(j)] = i;
      if (i < 0) continue;
      if (!p.runs.empty() && p.runs.back().last == j - 1 && std::abs(i - p.index[static_cast<size_t>(j - 1)]) <= 1) {
        Run& run = p.runs.back();
        run.last = j, run.lo = std::min(run.lo, i), run.hi = std::max(run.hi, i);
      } else {
        p.runs.push_back({j, j, i, i});
      }
    }
    if (p.runs.size() > kMaxRuns) {  // many periods (a width beyond the axis): one box
      Run all{p.runs.front().first, p.runs.back().last, p.runs.front().lo, p.runs.front().hi};
      for (const Run& run : p.runs) all.lo = std::min(all.lo, run.lo), all.hi = std::max(all.hi, run.hi);
      p.runs = {all};
    }
  }
  return plans;
}

std::vector<Region> PadNode::pieces(const std::vector<AxisPlan>& plans) const {
  const size_t nd = ndim();
  std::vector<Region> out;
  for (const AxisPlan& p : plans)
    if (p.runs.empty()) return out;
  std::vector<size_t> which(nd, 0);
  for (;;) {
    Region in{Shape(nd), Shape(nd, 1), Shape(nd)};
    for (size_t d = 0; d < nd; ++d) {
      const Run& run = plans[d].runs[which[d]];
      in.start[d] = run.lo, in.count[d] = run.hi - run.lo + 1;
    }
    out.push_back(std::move(in));
    size_t d = nd;
    while (d-- > 0) {
      if (++which[d] < plans[d].runs.size()) break;
      which[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return out;
  }
}

std::vector<Region> PadNode::input_regions(const Region& region) const {
  const size_t nd = ndim();
  Region in{Shape(nd, 0), Shape(nd, 1), Shape(nd, 0)};
  if (region.size() == 0 || nd == 0) return {nd == 0 ? region : in};
  const std::vector<AxisPlan> plans = axis_plans(region);
  for (size_t d = 0; d < nd; ++d) {
    if (plans[d].runs.empty()) return {Region{Shape(nd, 0), Shape(nd, 1), Shape(nd, 0)}};
    int64_t lo = plans[d].runs[0].lo, hi = plans[d].runs[0].hi;
    for (const Run& run : plans[d].runs) lo = std::min(lo, run.lo), hi = std::max(hi, run.hi);
    in.start[d] = lo, in.count[d] = hi - lo + 1;
  }
  return {in};
}

std::vector<Region> PadNode::pull_pieces(const Region& region, size_t, size_t) const {
  if (region.size() == 0 || ndim() == 0) return {};
  std::vector<Region> p = pieces(axis_plans(region));
  if (p.size() <= 1) return {};
  return p;
}

void PadNode::fill_constants(const Region& r, const std::vector<AxisPlan>& plans, char* out) const {
  const size_t nd = ndim(), isz = itemsize(dtype());
  bool any = false;
  for (const AxisPlan& p : plans) any = any || std::count(p.index.begin(), p.index.end(), -1) > 0;
  if (!any) return;
  // The fill value of position j along axis d (j maps to none): its side's.
  auto value = [&](size_t d, int64_t j) {
    const bool after = r.start[d] + j * r.step[d] >= widths_[d].first;
    return fill_.data() + (2 * d + (after ? 1 : 0)) * isz;
  };
  const size_t last = nd - 1;
  const int64_t n = r.count[last];
  std::vector<int64_t> pos(nd - 1, 0);
  for (char* row = out;; row += n * static_cast<int64_t>(isz)) {
    const uint8_t* base = nullptr;  // the value of the last leading axis that maps to none
    for (size_t d = 0; d < last; ++d)
      if (plans[d].index[static_cast<size_t>(pos[d])] < 0) base = value(d, pos[d]);
    for (int64_t j = 0; j < n; ++j) {
      const uint8_t* v = plans[last].index[static_cast<size_t>(j)] < 0 ? value(last, j) : base;
      if (v) std::memcpy(row + j * static_cast<int64_t>(isz), v, isz);
    }
    size_t d = last;
    while (d-- > 0) {
      if (++pos[d] < r.count[d]) break;
      pos[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

void PadNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const size_t nd = ndim(), isz = itemsize(dtype());
  if (nd == 0) {
    inputs()[0]->pull(region, out, ts);
    return;
  }
  const std::vector<AxisPlan> plans = axis_plans(region);
  char* o = static_cast<char*>(out);
  fill_constants(region, plans, o);
  const Shape ost = byte_strides(region.count, isz);
  for (const Region& in : pieces(plans)) {
    // The output positions of this piece along each axis, and where each reads in the box.
    std::vector<std::vector<int64_t>> opos(nd), ipos(nd);
    for (size_t d = 0; d < nd; ++d)
      for (const Run& run : plans[d].runs)
        if (run.lo >= in.start[d] && run.hi < in.start[d] + in.count[d])
          for (int64_t j = run.first; j <= run.last; ++j) {
            const int64_t i = plans[d].index[static_cast<size_t>(j)];
            if (i < 0) continue;
            opos[d].push_back(j);
            ipos[d].push_back(i - in.start[d]);
          }
    bool none = false;  // (each piece's box is a run's own: never, but a gap must not write)
    for (size_t d = 0; d < nd; ++d) none = none || opos[d].empty();
    if (none) continue;
    ScratchScope scope(ts.scratch);
    char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(in.size()) * isz));
    inputs()[0]->pull(in, buf, ts);
    const Shape ist = byte_strides(in.count, isz);
    // Copy, with runs consecutive in both along the last axis as one memcpy.
    const size_t last = nd - 1;
    std::vector<std::pair<size_t, size_t>> runs;
    const auto& ol = opos[last];
    const auto& il = ipos[last];
    for (size_t j = 0; j < ol.size();) {
      size_t e = j + 1;
      while (e < ol.size() && ol[e] == ol[e - 1] + 1 && il[e] == il[e - 1] + 1) ++e;
      runs.emplace_back(j, e - j);
      j = e;
    }
    std::vector<size_t> pos(last, 0);
    for (;;) {
      int64_t oo = 0, io = 0;
      for (size_t d = 0; d < last; ++d) oo += opos[d][pos[d]] * ost[d], io += ipos[d][pos[d]] * ist[d];
      for (auto [j, len] : runs)
        std::memcpy(o + oo + ol[j] * static_cast<int64_t>(isz), buf + io + il[j] * static_cast<int64_t>(isz),
                    len * isz);
      size_t d = last;
      while (d-- > 0) {
        if (++pos[d] < opos[d].size()) break;
        pos[d] = 0;
      }
      if (d == static_cast<size_t>(-1)) break;
    }
  }
}

}  // namespace b2lazy
