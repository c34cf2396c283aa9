// The diagonal of the last two axes (Array API linalg.diagonal) as a lazy node: the
// diagonal is cut into pieces that stay within one storage chunk of the input along both
// axes (64 elements without storage), and each piece pulls only the small square box
// around it, so a diagonal reads the chunks it crosses and never a whole row or matrix.
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

class DiagonalNode : public Node {
 public:
  // offset > 0: above the main diagonal, < 0: below.
  DiagonalNode(NodePtr input, int64_t offset);
  std::string kind() const override { return "diagonal"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  // The bounding box of the region's diagonal elements (fill pulls far less).
  std::vector<Region> input_regions(const Region& region) const override;
  // One piece's box of the input (fill pulls the region in pieces) and that pull.
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;

 private:
  // The input region of diagonal positions [i, i + n*step) (step `step`) and batch part of `r`.
  Region box(const Region& r, int64_t i, int64_t step, int64_t n) const;
  int64_t max_piece(const Region& r) const;  // longest piece so that its box stays small
  int64_t offset_, row0_, col0_;
  int64_t cell_r_, cell_c_;  // pieces stay within cells of these lengths along rows / columns
};

}  // namespace b2lazy
