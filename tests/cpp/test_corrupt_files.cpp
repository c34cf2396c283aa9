// Corrupted and inconsistent b2nd files give an IOError naming the path, never garbage or
// stale memory, and a failed open frees what it allocated (the sanitizer build's
// LeakSanitizer checks every failure path these tests reach).
#include <b2nd.h>
#include <blosc2.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "b2lazy/b2lazy.hpp"
#include "test_util.hpp"

using namespace b2lazy;
using b2lazy::test::temp_dir;
namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<uint8_t>;

Bytes read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), {});
}

void write_file(const fs::path& p, const Bytes& b) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// The b2nd metalayer C-Blosc2 writes for this geometry.
Bytes meta(const Shape& shape, const std::vector<int32_t>& chunks, const std::vector<int32_t>& blocks,
           const char* dtype) {
  uint8_t* m = nullptr;
  int n =
      b2nd_serialize_meta(static_cast<int8_t>(shape.size()), shape.data(), chunks.data(), blocks.data(), dtype, 0, &m);
  Bytes b(m, m + n);
  std::free(m);
  return b;
}

void replace_once(Bytes& data, const Bytes& from, const Bytes& to) {
  auto it = std::search(data.begin(), data.end(), from.begin(), from.end());
  ASSERT_NE(it, data.end());
  std::copy(to.begin(), to.end(), it);
}

// Runs `f` and checks that it throws IOError whose message holds `part`.
template <class F> void expect_io_error(F f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no IOError (expected one with '" << part << "')";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

// Chunk `id` of the file at `path` replaced through C-Blosc2 by `chunk`.
void update_chunk(const fs::path& path, int64_t id, Bytes chunk) {
  blosc2_schunk* sc = blosc2_schunk_open(path.c_str());
  ASSERT_NE(sc, nullptr);
  EXPECT_GE(blosc2_schunk_update_chunk(sc, id, chunk.data(), true), 0);
  blosc2_schunk_free(sc);
}

struct CorruptFiles : ::testing::Test {
  fs::path dir = temp_dir("corrupt");
  Context ctx{2};
  ~CorruptFiles() override { fs::remove_all(dir); }

  // (100, 100) float64 in (50, 100) chunks of (10, 100) blocks, as in issue #11.
  fs::path write_issue_array() {
    ComputeOptions o;
    o.urlpath = (dir / "a.b2nd").string();
    o.chunks = {50, 100};
    o.blocks = {10, 100};
    arange(0, 10000, 1, DType::F64, {100, 100}).compute(o, &ctx);
    return o.urlpath;
  }
};

TEST_F(CorruptFiles, MetalayerChunksDisagreeWithFrame) {
  fs::path p = write_issue_array();
  Bytes data = read_file(p);
  replace_once(data, meta({100, 100}, {50, 100}, {10, 100}, "<f8"), meta({100, 100}, {100, 100}, {10, 100}, "<f8"));
  write_file(p, data);
  expect_io_error([&] { open(p.string()); }, "'" + p.string() + "' as a b2nd array: its frame holds 2 chunks");
  expect_io_error([&] { storage_info(p.string()); }, p.string());
}

TEST_F(CorruptFiles, ShortLastChunk) {
  fs::path p = write_issue_array();
  // The last chunk compressed from half of its bytes: fewer bytes than the metalayer says.
  Bytes half(20000), chunk(20000 + BLOSC2_MAX_OVERHEAD);
  for (size_t i = 0; i < half.size() / 8; ++i) reinterpret_cast<double*>(half.data())[i] = 5000.0 + i;
  int n = blosc2_compress(5, BLOSC_SHUFFLE, 8, half.data(), 20000, chunk.data(), static_cast<int32_t>(chunk.size()));
  ASSERT_GT(n, 0);
  chunk.resize(n);
  update_chunk(p, 1, chunk);
  expect_io_error([&] { open(p.string()); }, "holds 60000 uncompressed bytes where 2 chunks of 40000 make 80000");
  // The frame's total size patched to agree: reading the chunk finds it, whole or in part.
  Bytes data = read_file(p);
  const int64_t total = 80000;
  for (int k = 0; k < 8; ++k) data[30 + k] = static_cast<uint8_t>(total >> (8 * (7 - k)));
  write_file(p, data);
  Array a = open(p.string());
  EXPECT_EQ(a[{Index::slice(0, 50)}].to_vector(&ctx)[4999], 4999.0);  // the intact chunk
  const std::string msg = "'" + p.string() + "': chunk 1 holds 20000 bytes where the array's chunks hold 40000";
  expect_io_error([&] { a.to_vector(&ctx); }, msg);
  expect_io_error([&] { a[{Index::at(60), Index::slice(3, 5)}].to_vector(&ctx); }, msg);
  expect_io_error([&] { (a + 1).compute({}, &ctx); }, msg);
}

TEST_F(CorruptFiles, UninitialisedChunkReadsAsZeros) {
  fs::path p = write_issue_array();
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 8;
  Bytes chunk(BLOSC_EXTENDED_HEADER_LENGTH);
  ASSERT_GT(blosc2_chunk_uninit(cp, 40000, chunk.data(), static_cast<int32_t>(chunk.size())), 0);
  update_chunk(p, 1, chunk);
  Array a = open(p.string());
  (full({100, 100}, 7.0) + 1).to_vector(&ctx);  // non-zero values in the scratch buffers
  std::vector<double> v = a.to_vector(&ctx);
  EXPECT_EQ(v[4999], 4999.0);
  for (size_t i = 5000; i < v.size(); ++i) ASSERT_EQ(v[i], 0.0) << i;
  const std::vector<double> zeros2 = {0.0, 0.0};
  EXPECT_EQ((a[{Index::at(70), Index::slice(3, 5)}].to_vector(&ctx)), zeros2);
}

// Every truncation and every flipped byte of a small file: an error naming the file or a
// read, never a crash, a sanitizer report or a leak (the values of a read are compared
// with python-blosc2's in tests/python/reliability/test_rel_corrupt_files.py).
TEST_F(CorruptFiles, EveryTruncationAndFlippedByte) {
  ComputeOptions o;
  o.urlpath = (dir / "small.b2nd").string();
  o.chunks = {10, 20};
  o.blocks = {5, 20};
  arange(0, 30 * 20, 1, DType::I32, {30, 20}).compute(o, &ctx);
  const Bytes good = read_file(o.urlpath);
  const fs::path p = dir / "bad.b2nd";
  auto attempt = [&](const Bytes& b) {
    write_file(p, b);
    try {
      Array a = open(p.string());
      (a + 1).to_vector(&ctx);
      (a * 2).compute({}, &ctx);
      return true;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
      return false;
    }
  };
  int opened = 0;
  for (size_t n = 0; n < good.size(); ++n) opened += attempt(Bytes(good.begin(), good.begin() + n));
  EXPECT_EQ(opened, 0);  // a frame cut anywhere is refused
  for (size_t i = 0; i < good.size(); ++i) {
    Bytes b = good;
    b[i] ^= 0xFF;
    attempt(b);
  }
}

}  // namespace

