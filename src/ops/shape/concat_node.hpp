// concat (and stack, roll) as a lazy node: an output region is split along the axis
// among the inputs it covers; each pulls only its part.
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

class ConcatNode : public Node {
 public:
  // Inputs share dtype and every extent but `axis`'s.
  ConcatNode(std::vector<NodePtr> inputs, size_t axis);
  std::string kind() const override { return "concat"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;

 private:
  struct Part {
    size_t input;
    int64_t i_lo, i_hi;  // the region's positions along the axis that fall in this input
    Region region;       // and the input region they read
  };
  std::vector<Part> parts(const Region& region) const;
  size_t axis_;
  Shape offsets_;  // start of each input along the axis
};

}  // namespace b2lazy
