// Array::explain(): the plan of an evaluation on a given output chunk grid, with
// estimates, and the measured stats when given.
#pragma once
#include <string>

#include "b2lazy/context.hpp"
#include "b2lazy/node.hpp"
#include "b2lazy/stats.hpp"

namespace b2lazy {

std::string explain_plan(const NodePtr& root, const ChunkGrid& grid, size_t max_memory, Context& ctx,
                         const Stats* measured);

}  // namespace b2lazy
