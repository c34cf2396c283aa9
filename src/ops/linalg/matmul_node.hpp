// Contractions (matmul, tensordot) as a lazy node. Axis groups:
//   a: (batch..., M..., K...)   b: (batch..., K..., N...)   ->   (batch..., M..., N...)
// Batch axes of a and b are 1 (broadcast) or the output's. An output region pulls,
// per K-panel (a range of the first K axis, sized to the memory budget and aligned with
// the operands' storage chunks), the panel of each operand it needs, and multiplies the
// panels with OpenBLAS (float32/float64) or an exact wrapping loop (integers, bool).
//
// A lazy, expensive operand (anything but a source or a view of one) is pulled whole
// along K in bands: for `a`, the node prefers tiles in bands of rows, a worker evaluates a
// row of tiles as one task and keeps the band between them (ThreadState::kept); for `b`,
// output chunks are bands of whole columns. So each of that operand's elements is
// computed about once over the whole evaluation.
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

class MatmulNode : public Node {
 public:
  MatmulNode(NodePtr a, NodePtr b, size_t nbatch, size_t nm, size_t nk, size_t nn, Shape out_shape);
  std::string kind() const override { return "matmul"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  // The K-panels (of each sub-tile) of an operand contract() streams; none for one it
  // holds whole along K.
  std::vector<Region> pull_pieces(const Region& region, size_t input, size_t worker_bytes) const override;
  // The kept band of an expensive operand (when it fits its share of the budget), one
  // K-panel of each streamed operand and the deepest pull; forked over a K range by every
  // worker, that on each worker plus the partial results.
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;
  // Each output element costs 2K operations: worth keeping when several chunks need it.
  bool cacheable() const override { return true; }
  Shape preferred_chunks() const override;
  // Batched over lazy operands and kept (TSQR's Q: each panel's Q times its block of the
  // stacked factors' Q): the preferred chunks, one batch element each, when they fit
  // `most_bytes`. Balanced tiles across the batch would make every task compute each
  // element's operand whole (a factorisation per panel), all of them at once.
  Shape kept_chunks(const Shape& box, size_t target_bytes, size_t most_bytes) const override;
  // A row of output chunks shares the kept band of an expensive operand (one task).
  bool shares_rows() const override { return true; }

  // Storage-chunk length that pulls along output axis `axis` should align to (0: none).
  int64_t alignment(size_t axis) const { return align_[axis]; }
  int64_t alignment_along(size_t axis, const AlignmentQuery& q) const override;

 private:
  struct Geometry;  // one output region's matrix sizes and batch mapping
  struct Schedule;  // how contract() walks one region: held operands, sub-tiles, K-panels
  Schedule schedule(const Region& region, int64_t kb, int64_t ke, size_t per_worker, bool a_view, bool b_view) const;
  // Region of op(a) / op(b) as stored (below a transposition) for an output region.
  Region a_read(const Region& out, int64_t k0, int64_t k1) const;
  Region b_read(const Region& out, int64_t k0, int64_t k1) const;
  Region a_region(const Region& out, int64_t k0, int64_t k1) const;
  Region b_region(const Region& out, int64_t k0, int64_t k1) const;
  // Is operand `x` (as stored) a matrix read in place by rows at its own stride (a column
  // panel of a kept b), not only as one dense range?
  bool views_rows(const Node& x) const { return nbatch_ == 0 && nk_ == 1 && x.ndim() == 2; }
  // out = the contraction over [k0, k1) of the first K axis, for `region`.
  void contract(const Region& region, int64_t k0, int64_t k1, void* out, ThreadState& ts) const;
  // What contract(region, k0, k1) holds (the memory model of fill_bytes).
  int64_t contract_bytes(const Region& region, int64_t k0, int64_t k1, const MemoryModel& m) const;
  // A small result over a long K, alone on the calling thread: K ranges on the workers.
  bool fork(const Region& region, void* out, ThreadState& ts) const;

  size_t nbatch_, nm_, nk_, nn_;
  int64_t k_len_ = 0;    // length of the first K axis
  int64_t k_rest_ = 1;   // product of the other K axes
  int64_t k_align_ = 0;  // storage chunk length along the first K axis
  bool a_expensive_, b_expensive_;
  bool a_trans_ = false, b_trans_ = false;  // operand is a matrix transpose: pull below it
  Shape align_;                             // alignment() per output axis, looked up once (lookups recurse)
};

}  // namespace b2lazy
