// reshape as a lazy node: both shapes share the C-order flat index, so an output region
// is a set of flat positions and a flat range is a few N-d boxes of the input.
#pragma once
#include <optional>

#include "b2lazy/node.hpp"

namespace b2lazy {

class ReshapeNode : public Node {
 public:
  ReshapeNode(NodePtr input, Shape shape);
  std::string kind() const override { return "reshape"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  // Output chunks that are flat ranges over whole rows of the input's storage chunks,
  // so each input chunk is read once.
  Shape preferred_chunks() const override { return preferred_; }
  std::optional<Shape> alignment_through_view(const Shape& input) const override;

 private:
  Shape compute_preferred_chunks() const;
  void fill_rec(const Region& region, char* out, ThreadState& ts) const;
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;
  std::optional<Box> rows_around(int64_t lo, int64_t hi) const;
  Shape cstrides_;   // C-order strides of the output shape, in elements
  Shape preferred_;  // looked up once: lookups recurse into the input's
};

// The boxes, in C order, whose concatenation is the flat range [begin, end) of `shape`
// (at most 2 per axis).
std::vector<Box> flat_range_boxes(const Shape& shape, int64_t begin, int64_t end);

}  // namespace b2lazy
