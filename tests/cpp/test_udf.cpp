// lazyudf from C++ (b2lazy/udf.hpp): a function on blocks, its offset, a halo (depth) and
// strided regions read through the box around them.
#include <gtest/gtest.h>

#include "b2lazy/b2lazy.hpp"
#include "b2lazy/udf_grid.hpp"
#include "test_util.hpp"

using namespace b2lazy;
using b2lazy::test::stored;

TEST(Udf, BlocksOffsetsAndDepth) {
  Context ctx(2);
  const Array x = stored(arange(0, 20, 1, DType::F64), {5}, {5}, ctx);
  // out[i] = x[i - 1] + x[i + 1] (0 beyond the edges), from the widened view
  UdfFunction neighbours = [](const std::vector<UdfInput>& in, void* out, DType, const Shape& shape,
                              const Shape& offset) {
    const double* v = static_cast<const double*>(in[0].data);
    const int64_t n = in[0].shape[0], first = in[0].start[0];
    for (int64_t k = 0; k < shape[0]; ++k) {
      const int64_t i = offset[0] + k - first;
      static_cast<double*>(out)[k] = (i >= 1 ? v[i - 1] : 0.0) + (i + 1 < n ? v[i + 1] : 0.0);
    }
  };
  Array u = lazyudf(neighbours, {x}, DType::F64, {20}, {1}, "neighbours");
  ComputeOptions o;
  o.chunks = {4};
  o.blocks = {4};
  std::vector<double> got = u.compute(o, &ctx).to_vector(&ctx);
  for (int64_t i = 0; i < 20; ++i)
    EXPECT_DOUBLE_EQ(got[i], (i >= 1 ? i - 1.0 : 0.0) + (i + 1 < 20 ? i + 1.0 : 0.0)) << i;
  // a strided, reversed region: the function fills the box around it
  EXPECT_EQ(u[{Index::slice(9, 2, -3)}].to_vector(&ctx), (std::vector<double>{18, 12, 6}));
  // a block of [10, 15) reads x's chunks [5, 10), [10, 15) and [15, 20): the halo's
  Array part = u[{Index::slice(10, 15)}].compute({}, &ctx);
  EXPECT_EQ(part.stats()->distinct_chunks_decompressed.begin()->second, 3);
  EXPECT_THROW(lazyudf(neighbours, {x}, DType::F64, {21}), ValueError);
  EXPECT_THROW(lazyudf(neighbours, {x}, DType::F64, {20}, {-1}), ValueError);
}

// lazyudf_on_grid (map_blocks): every call sees whole grid blocks of its inputs, whatever
// region is pulled; a regular grid is the array's preferred chunks.
TEST(Udf, GridCallsSeeWholeBlocks) {
  Context ctx(2);
  const Array x = stored(arange(0, 20, 1, DType::F64), {5}, {5}, ctx);
  // out[i] = the sum of x over i's block of the grid {0, 6, 12, 18, 20}
  UdfFunction block_sums = [](const std::vector<UdfInput>& in, void* out, DType, const Shape& shape,
                              const Shape& offset) {
    const std::vector<int64_t> bounds = {0, 6, 12, 18, 20};
    const double* v = static_cast<const double*>(in[0].data);
    for (int64_t k = 0; k < shape[0]; ++k) {
      const int64_t i = offset[0] + k;
      size_t b = 0;
      while (bounds[b + 1] <= i) ++b;
      ASSERT_GE(bounds[b], in[0].start[0]);  // the whole block is in the view
      ASSERT_LE(bounds[b + 1], in[0].start[0] + in[0].shape[0]);
      double s = 0;
      for (int64_t j = bounds[b]; j < bounds[b + 1]; ++j) s += v[j - in[0].start[0]];
      static_cast<double*>(out)[k] = s;
    }
  };
  Array u = lazyudf_on_grid(block_sums, {x}, DType::F64, {20}, {{0, 6, 12, 18, 20}}, "block_sums");
  EXPECT_EQ(u.node()->preferred_chunks(), (Shape{6}));
  const std::vector<double> sums = {15, 51, 87, 37};
  std::vector<double> got = u[{Index::slice(5, 19)}].to_vector(&ctx);
  for (int64_t i = 5; i < 19; ++i) EXPECT_DOUBLE_EQ(got[static_cast<size_t>(i - 5)], sums[static_cast<size_t>(i / 6)]) << i;
  Array irregular = lazyudf_on_grid(block_sums, {x}, DType::F64, {20}, {{0, 2, 20}});
  EXPECT_TRUE(irregular.node()->preferred_chunks().empty());
  EXPECT_THROW(lazyudf_on_grid(block_sums, {x}, DType::F64, {20}, {{0, 6, 6, 20}}), ValueError);
  EXPECT_THROW(lazyudf_on_grid(block_sums, {x}, DType::F64, {20}, {{0, 6, 19}}), ValueError);
  EXPECT_THROW(lazyudf_on_grid(block_sums, {x}, DType::F64, {20}, {}), ValueError);
}
