#include <gtest/gtest.h>

#include "b2lazy/b2lazy.hpp"
#include "test_util.hpp"

using namespace b2lazy;
using b2lazy::test::stored;

TEST(Take, RowsOfAnExpressionReadOnlyTouchedChunks) {
  Context ctx(2);
  Array a = stored(arange(0, 400, 1, DType::F64, {100, 4}), {10, 4}, {5, 4}, ctx);
  Array r = take(a * 2.0, {95, -100, 3, 95}, {2, 2}, 0).compute({}, &ctx);
  EXPECT_EQ(r.shape(), (Shape{2, 2, 4}));
  auto v = r.to_vector(&ctx);
  EXPECT_DOUBLE_EQ(v[0], 2.0 * 380);   // row 95
  EXPECT_DOUBLE_EQ(v[4], 0.0);         // row -100 == 0
  EXPECT_DOUBLE_EQ(v[8 + 1], 2.0 * 13);  // row 3, column 1
  EXPECT_EQ(r.stats()->distinct_chunks_decompressed.begin()->second, 2);
  EXPECT_THROW(take(a, {100}, {1}, 0), IndexError);
}

TEST(Take, GetitemWithArraysAndOindex) {
  Context ctx(1);
  Array a = arange(0, 20, 1, DType::I64, {4, 5});  // a[i, j] = 5 i + j
  // a[[3, -4], 1:4:2]: rows 3 and 0, columns 1 and 3.
  Array r = getitem(a, {IndexArray{{3, -4}, {2}}, Index::slice(1, 4, 2)});
  EXPECT_EQ(r.shape(), (Shape{2, 2}));
  EXPECT_EQ(r.to_vector(&ctx), (std::vector<double>{16, 18, 1, 3}));
  // Pointwise: a[[0, 3], [4, 0]] -> 4, 15; a boolean row mask; oindex as an outer product.
  EXPECT_EQ(getitem(a, {IndexArray{{0, 3}, {2}}, IndexArray{{4, 0}, {2}}}).to_vector(&ctx), (std::vector<double>{4, 15}));
  EXPECT_EQ(getitem(a, {IndexArray{{0, 1, 0, 0}, {4}, true}, Index::at(2)}).to_vector(&ctx), (std::vector<double>{7}));
  EXPECT_EQ(oindex(a, {IndexArray{{0, 3}, {2}}, IndexArray{{4, 0}, {2}}}).to_vector(&ctx),
            (std::vector<double>{4, 0, 19, 15}));
  EXPECT_THROW(getitem(a, {IndexArray{{4}, {1}}}), IndexError);
  EXPECT_THROW(getitem(a, {IndexArray{{}, {0}, false, "float64"}}), IndexError);
  EXPECT_THROW(oindex(a, {Index::newaxis(), IndexArray{{0}, {1}}}), IndexError);
}
