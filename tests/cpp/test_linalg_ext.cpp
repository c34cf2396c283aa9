// b2lazy.linalg's factorisations from C++ (b2lazy/linalg.hpp, ops/linalg/factor_node.hpp):
// QR, Cholesky, SVD, solve and slogdet of batched matrices checked by their identities, in
// several output chunkings (each matrix factored once for the outputs it serves), a
// matrix over max_memory refused naming the budget, and Cholesky and solve of an SPD
// matrix over max_memory by spilled tiles (ops/linalg/tiled_cholesky.hpp).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <string>

#include "b2lazy/b2lazy.hpp"
#include "b2lazy/linalg.hpp"

using namespace b2lazy;

namespace {
Array random_matrices(const Shape& shape, uint32_t seed, Shape chunks = {}) {
  auto data = std::make_shared<std::vector<double>>(static_cast<size_t>(prod(shape)));
  std::mt19937 rng(seed);
  std::normal_distribution<double> z;
  for (double& v : *data) v = z(rng);
  if (!chunks.empty()) return from_buffer_compressed(data->data(), DType::F64, shape, chunks, chunks);
  return from_buffer(data->data(), DType::F64, shape, {}, std::shared_ptr<const void>(data, data->data()));
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double e = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) e = std::max(e, std::abs(a[i] - b[i]));
  return e;
}
}  // namespace

TEST(LinalgExt, QrOfABatchReconstructsInAnyOutputChunks) {
  const Array a = random_matrices({3, 20, 7}, 1, {1, 20, 7});
  const std::vector<Array> qr = linalg_qr(a);
  ASSERT_EQ(qr.size(), 2u);
  EXPECT_EQ(qr[0].shape(), (Shape{3, 20, 7}));
  EXPECT_EQ(qr[1].shape(), (Shape{3, 7, 7}));
  const Array back = matmul(qr[0], qr[1]);
  ComputeOptions o;
  o.chunks = Shape{1, 3, 2};
  EXPECT_LT(max_abs_diff(back.compute(o).to_vector(), a.to_vector()), 1e-12);
  // Q^H Q = I
  const std::vector<double> g = matmul(matrix_transpose(qr[0]), qr[0]).to_vector();
  for (int b = 0; b < 3; ++b)
    for (int i = 0; i < 7; ++i)
      for (int j = 0; j < 7; ++j) EXPECT_NEAR(g[static_cast<size_t>(b * 49 + i * 7 + j)], i == j ? 1.0 : 0.0, 1e-12);
  // R upper triangular
  const std::vector<double> r = qr[1].to_vector();
  for (int b = 0; b < 3; ++b)
    for (int i = 0; i < 7; ++i)
      for (int j = 0; j < i; ++j) EXPECT_EQ(r[static_cast<size_t>(b * 49 + i * 7 + j)], 0.0);
}

TEST(LinalgExt, CholeskySolveSlogdetAndSvd) {
  const Array b = random_matrices({2, 6, 6}, 2);
  const Array spd = matmul(b, matrix_transpose(b)) + eye(6, 6, 0) * 6.0;
  const Array l = linalg_cholesky(spd);
  EXPECT_LT(max_abs_diff(matmul(l, matrix_transpose(l)).to_vector(), spd.to_vector()), 1e-10);
  const Array rhs = random_matrices({6, 3}, 3);
  const Array x = linalg_solve(spd, rhs);
  EXPECT_EQ(x.shape(), (Shape{2, 6, 3}));
  EXPECT_LT(max_abs_diff(matmul(spd, x).to_vector(), broadcast_to(rhs, {2, 6, 3}).to_vector()), 1e-10);
  // log det(L L^T) = 2 sum log diag(L)
  const std::vector<Array> sl = linalg_slogdet(spd);
  const std::vector<double> logdet = sl[1].to_vector(), sign = sl[0].to_vector(), lv = l.to_vector();
  for (int k = 0; k < 2; ++k) {
    double want = 0;
    for (int i = 0; i < 6; ++i) want += 2 * std::log(lv[static_cast<size_t>(k * 36 + i * 7)]);
    EXPECT_NEAR(logdet[static_cast<size_t>(k)], want, 1e-10);
    EXPECT_EQ(sign[static_cast<size_t>(k)], 1.0);
  }
  // the singular values of an SPD matrix are its eigenvalues
  const std::vector<double> s = linalg_svdvals(spd).to_vector(), w = linalg_eigvalsh(spd).to_vector();
  for (int k = 0; k < 2; ++k)
    for (int i = 0; i < 6; ++i)
      EXPECT_NEAR(s[static_cast<size_t>(k * 6 + i)], w[static_cast<size_t>(k * 6 + 5 - i)], 1e-10);
}

