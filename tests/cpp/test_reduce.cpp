#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "b2lazy/b2lazy.hpp"
#include "test_util.hpp"

using namespace b2lazy;
using b2lazy::test::stored;

TEST(Reduce, SumAxesAndKeepdims) {
  Context ctx(2);
  Array a = stored(arange(0, 60, 1, DType::F64, {3, 4, 5}), {2, 3, 2}, {1, 2, 2}, ctx);
  auto all = sum(a).to_vector(&ctx);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_DOUBLE_EQ(all[0], 59.0 * 60 / 2);
  ReduceOptions ax1;
  ax1.axis = std::vector<int>{1};
  Array s1 = sum(a, ax1);
  EXPECT_EQ(s1.shape(), (Shape{3, 5}));
  auto v = s1.to_vector(&ctx);
  // element [i, k] = sum_j (20 i + 5 j + k)
  EXPECT_DOUBLE_EQ(v[0 * 5 + 2], 0 + 5 + 10 + 15 + 4 * 2.0);
  EXPECT_DOUBLE_EQ(v[2 * 5 + 4], 4 * (40.0 + 4) + 30);
  ReduceOptions keep;
  keep.axis = std::vector<int>{0, 2};
  keep.keepdims = true;
  EXPECT_EQ(sum(a, keep).shape(), (Shape{1, 4, 1}));
}

TEST(Reduce, MinMaxArgNaNAndDtypes) {
  Context ctx(2);
  double data[] = {3, 1, NAN, 1, 7, -2};
  Array x = from_buffer(data, DType::F64, {6}, {}, nullptr);
  EXPECT_TRUE(std::isnan(max(x).to_vector(&ctx)[0]));
  EXPECT_EQ(reduce(Reduction::Argmax, x).to_vector(&ctx)[0], 2);  // first NaN
  Array y = x[{Index::slice(3, 6)}];
  EXPECT_EQ(min(y).to_vector(&ctx)[0], -2);
  EXPECT_EQ(reduce(Reduction::Argmin, y).to_vector(&ctx)[0], 2);
  int8_t small[] = {100, 100, 100};
  Array s = from_buffer(small, DType::I8, {3}, {}, nullptr);
  EXPECT_EQ(sum(s).dtype(), DType::I64);
  EXPECT_EQ(sum(s).to_vector(&ctx)[0], 300);
  EXPECT_EQ(mean(s).dtype(), DType::F64);
}

TEST(Reduce, VarianceAcrossSlabsMatchesTwoPass) {
  Context ctx(2);
  const int n = 3000;
  std::vector<double> d(n);
  for (int i = 0; i < n; ++i) d[i] = std::sin(i * 0.37) * 1e3 + 1e6;
  Array x = stored(from_buffer(d.data(), DType::F64, {n}, {}, nullptr), {128}, {64}, ctx);
  double m = std::accumulate(d.begin(), d.end(), 0.0) / n, q = 0;
  for (double v : d) q += (v - m) * (v - m);
  ReduceOptions o;
  o.correction = 1;
  EXPECT_NEAR(var(x, o).to_vector(&ctx)[0], q / (n - 1), 1e-6 * q / n);
  EXPECT_NEAR(std_dev(x).to_vector(&ctx)[0], std::sqrt(q / n), 1e-9 * std::sqrt(q / n));
}

TEST(Reduce, Errors) {
  ReduceOptions bad;
  bad.axis = std::vector<int>{2};
  EXPECT_THROW(sum(zeros({3, 4}), bad), ValueError);
  bad.axis = std::vector<int>{1, -1};
  EXPECT_THROW(sum(zeros({3, 4}), bad), ValueError);
  EXPECT_THROW(max(zeros({0, 4})), ValueError);
  ReduceOptions c;
  c.correction = 13;  // N - correction <= 0: NaN (the Array API), not an error
  EXPECT_TRUE(std::isnan(var(zeros({3, 4}), c).to_vector().at(0)));
}