// Issue #36, item 1: an inline frame (a saved expression's `.cframe`, a finished stage)
// with one byte changed opens as a b2nd file does — an IOError or the frame's values —
// never a crash in C-Blosc2's in-memory frame reader (the sanitizer build checks it).
TEST(InlineFrames, MutatedInlineFramesNeverCrash) {
  ComputeOptions o;
  o.chunks = {8, 8};
  o.blocks = {4, 4};
  const Array a = reshape(arange(0, 256, 1, DType::F64), {16, 16}).compute(o);
  const Bytes frame = to_cframe(a);
  Bytes recipe = frame;  // the issue's recipe
  ASSERT_GT(recipe.size(), 634u);
  recipe[634] = 1;
  expect_io_error([&] { from_cframe(recipe.data(), static_cast<int64_t>(recipe.size())).to_vector(); }, "memory#");
  uint32_t state = 36;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  int opened = 0, refused = 0;
  for (int i = 0; i < 400; ++i) {
    Bytes f = frame;
    f[next() % f.size()] = static_cast<uint8_t>(next() >> 24);
    try {
      const Array b = from_cframe(f.data(), static_cast<int64_t>(f.size()));
      b.to_vector();
      ++opened;
    } catch (const Error&) {
      ++refused;
    }
  }
  EXPECT_EQ(opened + refused, 400);
}

// Issue #36, item 6: a b2nd frame carrying python-blosc2's persisted-object marker whose
// payload is not what it claims is an error naming the file, never zeros or a crash.
TEST(InlineFrames, Blosc2ObjectMarkersAreReadSafely) {
  const fs::path p = temp_dir("b2o") / "carrier.b2nd";
  // A metalayer "b2o" whose msgpack nests 100000 levels deep, then one that is not msgpack.
  for (Bytes content : {Bytes(100000, 0x91), Bytes{0xc1, 0xc1}}) {
    fs::remove_all(p);
    blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
    cparams.typesize = 8;
    blosc2_dparams dparams = BLOSC2_DPARAMS_DEFAULTS;
    blosc2_storage storage = BLOSC2_STORAGE_DEFAULTS;
    storage.contiguous = true;
    const std::string path = p.string();
    storage.urlpath = const_cast<char*>(path.c_str());
    storage.cparams = &cparams;
    storage.dparams = &dparams;
    blosc2_metalayer marker{const_cast<char*>("b2o"), content.data(), static_cast<int32_t>(content.size())};
    const int64_t shape[1] = {16};
    const int32_t chunks[1] = {16};
    b2nd_context_t* ctx = b2nd_create_ctx(&storage, 1, shape, chunks, chunks, "<f8", 0, &marker, 1);
    ASSERT_NE(ctx, nullptr);
    b2nd_array_t* arr = nullptr;
    ASSERT_GE(b2nd_zeros(ctx, &arr), 0);
    b2nd_free(arr);
    b2nd_free_ctx(ctx);
    try {
      open(path);
      ADD_FAILURE() << "a malformed persisted-object marker was read as an array";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("carrier.b2nd"), std::string::npos) << e.what();
    }
  }
}
