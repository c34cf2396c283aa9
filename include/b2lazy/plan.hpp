// The plan of an evaluation: built once from the graph and the compute options by named
// passes (src/plan/: layout -> pulls -> reuse -> stages -> tasks), then executed by
// compute() / to_buffer() (all of its tasks, or any range of them) and printed by
// explain(). Nothing re-derives a decision the plan holds.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "b2lazy/context.hpp"
#include "b2lazy/node.hpp"
#include "b2lazy/stats.hpp"

namespace b2lazy {

class Array;
struct StageResults;  // src/runtime/stage_results.hpp

// Where a node computed once keeps its result.
enum class KeptIn : uint8_t {
  Dense,       // decompressed in memory, read in place
  Compressed,  // re-packed into compressed (lz4) chunks in memory, shaped for its consumers
  Spilled,     // compressed (lz4) into a temporary b2nd file (removed when the evaluation ends);
               // a source re-packed so, in tiles shaped for its consumers
};
const char* kept_in_name(KeptIn k);

// What one pass of a plan (a stage's, or the output tasks') holds on the threads running it.
struct PassMemory {
  int64_t per_task = 0;  // the most one task holds at once: its nodes' fill and its output buffers
  int threads = 0;       // workers running its tasks; 0: its one chunk runs on the calling thread
  int64_t forked = 0;    // that one chunk spreads a node's work (slabs, K ranges) over every
                         // worker: what each holds (included in per_task)
};

// A node computed once, before the output tasks; its consumers read it from there.
struct PlanStage {
  NodePtr node;      // the node as it appears in the graph
  NodePtr computed;  // what is evaluated: `node`, or the slice of it to `box`
  Box box;           // the part of `node` kept
  KeptIn where = KeptIn::Dense;
  Shape chunks;       // the chunks it is computed (and, compressed, stored) in
  Shape request;      // the shape of a typical request of its consumers (re-packed copies' tiles)
  int64_t bytes = 0;  // uncompressed bytes of `box`
  // The cost model's figures: what the tasks would pull of it without the stage (bytes
  // decompressed for a source, elements' bytes otherwise) against computing it once.
  int64_t pulled_bytes = 0, once_bytes = 0;
  int64_t asked_bytes = 0;  // a source: bytes of the elements the tasks ask of it
  PassMemory memory;        // the pass computing it (its kept copy: Plan::kept_bytes)
  bool source = false;      // a stored source kept decompressed or re-packed
  // A source re-packed in chunks that cut its storage chunks (1024-wide tiles of row
  // strips, 32-row strips of Zarr's (1024, 1024) chunks): each task pulls a group of its
  // chunks (this many along each axis: a row of them, or those inside one storage chunk)
  // as one region, decompressing each storage chunk once, and cuts the chunks out of it.
  // Empty: chunk by chunk.
  Shape fill_group;
  // Set when the output chunks can pass this stage's carry along instead (Node::carry):
  // an execution of every task, in order, in one process then skips the stage and
  // `carried_by` takes each chunk's carry from the chunk before; an execution of part of
  // the tasks computes it as any stage.
  NodePtr carried_by;
  std::shared_ptr<const struct CarryLinks> links;  // who passes which carry to whom
  // The chunks of its grid (C order) that the passes after it ask for; empty: all. Only
  // these are computed (x^T x's upper triangle spilled in tiles: not the tiles below the
  // diagonal its hull holds); the others are never read.
  std::vector<bool> needed;
};

// The carries of one node passed between output chunks (PlanStage::carried_by): a carry
// is named by the region's cross-section (start, step, count of every axis but the
// carry's) and its position along the carry's axis; `producer` is the output chunk that
// hands it on (the one whose region ends there), always before its only consumer.
struct CarryLinks {
  std::map<Shape, int64_t> producer;  // cross-section + position -> output chunk id
  static Shape key(const Region& r, int axis, int64_t position);
};

// A unit of work for one worker: output chunks [first_chunk, last_chunk) of the grid.
struct PlanTask {
  int64_t first_chunk = 0, last_chunk = 0;
  int64_t projected_bytes = 0;  // memory a worker holds while running it (fill and output buffers)
  int64_t source_bytes = 0;     // bytes it decompresses from storage (estimated)
};

// What the plan writes into.
enum class PlanTarget : uint8_t { Compressed, Dense };

// A source read through a window of its decompressed blocks while the plan executes
// (runtime/block_window.hpp), instead of kept whole: the tasks pull parts of the same blocks
// in turn (row bands of column strips), so the last `blocks` blocks decompressed serve
// them and each block is decompressed about once.
struct PlanWindow {
  NodePtr node;
  int64_t blocks = 0;                        // blocks kept
  int64_t bytes = 0;                         // what the window holds at most (its blocks and one per worker reading)
  int64_t pulled_bytes = 0, read_bytes = 0;  // the tasks' decompression without it, and with it
};

// Sibling reductions folded in lockstep while the plan executes (runtime/sibling_group.hpp):
// reductions over the same axes of same-shaped inputs that read the same stored sources
// through elementwise nodes only; each slab of those sources is decompressed once for all.
struct PlanSiblings {
  std::vector<NodePtr> members;  // the first: the one whose pulls the planner counts
  std::vector<NodePtr> shared;   // the stored sources they share
};

struct Plan {
  NodePtr root;
  PlanTarget target = PlanTarget::Compressed;
  ComputeOptions options;  // max_memory, and for a compressed target the output's options
  // What the nodes size their bands, panels and kept copies from while the plan executes,
  // when less than options.max_memory (0: max_memory itself): a plan made for the budget
  // that projected over it, made again for a fraction of it that fits (build_plan).
  size_t nodes_memory = 0;
  size_t working_memory() const { return nodes_memory ? nodes_memory : options.max_memory; }
  int nworkers = 1;
  Shape chunks, blocks;  // the output layout (blocks: compressed target only)
  int64_t nchunks = 0;
  bool block_major = false;       // output chunks filled in Blosc2's block order
  std::vector<PlanStage> stages;  // in execution order: inputs before their consumers
  std::vector<PlanTask> tasks;
  std::vector<PlanWindow> windows;     // sources read through a window of decompressed blocks
  std::vector<PlanSiblings> siblings;  // reductions folded in lockstep
  PassMemory tasks_memory;             // the output tasks' pass
  // Bytes of the cache of fetched (compressed) store reads (runtime/fetch_cache.hpp): what
  // the prefetch holds ahead of the tasks and repeated reads find; 0 when no source reads
  // from a store through it (Node::store_read_bytes). Counted in projected_peak.
  int64_t fetch_bytes = 0;
  int64_t kept_bytes = 0;  // held by the stages while the tasks run
  // The memory model's projection (src/plan/memory.hpp): the most memory the evaluation
  // holds at once — the stages' kept copies, the calling thread's and the workers' scratch
  // — from the passes above. At most max_memory unless executing the plan refuses (before
  // any work, a ValueError naming the smallest budget that works). `memory_model`: how
  // it adds up, for the printout.
  int64_t projected_peak = 0;
  std::string memory_model;
  std::map<std::string, int64_t> source_bytes;  // estimated bytes decompressed per source
  int64_t kept_read_bytes = 0;                  // estimated bytes decompressed from stages kept compressed or spilled
  std::vector<std::string> passes;              // the passes run, in order, with what each decided
  int64_t plan_visits = 0;                      // node visits of the reuse pass (Stats::plan_visits)
  // The stages once an execute() of part of the tasks computed them, shared by the copies
  // of this plan: later executions read them instead of computing them again (they hold
  // kept_bytes until the last copy of the plan goes). An execution of every task computes
  // its own stages unless these are ready.
  std::shared_ptr<StageResults> stage_results;

