// broadcast_to as a lazy node: an output region pulls the input region with broadcast
// axes collapsed to one element, then repeats it.
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

class BroadcastNode : public Node {
 public:
  BroadcastNode(NodePtr input, Shape shape) : Node(input->dtype(), std::move(shape), {input}) {}
  std::string kind() const override { return "broadcast_to"; }
  std::string describe() const override { return "broadcast_to " + shape_str(shape()); }
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
};

}  // namespace b2lazy
