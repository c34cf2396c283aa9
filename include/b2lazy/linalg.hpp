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
// (..., n, n); only the lower triangle is read. Not positive definite: LinAlgError when
// evaluated, naming the leading minor that is not. A 2-d matrix over max_memory is
// factored out of core (ops/linalg/tiled_cholesky.hpp): right-looking by square tiles
// spilled to temporary b2nd files, a few tiles held at a time; the factor is read back by
// regions.
Array linalg_cholesky(const Array& x, bool upper = false);
// Tiles of the out-of-core Cholesky (also solve and inv of a 2-d symmetric
// positive-definite matrix over max_memory): 0 (the default) sizes them from max_memory
// and the workers, and factors in memory a matrix that fits; > 0 makes tiles of at most
// this many bytes and factors by tiles any 2-d matrix larger than one (for tests).
int64_t linalg_tile_bytes();
void set_linalg_tile_bytes(int64_t bytes);  // for evaluations started after the call
// Factorisations by tiles this process has run (for tests: the tiled path ran).
int64_t linalg_tiled_factorisations();
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
// A rank-k SVD {U (m, k), S (k,), Vh (k, n)} of a 2-d matrix by randomized range finding
// (Halko, Martinsson & Tropp 2011; dask.array.linalg.svd_compressed): Y = A Ω for a
// standard normal Ω (n, k + n_oversamples) drawn from `seed`, n_power_iter rounds of
// Y = A (A^H Q) with a QR between, then the SVD of the small B = Q^H A. A is pulled by
// regions in products and each tall QR is TSQR, so no more than a few panels of it are held;
// the values are those of the leading singular triplets when the spectrum decays (more
// power iterations when it decays slowly). A short-and-wide matrix: through its transpose.
std::vector<Array> linalg_svd_compressed(const Array& x, int64_t k, int64_t n_power_iter = 0,
                                         int64_t n_oversamples = 10, uint64_t seed = 0);
// {sign, logabsdet} of square matrices by LU with partial pivoting (singular: 0, -inf);
// det = sign * exp(logabsdet).
std::vector<Array> linalg_slogdet(const Array& x);
Array linalg_det(const Array& x);
// The inverse of square matrices (singular: LinAlgError when evaluated). A 2-d matrix
// over max_memory: by the tiled Cholesky when it is symmetric (Hermitian) positive
// definite, else a ValueError naming the budget that would hold it.
Array linalg_inv(const Array& x);
// x with a @ x = b: `a` (..., n, n); `b` (n,) (a vector, when 1-d) or (..., n, k); batch
// axes broadcast. A 2-d `a` over max_memory: as inv.
Array linalg_solve(const Array& a, const Array& b);
// Eigenvalues and right eigenvectors (columns, unit norm) of general square matrices,
// complex always (NumPy returns real arrays when every eigenvalue of its input is real);
// eigvals: the values alone.
std::vector<Array> linalg_eig(const Array& x);
Array linalg_eigvals(const Array& x);

}  // namespace b2lazy
