// Storage-chunk alignment seen through shape changes: xarray's coarsen reduces a reshape
// of a (trimmed) stored array, (time, lat, lon) -> (time/4, 4, lat/2, 2, lon/2, 2), so a
// reduction's input is no stored source, yet its slabs cut the source's chunks unless
// they follow them (then each chunk is decompressed once, with no window of blocks).
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

struct SourceAlignment {
  const Node* source = nullptr;  // the stored source, or none
  // Per axis of the node asked about: cuts at multiples of this cut no source chunk
  // (the extent: only whole; 1: any cut; 0: none found).
  Shape align;
};

// The alignment of `n`'s axes to the chunks of a stored source reached through
// elementwise nodes of its shape, unit-step slices and reshapes that split or merge axes
// whole; no source when none is reached that way.
SourceAlignment source_alignment(const NodePtr& n);

}  // namespace b2lazy
