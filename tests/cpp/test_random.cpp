// b2lazy/random.hpp: Philox4x32-10's known answers (the Random123 distribution's
// kat_vectors, from Salmon et al. 2011), and values that depend on the element's index
// only: the same whatever the chunks, the threads or the region evaluated.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "test_util.hpp"

namespace b2lazy {
namespace {

TEST(Random, PhiloxKnownAnswers) {
  using W4 = std::array<uint32_t, 4>;
  EXPECT_EQ(philox::block({0, 0, 0, 0}, {0, 0}), (W4{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox::block({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (W4{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox::block({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (W4{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(Random, UniformIsTheTopBitsOfItsHalfOfThePairsBlock) {
  // Elements 2p and 2p + 1 of seed s, stream t: the two 64-bit halves of block
  // (p, 0, t, 0) under key (s low, s high); 53 bits each.
  const uint64_t seed = 0x0123456789abcdefULL;
  Array a = random_uniform({5}, 0, 1, {seed, 7});
  std::vector<double> v = a.to_vector();
  for (uint32_t k = 0; k < 5; ++k) {
    const auto w = philox::block({k / 2, 0, 7, 0}, {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
    const uint64_t bits = k % 2 ? (uint64_t(w[2]) | uint64_t(w[3]) << 32) : (uint64_t(w[0]) | uint64_t(w[1]) << 32);
    EXPECT_EQ(v[k], static_cast<double>(bits >> 11) * 0x1p-53);
  }
}

// Every distribution and dtype: the whole array with one chunking and thread count, and
// strided sub-regions of it with others, agree bit for bit.
TEST(Random, RegionsChunksAndThreadsAgree) {
  const RandomKey key{42, 3};
  const Shape shape{37, 53};
  std::vector<std::function<Array(const Shape&)>> makers = {
      [&](const Shape& c) { return random_uniform(shape, -2, 5, key, DType::F64, c); },
      [&](const Shape& c) { return random_uniform(shape, 0, 1, key, DType::F32, c); },
      [&](const Shape& c) { return random_normal(shape, 1, 3, key, DType::F64, c); },
      [&](const Shape& c) { return random_integers(shape, -5, 11, key, DType::I8, c); },
      [&](const Shape& c) { return random_integers(shape, INT64_MIN, 0, key, DType::I64, c); },
  };
  Context one(1), two(2);
  for (auto& make : makers) {
    const Array whole = make({});
    const std::vector<double> ref = whole.to_vector(&one);
    for (const Shape& chunks : {Shape{5, 7}, Shape{37, 1}, Shape{1, 53}}) {
      EXPECT_EQ(make(chunks).to_vector(&two), ref);
      Array part = make(chunks)[{Index::slice(3, 30, 4), Index::slice(50, 2, -3)}];
      std::vector<double> got = part.to_vector(&two), want;
      for (int64_t i = 3; i < 30; i += 4)
        for (int64_t j = 50; j > 2; j -= 3) want.push_back(ref[static_cast<size_t>(i * 53 + j)]);
      EXPECT_EQ(got, want);
    }
  }
}

TEST(Random, StreamsAndSeedsDiffer) {
  EXPECT_NE(random_uniform({8}, 0, 1, {1, 0}).to_vector(), random_uniform({8}, 0, 1, {1, 1}).to_vector());
  EXPECT_NE(random_uniform({8}, 0, 1, {1, 0}).to_vector(), random_uniform({8}, 0, 1, {2, 0}).to_vector());
}

TEST(Random, MomentsAreSane) {
  // Fixed seeds: deterministic. Bounds are several standard errors wide.
  const int64_t n = 200000;
  std::vector<double> u = random_uniform({n}, 0, 1, {5, 0}).to_vector();
  const double mu = std::accumulate(u.begin(), u.end(), 0.0) / n;
  EXPECT_NEAR(mu, 0.5, 0.005);
  EXPECT_GE(*std::min_element(u.begin(), u.end()), 0.0);
  EXPECT_LT(*std::max_element(u.begin(), u.end()), 1.0);
  std::vector<double> z = random_normal({n}, 0, 1, {5, 1}).to_vector();
  double m = 0, s = 0;
  for (double x : z) m += x;
  m /= n;
  for (double x : z) s += (x - m) * (x - m);
  EXPECT_NEAR(m, 0, 0.01);
  EXPECT_NEAR(std::sqrt(s / n), 1, 0.01);
  std::vector<double> k = random_integers({n}, 10, 6, {5, 2}, DType::I32).to_vector();
  std::vector<int64_t> counts(6, 0);
  for (double x : k) {
    ASSERT_GE(x, 10);
    ASSERT_LE(x, 15);
    ++counts[static_cast<size_t>(x - 10)];
  }
  for (int64_t c : counts) EXPECT_NEAR(static_cast<double>(c) / n, 1.0 / 6, 0.005);
}

TEST(Random, IntegerBoundsAreChecked) {
  EXPECT_THROW(random_integers({3}, -1, 2, {}, DType::U8), ValueError);
  EXPECT_THROW(random_integers({3}, 0, 257, {}, DType::U8), ValueError);
  EXPECT_NO_THROW(random_integers({3}, 0, 256, {}, DType::U8));
  EXPECT_THROW(random_integers({3}, 0, 0, {}, DType::I64), ValueError);  // 2**64 values from 0
  EXPECT_NO_THROW(random_integers({3}, 0, 0, {}, DType::U64));
  EXPECT_THROW(random_uniform({3}, 0, 1, {}, DType::I32), TypeError);
  EXPECT_THROW(random_normal({3}, 0, -1, {}), ValueError);
}

TEST(Histograms, SmallCases) {
  std::vector<int64_t> xs = {0, 3, 3, 1, 7};
  Array x = from_buffer(xs.data(), DType::I64, {5}, {}, nullptr, "x");
  EXPECT_EQ(bincount(x).to_vector(), (std::vector<double>{1, 1, 0, 2, 0, 0, 0, 1}));
  EXPECT_EQ(bincount(x, std::nullopt, 10).size(), 10);
  EXPECT_EQ(isin(x, arange_int(2, 5)).to_vector(), (std::vector<double>{0, 1, 1, 0, 0}));
  EXPECT_EQ(digitize(x, arange_int(0, 8, 2)).to_vector(), (std::vector<double>{1, 2, 2, 1, 4}));
  EXPECT_EQ(digitize(x, arange_int(6, -1, -2)).to_vector(), (std::vector<double>{3, 2, 2, 3, 0}));  // bins 6 4 2 0
  Histogram h = histogram(x, {4, std::nullopt, std::make_pair(0.0, 4.0)});
  EXPECT_EQ(h.hist.to_vector(), (std::vector<double>{1, 1, 0, 2}));
  EXPECT_EQ(h.edges[0], (std::vector<double>{0, 1, 2, 3, 4}));
  std::vector<int64_t> neg = {1, -1};
  EXPECT_THROW(bincount(from_buffer(neg.data(), DType::I64, {2}, {}, nullptr, "n")), ValueError);
}

TEST(Histograms, NanMedianSkipsNaN) {
  const double nan = std::nan("");
  std::vector<double> v = {1, nan, 3, nan, nan, nan};
  Array a = from_buffer(v.data(), DType::F64, {3, 2}, {}, nullptr, "a");
  QuantileOptions o;
  o.axis = std::vector<int>{1};
  std::vector<double> r = nanmedian(a, o).to_vector();
  EXPECT_EQ(r[0], 1);
  EXPECT_EQ(r[1], 3);
  EXPECT_TRUE(std::isnan(r[2]));
}

}  // namespace
}  // namespace b2lazy
