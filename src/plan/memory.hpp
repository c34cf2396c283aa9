// The memory model of an evaluation (issue #12: max_memory is a limit, not a hint).
//
// Every node reports what fill(region) holds beyond its output, its kept bands included
// (Node::fill_bytes); project_memory() sums the projected peak of an evaluation: per
// worker the output chunk and the writer's buffers plus the largest chunk's fill, and
// once the nodes computed once. The Plan's layout pass shrinks output chunks to fit
// (fit_chunks), its tasks pass reads the same fill_bytes for each task's projection, and
// executing a plan checks the budget first (check_budget), refusing with the smallest
// budget that would work when even the smallest chunks do not fit.
#pragma once
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "b2lazy/node.hpp"
#include "b2lazy/plan.hpp"
#include "core/saturating.hpp"

namespace b2lazy {

class MemoryModel {
 public:
  MemoryModel(size_t max_memory, int nworkers, bool single_chunk)
      : max_memory_(max_memory), nworkers_(std::max(1, nworkers)), single_chunk_(single_chunk) {}
  size_t max_memory() const { return max_memory_; }
  int nworkers() const { return nworkers_; }
  // Workers a node's own parallel work (reduction slabs, contraction K ranges) is spread
  // over: all of them when the pass has a single output chunk, else its own worker.
  int forks() const { return single_chunk_ ? nworkers_ : 1; }

  // Nodes computed once: a pull of them reads the kept copy.
  void set_cached(const Node* n, bool dense) { cached_[n] = dense; }

  // Bytes held below a pull of `n` at `r`, beyond the destination buffer (memoised per
  // node and region: graphs are DAGs with exponentially many paths).
  int64_t pull_bytes(const Node& n, const Region& r) const;
  // Bytes of `r` of `n`'s values.
  static int64_t region_bytes(const Node& n, const Region& r);

 private:
  size_t max_memory_;
  int nworkers_;
  bool single_chunk_;
  std::unordered_map<const Node*, bool> cached_;
  mutable std::unordered_map<const Node*, std::vector<std::pair<Region, int64_t>>> memo_;
};

struct MemoryProjection {
  int nworkers = 1;
  int64_t output_buffers = 0;  // per worker: the output chunk and the writer's buffers
  int64_t fill = 0;            // per worker: the largest sampled chunk's Node::fill_bytes (bands included)
  int64_t computed_once = 0;   // nodes computed once, as kept (dense, or compressed)
  // The most the passes computing them hold beside that: on the calling thread (a pass
  // of one chunk; its arena stays allocated through the main pass), or on the workers.
  int64_t materialize_main = 0, materialize_workers = 0;
  int64_t main_pass() const { return sat_mul(nworkers, sat_add(output_buffers, fill)); }
  int64_t peak() const { return sat_add(sat_add(computed_once, materialize_main), std::max(main_pass(), materialize_workers)); }
  std::string describe() const;  // one line for explain()
};

// The projected peak of evaluating `root` on `grid` within `max_memory` on `nthreads`
// workers (nthreads), into a compressed b2nd output (`to_writer`, with `blocks`) or a dense buffer.
MemoryProjection project_memory(const NodePtr& root, const ChunkGrid& grid, bool to_writer, const Shape& blocks,
                                size_t max_memory, int nthreads);

// Output chunks no larger than `chunks` (leading axes halved, as shrink_chunks) whose
// projection fits max_memory; the smallest tried (down to 64 KiB) when none does.
Shape fit_chunks(const NodePtr& root, Shape chunks, bool to_writer, const Shape& blocks, size_t max_memory,
                 int nthreads);

// The blocks of chunks fit_chunks() made smaller: whole trailing axes (C order, so the
// writer compresses a chunk without reordering it), about 256 KiB.
Shape fitted_blocks(const Shape& chunks, size_t itemsize);

// Throws ValueError before any work when `p` does not fit max_memory, naming the
// smallest budget that would work (found by projecting again at larger budgets).
void check_budget(const MemoryProjection& p, const NodePtr& root, const ChunkGrid& grid, bool to_writer,
                  const Shape& blocks, size_t max_memory, int nthreads);

// check_budget() for a plan about to execute: nothing when its memory_peak fits.
void check_plan_budget(const Plan& plan);

}  // namespace b2lazy
