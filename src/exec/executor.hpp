// Runs an evaluation: one task per output chunk on the context's threads.
#pragma once
#include <functional>

#include "b2lazy/context.hpp"
#include "b2lazy/node.hpp"
#include "b2lazy/stats.hpp"

namespace b2lazy {

class B2ndWriter;

struct Target {
  void* dense = nullptr;         // C-order buffer of the whole result, or
  B2ndWriter* writer = nullptr;  // a compressed b2nd output
};

Stats execute(const NodePtr& root, const ChunkGrid& grid, const Target& target, Context& ctx,
              const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace b2lazy
