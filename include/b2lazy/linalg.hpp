// Dense linear algebra of b2lazy.linalg by LAPACK: factorisations and solvers of matrices
// batched over leading axes, lazy like every other function. Each evaluates one whole
// matrix (of a batch element) at a time, once per evaluation for all its outputs; a matrix
// must fit max_memory with LAPACK's workspace (else the evaluation's planning refuses it,
// naming the budget). Integer and bool operands are computed in float64, float16 in
// float32 (NumPy's promotion); float32/64 and complex64/128 as they are.
#pragma once
#include <string>
#include <vector>

#include "b2lazy/array.hpp"

namespace b2lazy {

// The lower (or upper: L^H) Cholesky factor of Hermitian positive-definite matrices
// (..., n, n); only the lower triangle is read. Not positive definite: ValueError when
// evaluated.
Array linalg_cholesky(const Array& x, bool upper = false);
// Tall-and-skinny 2-d matrices (m >= 2n) larger than a panel (linalg_panel_bytes(), 4 MiB
// by default) are factored out of core by TSQR: qr (modes "reduced" and "r"), svd
// (full_matrices=false) and svdvals (and short-and-wide ones through their transpose, for
// svd and svdvals) factor row panels of about that size, then the stacked R factors; Q
// (and U) is pulled by row panels, each panel factored again there, so that no more than a
// few panels are held at a time. R's rows may differ in sign from a direct QR's.
int64_t linalg_panel_bytes();
void set_linalg_panel_bytes(int64_t bytes);  // for graphs built after the call
// QR of (..., m, n): mode "reduced" {Q (..., m, k), R (..., k, n)}, k = min(m, n);
// "complete" {Q (..., m, m), R (..., m, n)}; "r" {R (..., k, n)}.
std::vector<Array> linalg_qr(const Array& x, const std::string& mode = "reduced");
// Eigenvalues (ascending, real) and eigenvectors (columns) of Hermitian matrices (the
// lower triangle is read); eigvalsh: the values alone.
std::vector<Array> linalg_eigh(const Array& x);
Array linalg_eigvalsh(const Array& x);
// SVD {U, S, Vh} with x = U diag(S) Vh, S descending (real); svdvals: S alone.
std::vector<Array> linalg_svd(const Array& x, bool full_matrices = true);
Array linalg_svdvals(const Array& x);
// {sign, logabsdet} of square matrices by LU with partial pivoting (singular: 0, -inf);
// det = sign * exp(logabsdet).
std::vector<Array> linalg_slogdet(const Array& x);
Array linalg_det(const Array& x);
// The inverse of square matrices (singular: ValueError when evaluated).
Array linalg_inv(const Array& x);
// x with a @ x = b: `a` (..., n, n); `b` (n,) (a vector, when 1-d) or (..., n, k); batch
// axes broadcast.
Array linalg_solve(const Array& a, const Array& b);
// Eigenvalues and right eigenvectors (columns, unit norm) of general square matrices,
// complex always (NumPy returns real arrays when every eigenvalue of its input is real);
// eigvals: the values alone.
std::vector<Array> linalg_eig(const Array& x);
Array linalg_eigvals(const Array& x);

}  // namespace b2lazy
