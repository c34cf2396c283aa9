// Runs of a Blosc chunk read from a file without the rest (storage/blosc_range.hpp): equal to
// the decoded chunk for any run, block-aligned or not, compressed or stored as is; a
// damaged buffer is an IOError naming the file, never a crash or stale memory.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "b2lazy/error.hpp"
#include "io/zarr/blosc1.hpp"
#include "runtime/thread_state.hpp"
#include "storage/blosc_range.hpp"

#include <blosc2.h>

using namespace b2lazy;

namespace {

struct ChunkFile {
  std::string path;
  int fd = -1;
  int64_t size = 0;
  explicit ChunkFile(const std::vector<uint8_t>& bytes, const std::string& name) {
    path = (std::filesystem::path(::testing::TempDir()) / (name + "_" + std::to_string(::getpid())))
               .string();  // per process
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    fd = ::open(path.c_str(), O_RDONLY);
    size = static_cast<int64_t>(bytes.size());
  }
  ~ChunkFile() {
    ::close(fd);
    std::filesystem::remove(path);
  }
  BloscRangeRead in(int64_t expected) const { return {fd, 0, size, expected, 8, path}; }
};

std::vector<double> values(size_t n, bool noise) {
  std::vector<double> v(n);
  std::mt19937_64 rng(7);
  for (size_t i = 0; i < n; ++i)
    v[i] = noise ? static_cast<double>(rng()) : std::sin(0.01 * static_cast<double>(i)) + static_cast<double>(i % 3);
  return v;
}

}  // namespace

TEST(BloscRange, AnyRunEqualsTheChunk) {
  for (bool noise : {false, true}) {                      // compressed blocks, or a chunk stored as it is
    const std::vector<double> v = values(100000, noise);  // 800 KB: 4 blocks of 256 KiB
    std::vector<uint8_t> bytes;
    zarr::blosc1_compress(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 8, 8, "zstd", 1, true, bytes);
    const ChunkFile f(bytes, "range.blosc");
    ThreadState ts;
    std::mt19937_64 rng(1);
    for (int k = 0; k < 50; ++k) {
      const int64_t start = static_cast<int64_t>(rng() % v.size());
      const int64_t n = 1 + static_cast<int64_t>(rng() % (v.size() - static_cast<size_t>(start)));
      std::vector<double> got(static_cast<size_t>(n));
      const int64_t decoded = read_blosc_range(f.in(static_cast<int64_t>(v.size()) * 8), start, n, got.data(), ts);
      ASSERT_TRUE(std::equal(got.begin(), got.end(), v.begin() + start)) << start << " +" << n;
      EXPECT_GE(decoded, n * 8);
      EXPECT_LE(decoded, static_cast<int64_t>(v.size()) * 8);
    }
    std::vector<double> one(1);  // one item of the last block decodes that block only
    const int64_t decoded = read_blosc_range(f.in(static_cast<int64_t>(v.size()) * 8), 99999, 1, one.data(), ts);
    EXPECT_EQ(one[0], v[99999]);
    EXPECT_LE(decoded, int64_t(256) << 10);
  }
}

TEST(BloscRange, DamagedBuffersAreErrorsNamingTheFile) {
  const std::vector<double> v = values(100000, false);
  std::vector<uint8_t> good;
  zarr::blosc1_compress(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 8, 8, "zstd", 1, true, good);
  ThreadState ts;
  std::vector<double> out(v.size());
  auto fails = [&](std::vector<uint8_t> bytes, int64_t expected, const char* words) {
    const ChunkFile f(bytes, "damaged.blosc");
    try {
      read_blosc_range(f.in(expected), 0, static_cast<int64_t>(v.size()), out.data(), ts);
      ADD_FAILURE() << "no error for " << words;
    } catch (const IOError& e) {
      EXPECT_NE(std::string(e.what()).find(f.path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  const int64_t n = static_cast<int64_t>(v.size()) * 8;
  fails(std::vector<uint8_t>(good.begin(), good.begin() + 10), n, "too short");
  fails(std::vector<uint8_t>(good.begin(), good.end() - 100), n, "truncated");
  fails(good, n + 8, "expected");
  std::vector<uint8_t> wild = good;  // block 1 starting past the end
  ASSERT_GT(wild.size(), size_t(24));
  std::fill_n(wild.begin() + 20, 4, uint8_t{0xff});
  fails(wild, n, "outside");
  std::vector<uint8_t> garbage = good;  // block 0's stream claiming more bytes than it has
  uint32_t first = 0;                   // (where block 0 starts: its stream's size)
  std::memcpy(&first, garbage.data() + 16, 4);
  ASSERT_LT(size_t(first) + 4, garbage.size());
  std::fill_n(garbage.begin() + first, 4, uint8_t{0x7f});
  fails(garbage, n, "decompress");
}

// A Blosc2 chunk (32-byte header, as in b2nd frames) packed with some of its blocks only
// (what a remote b2nd read fetches): those blocks decode as from the whole chunk; a block
// table pointing outside the chunk is an IOError naming it.
TEST(BlockExtents, PackedBlosc2BlocksDecodeAsTheWholeChunk) {
  const std::vector<double> v = values(40000, true);
  const int32_t block_items = 2500;  // 16 blocks
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 8;
  cp.blocksize = block_items * 8;
  cp.clevel = 5;
  cp.compcode = BLOSC_ZSTD;
  blosc2_context* cctx = blosc2_create_cctx(cp);
  std::vector<uint8_t> chunk(v.size() * 8 + BLOSC2_MAX_OVERHEAD);
  const int cbytes = blosc2_compress_ctx(cctx, v.data(), static_cast<int32_t>(v.size() * 8), chunk.data(),
                                         static_cast<int32_t>(chunk.size()));
  blosc2_free_ctx(cctx);
  ASSERT_GT(cbytes, 0);
  const int64_t nblocks = 16, hdr = BLOSC_EXTENDED_HEADER_LENGTH;
  const BlockExtents ext(chunk.data() + hdr, nblocks, hdr, cbytes, "mem");
  const std::vector<int64_t> blocks = {2, 3, 9, 15};
  std::vector<uint8_t> packed(static_cast<size_t>(ext.packed_size(blocks)));
  ext.pack(
      chunk.data(), blocks,
      [&](int64_t b, uint8_t* dst) {
        const auto [s0, s1] = ext.extent(b);
        std::memcpy(dst, chunk.data() + s0, static_cast<size_t>(s1 - s0));
      },
      packed.data());
  EXPECT_LT(packed.size(), static_cast<size_t>(cbytes) / 3);
  blosc2_context* dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  for (int64_t b : blocks) {
    std::vector<double> got(block_items);
    const int rc = blosc2_getitem_ctx(dctx, packed.data(), static_cast<int32_t>(packed.size()),
                                      static_cast<int>(b * block_items), block_items, got.data(), block_items * 8);
    ASSERT_EQ(rc, block_items * 8) << "block " << b;
    EXPECT_EQ(0, std::memcmp(got.data(), v.data() + b * block_items, block_items * 8)) << "block " << b;
  }
  blosc2_free_ctx(dctx);
  std::vector<uint8_t> bad(chunk.begin(), chunk.begin() + hdr + 4 * nblocks);
  const uint32_t far = 1u << 30;
  std::memcpy(bad.data() + hdr + 4 * 5, &far, 4);
  EXPECT_THROW(BlockExtents(bad.data() + hdr, nblocks, hdr, cbytes, "mem"), IOError);
}
