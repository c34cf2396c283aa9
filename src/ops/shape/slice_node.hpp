// Basic indexing (integers, strided slices, new axes) as a lazy node: an output region
// maps to a strided input region, so only what the index covers is pulled.
#pragma once
#include "b2lazy/node.hpp"
#include "b2lazy/vocabulary.hpp"

namespace b2lazy {

class SliceNode : public Node {
 public:
  // Per input axis: `fixed` (an integer index, axis dropped) or start/step.
  // `out_to_in[o]` is the input axis of output axis o, or -1 for a new axis.
  struct Axis {
    bool fixed;
    int64_t start, step, count;
  };
  SliceNode(NodePtr input, std::vector<Axis> axes, std::vector<int> out_to_in, Shape out_shape);
  std::string kind() const override { return "slice"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  const void* view(const Region& region) const override;
  std::vector<Region> input_regions(const Region& region) const override { return {input_region(region)}; }
  Region input_region(const Region& region) const;
  bool is_view() const override { return true; }
  std::optional<Shape> alignment_through_view(const Shape& input) const override;
  const std::vector<Axis>& axes() const { return axes_; }
  const std::vector<int>& out_to_in() const { return out_to_in_; }

 private:
  std::vector<Axis> axes_;
  std::vector<int> out_to_in_;
};

// A basic index (b2lazy/array.hpp's Index: integers, slices, ..., None) normalised
// against `shape` as NumPy does (IndexError naming the axis and value): the SliceNode
// that selects it, and whether it selects the whole array unchanged.
struct BasicKey {
  std::vector<SliceNode::Axis> axes;
  std::vector<int> out_to_in;
  Shape out_shape;
  bool identity = true;
};
BasicKey normalize_basic_key(const Shape& shape, const std::vector<Index>& index);

}  // namespace b2lazy
