// Writing into a region of an existing Zarr array ("zarr-region:" URLs, what xarray's
// to_zarr asks of the chunk manager's store): the region's chunks written with the array's
// codecs, by several workers; chunks of the fill value removed; a cancelled evaluation
// leaves the array as it was, with no temporary file; regions that are not whole chunks
// refused, naming them.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>

#include "b2lazy/b2lazy.hpp"
#include "test_util.hpp"

using namespace b2lazy;
namespace fs = std::filesystem;

namespace {

// A float64 (10, 4) Zarr v3 array of 0..39 in chunks (4, 4), zstd: fill value 0.
std::string existing(const fs::path& d) {
  const std::string path = (d / "a.zarr").string();
  ComputeOptions o;
  o.urlpath = path;
  o.chunks = {4, 4};
  o.cparams.compressor = "zstd";
  o.cparams.clevel = 3;
  arange(0, 40, 1, DType::F64, {10, 4}).compute(o);
  return path;
}

Array write_region(const Array& x, const std::string& path, const std::string& offset, Context& ctx,
                   const std::atomic<bool>* cancel = nullptr, std::function<void(int64_t, int64_t)> progress = {}) {
  ComputeOptions o;
  o.urlpath = "zarr-region:" + path + "?offset=" + offset + "&codec=zstd:3&empty=0";
  o.chunks = {4, 4};
  o.cancel = cancel;
  o.progress = std::move(progress);
  return x.compute(o, &ctx);
}

int temporaries(const fs::path& d) {
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator(d))
    n += e.path().filename().string().find(".b2lazy-") != std::string::npos;
  return n;
}

}  // namespace

TEST(ZarrRegionSink, WritesTheRegionsChunksWithTheArraysCodecs) {
  const fs::path d = test::temp_dir("zarr_region");
  const std::string path = existing(d);
  Context ctx(2);
  write_region(arange(0, 24, 1, DType::F64, {6, 4}) * -1.0, path, "4,0", ctx);  // rows 4..9
  const auto v = open(path).to_vector();
  for (int i = 0; i < 40; ++i) EXPECT_EQ(v[i], i < 16 ? i : -(i - 16)) << i;
  EXPECT_EQ(temporaries(d), 0);
  // A chunk of the fill value (0): its file removed, as zarr-python leaves it out.
  EXPECT_TRUE(fs::exists(fs::path(path) / "c/1/0"));
  write_region(zeros({4, 4}, DType::F64), path, "4,0", ctx);
  EXPECT_FALSE(fs::exists(fs::path(path) / "c/1/0"));
  EXPECT_EQ(open(path).to_vector()[17], 0.0);
}

TEST(ZarrRegionSink, ACancelledWriteLeavesTheArrayAsItWas) {
  const fs::path d = test::temp_dir("zarr_region_cancel");
  const std::string path = existing(d);
  Context ctx(2);
  std::atomic<bool> cancel{false};
  EXPECT_THROW(write_region(full({10, 4}, 7.0, DType::F64), path, "0,0", ctx, &cancel,
                            [&](int64_t done, int64_t) { cancel = done >= 1; }),
               Cancelled);
  const auto v = open(path).to_vector();
  for (int i = 0; i < 40; ++i) EXPECT_EQ(v[i], i);
  EXPECT_EQ(temporaries(d), 0);
}

TEST(ZarrRegionSink, RefusesRegionsThatAreNotWholeChunks) {
  const fs::path d = test::temp_dir("zarr_region_refuse");
  const std::string path = existing(d);
  Context ctx(1);
  auto message = [&](const Array& x, const std::string& offset) {
    try {
      write_region(x, path, offset, ctx);
    } catch (const ValueError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message(zeros({4, 4}, DType::F64), "2,0").find("not made of whole chunks"), std::string::npos);
  EXPECT_NE(message(zeros({2, 4}, DType::F64), "4,0").find("not made of whole chunks"), std::string::npos);
  EXPECT_NE(message(zeros({4, 4}, DType::F32), "0,0").find("float32 values into a float64 array"), std::string::npos);
  EXPECT_NE(message(zeros({4, 4}, DType::F64), "0").find("does not match"), std::string::npos);
  EXPECT_EQ(temporaries(d), 0);
}
