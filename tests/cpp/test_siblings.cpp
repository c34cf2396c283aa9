// Sibling reductions folded in lockstep (Plan::siblings, ReduceNode::fill_siblings): each
// chunk of the source they share decompressed once, values as each reduction alone; and
// the balanced output ranges of a dense output cut in a few chunks (plan/follow_layout).
#include <gtest/gtest.h>

#include <cmath>

#include "b2lazy/b2lazy.hpp"
#include "b2lazy/plan.hpp"
#include "plan/follow_layout.hpp"
#include "test_util.hpp"

using namespace b2lazy;
using b2lazy::test::stored;

namespace {

ReduceOptions axes(std::vector<int> a) {
  ReduceOptions o;
  o.axis = std::move(a);
  return o;
}

std::vector<double> dense(const Array& e, Context& ctx, Stats& stats) {
  std::vector<double> out(static_cast<size_t>(e.size()));
  Array f = e.astype(DType::F64);
  stats = f.to_buffer(out.data(), &ctx);
  return out;
}

}  // namespace

TEST(Siblings, TwoSumsOverOneSourceReadEachChunkOnce) {
  Context ctx(2);
  const int64_t T = 96, Y = 20, X = 30;
  Array a = stored(sin(arange(0, T * Y * X, 1, DType::F64, {T, Y, X})), {8, Y, X}, {4, Y, X}, ctx);
  // xarray's weighted mean: sum(data * w) / sum(notnull(data) * w)
  Array w = cos(arange(0, Y, 1, DType::F64, {Y, 1}));
  Array e = sum(a * w, axes({1, 2})) / sum((a * 0.0 + 1.0) * w, axes({1, 2}));
  Plan p = make_plan(e, {}, PlanTarget::Dense, &ctx);
  ASSERT_EQ(p.siblings.size(), 1u) << p.to_string();
  EXPECT_EQ(p.siblings[0].members.size(), 2u);
  EXPECT_EQ(p.siblings[0].shared.size(), 1u);
  Stats st;
  std::vector<double> got = dense(e, ctx, st);
  const std::vector<double> av = a.to_vector(&ctx);
  for (int64_t t = 0; t < T; ++t) {
    double num = 0, den = 0;
    for (int64_t y = 0; y < Y; ++y)
      for (int64_t x = 0; x < X; ++x) {
        num += av[static_cast<size_t>((t * Y + y) * X + x)] * std::cos(double(y));
        den += std::cos(double(y));
      }
    EXPECT_NEAR(got[static_cast<size_t>(t)], num / den, 1e-9) << t;
  }
  EXPECT_EQ(st.chunks_decompressed_total, T / 8);  // (unfolded: the source kept, or read twice)
  EXPECT_EQ(st.sources_kept, 0);
}

TEST(Siblings, MixedKindsAndDtypesFoldTogether) {
  Context ctx(2);
  const int64_t T = 40, N = 50;
  Array a = stored(sin(arange(0, T * N, 1, DType::F64, {T, N}) * 0.37), {8, N}, {8, N}, ctx);
  // argmax (int64), mean and std (float64) over the same axis of the same source
  Array e = reduce(Reduction::Argmax, a, axes({0})).astype(DType::F64) + mean(a, axes({0})) * 1000.0 +
            std_dev(a, axes({0})) * 1e6;
  Plan p = make_plan(e, {}, PlanTarget::Dense, &ctx);
  ASSERT_EQ(p.siblings.size(), 1u) << p.to_string();
  EXPECT_EQ(p.siblings[0].members.size(), 3u);
  Stats st;
  std::vector<double> got = dense(e, ctx, st);
  const std::vector<double> av = a.to_vector(&ctx);
  for (int64_t j = 0; j < N; ++j) {
    double m = 0, best = -1e300, v = 0;
    int64_t arg = 0;
    for (int64_t i = 0; i < T; ++i) {
      const double x = av[static_cast<size_t>(i * N + j)];
      m += x / T;
      if (x > best) best = x, arg = i;
    }
    for (int64_t i = 0; i < T; ++i) v += std::pow(av[static_cast<size_t>(i * N + j)] - m, 2) / T;
    EXPECT_NEAR(got[static_cast<size_t>(j)], double(arg) + m * 1000.0 + std::sqrt(v) * 1e6, 1e-5) << j;
  }
  EXPECT_LE(st.chunks_decompressed_total, T / 8);
}

TEST(Siblings, OtherAxesOrSourcesAreNotFolded) {
  Context ctx(2);
  Array a = stored(arange(0, 24 * 10, 1, DType::F64, {24, 10}), {6, 10}, {6, 10}, ctx);
  Array b = stored(arange(0, 24 * 10, 1, DType::F64, {24, 10}) * 2.0, {6, 10}, {6, 10}, ctx);
  Array other_sources = sum(a, axes({0})) + sum(b, axes({0}));
  EXPECT_TRUE(make_plan(other_sources, {}, PlanTarget::Dense, &ctx).siblings.empty());
  std::vector<double> v = other_sources.to_vector(&ctx);
  for (int64_t j = 0; j < 10; ++j) {
    double s = 0;
    for (int64_t i = 0; i < 24; ++i) s += 3.0 * double(i * 10 + j);
    EXPECT_DOUBLE_EQ(v[static_cast<size_t>(j)], s);
  }
  Array other_axes = sum(sum(a, axes({0}))) + sum(sum(a, axes({1})));
  EXPECT_TRUE(make_plan(other_axes, {}, PlanTarget::Dense, &ctx).siblings.empty());
  EXPECT_DOUBLE_EQ(other_axes.to_vector(&ctx)[0], 2.0 * (239.0 * 240 / 2));
  // The same fold asked for different regions: correct, one region folded for nothing.
  Array shifted = sum(a, axes({1}))[{Index::slice(0, 12)}] + sum(a * 2.0, axes({1}))[{Index::slice(12, 24)}];
  std::vector<double> s = shifted.to_vector(&ctx);
  for (int64_t i = 0; i < 12; ++i)
    EXPECT_DOUBLE_EQ(s[static_cast<size_t>(i)], (10.0 * i * 10 + 45) + 2 * (10.0 * (i + 12) * 10 + 45));
}

TEST(Siblings, FewDenseRangesAreBalancedOnSourceChunks) {
  Context ctx(2);
  Array a = stored(arange(0, 1460 * 24, 1, DType::F32, {1460, 4, 6}), {24, 4, 6}, {24, 4, 6}, ctx);
  const NodePtr r = sum(a, axes({1, 2})).node();
  EXPECT_EQ(balanced_ranges(r, {1440}, 2), (Shape{744}));   // 31 source chunks, not 730
  EXPECT_EQ(balanced_ranges(r, {1460}, 2), (Shape{1460}));  // one chunk: as it was
  EXPECT_EQ(balanced_ranges(r, {900}, 2), (Shape{900}));    // the last is not under half
  EXPECT_EQ(balanced_ranges(r, {100}, 2), (Shape{100}));    // many chunks: as they were
  const NodePtr plain = arange(0, 1460, 1, DType::F64, {1460}).node();
  EXPECT_EQ(balanced_ranges(plain, {1440}, 2), (Shape{730}));
}
