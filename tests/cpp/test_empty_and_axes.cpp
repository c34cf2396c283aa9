// Zero-length axes stored as python-blosc2 stores them (chunk extent 0), AxisError for
// out-of-range axes, 0-d boolean indices, var/std corrections (issue #11, item 10).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "b2lazy/b2lazy.hpp"
#include "storage/blosc2_util.hpp"

using namespace b2lazy;
namespace fs = std::filesystem;

namespace {
// A b2nd file of `shape` whose chunks and blocks have extent 0 on the empty axes, as
// python-blosc2 writes `blosc2.zeros((0,))` or `blosc2.asarray(np.empty((3, 0)))`.
std::string empty_b2nd_file(const std::string& name, const std::vector<int64_t>& shape) {
  ensure_blosc2();
  const fs::path p = fs::temp_directory_path() / ("b2lazy_test_" + name + "_" + std::to_string(::getpid()) + ".b2nd");
  fs::remove_all(p);
  std::vector<int32_t> c32(shape.begin(), shape.end());
  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.typesize = 8;
  blosc2_dparams dparams = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_storage storage = BLOSC2_STORAGE_DEFAULTS;
  storage.contiguous = true;
  const std::string path = p.string();
  storage.urlpath = const_cast<char*>(path.c_str());
  storage.cparams = &cparams;
  storage.dparams = &dparams;
  b2nd_context_t* ctx = b2nd_create_ctx(&storage, static_cast<int8_t>(shape.size()), shape.data(), c32.data(),
                                        c32.data(), "<f8", 0, nullptr, 0);
  EXPECT_NE(ctx, nullptr);
  b2nd_array_t* arr = nullptr;
  EXPECT_GE(b2nd_zeros(ctx, &arr), 0);
  b2nd_free(arr);
  b2nd_free_ctx(ctx);
  return path;
}
}  // namespace

TEST(EmptyAxes, ChunkGridWithExtentZeroOnAnEmptyAxis) {
  ChunkGrid g({0, 5}, {0, 5});
  EXPECT_EQ(g.nchunks(), 0);
  EXPECT_EQ(g.grid(), (Shape{0, 1}));
  EXPECT_TRUE(g.chunks_touching(Box{{0, 0}, {0, 5}}).empty());
  EXPECT_THROW(ChunkGrid({3}, {0}), ValueError);  // extent 0 only where the axis is empty
  EXPECT_THROW(ChunkGrid({0}, {-1}), ValueError);
  EXPECT_EQ(ChunkGrid({0}, {4}).nchunks(), 0);
}

