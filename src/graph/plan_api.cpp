// The public plan API (b2lazy/plan.hpp): building a plan and executing it, whole or by
// ranges of tasks.
#include <algorithm>

#include "b2lazy/array.hpp"
#include "b2lazy/driver.hpp"
#include "b2lazy/error.hpp"
#include "b2lazy/plan.hpp"
#include "exec/executor.hpp"
#include "graph/run_compute.hpp"
#include "plan/chunking.hpp"
#include "plan/memory.hpp"
#include "plan/tasks.hpp"
#include "runtime/own_context.hpp"
#include "runtime/stage_results.hpp"

namespace b2lazy {

Array with_stats(Array a, Stats s);

Plan make_plan(const Array& a, const ComputeOptions& opts, PlanTarget target, Context* ctx) {
  auto own = own_context(ctx);
  return build_plan(a.node(), opts, target, ctx->nthreads());
}

Shape requested_output_chunks(const Array& a) {
  const NodePtr& root = a.node();
  Shape chunks = requested_chunks_of(root);  // as build_plan takes them (then chosen: kept as they are)
  for (size_t d = 0; d < chunks.size(); ++d)
    chunks[d] = std::clamp<int64_t>(chunks[d], 1, std::max<int64_t>(1, root->shape()[d]));
  return chunks;
}

Stats execute(const Plan& plan, void* out, int64_t first_task, int64_t last_task, const EvalOptions& opts,
              Context* ctx) {
  auto own = own_context(ctx);
  check_plan_budget(plan);  // before any work
  Target t;
  t.dense = out;
  Stats stats = execute_plan(plan, t, first_task, last_task, *ctx, opts);
  stats.projected_peak_bytes = plan.projected_peak;
  return stats;
}

Array run_compute(const std::shared_ptr<const Plan>& plan, const EvalOptions& opts, Context& ctx) {
  if (plan->target != PlanTarget::Compressed)
    throw ValueError("compute: the plan writes a dense buffer (made for to_buffer); make it with compute's options");
  check_plan_budget(*plan);  // before any work (the sink creates the output)
  // The output's driver follows the URL (b2lazy/driver.hpp); in memory: b2nd.
  std::unique_ptr<Sink> sink = create_sink(SinkSpec{plan->root->shape(), plan->root->dtype(), plan->chunks,
                                                    plan->blocks, plan->options.urlpath, &plan->options});
  Target t;
  t.writer = sink.get();
  Stats stats = execute_plan(*plan, t, 0, static_cast<int64_t>(plan->tasks.size()), ctx, opts);
  stats.projected_peak_bytes = plan->projected_peak;
  Array r = with_stats(Array(sink->finish()), std::move(stats));
  r.plan_ = plan;
  if (plan->stage_results && plan->stage_results->ready) {  // the result shows the plan, not its kept stages
    auto shown = std::make_shared<Plan>(*plan);
    shown->stage_results.reset();
    r.plan_ = std::move(shown);
  }
  return r;
}

Array compute(const Plan& plan, const EvalOptions& opts, Context* ctx) {
  auto own = own_context(ctx);
  return run_compute(std::make_shared<const Plan>(plan), opts, *ctx);
}

}  // namespace b2lazy
