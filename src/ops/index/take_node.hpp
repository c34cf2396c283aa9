// take(x, indices, axis) as a lazy node: an integer index array along one axis.
// An output region selects index cells; their values are grouped by the input's storage
// chunks along that axis, and each touched group is pulled once (only the span between
// its smallest and largest index), so untouched chunks are never read or computed.
#pragma once
#include <memory>
#include <vector>

#include "b2lazy/node.hpp"

namespace b2lazy {

class TakeNode : public Node {
 public:
  // `indices` (C order, shape `index_shape`) are already normalised to [0, len(axis)).
  TakeNode(NodePtr input, size_t axis, std::shared_ptr<const std::vector<int64_t>> indices, Shape index_shape);
  std::string kind() const override { return "take"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  // The span of the input between the smallest and largest index the region selects.
  std::vector<Region> input_regions(const Region& region) const override;

 private:
  // Index values the region selects, in the region's C order over the index axes.
  std::vector<int64_t> selected(const Region& region) const;
  size_t axis_;
  std::shared_ptr<const std::vector<int64_t>> indices_;
  Shape index_shape_;
  int64_t align_ = 0;  // input's storage chunk length along the axis (0: none)
};

}  // namespace b2lazy
