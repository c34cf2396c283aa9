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
  bool is_view() const override { return true; }
  int64_t alignment_along(size_t axis, const AlignmentQuery& q) const override;

 private:
  std::vector<int> perm_;
};

// Is `n` a matrix transpose (a permutation swapping the last two of 2 or more axes, the
// rest in place)? A product reads such an operand as stored and multiplies it transposed.
bool is_matrix_transpose(const Node& n);

}  // namespace b2lazy
