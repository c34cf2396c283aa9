// Moving reductions (src/ops/rolling/moving_node.*) against a direct loop over each
// window, over stored arrays in chunks smaller and larger than the window; and the
// rewrite of a reduction over a sliding window view's window axis into one moving node.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "b2lazy/b2lazy.hpp"
#include "test_util.hpp"

using namespace b2lazy;
using b2lazy::test::stored;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// xarray's rolling along axis 0 of an (n, m) array, one window at a time.
std::vector<double> naive(const std::vector<double>& x, int64_t n, int64_t m, int64_t w, MovingOp op, bool center,
                          int64_t min_periods, double ddof) {
  std::vector<double> out(x.size());
  const int64_t before = center ? w / 2 : w - 1;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      std::vector<double> v;
      for (int64_t p = i - before; p < i - before + w; ++p)
        if (p >= 0 && p < n && !std::isnan(x[p * m + j])) v.push_back(x[p * m + j]);
      double r = kNaN, s = 0, lo = INFINITY, hi = -INFINITY;
      for (double e : v) s += e, lo = std::min(lo, e), hi = std::max(hi, e);
      const double c = static_cast<double>(v.size()), mean = c ? s / c : kNaN;
      double m2 = 0;
      for (double e : v) m2 += (e - mean) * (e - mean);
      switch (op) {
        case MovingOp::Sum: r = s; break;
        case MovingOp::Mean: r = mean; break;
        case MovingOp::Min: r = c ? lo : kNaN; break;
        case MovingOp::Max: r = c ? hi : kNaN; break;
        case MovingOp::Var: r = c - ddof > 0 ? m2 / (c - ddof) : kNaN; break;
        case MovingOp::Std: r = c - ddof > 0 ? std::sqrt(m2 / (c - ddof)) : kNaN; break;
        case MovingOp::Count: r = c; break;
      }
      out[i * m + j] = static_cast<int64_t>(v.size()) >= min_periods ? r : kNaN;
    }
  return out;
}

}  // namespace

TEST(Moving, EveryOpMatchesWindowByWindowOverChunksSmallerAndLargerThanTheWindow) {
  Context ctx(2);
  std::mt19937 rng(7);
  std::normal_distribution<double> g(3, 4);
  const int64_t n = 37, m = 5;
  std::vector<double> x(static_cast<size_t>(n * m));
  for (double& v : x) v = g(rng);
  x[3] = x[40] = x[41] = x[100] = kNaN;
  Array a = from_buffer(x.data(), DType::F64, {n, m}, {}, nullptr);
  for (int64_t chunk : {1, 4, 37})
    for (int64_t w : {1, 3, 8, 40})
      for (MovingOp op :
           {MovingOp::Sum, MovingOp::Mean, MovingOp::Min, MovingOp::Max, MovingOp::Var, MovingOp::Std, MovingOp::Count})
        for (bool center : {false, true}) {
          const int64_t mp = std::max<int64_t>(1, w / 2);
          MovingOptions o;
          o.axis = 0, o.center = center, o.min_periods = mp, o.ddof = 1;
          Array s = stored(a, {chunk, 2}, {chunk, 2}, ctx);
          auto got = moving_reduce(s, w, op, o).to_vector(&ctx);
          auto want = naive(x, n, m, w, op, center, mp, 1);
          SCOPED_TRACE(std::string(moving_op_name(op)) + " chunk " + std::to_string(chunk) + " w " + std::to_string(w) +
                       (center ? " centred" : ""));
          ASSERT_EQ(got.size(), want.size());
          for (size_t i = 0; i < got.size(); ++i) {
            if (std::isnan(want[i])) ASSERT_TRUE(std::isnan(got[i])) << i;
            else ASSERT_NEAR(got[i], want[i], 1e-9 * (1 + std::abs(want[i]))) << i;
          }
        }
}

TEST(Moving, IntegerSumsOverWindowViewsAreExactAndKeepNumPysDtype) {
  Context ctx(1);
  Array a = arange(0, 30, 1, DType::I32, {30});
  ReduceOptions last;
  last.axis = std::vector<int>{-1};
  Array v = sliding_window_view(a, {4});
  EXPECT_EQ(v.node()->kind(), "sliding_window");
  Array s = sum(v, last);
  EXPECT_EQ(s.node()->kind(), "moving_reduce");  // one node, not a reduction of shifted copies
  EXPECT_EQ(s.dtype(), DType::I64);
  auto got = s.to_vector(&ctx);
  ASSERT_EQ(got.size(), 27u);
  for (int i = 0; i < 27; ++i) EXPECT_EQ(got[i], 4 * i + 6);
  Array mx = max(v, last);
  EXPECT_EQ(mx.dtype(), DType::I32);
  EXPECT_EQ(mx.to_vector(&ctx)[5], 8);
  ReduceOptions first;
  first.axis = std::vector<int>{0};
  EXPECT_EQ(sum(v, first).node()->kind(), "sum");  // another axis: the plain reduction
}

TEST(Moving, BadArgumentsNameTheParameter) {
  Array a = ones({5}, DType::F64);
  auto expect = [](auto f, const char* word) {
    try {
      f();
      FAIL() << "no error";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  expect([&] { moving_reduce(a, 0, MovingOp::Sum); }, "window");
  MovingOptions o;
  o.min_periods = 6;
  expect([&] { moving_reduce(a, 3, MovingOp::Sum, o); }, "min_periods");
  o = {};
  o.axis = 2;
  expect([&] { moving_reduce(a, 3, MovingOp::Sum, o); }, "axis");
  expect([&] { moving_op("median"); }, "median");
}

TEST(Moving, ARollingCountAskedTwiceIsOneNode) {
  // xarray's rolling mean builds the window counts twice, each from a fresh notnull(x):
  // equal graphs give the same moving node, computed once per region.
  Context ctx(1);
  Array x = from_buffer_compressed(std::vector<double>(40, 1.5).data(), DType::F64, {8, 5}, {4, 5}, {4, 5});
  ReduceOptions last;
  last.axis = std::vector<int>{-1};
  auto notnull = [](const Array& y) { return elementwise(Op::LogicalNot, {elementwise(Op::Isnan, {y})}); };
  auto counts = [&] {
    Array valid = notnull(x);
    Array padded = pad(valid, {{2, 0}, {0, 0}}, PadMode::Constant, full({}, Scalar(false), DType::Bool));
    return sum(sliding_window_view(padded, {3}, std::vector<int>{0}), last);
  };
  Array a = counts(), b = counts();
  EXPECT_EQ(a.node(), b.node());
  Array other = sum(sliding_window_view(pad(notnull(x), {{2, 0}, {0, 0}}), {3}, std::vector<int>{0}), last);
  EXPECT_EQ(other.node(), a.node());  // (the default fill is False too)
  Array shifted = sum(sliding_window_view(pad(notnull(x), {{1, 1}, {0, 0}}), {3}, std::vector<int>{0}), last);
  EXPECT_NE(shifted.node(), a.node());
  Array of_y = sum(sliding_window_view(pad(notnull(x + 1.0), {{2, 0}, {0, 0}}), {3}, std::vector<int>{0}), last);
  EXPECT_NE(of_y.node(), a.node());
  auto v = a.to_vector(&ctx);
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(v[5 * 4], 3);
}
