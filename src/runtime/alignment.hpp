// Storage-chunk alignment seen through the graph: along which multiples a node's axes can
// be cut so that each chunk of a stored source below is decompressed once. Nodes answer for
// themselves (Node::alignment_along, Node::alignment_through_view); these walk the graph.
#pragma once
#include <map>
#include <utility>

#include "b2lazy/node.hpp"

namespace b2lazy {

// Asked by Node::alignment_along for its inputs: memoised per (node, axis), so a shared
// subexpression is looked at once, not once per path.
class AlignmentQuery {
 public:
  int64_t of(const Node& n, size_t axis) const;

 private:
  mutable std::map<std::pair<const Node*, size_t>, int64_t> memo_;
};

// Storage-chunk length of `node` along `axis` as seen through elementwise, reduction,
// permutation and contraction nodes (0 when none is known).
int64_t storage_alignment(const Node& node, size_t axis);

// Storage-chunk alignment seen through shape changes: xarray's coarsen reduces a reshape
// of a (trimmed) stored array, (time, lat, lon) -> (time/4, 4, lat/2, 2, lon/2, 2), so a
// reduction's input is no stored source, yet its slabs cut the source's chunks unless
// they follow them (then each chunk is decompressed once, with no window of blocks).
struct SourceAlignment {
  const Node* source = nullptr;  // the stored source, or none
  // Per axis of the node asked about: cuts at multiples of this cut no source chunk
  // (the extent: only whole; 1: any cut; 0: none found).
  Shape align;
};

// The alignment of `n`'s axes to the chunks of a stored source reached through
// elementwise nodes of its shape and views (Node::alignment_through_view: unit-step
// slices, reshapes that split or merge axes whole); no source when none is reached that way.
SourceAlignment source_alignment(const NodePtr& n);

}  // namespace b2lazy
