// compute() of a plan: the output written by its driver's Sink, the result keeps its plan.
#pragma once
#include <memory>

#include "b2lazy/array.hpp"

namespace b2lazy {

Array run_compute(const std::shared_ptr<const Plan>& plan, const EvalOptions& opts, Context& ctx);

}  // namespace b2lazy