TEST(EmptyAxes, FileWithExtentZeroChunksOpensAndComputes) {
  Context ctx(2);
  const std::string path = empty_b2nd_file("empty", {3, 0});
  Array a = open(path);
  EXPECT_EQ(a.shape(), (Shape{3, 0}));
  EXPECT_EQ(storage_info(path).chunks, (Shape{3, 0}));
  EXPECT_TRUE((a + 1.0).to_vector(&ctx).empty());
  Array r = (a * 2.0).compute({}, &ctx);
  EXPECT_EQ(r.shape(), (Shape{3, 0}));
  EXPECT_EQ(r.stats()->output_chunks, 0);
  ReduceOptions o;
  o.axis = std::vector<int>{1};
  EXPECT_EQ(sum(a, o).to_vector(&ctx), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(prod(a, o).to_vector(&ctx), (std::vector<double>{1, 1, 1}));
  EXPECT_TRUE(std::isnan(mean(a).to_vector(&ctx).at(0)));
  EXPECT_THROW(max(a), ValueError);
  EXPECT_EQ(sum(a, o).compute({}, &ctx).to_vector(&ctx), (std::vector<double>{0, 0, 0}));
  // K = 0: a (3, 0) @ (0, 2) product is zeros.
  Array k0 = matmul(a, open(empty_b2nd_file("k0", {0, 2})));
  EXPECT_EQ(k0.to_vector(&ctx), (std::vector<double>(6, 0.0)));
  EXPECT_FALSE(a.explain(&ctx).empty());
  fs::remove(path);
}

TEST(EmptyAxes, TakeWithNoIndices) {
  Context ctx(1);
  Array x = arange(0, 12, 1, DType::F64, {3, 4});
  EXPECT_EQ(take(x, {}, {0}, 0).shape(), (Shape{0, 4}));
  EXPECT_EQ(take(x, {}, {0}, 1).shape(), (Shape{3, 0}));
  EXPECT_EQ(take(x, {}, {2, 0}, 1).shape(), (Shape{3, 2, 0}));
  EXPECT_TRUE(take(x, {}, {0}, std::nullopt).to_vector(&ctx).empty());
}

TEST(AxisErrors, AreValueErrorsNamingTheAxis) {
  Array x = zeros({2, 3});
  ReduceOptions o;
  o.axis = std::vector<int>{5};
  EXPECT_THROW(sum(x, o), AxisError);
  EXPECT_THROW(expand_dims(x, 3), AxisError);
  EXPECT_THROW(permute_dims(x, {0, 5}), AxisError);
  EXPECT_THROW(vecdot(x, x, 2), AxisError);
  EXPECT_THROW(tensordot(x, x, 3), AxisError);
  EXPECT_THROW(stack({x, x}, 3), AxisError);
  EXPECT_THROW(permute_dims(x, {0, 0}), ValueError);  // a repeat: ValueError, not AxisError
  try {
    cumulative_sum(x, ScanOptions{-3, std::nullopt, false});
    FAIL();
  } catch (const ValueError& e) {  // AxisError is a ValueError
    EXPECT_NE(dynamic_cast<const AxisError*>(&e), nullptr);
    EXPECT_NE(std::string(e.what()).find("axis -3 is out of bounds"), std::string::npos) << e.what();
  }
}

TEST(ScalarBooleanIndex, AddsAnAxisAndBroadcastsWithArrays) {
  Context ctx(1);
  Array x = arange(0, 12, 1, DType::F64, {3, 4});
  const IndexArray t{{1}, {}, true, {}}, f{{0}, {}, true, {}};
  EXPECT_EQ(getitem(x, {t}, &ctx).shape(), (Shape{1, 3, 4}));
  EXPECT_EQ(getitem(x, {Index::slice(), f}, &ctx).shape(), (Shape{3, 0, 4}));
  // x[0, :, True] (NumPy): the integer and the boolean are advanced indices apart: first.
  EXPECT_EQ(getitem(x, {Index::at(0), Index::slice(), t}, &ctx).shape(), (Shape{1, 4}));
  const IndexArray rows{{2, 0}, {2}, false, {}};
  Array r = getitem(x, {rows, t}, &ctx);  // x[[2, 0], True]
  EXPECT_EQ(r.shape(), (Shape{2, 4}));
  EXPECT_EQ(r.to_vector(&ctx), (std::vector<double>{8, 9, 10, 11, 0, 1, 2, 3}));
  EXPECT_THROW(getitem(x, {rows, f}, &ctx), IndexError);  // (2,) and (0,) do not broadcast
}

TEST(VarCorrection, NaNWhereNMinusCorrectionIsNotPositive) {
  Context ctx(1);
  Array x = arange(0, 6, 1, DType::F64, {2, 3});
  for (double c : {3.0, 4.0, 1e9}) {
    ReduceOptions o;
    o.axis = std::vector<int>{1};
    o.correction = c;
    for (double v : var(x, o).to_vector(&ctx)) EXPECT_TRUE(std::isnan(v)) << c;
  }
  ReduceOptions neg;
  neg.correction = -1;  // divides by N + 1, as NumPy's ddof=-1
  EXPECT_DOUBLE_EQ(var(x, neg).to_vector(&ctx).at(0), 17.5 / 7);
}