TEST(Reduce, SumPlusArrayComputesTheSumOnce) {
  Context ctx(2);
  Array a = stored(arange(0, 400, 1, DType::F64, {20, 20}), {5, 20}, {5, 10}, ctx);
  Array e = sum(a) + a;
  Array r = e.compute({}, &ctx);
  const Stats& st = *r.stats();
  EXPECT_EQ(st.cache_misses, 1);
  EXPECT_GE(st.cache_hits, 4);
  // Each of the 4 chunks of `a`: once for the sum, once for the addition, at most (a copy
  // this small is kept: once).
  EXPECT_LE(st.chunks_decompressed_total, 8);
  auto v = r.to_vector(&ctx);
  EXPECT_DOUBLE_EQ(v[7], 399.0 * 400 / 2 + 7);
  // mean(a, axis=0) broadcast back: computed once, read by every chunk.
  ReduceOptions ax0;
  ax0.axis = std::vector<int>{0};
  Array c = (a - mean(a, ax0)).compute({}, &ctx);
  EXPECT_LE(c.stats()->chunks_decompressed_total, 8);
  EXPECT_DOUBLE_EQ(c.to_vector(&ctx)[21], 21 - (1 + 9.5 * 20));
  // A region of a row sum reads only the rows it needs.
  ReduceOptions ax1;
  ax1.axis = std::vector<int>{1};
  Array part = sum(a, ax1)[{Index::slice(6, 9)}].compute({}, &ctx);
  EXPECT_EQ(part.stats()->chunks_decompressed_total, 1);
}

TEST(Reduce, SmallBudgetSplitsAlongKeptAxesAndStaysExact) {
  Context ctx(2);
  Array a = stored(arange(0, 512 * 512, 1, DType::I64, {512, 512}), {64, 128}, {32, 128}, ctx);
  ReduceOptions ax1;
  ax1.axis = std::vector<int>{1};
  std::vector<int64_t> out(512);
  Stats st = sum(a, ax1).to_buffer(out.data(), &ctx, size_t(1) << 20);
  for (int64_t i = 0; i < 512; ++i) ASSERT_EQ(out[i], 512 * 512 * i + 511 * 512 / 2) << i;
  // Pieces follow the chunks: every chunk of `a` is read once.
  EXPECT_EQ(st.chunks_decompressed_total, 8 * 4);
  EXPECT_LE(st.peak_scratch_bytes, 16 << 20);
}

TEST(Reduce, DeeplySharedSubexpressionsArePlannedOnce) {
  Context ctx(2);
  Array a = stored(arange(0, 64, 1, DType::F64, {8, 8}), {4, 8}, {4, 8}, ctx);
  Array x = sum(a) + a;
  for (int i = 0; i < 40; ++i) x = x + x;  // 2^40 paths to `a` and sum(a)
  std::vector<double> out(64);
  Stats st = x.to_buffer(out.data(), &ctx);
  EXPECT_EQ(st.cache_misses, 1);
  EXPECT_DOUBLE_EQ(out[5], std::ldexp(63.0 * 64 / 2 + 5, 40));
}

// e = e - mean(e, axis=0), nested: each mean feeds the next level's mean and the fused
// expression above. The planner decides consumers before their inputs, so every inner
// mean is computed once (before: none was cached and each was recomputed per path,
// 2^depth), and its node visits grow with the nodes, not the paths.
TEST(Reduce, NestedSharedReductionsAreComputedOnceInLinearPlanning) {
  Context ctx(2);
  ReduceOptions ax0;
  ax0.axis = std::vector<int>{0};
  int64_t visits_at[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    const int depth = k ? 40 : 20;
    Array e = arange(0, 12, 1, DType::F64, {3, 4});
    for (int i = 0; i < depth; ++i) e = e - mean(e, ax0);
    std::vector<double> out(12);
    Stats st = e.to_buffer(out.data(), &ctx);
    EXPECT_EQ(st.cache_misses, depth - 1);
    for (size_t i = 0; i < out.size(); ++i)  // centred columns (rows 4 apart); centring again keeps them
      EXPECT_NEAR(out[i], 4.0 * (static_cast<double>(i / 4) - 1), 1e-12);
    visits_at[k] = st.plan_visits;
    EXPECT_LE(st.plan_visits, 8 * (1 + 2 * depth));
  }
  EXPECT_LE(visits_at[1], 5 * visits_at[0] / 2);
}
