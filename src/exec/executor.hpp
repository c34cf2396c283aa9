// Executes a Plan (b2lazy/plan.hpp): its stages (nodes computed once, kept where the plan
// says), then a range of its tasks, on the context's threads.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "b2lazy/context.hpp"
#include "b2lazy/node.hpp"
#include "b2lazy/plan.hpp"
#include "b2lazy/stats.hpp"

namespace b2lazy {

class B2ndWriter;
class EvalState;
class Sink;

struct Target {
  void* dense = nullptr;   // C-order buffer of the whole result, or
  Sink* writer = nullptr;  // a stored output (b2lazy/driver.hpp)
};

// Stages, then tasks [first_task, last_task) into `target`.
Stats execute_plan(const Plan& plan, const Target& target, int64_t first_task, int64_t last_task, Context& ctx,
                   const EvalOptions& opts);
// A fresh path for a temporary b2nd file in TMPDIR, `.b2lazy-<what>-<pid>-<n>.b2nd`:
// opened, then removed at once (its reads go through the descriptor opened with it).
std::string temp_b2nd_path(const std::string& what);
// The writer of a stage kept compressed: lz4, in blocks that keep its chunks' C order
// where they allow it (consumer-shaped tiles are read by ranges); into a b2nd file at
// `urlpath` when spilled, else in memory.
std::unique_ptr<B2ndWriter> stage_writer(const PlanStage& s, const std::string& urlpath);
// Group `k` of a stage's chunks filled in groups (PlanStage::fill_group): `groups` of
// `grid`, pulled from `root` as one region; each of its chunks cut out and handed on.
class ChunkGroups;
void pull_group(const Node& root, const ChunkGroups& groups, int64_t k, const ChunkGrid& grid, ThreadState& ts,
                const std::function<void(int64_t id, const void* values)>& chunk);

}  // namespace b2lazy
