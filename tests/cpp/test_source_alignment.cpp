// Reductions of a reshaped, trimmed stored source (xarray's coarsen): the slabs follow
// the source's chunks seen through the reshape and slice, so each Zarr chunk is
// decompressed once by one slab, with no window of blocks kept.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "b2lazy/b2lazy.hpp"
#include "runtime/alignment.hpp"
#include "test_util.hpp"

using namespace b2lazy;

namespace {

// (240, 19, 36) float32 in (24, 19, 36) Zarr chunks: t[i] = sin(0.01 i).
Array stored_field(const std::string& name, std::vector<float>& v) {
  const Shape shape{240, 19, 36};
  v.resize(static_cast<size_t>(prod(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::sin(0.01 * static_cast<double>(i)));
  const std::filesystem::path dir = test::temp_dir(name);
  ComputeOptions o;
  o.urlpath = (dir / (name + ".zarr")).string();
  o.chunks = {24, 19, 36};
  from_buffer(v.data(), DType::F32, shape, {}, nullptr, "t").compute(o);
  return open(o.urlpath);
}

// t[:, :18, :] reshaped (time/wt, wt, 9, 2, 18, 2), as xarray's coarsen(time=wt, lat=2, lon=2, boundary="trim").
Array coarsened(const Array& t, int64_t wt) {
  const Array trimmed = getitem(t, {Index::slice(), Index::slice(0, 18), Index::slice()});
  return reshape(trimmed, {240 / wt, wt, 9, 2, 18, 2});
}

}  // namespace

TEST(SourceAlignment, SeenThroughASliceAndAReshape) {
  std::vector<float> v;
  const Array t = stored_field("align_through", v);
  EXPECT_EQ(source_alignment(coarsened(t, 4).node()).align, (Shape{6, 4, 9, 2, 18, 2}));
  EXPECT_EQ(source_alignment(coarsened(t, 48).node()).align, (Shape{1, 24, 9, 2, 18, 2}));       // two chunks a window
  EXPECT_EQ(source_alignment(reshape(t, {240 * 19, 36}).node()).align, (Shape{24 * 19, 36}));    // merged axes
  EXPECT_EQ(source_alignment(reshape(t, {48, 5, 19, 36}).node()).align, (Shape{0, 0, 19, 36}));  // 5 cuts chunks
  const Array off = getitem(t, {Index::slice(10, 200), Index::slice(), Index::slice()});
  EXPECT_EQ(source_alignment(off.node()).align, (Shape{0, 19, 36}));  // chunk boundaries off the grid
  EXPECT_EQ(source_alignment((coarsened(t, 4) * 2.0).node()).align, (Shape{6, 4, 9, 2, 18, 2}));
  EXPECT_EQ(source_alignment(arange(0, 8, 1, DType::F64, {2, 4}).node()).source, nullptr);
}

TEST(SourceAlignment, CoarsenReadsEachChunkOnceWithNothingKept) {
  Context ctx(2);
  std::vector<float> v;
  const Array t = stored_field("coarsen_once", v);
  for (int64_t wt : {4, 8, 48}) {
    ReduceOptions ro;
    ro.axis = std::vector<int>{1, 3, 5};
    const Array m = mean(coarsened(t, wt), ro);
    // (before: at 4 MiB chunks were read up to 4 times; at 8 MiB the source was kept)
    for (size_t budget : {size_t(1) << 30, size_t(4) << 20}) {
      std::vector<float> got(static_cast<size_t>(m.size()));
      const Stats st = m.to_buffer(got.data(), &ctx, budget);
      const std::string& path = st.max_decompressions_per_chunk.begin()->first;
      EXPECT_EQ(st.max_decompressions_per_chunk.at(path), 1) << wt << " " << budget;
      EXPECT_EQ(st.distinct_chunks_decompressed.at(path), 10) << wt << " " << budget;
      EXPECT_EQ(st.sources_kept, 0);
      EXPECT_EQ(st.window_hits, 0);
      const int64_t n = 240 / wt;  // got[i, a, b] = mean over t[i*wt:(i+1)*wt, 2a:2a+2, 2b:2b+2]
      for (int64_t i = 0; i < n; i += 3)
        for (int64_t a = 0; a < 9; a += 4)
          for (int64_t b = 0; b < 18; b += 5) {
            double s = 0;
            for (int64_t k = i * wt; k < (i + 1) * wt; ++k)
              for (int64_t y = 2 * a; y < 2 * a + 2; ++y)
                for (int64_t x = 2 * b; x < 2 * b + 2; ++x) s += v[static_cast<size_t>((k * 19 + y) * 36 + x)];
            EXPECT_NEAR(got[static_cast<size_t>((i * 9 + a) * 18 + b)], s / static_cast<double>(4 * wt), 1e-5);
          }
    }
  }
}
