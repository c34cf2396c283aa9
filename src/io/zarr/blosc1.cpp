#include "io/zarr/blosc1.hpp"

#include <lz4.h>
#include <lz4hc.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "b2lazy/error.hpp"

namespace b2lazy::zarr {

namespace {

// The chunk format (C-Blosc's README_CHUNK_FORMAT): a 16-byte header — version 2,
// compressor version 1, flags, typesize, then little-endian int32 nbytes, blocksize,
// cbytes — the int32 start of each block, then per block its int32 size and its bytes.
constexpr size_t kHeader = 16;
constexpr uint8_t kShuffle = 0x1, kMemcpyed = 0x2, kDontSplit = 0x10;
constexpr size_t kBlockSize = size_t(256) << 10;

int format_code(const std::string& cname) {  // the flags' top 3 bits
  if (cname == "lz4" || cname == "lz4hc") return 1;
  if (cname == "zlib") return 3;
  if (cname == "zstd") return 4;
  return -1;
}

void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// One block's compressed stream into `dst` (capacity `cap`); 0 when it does not fit.
size_t compress_block(const std::string& cname, int clevel, const uint8_t* src, size_t n, uint8_t* dst, size_t cap) {
  if (cname == "lz4") {
    const int r = LZ4_compress_default(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(dst),
                                       static_cast<int>(n), static_cast<int>(cap));
    return r > 0 ? static_cast<size_t>(r) : 0;
  }
  if (cname == "lz4hc") {
    const int r = LZ4_compress_HC(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(dst), static_cast<int>(n),
                                  static_cast<int>(cap), clevel);
    return r > 0 ? static_cast<size_t>(r) : 0;
  }
  if (cname == "zlib") {
    uLongf len = static_cast<uLongf>(cap);
    return compress2(dst, &len, src, static_cast<uLong>(n), clevel) == Z_OK ? static_cast<size_t>(len) : 0;
  }
  const size_t r = ZSTD_compress(dst, cap, src, n, clevel);  // zstd
  return ZSTD_isError(r) ? 0 : r;
}

// Blosc's byte shuffle: byte k of every item together, dst[k * items + i] = src[i * TS + k]
// (a trailing partial item copied as it is). The item size known at compile time for the
// common ones, so the inner loop unrolls into TS stores.
template <size_t TS>
void shuffle_items(const uint8_t* src, size_t items, uint8_t* dst) {
  for (size_t i = 0; i < items; ++i)
    for (size_t k = 0; k < TS; ++k) dst[k * items + i] = src[i * TS + k];
}

void byte_shuffle(const uint8_t* src, size_t len, size_t typesize, uint8_t* dst) {
  const size_t items = len / typesize;
  switch (typesize) {
    case 2: shuffle_items<2>(src, items, dst); break;
    case 4: shuffle_items<4>(src, items, dst); break;
    case 8: shuffle_items<8>(src, items, dst); break;
    default:
      for (size_t i = 0; i < items; ++i)
        for (size_t k = 0; k < typesize; ++k) dst[k * items + i] = src[i * typesize + k];
  }
  std::memcpy(dst + items * typesize, src + items * typesize, len - items * typesize);
}

}  // namespace

bool blosc1_writes(const std::string& cname) { return format_code(cname) >= 0; }

void blosc1_compress(const uint8_t* src, size_t n, size_t typesize, const std::string& cname, int clevel,
                     bool shuffle, std::vector<uint8_t>& out) {
  if (!blosc1_writes(cname)) throw ValueError("Blosc compressor '" + cname + "' cannot be written for Zarr (lz4, lz4hc, zlib, zstd)");
  if (n > size_t(INT32_MAX) - 2 * kHeader) throw ValueError("a Zarr chunk of " + std::to_string(n) + " bytes exceeds Blosc's 2 GiB");
  if (typesize > 255) typesize = 1;
  const bool shuf = shuffle && typesize > 1;
  // Blosc1 wants blocksize <= nbytes (a chunk has at least one item: n >= typesize).
  const size_t bs = std::min(n, std::max<size_t>(typesize, kBlockSize / typesize * typesize));
  const size_t nblocks = n == 0 ? 0 : (n + bs - 1) / bs;
  const size_t base = out.size();
  uint8_t flags = static_cast<uint8_t>(kDontSplit | (format_code(cname) << 5) | (shuf ? kShuffle : 0));
  // Compressed when it pays: every stream smaller than its block, the whole smaller than n.
  out.resize(base + kHeader + 4 * nblocks + n + 4 * nblocks);
  uint8_t* h = out.data() + base;
  size_t pos = kHeader + 4 * nblocks;
  std::vector<uint8_t> shuffled(shuf ? std::min(bs, n) : 0);
  bool stored = n >= 128;  // Blosc copies tiny buffers as they are
  for (size_t b = 0; b < nblocks && stored; ++b) {
    const size_t len = std::min(bs, n - b * bs);
    const uint8_t* blk = src + b * bs;
    if (shuf) {
      byte_shuffle(blk, len, typesize, shuffled.data());
      blk = shuffled.data();
    }
    put32(h + kHeader + 4 * b, static_cast<uint32_t>(pos));
    uint8_t* dst = h + pos + 4;
    size_t c = compress_block(cname, clevel, blk, len, dst, std::min(len, out.size() - base - pos - 4));
    if (c == 0 || c >= len) {  // not compressible: the block as it is (its size says so)
      std::memcpy(dst, blk, len);
      c = len;
    }
    put32(h + pos, static_cast<uint32_t>(c));
    pos += 4 + c;
    if (pos >= n + kHeader) stored = false;
  }
  if (!stored) {  // the whole chunk copied after the header
    flags = static_cast<uint8_t>((flags | kMemcpyed) & ~kShuffle);
    out.resize(base + kHeader + n);
    h = out.data() + base;
    if (n) std::memcpy(h + kHeader, src, n);
    pos = kHeader + n;
  }
  h[0] = 2;
  h[1] = 1;
  h[2] = flags;
  h[3] = static_cast<uint8_t>(typesize);
  put32(h + 4, static_cast<uint32_t>(n));
  put32(h + 8, static_cast<uint32_t>(bs));
  put32(h + 12, static_cast<uint32_t>(pos));
  out.resize(base + pos);
}

}  // namespace b2lazy::zarr