TEST(LinalgExt, AMatrixOverMaxMemoryIsRefusedNamingTheBudget) {
  const Array a = zeros({1024, 1024}, DType::F64);
  EvalOptions o;
  o.max_memory = size_t(4) << 20;
  std::vector<double> out(static_cast<size_t>(1024 * 1024));
  try {
    linalg_qr(a)[1].to_buffer(out.data(), o);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("qr: the matrix (1024, 1024) float64 is 8 MiB"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("over max_memory 4 MiB"), std::string::npos) << e.what();
  }
}

namespace {
// M M^T + n I: symmetric positive definite.
Array spd_matrix(int64_t n, uint32_t seed) {
  const Array m = random_matrices({n, n}, seed);
  return matmul(m, matrix_transpose(m)) + eye(n, n, 0) * static_cast<double>(n);
}
int temp_files(const std::string& prefix) {
  int count = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
    count += e.path().filename().string().rfind(prefix, 0) == 0;
  return count;
}
}  // namespace

TEST(LinalgExt, CholeskyAndSolveByTilesOverMaxMemory) {
  const int64_t n = 301;  // 708 KiB: not a multiple of the tile
  const std::vector<double> a = spd_matrix(n, 4).to_vector();
  const Array x = from_buffer(a.data(), DType::F64, {n, n}, {}, nullptr);
  const std::string prefix = ".b2lazy-cholesky-" + std::to_string(::getpid()) + "-";
  const int before = temp_files(prefix);
  EvalOptions small;
  small.max_memory = size_t(1) << 20;
  const int64_t runs = linalg_tiled_factorisations();
  std::vector<double> l(static_cast<size_t>(n * n)), lw(l.size());
  linalg_cholesky(x).to_buffer(l.data(), small);
  EXPECT_EQ(linalg_tiled_factorisations(), runs + 1);
  linalg_cholesky(x).to_buffer(lw.data());  // LAPACK, whole
  EXPECT_EQ(linalg_tiled_factorisations(), runs + 1);
  EXPECT_LT(max_abs_diff(l, lw), 1e-10);
  // solve by tiles: a x = b
  const Array rhs = random_matrices({n, 4}, 5);
  std::vector<double> sol(static_cast<size_t>(n * 4)), want(sol.size());
  linalg_solve(x, rhs).to_buffer(sol.data(), small);
  linalg_solve(x, rhs).to_buffer(want.data());  // LU, whole
  EXPECT_EQ(linalg_tiled_factorisations(), runs + 2);
  EXPECT_LT(max_abs_diff(sol, want), 1e-12);
  EXPECT_EQ(temp_files(prefix), before);  // every spilled tile removed
  // not positive definite: the leading minor named, and nothing left behind
  std::vector<double> bad = a;
  bad[static_cast<size_t>(200 * n + 200)] = -1e9;
  const Array xb = from_buffer(bad.data(), DType::F64, {n, n}, {}, nullptr);
  try {
    linalg_cholesky(xb).to_buffer(l.data(), small);
    FAIL() << "no error";
  } catch (const LinAlgError& e) {
    EXPECT_NE(std::string(e.what()).find("leading minor of order 201 is not positive"), std::string::npos) << e.what();
  }
  EXPECT_EQ(temp_files(prefix), before);
}
