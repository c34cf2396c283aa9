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
// looked through, to find reuse deeper down; nodes are decided in topological order
// (consumers first), so a node is decided once every request has reached it. Already
// materialised nodes, and subgraphs with nothing left to plan (EvalState::settled), are
// skipped. Each node is visited once per output chunk, whatever the number of paths to
// it. The result is in topological order: materialise it from the back (inputs first).
std::vector<ReusedNode> find_reused(const NodePtr& root, const ChunkGrid& grid, EvalState& ev);

// Does the graph under `n` hold a cacheable node not materialised yet (n included)?
// Settled subgraphs are remembered in `ev`, so asking again costs nothing.
bool needs_planning(const Node& n, EvalState& ev);

}  // namespace b2lazy
