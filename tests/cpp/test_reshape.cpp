#include <gtest/gtest.h>

#include "b2lazy/b2lazy.hpp"
#include "test_util.hpp"

using namespace b2lazy;
using b2lazy::test::stored;

TEST(Reshape, SameFlatOrderAndInferredAxis) {
  Context ctx(2);
  Array a = stored(arange(0, 60, 1, DType::F64, {6, 10}), {4, 4}, {2, 4}, ctx);
  Array r = reshape(a, {-1, 3, 4});
  EXPECT_EQ(r.shape(), (Shape{5, 3, 4}));
  auto v = r.to_vector(&ctx);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_DOUBLE_EQ(v[i], static_cast<double>(i));
  // A strided, reversed region: r[::-2, 1, ::3] -> flat 4*12+4+{0,3}, 2*12+4+{0,3}, 4+{0,3}.
  auto s = r[{Index::slice({}, {}, -2), Index::at(1), Index::slice({}, {}, 3)}].to_vector(&ctx);
  EXPECT_EQ(s, (std::vector<double>{52, 55, 28, 31, 4, 7}));
  EXPECT_THROW(reshape(a, {7, -1}), ValueError);
  EXPECT_THROW(reshape(a, {-1, -1}), ValueError);
}

TEST(Reshape, RollWithoutAxisAndNonzero) {
  Context ctx(1);
  Array a = arange(0, 6, 1, DType::I64, {2, 3});
  EXPECT_EQ(roll(a, {2}).to_vector(&ctx), (std::vector<double>{4, 5, 0, 1, 2, 3}));
  auto nz = nonzero(a > Scalar(3), &ctx);  // elements 4, 5 at (1, 1), (1, 2)
  ASSERT_EQ(nz.size(), 2u);
  EXPECT_EQ(nz[0].to_vector(&ctx), (std::vector<double>{1, 1}));
  EXPECT_EQ(nz[1].to_vector(&ctx), (std::vector<double>{1, 2}));
  // take_along_axis: per row, columns 2 then 0.
  Array t = take_along_axis(a, {2, 0, -1, 0}, {2, 2}, 1);
  EXPECT_EQ(t.to_vector(&ctx), (std::vector<double>{2, 0, 5, 3}));
}
