// Zarr arrays read and written through a byte store (a logging store over a local
// directory, registered for a test scheme, standing in for HTTP/S3): values equal to the
// same arrays read locally; a region's reads fetched in one batch of requests; a shard's
// index read once; a Blosc run read by block ranges; missing chunks the fill value; v2
// chunk keys; consolidated metadata; outputs written chunks first and metadata last, and
// nothing that looks like an array left when writing fails.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "b2lazy/b2lazy.hpp"
#include "b2lazy/error.hpp"
#include "io/store/logging_store.hpp"
#include "io/zarr/blosc1.hpp"
#include "io/zarr/zarr_source.hpp"
#include "runtime/thread_state.hpp"
#include "test_util.hpp"

using namespace b2lazy;
namespace fs = std::filesystem;

namespace {

// Objects of URL scheme://b/PATH are the files of dir/b/PATH ("b" the bucket).
struct StoreDir {
  fs::path dir;
  std::string scheme;
  std::shared_ptr<StoreLog> log;
  explicit StoreDir(const std::string& name)
      : dir(test::temp_dir(name) / "b"), scheme("zs" + std::to_string(counter()++)) {
    log = register_logging_store(scheme, dir.parent_path().string());
  }
  std::string url(const std::string& path) const { return scheme + "://b/" + path; }
  static int& counter() {
    static int n = 0;
    return n;
  }
  int64_t ranges_in(size_t batch) const {
    int64_t n = 0;
    for (const auto& r : log->batches[batch]) n += static_cast<int64_t>(r.ranges.size());
    return n;
  }
};

void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

void write_bytes(const fs::path& p, const void* data, size_t n) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary).write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
}

// (rows, cols) float64 i * cols + j, written locally by b2lazy as Zarr v3.
std::string local_array(const fs::path& at, Shape shape, Shape chunks, const std::string& compressor,
                        Shape shards = {}) {
  fs::create_directories(at.parent_path());
  ComputeOptions o;
  o.urlpath = "zarr:" + at.string();
  o.cparams.compressor = compressor;
  o.cparams.codec = "zstd";
  o.cparams.clevel = 1;
  if (!shards.empty()) {
    o.shards = shards;
    o.chunks = chunks;
  } else {
    o.chunks = chunks;
  }
  arange(1, 1 + double(prod(shape)), 1, DType::F64, shape).compute(o);
  return at.string();
}

std::vector<double> fill_region(const NodePtr& n, const Region& r) {
  std::vector<double> out(static_cast<size_t>(r.size()));
  ThreadState ts;
  n->fill(r, out.data(), ts);
  return out;
}

}  // namespace

TEST(ZarrStore, ReadsEqualTheLocalArray) {
  StoreDir s("zarr_store_values");
  for (const std::string compressor : {"zstd", "blosc"}) {
    for (bool sharded : {false, true}) {
      const std::string name = compressor + (sharded ? "_sharded" : "") + ".zarr";
      const std::string local = sharded ? local_array(s.dir / name, {37, 23}, {4, 5}, compressor, {8, 10})
                                        : local_array(s.dir / name, {37, 23}, {8, 10}, compressor);
      const Array remote = open(s.url(name));
      ASSERT_EQ(remote.node()->kind(), "zarr");
      EXPECT_EQ(remote.to_vector(), open(local).to_vector()) << name;
      // Strided and partial regions.
      const Array part = remote[{Index::slice(3, 30, 4), Index::slice(1, 22, 3)}];
      const Array part_local = open(local)[{Index::slice(3, 30, 4), Index::slice(1, 22, 3)}];
      EXPECT_EQ(part.to_vector(), part_local.to_vector()) << name;
      const Array row = remote[{Index::at(11), Index::slice(2, 9)}];
      EXPECT_EQ(row.to_vector(), (open(local)[{Index::at(11), Index::slice(2, 9)}]).to_vector()) << name;
    }
  }
}

TEST(ZarrStore, ARegionsReadsAreOneBatch) {
  StoreDir s("zarr_store_batch");
  local_array(s.dir / "a.zarr", {16, 16}, {4, 4}, "zstd");
  const Array a = open(s.url("a.zarr"));
  s.log->clear();
  // Rows 2..9, columns 3..14: 3 x 4 = 12 chunks, fetched in one read_many.
  const Region r{{2, 3}, {1, 1}, {8, 12}};
  const auto got = fill_region(a.node(), r);
  ASSERT_EQ(s.log->batches.size(), 1u);
  EXPECT_EQ(s.log->batches[0].size(), 12u);
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 12; ++j) EXPECT_EQ(got[i * 12 + j], 1 + (2 + i) * 16 + (3 + j));
}

