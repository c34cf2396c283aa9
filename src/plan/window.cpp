#include "plan/window.hpp"

#include <algorithm>
#include <unordered_set>

#include "core/saturating.hpp"

namespace b2lazy {

namespace {
// Replays of more block reads than this are not tried (planning time).
constexpr size_t kMaxReplayedBlocks = size_t(1) << 22;
}  // namespace

int64_t WindowSim::touch(const std::vector<int64_t>& ids) {
  int64_t misses = 0;
  for (int64_t id : ids) {
    if (auto it = at_.find(id); it != at_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      continue;
    }
    ++misses;
    lru_.push_front(id);
    at_[id] = lru_.begin();
    while (static_cast<int64_t>(lru_.size()) > capacity_ && lru_.size() > 1) {
      at_.erase(lru_.back());
      lru_.pop_back();
    }
  }
  return misses;
}

WindowChoice choose_window(const Node& source, const std::vector<Region>& regions, const std::vector<int64_t>& units,
                           int nworkers) {
  const int64_t bb = source.window_block_bytes();
  if (bb <= 0 || regions.empty() || units.size() != regions.size()) return {};
  // Each output chunk's blocks, in the order its pulls were asked (a node looked through
  // asks after all chunks were walked: its pulls are put back with their chunk).
  std::vector<size_t> order(regions.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return units[a] < units[b]; });
  std::vector<std::vector<int64_t>> chunks;
  size_t total = 0, widest = 0;
  std::unordered_set<int64_t> distinct;
  std::vector<int64_t> ids;
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || units[order[k]] != units[order[k - 1]]) chunks.emplace_back();
    ids.clear();
    source.blocks_touched(regions[order[k]], ids);
    total += ids.size();
    widest = std::max(widest, ids.size());
    if (total > kMaxReplayedBlocks) return {};
    distinct.insert(ids.begin(), ids.end());
    chunks.back().insert(chunks.back().end(), ids.begin(), ids.end());
  }
  if (widest == 0) return {};
  // The workers run consecutive chunks at once, each started when the one before it is
  // 1/nworkers done: block k of chunk c is read at time c * L / nworkers + k (L: a chunk's
  // blocks on average), and the replay takes them in that order.
  const int64_t nw = std::max(1, nworkers);
  const double step = static_cast<double>(total) / static_cast<double>(chunks.size()) / static_cast<double>(nw);
  std::vector<std::pair<double, int64_t>> events;
  events.reserve(total);
  for (size_t c = 0; c < chunks.size(); ++c)
    for (size_t k = 0; k < chunks[c].size(); ++k)
      events.push_back({static_cast<double>(c) * step + static_cast<double>(k), chunks[c][k]});
  std::stable_sort(events.begin(), events.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<int64_t> replay;
  replay.reserve(total);
  for (const auto& e : events) replay.push_back(e.second);
  const int64_t once = static_cast<int64_t>(distinct.size());
  for (int64_t times : {1, 2, 4}) {
    const int64_t cap = static_cast<int64_t>(widest) * times;
    if (cap >= once) break;  // as large as all it reads: keeping it whole is as good
    WindowSim sim(cap);
    const int64_t misses = sim.touch(replay);
    // Kept: what the replay needed, and a chunk's blocks more for each other worker (the
    // replay's even pace is not the workers': one that decompresses falls behind one
    // that reads kept blocks, and at the edge of a block row each holds its own row).
    if (misses <= once + once / 4) {
      const int64_t blocks = cap + (nw - 1) * static_cast<int64_t>(widest);
      return {blocks, sat_mul(blocks + nw, bb), sat_mul(misses, bb)};
    }
  }
  return {};
}

}  // namespace b2lazy
