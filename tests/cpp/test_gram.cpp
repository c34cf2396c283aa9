// Symmetric products (x.T @ x, x @ x.T): the syrk kernel and GramNode against loops.
#include <gtest/gtest.h>

#include "b2lazy/b2lazy.hpp"
#include "ops/linalg/gemm.hpp"
#include "test_util.hpp"

using namespace b2lazy;
using b2lazy::test::stored;

namespace {
// x^T x of a k x n row-major matrix.
std::vector<double> gram_loop(const std::vector<double>& x, int64_t k, int64_t n) {
  std::vector<double> c(static_cast<size_t>(n * n));
  for (int64_t p = 0; p < k; ++p)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += x[p * n + i] * x[p * n + j];
  return c;
}
}  // namespace

TEST(Gram, SyrkUpperTouchesOnlyTheUpperTriangle) {
  const int64_t k = 5, n = 4;
  std::vector<int64_t> xi(k * n);
  std::vector<double> xd(k * n);
  for (int64_t i = 0; i < k * n; ++i) xi[i] = i % 7 - 3, xd[i] = static_cast<double>(xi[i]);
  std::vector<int64_t> ci(n * n, -1);
  std::vector<double> cd(n * n, -1);
  syrk_upper<int64_t>(true, n, k, xi.data(), n, ci.data(), n);
  syrk_upper<double>(true, n, k, xd.data(), n, cd.data(), n);
  auto want = gram_loop(xd, k, n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const double w = i <= j ? want[i * n + j] - 1 : -1;  // C += ..., below the diagonal untouched
      EXPECT_EQ(static_cast<double>(ci[i * n + j]), w) << i << "," << j;
      EXPECT_EQ(cd[i * n + j], w) << i << "," << j;
    }
}

TEST(Gram, TransposedProductsOnDiskAgainstLoop) {
  Context ctx(2);
  const int64_t k = 150, n = 70;  // k long enough to keep the upper triangle
  Array x = stored(sin(arange(0, k * n, 1, DType::F64, {k, n})), {40, 16}, {8, 16}, ctx);
  auto want = gram_loop(x.to_vector(&ctx), k, n);
  ComputeOptions o;
  o.chunks = {16, 16};  // tiles on, above and below the diagonal
  for (const Array& e : {matmul(matrix_transpose(x), x), matmul(matrix_transpose(x), x) + 0.0}) {
    auto got = e.compute(o, &ctx).to_vector(&ctx);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-9) << i;
  }
  // x x^T of the transposed operand is the same product
  Array xt = matrix_transpose(x);
  auto got = matmul(xt, matrix_transpose(xt)).to_vector(&ctx);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-9) << i;
}
