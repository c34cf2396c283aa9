// The Array API nodes of issue #15: eye, tril/triu, diagonal, tile and repeat — values on
// small arrays, strided and reversed regions of them, and what they read of stored inputs.
#include <gtest/gtest.h>

#include "b2lazy/b2lazy.hpp"
#include "test_util.hpp"

using namespace b2lazy;
using b2lazy::test::stored;

TEST(NamespaceNodes, EyeAndTriangles) {
  Context ctx(1);
  EXPECT_EQ(eye(2, 3, 1, DType::I8).to_vector(&ctx), (std::vector<double>{0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(eye(2, 2, -5).to_vector(&ctx), (std::vector<double>{0, 0, 0, 0}));
  Array flipped = eye(3, 3, 0)[{Index::slice({}, {}, -1)}];
  EXPECT_EQ(flipped.to_vector(&ctx), (std::vector<double>{0, 0, 1, 0, 1, 0, 1, 0, 0}));
  EXPECT_THROW(eye(-1, 2), ValueError);
  Array a = arange(1, 10, 1, DType::I32, {3, 3});  // 1..9
  EXPECT_EQ(tril(a).to_vector(&ctx), (std::vector<double>{1, 0, 0, 4, 5, 0, 7, 8, 9}));
  EXPECT_EQ(triu(a, 1).to_vector(&ctx), (std::vector<double>{0, 2, 3, 0, 0, 6, 0, 0, 0}));
  // a region read backwards along both axes: rows 2, 0 and columns 2, 0 of tril(a)
  Array r = tril(a)[{Index::slice({}, {}, -2), Index::slice({}, {}, -2)}];
  EXPECT_EQ(r.to_vector(&ctx), (std::vector<double>{9, 7, 0, 1}));
  EXPECT_THROW(tril(arange(0, 3)), ValueError);
}

TEST(NamespaceNodes, DiagonalReadsOnlyDiagonalChunks) {
  Context ctx(2);
  Array a = stored(arange(0, 400, 1, DType::F64, {20, 20}), {5, 5}, {5, 5}, ctx);
  Array d = diagonal(a, 2).compute({}, &ctx);
  EXPECT_EQ(d.shape(), (Shape{18}));
  auto v = d.to_vector(&ctx);
  for (int i = 0; i < 18; ++i) EXPECT_DOUBLE_EQ(v[i], 21.0 * i + 2);
  // offset 2 crosses 7 chunks (the diagonal ones and those beside them)
  EXPECT_EQ(d.stats()->distinct_chunks_decompressed.begin()->second, 7);
  EXPECT_EQ(diagonal(a, 25).shape(), (Shape{0}));
  EXPECT_EQ(diagonal(a, -INT64_MAX).shape(), (Shape{0}));
  // batches: the diagonal of each 2 x 3 matrix
  Array b = arange(0, 12, 1, DType::I64, {2, 2, 3});
  EXPECT_EQ(diagonal(b, -1).to_vector(&ctx), (std::vector<double>{3, 9}));
  Array rev = diagonal(b)[{Index::slice(), Index::slice({}, {}, -1)}];
  EXPECT_EQ(rev.to_vector(&ctx), (std::vector<double>{4, 0, 10, 6}));
}

TEST(NamespaceNodes, TileAndRepeat) {
  Context ctx(1);
  Array x = arange(0, 3, 1, DType::I16);  // 0 1 2
  EXPECT_EQ(tile(x, {2}).to_vector(&ctx), (std::vector<double>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(tile(x, {2, 1}).shape(), (Shape{2, 3}));
  EXPECT_EQ(tile(x, {0}).shape(), (Shape{0}));
  // a region crossing a period boundary, and a reversed one
  Array crossing = tile(x, {4})[{Index::slice(2, 5)}];
  EXPECT_EQ(crossing.to_vector(&ctx), (std::vector<double>{2, 0, 1}));
  Array backwards = tile(x, {2})[{Index::slice({}, {}, -1)}];
  EXPECT_EQ(backwards.to_vector(&ctx), (std::vector<double>{2, 1, 0, 2, 1, 0}));
  EXPECT_EQ(repeat(x, 2).to_vector(&ctx), (std::vector<double>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(repeat(x, std::vector<int64_t>{0, 3, 1}).to_vector(&ctx), (std::vector<double>{1, 1, 1, 2}));
  Array m = arange(0, 4, 1, DType::F32, {2, 2});
  EXPECT_EQ(repeat(m, 2, 1).to_vector(&ctx), (std::vector<double>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(repeat(m, 2).shape(), (Shape{8}));  // flattened
  EXPECT_THROW(repeat(x, -1), ValueError);
  EXPECT_THROW(repeat(x, std::vector<int64_t>{1, 2}), ValueError);
  EXPECT_THROW(repeat(x, 2, 1), AxisError);
  EXPECT_THROW(tile(x, {INT64_MAX}), ValueError);
}

TEST(NamespaceNodes, TileSliceReadsTheChunksItWrapsOnto) {
  Context ctx(2);
  Array a = stored(arange(0, 100, 1, DType::F64), {10}, {10}, ctx);
  Array r = tile(a, {3})[{Index::slice(95, 105)}].compute({}, &ctx);
  auto v = r.to_vector(&ctx);
  for (int i = 0; i < 10; ++i) EXPECT_DOUBLE_EQ(v[i], (95 + i) % 100);
  EXPECT_EQ(r.stats()->distinct_chunks_decompressed.begin()->second, 2);  // the last and the first
}
