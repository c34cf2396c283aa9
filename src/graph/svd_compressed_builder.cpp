// A rank-k SVD of a large 2-d matrix by randomized range finding (b2lazy/linalg.hpp),
// composed of lazy products over the matrix and small or tall-and-skinny QRs (TSQR when
// tall), so that the matrix is only ever pulled by regions.
#include <algorithm>
#include <string>
#include <vector>

#include "b2lazy/error.hpp"
#include "b2lazy/linalg.hpp"
#include "b2lazy/random.hpp"
#include "graph/linalg_build.hpp"

namespace b2lazy {

namespace {

Array orthonormal_basis(const Array& y) { return linalg_qr(y, "reduced")[0]; }

Array columns(const Array& a, int64_t k) { return a[{Index::slice(0, a.shape()[0]), Index::slice(0, k)}]; }

}  // namespace

std::vector<Array> linalg_svd_compressed(const Array& x, int64_t k, int64_t n_power_iter, int64_t n_oversamples,
                                         uint64_t seed) {
  if (x.ndim() != 2) throw ValueError("svd_compressed: x must be a 2-d matrix, got shape " + shape_str(x.shape()));
  const int64_t m = x.shape()[0], n = x.shape()[1];
  if (k < 1 || k > std::min(m, n))
    throw ValueError("svd_compressed: k must be in [1, min(m, n)] = [1, " + std::to_string(std::min(m, n)) +
                     "] for shape " + shape_str(x.shape()) + ", got " + std::to_string(k));
  if (n_power_iter < 0)
    throw ValueError("svd_compressed: n_power_iter must be 0 or more, got " + std::to_string(n_power_iter));
  if (n_oversamples < 0)
    throw ValueError("svd_compressed: n_oversamples must be 0 or more, got " + std::to_string(n_oversamples));
  const DType t = linalg_computing(x.dtype());
  const Array a = t == x.dtype() ? x : x.astype(t);
  if (m < n) {
    // Short and wide: that of A^H (tall), A^H = U S Vh giving A = Vh^H S U^H. Ω and the
    // power iteration's A^H Q are then n x l with the short side n: small, computed once;
    // on the wide side they would be tall matrices that every panel of the next product
    // pulls again through its TSQR.
    std::vector<Array> usv = linalg_svd_compressed(hermitian(a), k, n_power_iter, n_oversamples, seed);
    return {hermitian(usv[2]), usv[1], hermitian(usv[0])};
  }
  const DType real = real_of(t);
  const int64_t l = std::min(k + n_oversamples, std::min(m, n));
  // Halko, Martinsson & Tropp (2011), algorithms 4.4 and 5.1: Y = A Ω spans A's leading
  // left singular vectors; each power iteration (re-orthonormalised, for the singular
  // values that are lost below machine precision otherwise) sharpens that span.
  Array omega = random_normal({n, l}, 0.0, 1.0, RandomKey{seed, 0}, real);
  if (omega.dtype() != t) omega = omega.astype(t);
  Array q = orthonormal_basis(matmul(a, omega));
  for (int64_t i = 0; i < n_power_iter; ++i)
    q = orthonormal_basis(matmul(a, orthonormal_basis(matmul(hermitian(a), q))));
  // B = Q^H A is small (l x n): A = Q B, B = Ub S Vh, so U = Q Ub.
  std::vector<Array> usv = linalg_svd(matmul(hermitian(q), a), false);
  const Array u = columns(matmul(q, usv[0]), k);
  const Array s = usv[1][{Index::slice(0, k)}];
  const Array vh = usv[2][{Index::slice(0, k), Index::slice(0, n)}];
  return {u, s, vh};
}

}  // namespace b2lazy
