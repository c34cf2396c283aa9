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
