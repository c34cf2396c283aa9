// The tasks pass: output chunks grouped into tasks, with the memory each projects and
// the bytes it decompresses; the stages' projections; the plan's projected peak.
#pragma once
#include <string>

#include "b2lazy/plan.hpp"

namespace b2lazy {

// Output chunks per task for `root` on `grid`: a whole row (all but the last grid axis
// fixed) when a node shares state along rows (Node::shares_rows) and the rows keep every
// worker busy, else 1. Used for the output tasks and for each stage's pass.
int64_t chunks_per_task(const Node& root, const ChunkGrid& grid, int nworkers);

// The chunks of `grid`'s row `row` (all but the last grid axis fixed) as one box: what a
// stage filled by rows (PlanStage::filled_by_rows) pulls per task.
Box row_of_chunks(const ChunkGrid& grid, int64_t row);

// Fills p.tasks, the stages' and tasks' projections, p.kept_bytes, p.source_bytes and
// p.projected_peak (p.stages, p.chunks and p.nchunks are set). Run again after a change
// to the stages.
void plan_tasks(Plan& p);
// The pass's line for Plan::passes.
std::string tasks_pass_line(const Plan& p);

// make_plan's passes on a graph.
Plan build_plan(const NodePtr& root, const ComputeOptions& opts, PlanTarget target, int nworkers);

}  // namespace b2lazy
