// Executes a Plan (b2lazy/plan.hpp): its stages (nodes computed once, kept where the plan
// says), then a range of its tasks, on the context's threads.
#pragma once
#include <functional>

#include "b2lazy/context.hpp"
#include "b2lazy/node.hpp"
#include "b2lazy/plan.hpp"
#include "b2lazy/stats.hpp"

namespace b2lazy {

class EvalState;
class Sink;

struct Target {
  void* dense = nullptr;   // C-order buffer of the whole result, or
  Sink* writer = nullptr;  // a stored output (b2lazy/driver.hpp)
};

// Stages, then tasks [first_task, last_task) into `target`.
Stats execute_plan(const Plan& plan, const Target& target, int64_t first_task, int64_t last_task, Context& ctx,
                   const EvalOptions& opts);
// The plan's stages alone, kept with the plan (Plan::stage_results) unless already there.
void compute_stages(const Plan& plan, Context& ctx, const EvalOptions& opts);

}  // namespace b2lazy
