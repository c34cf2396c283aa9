// reshape(x, -1) as a lazy node: a flat range maps to a few N-d boxes of the input.
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

class FlattenNode : public Node {
 public:
  explicit FlattenNode(NodePtr input);
  std::string kind() const override { return "flatten"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  // Whole rows of the input's storage chunks, so each input chunk is read once.
  Shape preferred_chunks() const override;
};

// The boxes, in C order, whose concatenation is the flat range [begin, end) of `shape`
// (at most 2 per axis).
std::vector<Box> flat_range_boxes(const Shape& shape, int64_t begin, int64_t end);

}  // namespace b2lazy
