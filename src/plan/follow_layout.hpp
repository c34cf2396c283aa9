// Output layouts that follow the stored sources' chunked axes: a reduction's output split
// along an axis its sources' chunks cover whole (lon of a time-chunked field) makes every
// output chunk pull every source chunk, so the plan keeps the whole source or decompresses
// it once per output chunk; split along the axis that follows the sources' chunked one
// (time through a coarsening reshape), or not split at all when the output is small, each
// source chunk is read by one output chunk.
#pragma once
#include <vector>

#include "b2lazy/node.hpp"

namespace b2lazy {

// Candidate output chunk shapes of `root` of about `target_items` elements: the whole
// output when it holds at most `whole_items`, and for each axis a split along it alone,
// its extent lowered (by at most half) to one whose boundaries cut no source chunk.
std::vector<Shape> follow_source_layouts(const NodePtr& root, int64_t target_items, int64_t whole_items);

// Contiguous output chunks cut along one axis into a few ranges, the last less than half
// the others (1440 + 20 rows of 1460 over 2 workers: one task did nearly all the work,
// alone on a worker): as many ranges, balanced, of an extent whose boundaries cut no
// source chunk (the first such within 64 of the balanced one); else `chunks` unchanged.
Shape balanced_ranges(const NodePtr& root, Shape chunks, int nworkers);

}  // namespace b2lazy
