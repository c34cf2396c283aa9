// The plan's windows of decompressed blocks (Plan::windows, runtime/block_window.hpp): which
// window size keeps a source's reads near once, by replaying the tasks' pulls in order
// through a least-recently-used window of blocks, as the execution's window behaves.
#pragma once
#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

#include "b2lazy/node.hpp"

namespace b2lazy {

// An LRU window of `capacity` blocks, replayed.
class WindowSim {
 public:
  explicit WindowSim(int64_t capacity) : capacity_(capacity) {}
  // Blocks of `ids` not in the window (decompressed); each then the most recent.
  int64_t touch(const std::vector<int64_t>& ids);

 private:
  int64_t capacity_;
  std::list<int64_t> lru_;
  std::unordered_map<int64_t, std::list<int64_t>::iterator> at_;
};

struct WindowChoice {
  int64_t blocks = 0;  // kept; 0: no window reads near once
  int64_t bytes = 0;   // held at most: its blocks, and one block per worker reading
  int64_t reads = 0;   // bytes decompressed through it
};

// The smallest window (1, 2 or 4 times the blocks one pull touches) through which the
// pulls `regions` of `source`, asked by output chunks `units` and replayed in the order
// of those chunks (`nworkers` consecutive chunks at once, staggered, as workers run them),
// decompress at most 1.25x the distinct blocks they touch; none if the source cannot be
// read through a window or no size does.
WindowChoice choose_window(const Node& source, const std::vector<Region>& regions, const std::vector<int64_t>& units,
                           int nworkers);

}  // namespace b2lazy
