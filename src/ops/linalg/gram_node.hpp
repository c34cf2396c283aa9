// Products of an operand with its own matrix transpose: x.T @ x and x @ x.T (one node,
// transposed on one side). The result is symmetric, so half of it is computed: BLAS syrk
// on the diagonal tiles (half the flops of gemm there), gemm above the diagonal, and
// every tile below the diagonal is the transpose of one above it.
//
// Two nodes: UpperGramNode computes the upper triangle and is cacheable; GramNode (the
// product) asks it for tile (I, J) above the diagonal and for (J, I)'s mirror alike, so
// the planner sees each upper tile asked twice and computes it once; a tile on the
// diagonal asks for itself and its mirror too. Only a region that is whole matrices is
// computed in place by GramNode (syrk, mirrored).
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

// x of shape (batch..., k, n) when `trans` (the product x^T x), else (batch..., n, k)
// (x x^T); the product is (batch..., n, n).
class UpperGramNode : public Node {
 public:
  UpperGramNode(NodePtr x, bool trans);
  std::string kind() const override { return "gram_upper"; }
  std::string describe() const override;
  // Elements with row <= column are the product's; those below are left as they were
  // (never read: a fresh dense stage's pages below the diagonal are never touched).
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  // The two strips of x it reads (the columns' panel, the rows' unless among them).
  std::vector<Region> pull_pieces(const Region& region, size_t input, size_t worker_bytes) const override;
  bool cacheable() const override { return true; }
  // x's panels streamed along k, and the deepest pull of x.
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;
  // Row bands as wide as the box when x^T's panels are column strips of C-order blocks
  // (each costs the whole rows: one band reads x once for all its tiles) and bands read x
  // no more often than square tiles over a re-packed x would; else balanced tiles.
  Shape kept_chunks(const Shape& box, size_t target_bytes, size_t most_bytes) const override;
  // Kept dense, the triangle is filled in one pass over x's panels, shared by the workers.
  bool fills_whole_box() const override { return true; }
  bool trans() const { return trans_; }

 private:
  bool trans_;
};

class GramNode : public Node {
 public:
  GramNode(NodePtr x, bool trans);
  std::string kind() const override { return "matmul"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  // Inputs: the upper triangle twice (the tile itself, the mirrored tile), then x twice
  // (the rows' and the columns' panels of a tile computed directly).
  std::vector<Region> input_regions(const Region& region) const override;
  bool cacheable() const override { return true; }
  // Off the diagonal, the mirror tile transposed into place; else x's panels.
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;
  Shape preferred_chunks() const override;

 private:
  bool trans_;
  bool keep_;  // tiles off the diagonal come from the kept upper triangle (else: gemm)
};

// matmul's node for a (batch..., M, K) x (batch..., K, N) product: a GramNode when one
// operand is the matrix transpose of the other (the same node), else a MatmulNode.
NodePtr make_matmul_node(NodePtr a, NodePtr b, size_t nbatch, Shape out_shape);

}  // namespace b2lazy
