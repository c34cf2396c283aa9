#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "b2lazy/b2lazy.hpp"
#include "ops/index/mask_node.hpp"
#include "test_util.hpp"

using namespace b2lazy;
using b2lazy::test::stored;

TEST(Take, RowsOfAnExpressionReadOnlyTouchedChunks) {
  Context ctx(2);
  Array a = stored(arange(0, 400, 1, DType::F64, {100, 4}), {10, 4}, {5, 4}, ctx);
  Array r = take(a * 2.0, {95, -100, 3, 95}, {2, 2}, 0).compute({}, &ctx);
  EXPECT_EQ(r.shape(), (Shape{2, 2, 4}));
  auto v = r.to_vector(&ctx);
  EXPECT_DOUBLE_EQ(v[0], 2.0 * 380);     // row 95
  EXPECT_DOUBLE_EQ(v[4], 0.0);           // row -100 == 0
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
  EXPECT_EQ(getitem(a, {IndexArray{{0, 3}, {2}}, IndexArray{{4, 0}, {2}}}).to_vector(&ctx),
            (std::vector<double>{4, 15}));
  EXPECT_EQ(getitem(a, {IndexArray{{0, 1, 0, 0}, {4}, true}, Index::at(2)}).to_vector(&ctx), (std::vector<double>{7}));
  EXPECT_EQ(oindex(a, {IndexArray{{0, 3}, {2}}, IndexArray{{4, 0}, {2}}}).to_vector(&ctx),
            (std::vector<double>{4, 0, 19, 15}));
  EXPECT_THROW(getitem(a, {IndexArray{{4}, {1}}}), IndexError);
  EXPECT_THROW(getitem(a, {IndexArray{{}, {0}, false, "float64"}}), IndexError);
  EXPECT_THROW(oindex(a, {Index::newaxis(), IndexArray{{0}, {1}}}), IndexError);
}

// x[mask]'s counting pass over a Zarr array in 32-row strips of (128, 1024) chunks, too
// large to keep: a chunk's four strips counted together, tile by tile, so each chunk is
// decompressed once and nothing else read; strip by strip, each strip's runs of the
// chunks' Blosc blocks alone. Counts equal a count of the values.
TEST(Take, MaskCountsDecompressEachZarrChunkOnce) {
  const Shape shape{256, 16384};  // 128 KiB rows of float64: 4 MiB strips are 32 rows
  std::vector<double> v(static_cast<size_t>(prod(shape)));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = std::sin(0.001 * static_cast<double>(i)) + 0.1 * static_cast<double>(i % 7);
  // (this process's own directory: two test binaries run at once must not share the file)
  const std::filesystem::path dir = test::temp_dir("mask_counts");
  const std::string path = (dir / "mask_counts.zarr").string();
  ComputeOptions o;
  o.urlpath = path;
  o.chunks = {128, 1024};
  from_buffer(v.data(), DType::F64, shape, {}, nullptr, "v").compute(o);
  const Array a = open(path);
  const Array mask = elementwise(Op::Greater, {a, Scalar(0.5)});
  const Shape strip{32, 16384};
  int64_t want_total = 0;
  for (double x : v) want_total += x > 0.5;
  for (const Shape& unit : {Shape{128, 1024}, Shape{}}) {
    const Array counts(std::make_shared<MaskCountsNode>(mask.node(), strip, unit));
    std::vector<int64_t> got(static_cast<size_t>(counts.size()));
    const Stats st = counts.to_buffer(got.data(), nullptr, size_t(24) << 20);  // a (32 MiB) not kept
    for (size_t s = 0; s < got.size(); ++s) {
      int64_t want = 0;
      for (size_t i = s * 32 * 16384; i < (s + 1) * 32 * 16384; ++i) want += v[i] > 0.5;
      EXPECT_EQ(got[s], want) << "strip " << s;
    }
    int64_t read = 0;  // from a and anything the plan kept instead
    for (auto& [name, b] : st.bytes_decompressed) read += b;
    if (unit.empty()) {
      // The strips cut chunks, but a strip's part of a chunk is a run of its C order: the
      // Blosc blocks holding it are decoded alone (256 KiB blocks, 32 rows of a chunk).
      EXPECT_EQ(read, a.size() * 8);
    } else {
      EXPECT_EQ(st.max_decompressions_per_chunk.at(path), 1);
      EXPECT_EQ(read, a.size() * 8);
    }
  }
  EXPECT_EQ(mask_select(a, mask).size(), want_total);
  std::filesystem::remove_all(dir);
}
