// tril / triu as a lazy node: the input's region with the elements outside the triangle
// (of the last two axes) set to zero. A region wholly outside the triangle is zeros
// without pulling the input; one wholly inside is the input's region as is.
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

class TriangleNode : public Node {
 public:
  // lower: keep column - row <= k (tril); else keep column - row >= k (triu).
  TriangleNode(NodePtr input, int64_t k, bool lower);
  std::string kind() const override { return lower_ ? "tril" : "triu"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  // The input's: output chunks on its grid make whole chunks of zeros that read nothing.
  Shape preferred_chunks() const override { return preferred_; }

 private:
  enum class Cover { None, Some, All };
  Cover cover(const Region& region) const;  // how much of the region the triangle keeps
  bool keep(int64_t row, int64_t col) const;
  int64_t k_;
  bool lower_;
  Shape preferred_;  // looked up once: lookups recurse into the input's
};

}  // namespace b2lazy