TEST(ZarrStore, AShardIndexIsReadOnce) {
  StoreDir s("zarr_store_shards");
  local_array(s.dir / "s.zarr", {16, 16}, {4, 4}, "zstd", {8, 8});  // 4 shards of 4 inner chunks
  const Array a = open(s.url("s.zarr"));
  const auto& src = dynamic_cast<const ZarrSource&>(*a.node());
  s.log->clear();
  const Region r{{0, 0}, {1, 1}, {4, 16}};  // shards (0, 0) and (0, 1): 2 of their 4 inner chunks each
  const auto first = fill_region(a.node(), r);
  EXPECT_EQ(zarr::store_index_reads(src.keys()), 2);
  ASSERT_EQ(s.log->batches.size(), 2u);  // the indexes, then the inner chunks
  EXPECT_EQ(s.log->batches[0].size(), 2u);
  EXPECT_EQ(s.ranges_in(0), 2);
  EXPECT_EQ(s.log->batches[1].size(), 2u);  // one request per shard, a range per inner chunk
  EXPECT_EQ(s.ranges_in(1), 4);
  s.log->clear();
  EXPECT_EQ(fill_region(a.node(), r), first);
  EXPECT_EQ(zarr::store_index_reads(src.keys()), 2);  // cached
  EXPECT_EQ(s.log->batches.size(), 1u);
  for (int64_t j = 0; j < 16; ++j) EXPECT_EQ(first[3 * 16 + j], 1 + 3 * 16 + j);
  EXPECT_EQ(a.to_vector(), open((s.dir / "s.zarr").string()).to_vector());
  EXPECT_EQ(zarr::store_index_reads(src.keys()), 4);  // every shard, once
}

// A fill that reads every inner chunk of a shard reads the shard whole: one request, no
// index round trip first; the index comes from its bytes (and is kept).
TEST(ZarrStore, AShardAFillReadsAllOfIsReadWhole) {
  StoreDir s("zarr_store_whole_shards");
  local_array(s.dir / "s.zarr", {16, 12}, {4, 4}, "zstd", {8, 8});  // shards (x, 1) hold 2 inner chunks
  const Array a = open(s.url("s.zarr"));
  const auto& src = dynamic_cast<const ZarrSource&>(*a.node());
  const std::vector<double> want = open((s.dir / "s.zarr").string()).to_vector();
  s.log->clear();
  const Region r{{8, 0}, {1, 1}, {8, 12}};  // shards (1, 0) and (1, 1), all of them
  const auto got = fill_region(a.node(), r);
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 12; ++j) EXPECT_EQ(got[i * 12 + j], want[(8 + i) * 12 + j]);
  ASSERT_EQ(s.log->batches.size(), 1u);
  ASSERT_EQ(s.log->batches[0].size(), 2u);
  for (const auto& q : s.log->batches[0]) {
    ASSERT_EQ(q.ranges.size(), 1u);
    EXPECT_EQ(q.ranges[0].offset, 0);
    EXPECT_EQ(q.ranges[0].length, -1);
  }
  EXPECT_EQ(zarr::store_index_reads(src.keys()), 2);
  s.log->clear();  // a part of one: its index kept, only the inner chunk's bytes read
  const Region part{{8, 0}, {1, 1}, {4, 4}};
  const auto p = fill_region(a.node(), part);
  EXPECT_EQ(p[0], want[8 * 12]);
  EXPECT_EQ(s.log->batches.size(), 1u);
  EXPECT_EQ(zarr::store_index_reads(src.keys()), 2);
}

// A store without suffix ranges ("bytes=-N"): a shard's size is asked, then its index.
TEST(ZarrStore, ShardIndexesAtTheEndWithoutSuffixRanges) {
  StoreDir s("zarr_store_nosuffix");
  s.log->refuse_suffix_ranges = true;
  local_array(s.dir / "s.zarr", {16, 16}, {4, 4}, "zstd", {8, 8});
  const Array a = open(s.url("s.zarr"));
  EXPECT_EQ(a.to_vector(), open((s.dir / "s.zarr").string()).to_vector());
  EXPECT_EQ(zarr::store_index_reads(dynamic_cast<const ZarrSource&>(*a.node()).keys()), 4);
  const Array b = open(s.url("s.zarr"));  // (the fallback taken straight away, outside a fill too)
  EXPECT_EQ((b[{Index::at(9), Index::at(13)}]).to_vector(), std::vector<double>{1 + 9 * 16 + 13});
}