  ChunkGrid grid() const { return ChunkGrid(root->shape(), chunks); }
  // The printed plan (explain()), with the measured stats beside the estimates if given.
  std::string to_string(const Stats* measured = nullptr, int nthreads = 0) const;
};

// The plan compute(opts) would run (target Compressed) or to_buffer(opts) would run
// (Dense: output chunks that are contiguous ranges of the result).
Plan make_plan(const Array& a, const ComputeOptions& opts = {}, PlanTarget target = PlanTarget::Compressed,
               Context* ctx = nullptr);
// The output chunks make_plan(a) takes with default options when a rechunk decides them
// (the requested chunks, clamped to a's shape), known without planning: empty when the
// planner chooses them. (Array.chunks of a finely rechunked array without listing its tasks.)
Shape requested_output_chunks(const Array& a);
// Runs the plan's stages, then tasks [first_task, last_task) into `out`, a dense C-order
// buffer of the whole result (chunks of other tasks are left as they are): several calls
// with disjoint task ranges, in any order, fill the result; the stages are computed by
// the first of them and kept with the plan (Stats::stages_reused counts the others'
// reads). progress/cancel from `opts`.
Stats execute(const Plan& plan, void* out, int64_t first_task, int64_t last_task, const EvalOptions& opts = {},
              Context* ctx = nullptr);
// Runs every task of a compressed-target plan into the b2nd array its options name.
Array compute(const Plan& plan, const EvalOptions& opts = {}, Context* ctx = nullptr);

}  // namespace b2lazy
