#include <gtest/gtest.h>

#include "b2lazy/b2lazy.hpp"
#include "test_util.hpp"

using namespace b2lazy;
using b2lazy::test::stored;

namespace {

// Plain triple loop over 2-d row-major values.
std::vector<double> naive(const std::vector<double>& a, const std::vector<double>& b, int64_t m, int64_t k, int64_t n) {
  std::vector<double> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}
}  // namespace

TEST(Linalg, MatmulOnDiskAgainstLoop) {
  Context ctx(2);
  Array a = stored(sin(arange(0, 37 * 53, 1, DType::F64, {37, 53})), {8, 16}, {4, 8}, ctx);
  Array b = stored(cos(arange(0, 53 * 29, 1, DType::F64, {53, 29})), {16, 8}, {8, 4}, ctx);
  auto want = naive(a.to_vector(&ctx), b.to_vector(&ctx), 37, 53, 29);
  for (auto& expr : {matmul(a, b), matmul(a + 1.0, b) - matmul(Scalar(1.0) * ones({37, 53}), b)}) {
    auto got = expr.to_vector(&ctx);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-9) << i;
  }
}

TEST(Linalg, IntegerProductsWrapLikeNumPy) {
  Context ctx(1);
  Array a = full({2, 3}, Scalar(100), DType::I8);
  Array b = full({3, 2}, Scalar(3), DType::I8);
  auto got = matmul(a, b).to_vector(&ctx);  // 900 wraps to 900 - 1024 = -124 in int8
  ASSERT_EQ(matmul(a, b).dtype(), DType::I8);
  for (double v : got) EXPECT_EQ(v, -124);
}

TEST(Linalg, ShapesAndErrors) {
  Array a = zeros({2, 3, 4}), b = zeros({4, 5}), v = zeros({4});
  EXPECT_EQ(matmul(a, b).shape(), (Shape{2, 3, 5}));
  EXPECT_EQ(matmul(a, v).shape(), (Shape{2, 3}));
  EXPECT_EQ(matmul(v, b).shape(), (Shape{5}));
  EXPECT_EQ(matmul(v, v).shape(), (Shape{}));
  EXPECT_EQ(tensordot(zeros({3, 4, 5}), zeros({4, 5, 6})).shape(), (Shape{3, 6}));
  EXPECT_EQ(matrix_transpose(a).shape(), (Shape{2, 4, 3}));
  EXPECT_THROW(matmul(a, zeros({3, 5})), ValueError);
  EXPECT_THROW(matmul(zeros({2, 3, 4}), zeros({3, 4, 5})), ValueError);
  EXPECT_THROW(tensordot(a, b, std::vector<int>{0}, std::vector<int>{0}), ValueError);
  EXPECT_THROW(permute_dims(a, {0, 0, 1}), ValueError);
}

TEST(Linalg, KeptPanelReadsEachChunkAtMostTwice) {
  Context ctx(2);
  const int64_t n = 256;
  Array a = stored(arange(0, n * n, 1, DType::F64, {n, n}) / double(n * n), {64, 64}, {32, 32}, ctx);
  Array b = stored(ones({n, n}), {64, 64}, {32, 32}, ctx);
  ComputeOptions o;
  Array r = matmul(a + 1.0, b).compute(o, &ctx);
  const Stats* s = r.stats();
  ASSERT_TRUE(s);
  const int64_t chunks_a = (n / 64) * (n / 64);
  const std::string name = a.node()->source_name();
  EXPECT_EQ(s->distinct_chunks_decompressed.at(name), chunks_a);
  EXPECT_LE(s->max_decompressions_per_chunk.at(name), 2);
}
