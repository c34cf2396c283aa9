// searchsorted (Array API), lazy: a region of the result pulls that region of the values
// and all of the sorted 1-D array (computed once and kept when several output chunks
// need it, as any operand pulled again), then binary-searches each value.
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

class SearchNode : public Node {
 public:
  // `sorted` 1-D, ascending (NaNs last); `values` of any shape, of sorted's dtype.
  SearchNode(NodePtr sorted, NodePtr values, bool right);
  std::string kind() const override { return "searchsorted"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;

 private:
  bool right_;
};

}  // namespace b2lazy
