// The Cholesky factorisation of one 2-d Hermitian positive-definite matrix, by square
// tiles spilled to temporary b2nd files when the matrix does not fit max_memory, and the
// solves on it (solve, inv). b2lazy.linalg's cholesky of a 2-d matrix, and its solve and
// inv of a 2-d matrix over max_memory, are this node.
//
// Right-looking: for each tile column k, POTRF of the diagonal tile, TRSM of the tiles
// below it (the panel, kept: column k of L), then SYRK/HERK and GEMM updates of every
// trailing tile below the diagonal, written as the next version of the trailing matrix
// (each version a spilled b2nd array, one chunk per tile; the one before is dropped). The
// tasks of each phase are shared by every thread that asks for the factor (the workers of
// the pass, or those of the calling thread's fork), each holding a few tiles; the tile
// side comes from max_memory and the workers. The factor is computed once per evaluation
// (Evaluation::shared_state) and dropped with it; its files are unlinked as soon as they
// are opened, so none is left behind, on success or error. The result is read by
// regions from the panels. A matrix that fits max_memory is factored whole in memory (one
// tile). Solve and inv then substitute forward and back by tiles against the panels,
// column blocks of the right-hand side in parallel, into one more spilled array.
//
// Solve and inv of a matrix that fits max_memory use LAPACK's LU (a FactorNode, held
// here). Over it, the matrix must be symmetric (Hermitian: checked tile by tile) and
// positive definite, else the evaluation fails naming the budget the LU would need.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "b2lazy/node.hpp"

namespace b2lazy {

class FactorNode;

enum class SpdKind { Cholesky, Solve, Inv };

class TiledCholeskyNode : public Node {
 public:
  // Cholesky: {a (n, n)}: L (or U = L^H when `upper`); Solve: {a (n, n), b (n, k)}: x;
  // Inv: {a (n, n)}: a^-1. `fn`: the function's name, for messages.
  TiledCholeskyNode(SpdKind kind, std::vector<NodePtr> inputs, bool upper, std::string fn);
  std::string kind() const override { return "cholesky_tiles"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;
  Shape preferred_chunks() const override;

  // The tile side used under `max_memory` with `workers` threads; n (one tile, in
  // memory) when the matrix fits.
  int64_t tile(size_t max_memory, int workers) const;
  // Bytes each thread sharing the factorisation holds, and the bytes the whole
  // factorisation holds in memory, for tiles of side `b`.
  int64_t thread_bytes(int64_t b) const;

  struct State;

 private:
  std::shared_ptr<State> state(ThreadState& ts) const;
  bool in_memory(size_t max_memory) const;  // solve/inv: LAPACK's LU fits

  SpdKind kind_;
  bool upper_;
  std::string fn_;
  int64_t n_ = 0, nrhs_ = 0;
  std::shared_ptr<FactorNode> lu_;  // solve, inv: within max_memory
};

// Factorisations this process ran by spilled tiles (tests).
int64_t tiled_cholesky_runs();
// b2lazy/linalg.hpp's set_linalg_tile_bytes: 0 sizes tiles from max_memory.
int64_t tiled_cholesky_tile_bytes();
void set_tiled_cholesky_tile_bytes(int64_t bytes);

}  // namespace b2lazy
