// Dense factorisations of b2lazy.linalg by LAPACK (cholesky, qr, eigh, svd, LU for
// det/slogdet/inv, solve, eig), batched over leading axes.
//
// FactorNode's result holds every output of one factorisation of one matrix in a row:
// shape (batch..., P), P the outputs' lengths end to end (Q then R; U, S, Vh; ...). Asked
// for any region, it pulls the whole matrices of the batch elements the region crosses,
// factors each once and serves the asked part of the row. It is cacheable and computed in
// whole rows (computed_region), so an evaluation that reads several outputs, or one
// output in several chunks, factors each matrix once: the planner keeps the rows (as it
// keeps a sort's lanes). UnpackNode is one output, a view of a part of the rows.
//
// A matrix must fit max_memory with its workspace: fill_bytes refuses one that does not,
// naming the function, the matrix and the budget (no out-of-core path here).
#pragma once
#include <string>
#include <vector>

#include "b2lazy/node.hpp"

namespace b2lazy {

enum class FactorKind {
  Cholesky,  // L (n, n) (or U = L^H with upper)
  QR,        // Q (m, k), R (k, n); complete: Q (m, m), R (m, n); mode 'r': R (k, n) alone
  Eigh,      // eigenvalues (n,) ascending (real), eigenvectors (n, n) unless values only
  SVD,       // U (m, ku), S (k,) (real), Vh (kv, n); values only: S alone
  LU,        // sign, logabsdet (real), det: each ()
  Inv,       // inverse (n, n)
  Solve,     // x (n, nrhs) of a x = b (inputs a, b)
  Eig,       // eigenvalues (n,), eigenvectors (n, n) unless values only; complex always
};

struct FactorOptions {
  bool upper = false;          // Cholesky
  int qr_mode = 0;             // 0 reduced, 1 complete, 2 'r'
  bool vectors = true;         // Eigh, Eig: eigenvectors too; SVD: U and Vh too
  bool full_matrices = false;  // SVD
};

// One output within a factorisation's row.
struct FactorPart {
  std::string name;
  int64_t offset = 0;  // in the row
  Shape shape;         // of one matrix's output
  bool real = false;   // the real part of a complex row (singular values, eigenvalues, logabsdet)
};

class FactorNode : public Node {
 public:
  // `a` (batch..., m, n) of a floating or complex dtype (the computation's; Eig's result
  // is complex); Solve: inputs {a (batch..., n, n), b (batch..., n, nrhs)}, same batch.
  // `fn`: the function's name, for messages.
  FactorNode(FactorKind kind, std::vector<NodePtr> inputs, FactorOptions opts, std::string fn);
  std::string kind() const override { return "factor"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  // A batch is pulled batch_run() elements at a time (what a panel of a TSQR reads).
  std::vector<Region> pull_pieces(const Region& region, size_t input, size_t worker_bytes) const override;
  bool cacheable() const override { return true; }
  Region computed_region(const Region& region) const override;
  Shape preferred_chunks() const override;
  Shape kept_chunks(const Shape&, size_t, size_t) const override { return preferred_chunks(); }
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;

  const std::vector<FactorPart>& parts() const { return parts_; }
  // Bytes one matrix's factorisation holds (its inputs, copies, workspace, the row).
  int64_t matrix_bytes() const;
  // Batch elements a fill pulls and factors at a time (along the last batch axis).
  int64_t batch_run() const;

 private:
  // `region`'s batch elements in the runs fill() pulls them in (each one region), and the
  // flat position within `region` of a run's first element.
  std::vector<Region> runs(const Region& region) const;
  int64_t first_element(const Region& region, const Region& run) const;
  template <class T> void factor(const void* const* in, T* row, int64_t element) const;

  FactorKind kind_;
  FactorOptions opts_;
  std::string fn_;
  int64_t m_ = 0, n_ = 0, nrhs_ = 0, row_ = 0;
  size_t nbatch_ = 0;
  std::vector<FactorPart> parts_;
};

// One output of a FactorNode: shape (batch..., part.shape...), the part's values (their
// real part when part.real).
class UnpackNode : public Node {
 public:
  UnpackNode(NodePtr factor, FactorPart part);
  std::string kind() const override { return "unpack"; }
  std::string describe() const override { return "unpack " + part_.name; }
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  bool is_view() const override { return true; }
  Shape preferred_chunks() const override;

 private:
  FactorPart part_;
  size_t nbatch_;
};

}  // namespace b2lazy
