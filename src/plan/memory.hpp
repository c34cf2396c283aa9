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
#include "runtime/memory_model.hpp"

namespace b2lazy {

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
  int64_t kept = 0;        // the stages' kept copies, and the windows of blocks
  int64_t windows = 0;     // of which the windows of decompressed blocks (Plan::windows)
  int64_t calling = 0;     // the calling thread: the largest pass of one chunk
  int workers = 0;         // workers that hold an arena
  int64_t per_worker = 0;  // the most one task of a pass on the workers holds
  int64_t fetched = 0;     // the cache of fetched store reads (Plan::fetch_bytes)
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