TEST(ZarrStore, ABloscRunReadsTheBlocksItNeeds) {
  StoreDir s("zarr_store_blosc");
  // One chunk of 64 x 4096 float64 (2 MiB): Blosc blocks of a few rows each.
  local_array(s.dir / "b.zarr", {64, 4096}, {64, 4096}, "blosc");
  const Array a = open(s.url("b.zarr"));
  s.log->clear();
  const auto got = fill_region(a.node(), Region{{40, 0}, {1, 1}, {1, 4096}});
  for (int64_t j = 0; j < 4096; ++j) ASSERT_EQ(got[j], 1 + 40 * 4096 + j);
  ASSERT_EQ(s.log->batches.size(), 3u);  // header, block starts, blocks
  int64_t fetched = 0;
  for (const auto& b : s.log->batches)
    for (const auto& r : b)
      for (const auto& g : r.ranges) fetched += g.length;
  EXPECT_LT(fetched, int64_t(1) << 20);  // well under the 2 MiB chunk
}

TEST(ZarrStore, MissingChunksAreTheFillValueAndV2KeysAreRead) {
  StoreDir s("zarr_store_v2");
  for (const std::string sep : {".", "/"}) {
    const fs::path d = s.dir / ("v2" + (sep == "." ? std::string("dot") : std::string("slash")) + ".zarr");
    write_text(d / ".zarray",
               R"({"zarr_format": 2, "shape": [4, 6], "chunks": [2, 3], "dtype": "<i4", "compressor": null,
                   "fill_value": -7, "order": "C", "filters": null, "dimension_separator": ")" +
                   sep + R"("})");
    const int32_t c01[6] = {1, 2, 3, 4, 5, 6};  // chunk (0, 1) only
    write_bytes(d / ("0" + sep + "1"), c01, sizeof c01);
    const auto v = open(s.url(d.filename().string())).to_vector();
    const std::vector<double> want = {-7, -7, -7, 1,  2,  3,  -7, -7, -7, 4,  5,  6,
                                      -7, -7, -7, -7, -7, -7, -7, -7, -7, -7, -7, -7};
    EXPECT_EQ(v, want) << sep;
  }
}

TEST(ZarrStore, ErrorsNameTheUrlAndKey) {
  StoreDir s("zarr_store_errors");
  local_array(s.dir / "e.zarr", {8, 8}, {4, 4}, "zstd");
  write_text(s.dir / "e.zarr" / "c" / "1" / "0", "not zstd");
  try {
    open(s.url("e.zarr")).to_vector();
    FAIL();
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find(s.url("e.zarr") + "/c/1/0"), std::string::npos) << e.what();
  }
  try {
    open(s.url("nothing.zarr"));
    FAIL();
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find(s.url("nothing.zarr")), std::string::npos) << e.what();
  }
}

