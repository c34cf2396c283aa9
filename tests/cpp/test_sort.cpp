// sort / argsort / unique from C++: a lane longer than two runs is merged from sorted runs
// (ops/sort/merge_node.hpp); checked against std::stable_sort, with ties, NaNs, strided
// and reversed reads, and a budget under the array's size (runs spilled).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "b2lazy/b2lazy.hpp"
#include "test_util.hpp"

using namespace b2lazy;

namespace {
struct RunLength {  // graphs built while it lives sort lanes longer than 2 * n out of core
  explicit RunLength(int64_t n) : old(sort_run_length()) { set_sort_run_length(n); }
  ~RunLength() { set_sort_run_length(old); }
  int64_t old;
};

Array vector_array(const std::vector<double>& v) {
  auto data = std::make_shared<std::vector<double>>(v);
  return from_buffer(data->data(), DType::F64, {static_cast<int64_t>(v.size())}, {8},
                     std::shared_ptr<const void>(data, data->data()));
}

// NaNs after every number, equal values in their order
std::vector<int64_t> stable_order(const std::vector<double>& v) {
  std::vector<int64_t> o(v.size());
  std::iota(o.begin(), o.end(), 0);
  std::stable_sort(o.begin(), o.end(), [&](int64_t a, int64_t b) {
    if (std::isnan(v[a]) || std::isnan(v[b])) return !std::isnan(v[a]) && std::isnan(v[b]);
    return v[a] < v[b];
  });
  return o;
}
}  // namespace

TEST(Sort, RunsAndMergeMatchAStableSort) {
  Context ctx(2);
  std::mt19937_64 rng(3);
  for (int64_t n : {1, 7, 64, 1000, 5001}) {
    std::vector<double> v(static_cast<size_t>(n));
    for (auto& x : v) x = static_cast<double>(rng() % 17);  // ties
    for (int64_t i = 0; i < n; i += 13) v[static_cast<size_t>(i)] = std::nan("");
    const std::vector<int64_t> order = stable_order(v);
    RunLength runs(5);
    const Array a = vector_array(v);
    const std::vector<double> got = argsort(a).to_vector(&ctx);
    ASSERT_EQ(got.size(), order.size());
    for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(got[i], static_cast<double>(order[i])) << n << " " << i;
    const std::vector<double> vals = sort(a).to_vector(&ctx);
    for (size_t i = 0; i < order.size(); ++i) {
      const double want = v[static_cast<size_t>(order[i])];
      if (std::isnan(want)) EXPECT_TRUE(std::isnan(vals[i]));
      else EXPECT_EQ(vals[i], want);
    }
    // a reversed, strided read merges from each position asked for
    const std::vector<double> back = argsort(a)[{Index::slice({}, {}, -3)}].to_vector(&ctx);
    for (size_t k = 0; k < back.size(); ++k) EXPECT_EQ(back[k], static_cast<double>(order[order.size() - 1 - 3 * k]));
  }
}

TEST(Sort, LargerThanTheBudgetSpillsItsRuns) {
  Context ctx(2);
  std::mt19937_64 rng(5);
  std::vector<double> v(int64_t(1) << 21);  // 16 MiB
  for (auto& x : v) x = static_cast<double>(rng() % 100000);
  RunLength runs(int64_t(1) << 16);
  const Array s = sort(vector_array(v));
  const Plan p = s.plan(
      [] {
        ComputeOptions o;
        o.max_memory = size_t(12) << 20;
        return o;
      }(),
      &ctx);
  bool spilled = false;
  for (const PlanStage& st : p.stages) spilled = spilled || st.where == KeptIn::Spilled;
  EXPECT_TRUE(spilled);
  std::vector<double> got(v.size());
  s.to_buffer(got.data(), &ctx, size_t(12) << 20);
  std::sort(v.begin(), v.end());
  EXPECT_EQ(got, v);
}

TEST(Sort, UniqueCountsAndInverse) {
  Context ctx(2);
  const std::vector<double> v{3, 1, std::nan(""), 1, -0.0, 0.0, 3, std::nan("")};
  RunLength runs(2);
  const Unique u = unique(vector_array(v), true, true, true, &ctx);
  const std::vector<double> values = u.values.to_vector(&ctx);
  ASSERT_EQ(values.size(), 5u);  // 0, 1, 3, nan, nan
  EXPECT_EQ(values[0], 0.0);
  EXPECT_EQ(values[2], 3.0);
  EXPECT_TRUE(std::isnan(values[3]) && std::isnan(values[4]));
  EXPECT_EQ(u.counts->to_vector(&ctx), (std::vector<double>{2, 2, 2, 1, 1}));
  EXPECT_EQ(u.indices->to_vector(&ctx), (std::vector<double>{4, 1, 0, 2, 7}));
  EXPECT_EQ(u.inverse->to_vector(&ctx), (std::vector<double>{2, 1, 3, 1, 0, 0, 2, 4}));
}
