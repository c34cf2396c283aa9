#include <gtest/gtest.h>

#include "b2lazy/b2lazy.hpp"
#include "ops/shape/reshape_node.hpp"
#include "test_util.hpp"

using namespace b2lazy;
using b2lazy::test::stored;

TEST(Flatten, RangeBoxesCoverTheRangeInOrder) {
  Shape s{3, 4, 5};
  for (int64_t b = 0; b < 60; b += 7)
    for (int64_t e = b; e <= 60; e += 5) {
      int64_t total = 0;
      for (auto& bx : flat_range_boxes(s, b, e)) total += bx.size();
      EXPECT_EQ(total, e - b) << b << " " << e;
    }
}

TEST(Scan, CumsumAxesFlattenedAndInitial) {
  Context ctx(2);
  Array a = stored(arange(0, 20, 1, DType::I32, {4, 5}), {2, 3}, {1, 3}, ctx);
  auto flat = cumsum(a).to_vector(&ctx);
  ASSERT_EQ(flat.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(flat[i], i * (i + 1) / 2);
  auto ax0 = cumsum(a, 0).to_vector(&ctx);  // column sums so far
  EXPECT_EQ(ax0[3 * 5 + 2], 2 + 7 + 12 + 17);
  auto ax1 = cumulative_sum(a, ScanOptions{1, std::nullopt, true}).to_vector(&ctx);
  ASSERT_EQ(ax1.size(), 24u);
  EXPECT_EQ(ax1[6], 0);  // row 1 starts with the identity
  EXPECT_EQ(ax1[6 + 5], 5 + 6 + 7 + 8 + 9);
  EXPECT_EQ(cumsum(a).dtype(), DType::I64);
  auto p = cumprod(ones({7}, DType::F32) * 2.0f).to_vector(&ctx);
  EXPECT_EQ(p[6], 128);
}

TEST(Scan, TailOfFlatCumsumReadsEachChunkAtMostTwice) {
  Context ctx(2);
  Array a = stored(arange(0, 10000, 1, DType::F64, {100, 100}), {10, 10}, {5, 10}, ctx);
  Array tail = cumsum(a)[{Index::slice(-10, std::nullopt)}];
  Array r = tail.compute({}, &ctx);
  EXPECT_LE(r.stats()->chunks_decompressed_total, 2 * 100);
  auto v = r.to_vector(&ctx);
  EXPECT_DOUBLE_EQ(v[9], 9999.0 * 10000 / 2);
  EXPECT_DOUBLE_EQ(v[0], 9990.0 * 9991 / 2);
  // In order over all chunks: totals once, then each chunk once.
  Array full = cumsum(a, 1).compute({}, &ctx);
  EXPECT_LE(full.stats()->chunks_decompressed_total, 2 * 100);
  EXPECT_DOUBLE_EQ(full.to_vector(&ctx)[199], 100.0 * 100 + 99.0 * 100 / 2);
}

TEST(Scan, ReusedLargeNodeSpillsToCompressedTemporary) {
  Context ctx(2);
  Array a = stored(arange(0, 256 * 256, 1, DType::F64, {256, 256}), {32, 256}, {16, 256}, ctx);
  Array c = cumsum(a, 0);
  Array e = c + c[{Index::slice(std::nullopt, std::nullopt, -1)}];
  std::vector<double> out(256 * 256);
  // c (512 KiB) > budget / 4; a budget of 1 MiB is refused now (max_memory is a limit).
  Stats st = e.to_buffer(out.data(), &ctx, size_t(7) << 18);
  EXPECT_LE(st.projected_peak_bytes, int64_t(7) << 18);
  EXPECT_EQ(st.cache_misses, 2);  // the segment totals, then c itself (spilled)
  EXPECT_GT(st.cache_hits, 0);
  auto colsum = [](int64_t rows, int64_t j) {  // sum of a[0:rows, j]
    return 256.0 * rows * (rows - 1) / 2 + static_cast<double>(rows * j);
  };
  for (int64_t i : {0, 17, 255})
    for (int64_t j : {0, 100, 255})
      ASSERT_DOUBLE_EQ(out[i * 256 + j], colsum(i + 1, j) + colsum(256 - i, j)) << i << "," << j;
}
