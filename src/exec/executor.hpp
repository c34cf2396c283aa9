// Runs an evaluation: one task per output chunk on the context's threads, after
// computing once the nodes that several output chunks need.
#pragma once
#include <functional>

#include "b2lazy/context.hpp"
#include "b2lazy/node.hpp"
#include "b2lazy/stats.hpp"

namespace b2lazy {

class B2ndWriter;
class EvalState;

struct Target {
  void* dense = nullptr;         // C-order buffer of the whole result, or
  B2ndWriter* writer = nullptr;  // a compressed b2nd output
};

Stats execute(const NodePtr& root, const ChunkGrid& grid, const Target& target, Context& ctx,
              const EvalOptions& opts);

// One pass over the chunks of `grid` within an evaluation already under way (used for
// the main pass and for materialising reused nodes). Small passes run on the calling
// thread, which may then fork inside a node.
void run_pass(const NodePtr& root, const ChunkGrid& grid, const Target& target, EvalState& ev,
              const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace b2lazy
