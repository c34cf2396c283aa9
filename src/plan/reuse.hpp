// Finding the nodes several output chunks need: they are computed once per evaluation.
#pragma once
#include <vector>

#include "b2lazy/node.hpp"

namespace b2lazy {

class EvalState;

struct ReusedNode {
  NodePtr node;
  Box box;  // the part of it the output chunks need
};

// Propagates each output chunk's region down the graph (Node::input_regions) to the
// first cacheable nodes on each path. A cacheable node is reused when the regions asked
// of it overlap (more elements asked than its bounding box holds). Nodes not reused are
// looked through, to find reuse deeper down. Already materialised nodes are skipped.
std::vector<ReusedNode> find_reused(const NodePtr& root, const ChunkGrid& grid, const EvalState& ev);

}  // namespace b2lazy
