// segment_reduce (b2lazy/groupby.hpp): values against a loop per group, empty groups and
// dropped codes, and the work: each stored chunk decompressed once per output region.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "b2lazy/b2lazy.hpp"
#include "test_util.hpp"

using namespace b2lazy;
using b2lazy::test::stored;

namespace {
// Per group g and column k: fn over x[i, k] for the rows i with codes[i] == g.
template <class Fn>
std::vector<double> by_loop(const std::vector<double>& x, int64_t rows, int64_t cols, const std::vector<int64_t>& codes,
                            int64_t ngroups, Fn fn) {
  std::vector<double> out;
  for (int64_t g = 0; g < ngroups; ++g)
    for (int64_t k = 0; k < cols; ++k) {
      std::vector<double> v;
      for (int64_t i = 0; i < rows; ++i)
        if (codes[static_cast<size_t>(i)] == g) v.push_back(x[static_cast<size_t>(i * cols + k)]);
      out.push_back(fn(v));
    }
  return out;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(got[i])) << i;
    else EXPECT_NEAR(got[i], want[i], 1e-9 * (1 + std::abs(want[i]))) << i;
  }
}
}  // namespace

TEST(SegmentReduce, AgainstALoopPerGroup) {
  Context ctx(2);
  const int64_t rows = 50, cols = 7, ng = 6;  // group 5 empty; some rows dropped
  std::vector<int64_t> codes;
  for (int64_t i = 0; i < rows; ++i) codes.push_back(i % 9 == 8 ? -1 : (i * 7) % 5);
  Array a = stored(arange(0, double(rows * cols), 1, DType::F64, {rows, cols}) * 0.37, {8, 3}, {4, 3}, ctx);
  const std::vector<double> x = a.to_vector(&ctx);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto sum = [](const std::vector<double>& v) {
    double s = 0;
    for (double e : v) s += e;
    return s;
  };
  auto mean = [&](const std::vector<double>& v) { return v.empty() ? nan : sum(v) / double(v.size()); };
  auto var1 = [&](const std::vector<double>& v) {
    if (v.size() < 2) return nan;
    const double m = mean(v);
    double s = 0;
    for (double e : v) s += (e - m) * (e - m);
    return s / double(v.size() - 1);
  };
  auto first = [&](const std::vector<double>& v) { return v.empty() ? nan : v.front(); };
  auto mx = [&](const std::vector<double>& v) { return v.empty() ? nan : *std::max_element(v.begin(), v.end()); };
  SegmentOptions o{.axis = 0, .ngroups = ng};
  expect_near(segment_reduce(a, codes, "sum", o).to_vector(&ctx), by_loop(x, rows, cols, codes, ng, sum));
  expect_near(segment_reduce(a, codes, "mean", o).to_vector(&ctx), by_loop(x, rows, cols, codes, ng, mean));
  expect_near(segment_reduce(a, codes, "first", o).to_vector(&ctx), by_loop(x, rows, cols, codes, ng, first));
  expect_near(segment_reduce(a, codes, "max", o).to_vector(&ctx), by_loop(x, rows, cols, codes, ng, mx));
  SegmentOptions d1 = o;
  d1.ddof = 1;
  expect_near(segment_reduce(a, codes, "var", d1).to_vector(&ctx), by_loop(x, rows, cols, codes, ng, var1));
  // along the last axis: the same as the transpose's along the first
  Array t = permute_dims(a, {1, 0});
  expect_near(permute_dims(segment_reduce(t, codes, "mean", {.axis = 1, .ngroups = ng}), {1, 0}).to_vector(&ctx),
              by_loop(x, rows, cols, codes, ng, mean));
}

TEST(SegmentReduce, ReadsEachChunkOncePerOutputRegion) {
  Context ctx(2);
  const int64_t rows = 120;
  Array a = stored(arange(0, double(rows * 10), 1, DType::F32, {rows, 10}), {12, 10}, {12, 10}, ctx);
  std::vector<int64_t> interleaved, contiguous;
  for (int64_t i = 0; i < rows; ++i) interleaved.push_back(i % 4), contiguous.push_back(i / 5);
  for (const auto* codes : {&interleaved, &contiguous}) {
    Array r = segment_reduce(a, *codes, "nanmean", {.axis = 0}).compute({}, &ctx);
    EXPECT_EQ(r.stats()->chunks_decompressed_total, 10);  // 10 chunks, whatever the groups
  }
  // one group of contiguous codes: only its chunk
  Array one = segment_reduce(a, contiguous, "sum", {.axis = 0})[{Index::slice(5, 6)}].compute({}, &ctx);
  EXPECT_EQ(one.stats()->chunks_decompressed_total, 1);
}

TEST(SegmentReduce, BadArgumentsAreNamed) {
  Array a = zeros({4, 3});
  EXPECT_THROW(segment_reduce(a, {0, 1, 2}, "sum", {.axis = 0}), ValueError);
  EXPECT_THROW(segment_reduce(a, {0, 1, 2, 9}, "sum", {.axis = 0, .ngroups = 3}), ValueError);
  EXPECT_THROW(segment_reduce(a, {0, 1, 2}, "median", {}), ValueError);
  EXPECT_THROW(segment_reduce(a, {0, 1, 2}, "sum", {.axis = 5}), AxisError);
  try {
    segment_reduce(a, {0, -2, 0, 0}, "sum", {.axis = 0});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("codes[1] is -2"), std::string::npos) << e.what();
  }
}