TEST(ZarrStore, ConsolidatedMetadataOpensMembersWithoutTheirOwn) {
  StoreDir s("zarr_store_consolidated");
  const fs::path g = s.dir / "g.zarr";
  local_array(g / "x", {6, 4}, {3, 4}, "zstd");
  std::ifstream in(g / "x" / "zarr.json");
  const std::string xmeta((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write_text(g / "zarr.json", R"({"zarr_format": 3, "node_type": "group", "attributes": {},
      "consolidated_metadata": {"kind": "inline", "must_understand": false, "metadata": {"x": )" +
                                  xmeta + "}}}");
  fs::remove(g / "x" / "zarr.json");  // only the consolidated copy is left
  auto store = open_store(s.url("g.zarr"));
  s.log->clear();
  auto x = ZarrSource::open(store, "x");
  EXPECT_EQ(s.log->batches.size(), 1u);  // the group's metadata, nothing of x's
  std::vector<double> want(24);
  for (int i = 0; i < 24; ++i) want[i] = 1 + i;
  EXPECT_EQ(Array(x).to_vector(), want);
  try {  // the group itself is not an array: the message lists its arrays
    open(s.url("g.zarr"));
    FAIL();
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("its arrays: x"), std::string::npos) << e.what();
  }
}

TEST(ZarrStore, OutputsWriteTheMetadataLast) {
  StoreDir s("zarr_store_write");
  for (bool sharded : {false, true}) {
    s.log->clear();
    ComputeOptions o;
    o.urlpath = s.url("out.zarr");
    o.chunks = {5, 5};
    if (sharded) o.shards = {10, 10};
    Context ctx(2);
    const Array x = arange(0, 400, 1, DType::F64, {20, 20});
    const Array y = (x * 2.0).compute(o, &ctx);
    ASSERT_FALSE(s.log->writes.empty());
    EXPECT_EQ(s.log->writes.back(), "zarr.json");
    EXPECT_EQ(std::count(s.log->writes.begin(), s.log->writes.end(), "zarr.json"), 1);
    EXPECT_EQ(s.log->writes.size(), sharded ? 4u + 1 : 16u + 1);
    const auto want = (x * 2.0).to_vector();
    EXPECT_EQ(y.to_vector(), want);
    EXPECT_EQ(open(s.url("out.zarr")).to_vector(), want);
    EXPECT_EQ(open((s.dir / "out.zarr").string()).to_vector(), want);
  }
  // Replaced by a smaller array: the old chunks beyond it are gone.
  ComputeOptions o;
  o.urlpath = s.url("out.zarr");
  o.chunks = {5, 5};
  full({5, 5}, 3.0, DType::F64).compute(o);
  EXPECT_EQ(open(s.url("out.zarr")).to_vector(), std::vector<double>(25, 3.0));
  EXPECT_FALSE(fs::exists(s.dir / "out.zarr" / "c" / "1" / "1"));
}

TEST(ZarrStore, AFailedOutputLeavesNoArray) {
  StoreDir s("zarr_store_fail");
  s.log->fail_writes_after = 5;
  ComputeOptions o;
  o.urlpath = s.url("bad.zarr");
  o.chunks = {2, 2};
  Context ctx(2);
  EXPECT_THROW(arange(1, 401, 1, DType::F64, {20, 20}).compute(o, &ctx), IOError);
  EXPECT_FALSE(fs::exists(s.dir / "bad.zarr" / "zarr.json"));
  // The chunks written were removed.
  int left = 0;
  if (fs::exists(s.dir / "bad.zarr"))
    for (const auto& e : fs::recursive_directory_iterator(s.dir / "bad.zarr")) left += e.is_regular_file();
  EXPECT_EQ(left, 0);
  EXPECT_THROW(open(s.url("bad.zarr")), IOError);
  // Something other than a Zarr array is not replaced.
  s.log->fail_writes_after = -1;
  write_text(s.dir / "other.zarr" / "notes.txt", "keep me");
  o.urlpath = s.url("other.zarr");
  EXPECT_THROW(arange(1, 5, 1, DType::F64, {2, 2}).compute(o), IOError);
  EXPECT_TRUE(fs::exists(s.dir / "other.zarr" / "notes.txt"));
}

// xarray's region writes (zarr-region: URLs) into an array in a store: chunks spooled
// locally, uploaded at finish; a cancelled evaluation leaves the array as it was.
TEST(ZarrStore, RegionWritesIntoAnArrayInAStore) {
  StoreDir s("zarr_store_region");
  ComputeOptions o;
  o.urlpath = s.url("r.zarr");
  o.chunks = {4, 4};
  o.cparams.compressor = "zstd";
  o.cparams.clevel = 3;
  arange(0, 40, 1, DType::F64, {10, 4}).compute(o);
  Context ctx(2), one(1);
  auto region = [&](const Array& x, const std::atomic<bool>* cancel, std::function<void(int64_t, int64_t)> progress,
                    Context* c = nullptr) {
    ComputeOptions r;
    r.urlpath = "zarr-region:" + s.url("r.zarr") + "?offset=4,0&codec=zstd:3&empty=0";
    r.chunks = {4, 4};
    r.cancel = cancel;
    r.progress = std::move(progress);
    return x.compute(r, c ? c : &ctx);
  };
  std::atomic<bool> cancel{false};
  // (one worker: the second chunk's task starts after the first's progress, and stops)
  EXPECT_THROW(region(
                   full({6, 4}, 7.0, DType::F64), &cancel, [&](int64_t done, int64_t) { cancel = done >= 1; }, &one),
               Cancelled);
  auto v = open(s.url("r.zarr")).to_vector();
  for (int i = 0; i < 40; ++i) ASSERT_EQ(v[i], i);
  s.log->clear();
  region(arange(0, 24, 1, DType::F64, {6, 4}) * -1.0, nullptr, {});
  EXPECT_EQ(s.log->writes.size(), 2u);  // chunks (1, 0) and (2, 0): nothing else
  v = open(s.url("r.zarr")).to_vector();
  for (int i = 0; i < 40; ++i) EXPECT_EQ(v[i], i < 16 ? i : -(i - 16)) << i;
  region(zeros({6, 4}, DType::F64), nullptr, {});  // all fill: the chunks' objects removed
  EXPECT_FALSE(fs::exists(s.dir / "r.zarr" / "c" / "1" / "0"));
  EXPECT_EQ(open(s.url("r.zarr")).to_vector()[17], 0.0);
}
