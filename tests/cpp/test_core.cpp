#include <gtest/gtest.h>

#include <memory>

#include "b2lazy/b2lazy.hpp"
#include "core/big_alloc.hpp"
#include "core/strided_copy.hpp"

using namespace b2lazy;

TEST(DType, Promotion) {
  EXPECT_EQ(promote(DType::I8, DType::U8), DType::I16);
  EXPECT_EQ(promote(DType::U64, DType::I8), DType::F64);
  EXPECT_EQ(promote(DType::F32, DType::I16), DType::F32);
  EXPECT_EQ(promote(DType::F32, DType::I32), DType::F64);
  EXPECT_EQ(promote(DType::Bool, DType::U16), DType::U16);
  EXPECT_EQ(promote_with_scalar(DType::I8, ScalarKind::Int), DType::I8);
  EXPECT_EQ(promote_with_scalar(DType::I8, ScalarKind::Float), DType::F64);
  EXPECT_EQ(promote_with_scalar(DType::F32, ScalarKind::Float), DType::F32);
  EXPECT_THROW(dtype_from_name("float128"), TypeError);
  // float16 (NumPy): math of bool / int8 / uint8 computes in it; int16 with it is float32.
  EXPECT_EQ(float_for(DType::I8), DType::F16);
  EXPECT_EQ(float_for(DType::U16), DType::F32);
  EXPECT_EQ(promote(DType::F16, DType::U8), DType::F16);
  EXPECT_EQ(promote(DType::F16, DType::I16), DType::F32);
  EXPECT_EQ(promote(DType::F16, DType::F32), DType::F32);
  EXPECT_EQ(promote(DType::F16, DType::C64), DType::C64);
  // Complex: the complex type whose parts hold both (NumPy 2).
  EXPECT_EQ(dtype_from_name("complex128"), DType::C128);
  EXPECT_EQ(promote(DType::C64, DType::I16), DType::C64);
  EXPECT_EQ(promote(DType::C64, DType::I32), DType::C128);
  EXPECT_EQ(promote(DType::C64, DType::F64), DType::C128);
  EXPECT_EQ(promote(DType::Bool, DType::C64), DType::C64);
  EXPECT_EQ(promote_with_scalar(DType::F32, ScalarKind::Complex), DType::C64);
  EXPECT_EQ(promote_with_scalar(DType::I8, ScalarKind::Complex), DType::C128);
  EXPECT_EQ(promote_with_scalar(DType::C64, ScalarKind::Float), DType::C64);
  EXPECT_EQ(real_of(DType::C64), DType::F32);
}

TEST(Box, GridAndRegions) {
  ChunkGrid g({10, 7}, {4, 3});
  EXPECT_EQ(g.nchunks(), 9);
  EXPECT_EQ(g.chunk_box(8), (Box{{8, 6}, {10, 7}}));
  auto ids = g.chunks_touching(Box{{3, 2}, {5, 4}});
  EXPECT_EQ(ids, (std::vector<int64_t>{0, 1, 3, 4}));
  Region r{{9}, {-3}, {4}};
  EXPECT_EQ(r.bounds(), (Box{{0}, {10}}));
  std::vector<AxisSegment> segs;
  split_axis(9, -3, 4, 4, segs);  // 9, 6, 3, 0
  ASSERT_EQ(segs.size(), 3u);
  EXPECT_EQ(segs[0].cell, 2);
  EXPECT_EQ(segs[1].cell, 1);
  EXPECT_EQ(segs[1].i_hi, 2);
  EXPECT_EQ(segs[2].cell, 0);
}

TEST(Array, BroadcastErrorNamesShapes) {
  Array a = zeros({3, 4}), b = zeros({5});
  try {
    (void)(a + b);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("(3, 4)"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("(5,)"), std::string::npos);
  }
}

TEST(Array, ElementwiseOverConstructors) {
  Context ctx(2);
  Array x = arange(0, 24, 1, DType::F64, {4, 6}, {3, 4});
  Array e = x * 2.0 + 1.0;
  auto v = e.to_vector(&ctx);
  for (int i = 0; i < 24; ++i) EXPECT_DOUBLE_EQ(v[i], 2.0 * i + 1);
  auto s = e[{Index::slice(std::nullopt, std::nullopt, -1), Index::slice(1, 6, 2)}].to_vector(&ctx);
  ASSERT_EQ(s.size(), 12u);
  EXPECT_DOUBLE_EQ(s[0], 2.0 * (3 * 6 + 1) + 1);
}

TEST(Array, ComputeToMemoryAndSliceCountsChunks) {
  Context ctx(2);
  Array x = arange(0, 100 * 80, 1, DType::F64, {100, 80});
  ComputeOptions o;
  o.chunks = {10, 80};
  o.blocks = {5, 40};
  Array a = x.compute(o, &ctx);
  EXPECT_EQ(a.stats()->output_chunks, 10);
  // Rows 12..18: only chunk 1 of a is read.
  Array sel = (a + 1.0)[{Index::slice(12, 19)}];
  ComputeOptions m;
  Array r = sel.compute(m, &ctx);
  EXPECT_EQ(r.stats()->chunks_decompressed_total, 1);
  auto v = r.to_vector(&ctx);
  EXPECT_DOUBLE_EQ(v[0], 12 * 80 + 1.0);
  // A strided column read touches each row chunk once.
  Array col = a[{Index::slice(std::nullopt, std::nullopt, 7), Index::at(5)}];
  Array rc = col.compute(m, &ctx);
  EXPECT_EQ(rc.stats()->chunks_decompressed_total, 10);
  auto cv = rc.to_vector(&ctx);
  EXPECT_DOUBLE_EQ(cv[1], 7 * 80 + 5.0);
}

// A budgeted evaluation lowers how much freed memory stays mapped for reuse (it is
// resident, so it counts in the peak), and gives the old limit back after.
TEST(BigAlloc, WarmLimitBoundsFreedMappings) {
  const size_t big = size_t(8) << 20;
  {
    WarmLimit none(0);
    EXPECT_EQ(warm_bytes(), 0u);  // the warm mappings are given back at once
    free_big(alloc_big(big));
    EXPECT_EQ(warm_bytes(), 0u);
    {
      WarmLimit some(big);
      free_big(alloc_big(big));
      EXPECT_EQ(warm_bytes(), 0u);  // an inner limit never raises the outer one
    }
  }
  free_big(alloc_big(big));
  EXPECT_EQ(warm_bytes(), big);  // unbounded again: kept for the next evaluation
  // Concurrent evaluations end in any order: the ones still running keep their limit.
  auto first = std::make_unique<WarmLimit>(0);
  {
    WarmLimit second(big);
    first.reset();
    free_big(alloc_big(big));
    EXPECT_EQ(warm_bytes(), big);
    free_big(alloc_big(2 * big));
    EXPECT_EQ(warm_bytes(), 0u);  // a miss gives the warm ones back; over the limit: unmapped
  }
}
