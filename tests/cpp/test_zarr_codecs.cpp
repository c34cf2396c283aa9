// The Zarr codec chain decoder (io/zarr/codecs.hpp) on hostile chunks: a header, a frame's
// content size or a stream that gives more than the next codec can take is an IOError
// naming the chunk, refused before its size is allocated (the Python reliability tests
// measure the RSS); real chunks of the same chains still decode.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "b2lazy/error.hpp"
#include "io/zarr/blosc1.hpp"
#include "io/zarr/codecs.hpp"
#include "runtime/thread_state.hpp"

using namespace b2lazy;
using namespace b2lazy::zarr;

namespace {

using Bytes = std::vector<uint8_t>;
using K = BytesCodec::Kind;

BytesCodec codec(K k, const std::string& name) {
  BytesCodec c{k, name};
  c.cname = "lz4";
  c.level = 1;
  return c;
}

Pipeline chain(std::vector<BytesCodec> codecs) {
  Pipeline p;
  p.bytes_codecs = std::move(codecs);
  return p;
}

void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// A zstd frame without a content size: `blocks` RLE blocks of 128 KiB zeros.
Bytes zstd_rle(size_t blocks) {
  Bytes b = {0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3};
  for (size_t i = 0; i < blocks; ++i) {
    const uint32_t h = (uint32_t(1) << 17 << 3) | (1 << 1) | (i + 1 == blocks ? 1 : 0);
    b.insert(b.end(), {static_cast<uint8_t>(h), static_cast<uint8_t>(h >> 8), static_cast<uint8_t>(h >> 16), 0});
  }
  return b;
}

template <class F> void expect_io_error(F f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no IOError (expected one with '" << part << "')";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a.zarr/c/0"), std::string::npos) << e.what();
  }
}

const double kFill = 0;

}  // namespace

TEST(ZarrCodecs, ChainsRoundTrip) {
  std::vector<double> v(4096);
  std::iota(v.begin(), v.end(), 0.0);
  const Shape shape{4096};
  for (const Pipeline& p : {chain({codec(K::Zstd, "zstd"), codec(K::Blosc, "blosc")}),
                            chain({codec(K::Blosc, "blosc"), codec(K::Zstd, "zstd")}),
                            chain({codec(K::Zstd, "zstd"), codec(K::Crc32c, "crc32c")})}) {
    Bytes stored;
    encode(p, v.data(), shape, DType::F64, stored, &kFill);
    EXPECT_LE(stored.size(), max_stored(p, shape, DType::F64));
    std::vector<double> got(v.size());
    ThreadState ts;
    decode(p, stored.data(), stored.size(), shape, DType::F64, got.data(), "a.zarr/c/0", ts, &kFill);
    EXPECT_EQ(got, v) << p.describe();
  }
}

TEST(ZarrCodecs, IncompressibleFitsTheMost) {
  Bytes noise(1 << 20);
  uint64_t x = 88172645463325252ull;
  for (auto& b : noise) b = static_cast<uint8_t>((x ^= x << 13, x ^= x >> 7, x ^= x << 17));
  const Shape shape{static_cast<int64_t>(noise.size())};
  for (const Pipeline& p : {chain({codec(K::Zstd, "zstd")}), chain({codec(K::Blosc, "blosc")}),
                            chain({codec(K::Blosc, "blosc"), codec(K::Zstd, "zstd"), codec(K::Crc32c, "crc32c")})}) {
    Bytes stored;
    encode(p, noise.data(), shape, DType::U8, stored, &kFill);
    EXPECT_LE(stored.size(), max_stored(p, shape, DType::U8)) << p.describe();
  }
}

TEST(ZarrCodecs, BloscHeaderClaimingMoreRefused) {
  // [bytes, zstd, blosc]: Blosc is undone first; its result can be at most what zstd
  // stores for the chunk's 512 bytes.
  std::vector<double> v(64, 1.0);
  Bytes blosc;
  blosc1_compress(reinterpret_cast<const uint8_t*>(v.data()), 512, 8, "lz4", 1, false, blosc);
  put32(blosc.data() + 4, 0x7fffffc0u);  // nbytes: 2 GiB
  const Pipeline p = chain({codec(K::Zstd, "zstd"), codec(K::Blosc, "blosc")});
  ThreadState ts;
  expect_io_error([&] { decode(p, blosc.data(), blosc.size(), {64}, DType::F64, v.data(), "a.zarr/c/0", ts, &kFill); },
                  "blosc: claims 2147483584 bytes, more than the 800 bytes this chunk can hold");
}

