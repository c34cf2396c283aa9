// Questions about the graph under a node that the planner and the nodes both ask:
// which stored source sets the grid, which chunks a node prefers, whether some node
// matches.
#pragma once
#include <functional>

#include "b2lazy/node.hpp"

namespace b2lazy {

// A stored source reachable from `root` through elementwise nodes, with root's shape
// and the largest chunks: evaluating on its grid decompresses each chunk of it once.
const Node* aligned_storage_source(const NodePtr& root);
// What a stored source decompresses at least: its blocks when it reads ranges of its
// chunks (b2nd), else whole chunks (Zarr). Empty: not stored.
Shape read_unit(const Node& n);
// The chunks asked for with rechunk (requested_chunks_of), else the preferred chunks
// (Node::preferred_chunks) of the largest-chunked node with root's shape reachable through
// elementwise nodes; empty if none.
Shape preferred_chunks_of(const NodePtr& root);
// The chunks the user asked for (Node::chunks_requested: rechunk) of the first such node
// with root's shape reachable through elementwise nodes; empty if none.
Shape requested_chunks_of(const NodePtr& root);
// The same among row-sharing nodes only (products: their tiles); empty if none.
Shape product_chunks_of(const NodePtr& root);
// Does some node of the graph under `root` (each visited once) satisfy `pred`?
bool any_node(const Node& root, const std::function<bool(const Node&)>& pred);
// Does some node under `root` keep state along rows of output chunks (Node::shares_rows:
// products), so that a row of chunks is one task?
bool has_row_sharing(const Node& root);

}  // namespace b2lazy
