// eye as a lazy constructor: ones where column - row == k, zeros elsewhere, computed for
// any requested region; never materialised.
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

class EyeNode : public Node {
 public:
  EyeNode(DType dtype, int64_t rows, int64_t cols, int64_t k);
  std::string kind() const override { return "eye"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;

 private:
  int64_t k_;
};

}  // namespace b2lazy