TEST(ZarrCodecs, ZstdContentSizeClaimingMoreRefused) {
  Bytes frame = {0x28, 0xb5, 0x2f, 0xfd, 0xA0, 0, 0, 0, 0x80, 9, 0, 0, 0};  // content size 2^31, one byte
  std::vector<double> out(64);
  ThreadState ts;
  expect_io_error(
      [&] {
        decode(chain({codec(K::Blosc, "blosc"), codec(K::Zstd, "zstd")}), frame.data(), frame.size(), {64}, DType::F64,
               out.data(), "a.zarr/c/0", ts, &kFill);
      },
      "zstd: claims 2147483648 bytes, more than the");
  expect_io_error(
      [&] {
        decode(chain({codec(K::Zstd, "zstd")}), frame.data(), frame.size(), {64}, DType::F64, out.data(), "a.zarr/c/0",
               ts, &kFill);
      },
      "zstd: holds 2147483648 bytes, expected 512 bytes");
}

TEST(ZarrCodecs, ZstdStreamLongerThanTheMostRefused) {
  // 16 RLE blocks: 2 MiB of zeros in 70 bytes, no content size.
  const Bytes bomb = zstd_rle(16);
  std::vector<double> out(1 << 17);  // 1 MiB
  ThreadState ts;
  for (const Pipeline& p : {chain({codec(K::Zstd, "zstd")}), chain({codec(K::Blosc, "blosc"), codec(K::Zstd, "zstd")})})
    expect_io_error(
        [&] { decode(p, bomb.data(), bomb.size(), {1 << 17}, DType::F64, out.data(), "a.zarr/c/0", ts, &kFill); },
        "zstd: holds more than the");
  // Exactly the chunk: read.
  const Bytes exact = zstd_rle(8);
  std::fill(out.begin(), out.end(), 1.0);
  decode(chain({codec(K::Zstd, "zstd")}), exact.data(), exact.size(), {1 << 17}, DType::F64, out.data(), "a.zarr/c/0",
         ts, &kFill);
  EXPECT_EQ(out, std::vector<double>(1 << 17, 0.0));
}

TEST(ZarrCodecs, DeflateLongerThanTheMostRefused) {
  // A zlib stream of 4 MiB for a chunk of 1 MiB.
  const Bytes zeros(4 << 20);
  uLongf len = compressBound(static_cast<uLong>(zeros.size()));
  Bytes deflated(len);
  ASSERT_EQ(compress2(deflated.data(), &len, zeros.data(), static_cast<uLong>(zeros.size()), 9), Z_OK);
  deflated.resize(len);
  std::vector<double> out(1 << 17);
  ThreadState ts;
  for (const Pipeline& p :
       {chain({codec(K::Deflate, "gzip")}), chain({codec(K::Zstd, "zstd"), codec(K::Deflate, "gzip")})})
    expect_io_error(
        [&] {
          decode(p, deflated.data(), deflated.size(), {1 << 17}, DType::F64, out.data(), "a.zarr/c/0", ts, &kFill);
        },
        "gzip: holds more than the");
}

TEST(ZarrCodecs, Lz4SizeClaimingMoreRefused) {
  Bytes lz4 = {0xc0, 0xff, 0xff, 0x7f, 0x10, 0x00};
  std::vector<double> out(64);
  Pipeline p = chain({codec(K::Lz4, "lz4")});
  p.order = {0};  // (a transpose: the result is not written in place)
  ThreadState ts;
  expect_io_error([&] { decode(p, lz4.data(), lz4.size(), {64}, DType::F64, out.data(), "a.zarr/c/0", ts, &kFill); },
                  "lz4: claims 2147483584 bytes, more than the 512 bytes");
}

TEST(ZarrCodecs, UndoBytesKeepsItsMost) {
  const Bytes bomb = zstd_rle(64);  // 8 MiB
  Bytes out;
  ThreadState ts;
  expect_io_error([&] { undo_bytes(codec(K::Zstd, "zstd"), bomb.data(), bomb.size(), out, "a.zarr/c/0", ts, 1 << 20); },
                  "zstd: holds more than the 1048576 bytes");
  undo_bytes(codec(K::Zstd, "zstd"), bomb.data(), bomb.size(), out, "a.zarr/c/0", ts, 8 << 20);
  EXPECT_EQ(out.size(), size_t(8) << 20);
}
