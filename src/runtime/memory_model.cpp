#include "runtime/memory_model.hpp"

#include <algorithm>

#include "core/saturating.hpp"

namespace b2lazy {

// The default for nodes that pull each input region into a buffer of their own, all held
// at once: the buffers, plus the most any one pull holds below it.
int64_t Node::fill_bytes(const Region& region, const MemoryModel& m) const {
  if (region.size() == 0) return 0;
  const auto regions = input_regions(region);
  int64_t held = 0, deepest = 0;
  for (size_t i = 0; i < regions.size() && i < inputs().size(); ++i) {
    held = sat_add(held, MemoryModel::region_bytes(*inputs()[i], regions[i]));
    deepest = std::max(deepest, m.pull_bytes(*inputs()[i], regions[i]));
  }
  return sat_add(held, deepest);
}

int64_t MemoryModel::region_bytes(const Node& n, const Region& r) {
  return sat_mul(r.size(), static_cast<int64_t>(itemsize(n.dtype())));
}

int64_t MemoryModel::pull_bytes(const Node& n, const Region& r) const {
  if (r.size() == 0) return 0;
  if (auto k = kept_.find(&n); k != kept_.end()) return k->second;
  auto& seen = memo_[&n];
  for (auto& [region, bytes] : seen)
    if (region == r) return bytes;
  const int64_t b = n.fill_bytes(r, *this);
  memo_[&n].push_back({r, b});
  return b;
}

bool MemoryModel::in_place(const Node& n, const Region& r) const {
  if (auto k = kept_.find(&n); k != kept_.end() && k->second == 0)
    return r.unit_steps() && is_contiguous_range(r.bounds(), n.shape());
  return n.view(r) != nullptr;
}

bool MemoryModel::in_place_rows(const Node& n, const Region& r) const {
  if (auto k = kept_.find(&n); k != kept_.end() && k->second == 0)
    return r.unit_steps() && is_row_strided_range(r.bounds(), n.shape());
  int64_t row_stride = 0;
  return n.view_rows(r, row_stride) != nullptr;
}

}  // namespace b2lazy
