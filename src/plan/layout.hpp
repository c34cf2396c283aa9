// The layout pass: the output chunks (and, for a compressed result, blocks) of a plan.
#pragma once
#include <utility>

#include "b2lazy/context.hpp"
#include "b2lazy/node.hpp"
#include "b2lazy/plan.hpp"

namespace b2lazy {

// Compressed: the chunks asked for; else those of the stored operand the result is
// aligned with (and its blocks); else the graph's preference; else balanced ones.
// Dense: the graph's preference, else chunks that are contiguous ranges of the result.
// Unless the caller gave chunks (or blocks), build_plan then shrinks them until the
// plan's projected peak fits max_memory (max_memory is a limit).
std::pair<Shape, Shape> output_layout(const NodePtr& node, const ComputeOptions& opts, PlanTarget target, int nthreads);

// `chunks` checked against `shape` (ValueError naming `what` and `noun`); empty stays empty.
Shape checked_chunks(const Shape& shape, const Shape& chunks, const char* what, const char* noun = "chunks");

}  // namespace b2lazy
