// permute_dims / matrix_transpose / .T as a lazy node: an output region is the input
// region with its axes permuted, pulled densely and transposed into place.
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

class PermuteNode : public Node {
 public:
  // Output axis o is input axis perm[o]; perm is a validated permutation.
  PermuteNode(NodePtr input, std::vector<int> perm);
  std::string kind() const override { return "permute_dims"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override { return {input_region(region)}; }
  Shape preferred_chunks() const override;
  Region input_region(const Region& region) const;
  const std::vector<int>& perm() const { return perm_; }

 private:
  std::vector<int> perm_;
};

}  // namespace b2lazy
