// The tasks pass: output chunks grouped into tasks, with the memory each projects and
// the bytes it decompresses; the stages' projections; the plan's projected peak.
#pragma once
#include <string>
#include <unordered_set>

#include "b2lazy/plan.hpp"

namespace b2lazy {

using NodeSet = std::unordered_set<const Node*>;

// Output chunks per task for `root` on `grid`: a whole row (all but the last grid axis
// fixed) when a node shares state along rows (Node::shares_rows) and the rows keep every
// worker busy, else 1. Used for the output tasks and for each stage's pass.
int64_t chunks_per_task(const Node& root, const ChunkGrid& grid, int nworkers);

// A stage's chunks filled in groups (PlanStage::fill_group): `group` chunks along each axis
// of `grid` (clipped at its end), the groups in C order. Each is pulled as one box.
class ChunkGroups {
 public:
  ChunkGroups(const ChunkGrid& grid, const Shape& group);
  int64_t count() const { return outer_.nchunks(); }
  Box box(int64_t k) const;                      // the group's elements
  std::vector<int64_t> chunks(int64_t k) const;  // its chunks' ids in `grid`, C order

 private:
  const ChunkGrid& grid_;
  ChunkGrid outer_;  // the groups as chunks of the grid of chunks
};

// Fills p.tasks, the stages' and tasks' projections, p.kept_bytes, p.source_bytes and
// p.projected_peak (p.stages, p.chunks and p.nchunks are set). Run again after a change
// to the stages.
void plan_tasks(Plan& p);
// The pass's line for Plan::passes.
std::string tasks_pass_line(const Plan& p);

// make_plan's passes on a graph. `later`: nodes later evaluations of the same compute_all
// reach first (graph/compute_all.cpp); a computed one this plan pulls becomes a stage over
// the part it computes, which those evaluations then read instead of computing it again.
Plan build_plan(const NodePtr& root, const ComputeOptions& opts, PlanTarget target, int nworkers,
                const NodeSet* later = nullptr);

}  // namespace b2lazy
