// The memory model of a plan (issue #12: max_memory is a limit, not a hint).
//
// Every node reports what fill(region) holds at its peak beyond its output
// (Node::fill_bytes), asking its inputs through MemoryModel::pull_bytes, which knows the
// stages the plan computes once and where it keeps them. The tasks pass (plan/tasks.cpp)
// asks it for the chunks of every pass of the plan — each stage's, then the output
// tasks' — and adds each chunk's output buffers (output_buffer_bytes); project_plan()
// reads those figures and the stages' kept copies from the plan into its one projection
// (Plan::projected_peak): printed by explain(), used by the layout pass to shrink output
// chunks until it fits, and checked by check_plan_budget() before any work.
#pragma once
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "b2lazy/node.hpp"
#include "b2lazy/plan.hpp"
#include "core/saturating.hpp"
#include "exec/scratch.hpp"

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

// What a chunk of a pass holds for its output besides the fill: into a writer (`blocks`
// given) the C-order chunk, its block-major copy (unless the blocks keep the chunk's C
// order) and the compressed chunk; into a dense result of `shape`, a gather buffer unless
// the chunk is a contiguous range of it.
int64_t output_buffer_bytes(const Shape& shape, const Shape& chunks, const Shape& blocks, size_t itemsize,
                            bool to_writer);

// What a stage's kept copy holds in memory while later passes run: a dense or compressed
// copy its uncompressed bytes (the codec may gain nothing), a spilled one nothing.
int64_t kept_in_memory(const PlanStage& s);

// The plan's projected peak, from its passes and kept stages. Scratch arenas and kept
// bands stay allocated until the evaluation ends, and the stages stay kept: the peak is
// every stage's kept copy, plus the calling thread's arena (a pass of one chunk runs
// there, less what it forks to the workers), plus each worker's arena (the most one task
// of any pass, or one forked share, holds). Arenas hold a block at least.
struct MemoryProjection {
  int64_t kept = 0;          // the stages' kept copies, and the windows of blocks
  int64_t windows = 0;       // of which the windows of decompressed blocks (Plan::windows)
  int64_t calling = 0;       // the calling thread: the largest pass of one chunk
  int workers = 0;           // workers that hold an arena
  int64_t per_worker = 0;    // the most one task of a pass on the workers holds
  int64_t fetched = 0;       // the cache of fetched store reads (Plan::fetch_bytes)
  int64_t peak() const { return sat_add(sat_add(sat_add(kept, calling), fetched), sat_mul(workers, per_worker)); }
  std::string describe() const;  // one line for explain()
};
MemoryProjection project_plan(const Plan& p);
// Plan::fetch_bytes: when a source reads from a store through the cache
// (Node::store_read_bytes), an eighth of max_memory, at most 256 MiB (room for the reads
// of the tasks ahead; at least one read's bytes fit, or nothing is fetched ahead); else 0.
// When two passes read a source (a stage and the output pass) and its stored bytes fit in
// half of max_memory beside the rest of the plan: those bytes (fetched once, kept).
int64_t fetch_cache_bytes(const Plan& p);

// The blocks of output chunks the layout pass made smaller: whole trailing axes (C
// order, so the writer compresses a chunk without reordering it), about 256 KiB.
Shape fitted_blocks(const Shape& chunks, size_t itemsize);

// Throws ValueError before any work when the plan's projected peak is over max_memory,
// naming the smallest budget whose plan fits (found by planning again at larger budgets).
void check_plan_budget(const Plan& plan);

}  // namespace b2lazy
