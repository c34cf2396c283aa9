// What a node's fill holds at its peak (Node::fill_bytes), asked of its inputs through
// MemoryModel::pull_bytes, which knows the stages the plan computes once and where it
// keeps them. The planner (plan/memory.hpp) sums these figures into the plan's projected
// peak; nodes only answer for themselves.
#pragma once
#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "b2lazy/node.hpp"
#include "core/saturating.hpp"
#include "runtime/scratch.hpp"

namespace b2lazy {

class MemoryModel {
 public:
  MemoryModel(size_t max_memory, int nworkers, bool single_chunk)
      : max_memory_(max_memory), nworkers_(std::max(1, nworkers)), single_chunk_(single_chunk) {}
  size_t max_memory() const { return max_memory_; }
  int nworkers() const { return nworkers_; }
  // Workers a node's own parallel work (reduction slabs, contraction K ranges) may be
  // spread over: all of them when the pass has a single output chunk (it runs on the
  // calling thread, which may fork), else its own worker.
  int forks() const { return single_chunk_ ? nworkers_ : 1; }
  // The bytes of such work holding `per_fork` on each thread running it: on every worker
  // when forked (recorded: what a forked worker holds), else on the node's own thread.
  int64_t spread(int64_t per_fork) const {
    if (forks() <= 1) return per_fork;
    forked_ = std::max(forked_, per_fork);
    return sat_mul(per_fork, forks());
  }
  // The most a worker holds for work forked by the pass's one chunk (0: none forked).
  int64_t forked() const { return forked_; }

  // A stage computed before this pass: a pull of it copies from a dense copy (nothing
  // held), or decompresses the chunks it touches from a compressed or spilled one.
  void set_kept(const Node* n, bool dense, int64_t chunk_bytes) { kept_[n] = dense ? 0 : chunk_bytes; }

  // Is `r` of `n` read in place (Node::pull_view): a dense stage or a dense source holds
  // it as one C-order range?
  bool in_place(const Node& n, const Region& r) const;
  // Likewise for Node::pull_view_rows (its rows at one stride).
  bool in_place_rows(const Node& n, const Region& r) const;
  // Bytes held below a pull of `n` at `r`, beyond the destination buffer (memoised per
  // node and region: graphs are DAGs with exponentially many paths).
  int64_t pull_bytes(const Node& n, const Region& r) const;
  // Bytes of `r` of `n`'s values (saturated).
  static int64_t region_bytes(const Node& n, const Region& r);

 private:
  size_t max_memory_;
  int nworkers_;
  bool single_chunk_;
  mutable int64_t forked_ = 0;
  std::unordered_map<const Node*, int64_t> kept_;
  mutable std::unordered_map<const Node*, std::vector<std::pair<Region, int64_t>>> memo_;
};

// Scratch arenas grow in blocks of at least this: a thread that holds anything holds this much.
constexpr int64_t kArenaBlockBytes = static_cast<int64_t>(Scratch::kMinBlockBytes);

}  // namespace b2lazy
