#include "plan/window.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <unordered_map>

#include "core/saturating.hpp"

namespace b2lazy {

namespace {
// Replays of more block reads than this are not tried (planning time; 4 bytes each).
constexpr size_t kMaxReplayedBlocks = size_t(1) << 22;

// The pulls' blocks, numbered densely in the order first touched (an int32 each, in a
// deque that grows without copying: a replay of 4M reads holds 16 MiB, not the 128 MiB
// of ids, times and a sorted copy), grouped by the output chunk that asks for them.
struct ChunkReads {
  std::deque<int32_t> blocks;  // dense block numbers, chunk after chunk
  std::vector<size_t> starts;  // chunk c's reads: blocks[starts[c] .. starts[c + 1])
  int64_t distinct = 0;
  size_t widest = 0;  // the most blocks one pull touches
};

bool gather_reads(const Node& source, const std::vector<Region>& regions, const std::vector<int64_t>& units,
                  ChunkReads& out) {
  std::vector<size_t> order(regions.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return units[a] < units[b]; });
  std::unordered_map<int64_t, int32_t> number;
  std::vector<int64_t> ids;
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || units[order[k]] != units[order[k - 1]]) out.starts.push_back(out.blocks.size());
    ids.clear();
    source.blocks_touched(regions[order[k]], ids);
    if (out.blocks.size() + ids.size() > kMaxReplayedBlocks) return false;
    out.widest = std::max(out.widest, ids.size());
    for (int64_t id : ids) {
      auto [it, fresh] = number.try_emplace(id, static_cast<int32_t>(number.size()));
      out.blocks.push_back(it->second);
    }
  }
  out.starts.push_back(out.blocks.size());
  out.distinct = static_cast<int64_t>(number.size());
  return out.widest > 0;
}

// Blocks decompressed by a least-recently-used window of `capacity` blocks replaying
// the reads as workers make them: `nworkers` consecutive chunks at once, each started
// when the one before it is 1/nworkers done — block k of chunk c is read at time
// c * L / nworkers + k (L: a chunk's blocks on average), ties to the earlier chunk. The
// chunks running at once are merged as the replay goes (no sorted copy of the reads).
int64_t replay_misses(const ChunkReads& r, int64_t capacity, int64_t nworkers) {
  const size_t nchunks = r.starts.size() - 1;
  const double step =
      static_cast<double>(r.blocks.size()) / static_cast<double>(nchunks) / static_cast<double>(nworkers);
  // The window: a doubly linked list over the dense block numbers, most recent first.
  const size_t n = static_cast<size_t>(r.distinct);
  std::vector<int32_t> prev(n, -1), next(n, -1);
  std::vector<char> in(n, 0);
  int32_t head = -1, tail = -1;
  int64_t held = 0, misses = 0;
  auto unlink = [&](int32_t b) {
    (prev[b] >= 0 ? next[prev[b]] : head) = next[b];
    (next[b] >= 0 ? prev[next[b]] : tail) = prev[b];
  };
  auto touch = [&](int32_t b) {
    if (in[b]) {
      if (head == b) return;
      unlink(b);
    } else {
      ++misses, ++held, in[b] = 1;
      if (held > capacity && tail >= 0) {
        const int32_t old = tail;
        unlink(old);
        in[old] = 0, --held;
      }
    }
    prev[b] = -1, next[b] = head;
    if (head >= 0) prev[head] = b;
    head = b;
    if (tail < 0) tail = b;
  };
  // Time unit T holds read k = T - floor(s) of each running chunk (s = c * step, its
  // start), ordered by the fraction of s, then by c: the running chunks are kept in that
  // order, and each reads one block per unit.
  struct Running {
    double frac;
    size_t chunk;
    int64_t first;  // floor(s)
  };
  std::vector<Running> running;
  size_t started = 0;
  for (int64_t t = 0;; ++t) {
    while (started < nchunks && static_cast<int64_t>(std::floor(static_cast<double>(started) * step)) <= t) {
      const double s = static_cast<double>(started) * step;
      const Running r0{s - std::floor(s), started, static_cast<int64_t>(std::floor(s))};
      if (r.starts[started] < r.starts[started + 1])
        running.insert(std::upper_bound(running.begin(), running.end(), r0,
                                        [](const Running& x, const Running& y) {
                                          return x.frac < y.frac || (x.frac == y.frac && x.chunk < y.chunk);
                                        }),
                       r0);
      ++started;
    }
    if (running.empty()) {
      if (started >= nchunks) break;
      t = static_cast<int64_t>(std::floor(static_cast<double>(started) * step)) - 1;  // on to the next start
      continue;
    }
    size_t kept = 0;
    for (const Running& c : running) {
      const size_t at = r.starts[c.chunk] + static_cast<size_t>(t - c.first);
      touch(r.blocks[at]);
      if (at + 1 < r.starts[c.chunk + 1]) running[kept++] = c;
    }
    running.resize(kept);
  }
  return misses;
}
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
  ChunkReads reads;
  if (!gather_reads(source, regions, units, reads)) return {};
  const int64_t nw = std::max(1, nworkers);
  const int64_t widest = static_cast<int64_t>(reads.widest), once = reads.distinct;
  for (int64_t times : {1, 2, 4}) {
    const int64_t cap = widest * times;
    if (cap >= once) break;  // as large as all it reads: keeping it whole is as good
    const int64_t misses = replay_misses(reads, cap, nw);
    // Kept: what the replay needed, and a chunk's blocks more for each other worker (the
    // replay's even pace is not the workers': one that decompresses falls behind one
    // that reads kept blocks, and at the edge of a block row each holds its own row).
    if (misses <= once + once / 4) {
      const int64_t blocks = cap + (nw - 1) * widest;
      return {blocks, sat_mul(blocks + nw, bb), sat_mul(misses, bb)};
    }
  }
  return {};
}

}  // namespace b2lazy
