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

int format_code(const std::string& cname) {  // the flags' top 3 bits
  if (cname == "lz4" || cname == "lz4hc") return 1;
  if (cname == "zlib") return 3;
  if (cname == "zstd") return 4;
  return -1;
}

void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// One stream's compressed bytes into `dst` (capacity `cap`) as C-Blosc 1.x makes them
// (blosc.c: lz4's acceleration 10 - clevel, zstd's level 2 * clevel - 1); 0 when it does
// not fit.
size_t compress_block(const std::string& cname, int clevel, const uint8_t* src, size_t n, uint8_t* dst, size_t cap) {
  if (cap == 0) return 0;
  if (cname == "lz4") {
    const int r = LZ4_compress_fast(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(dst),
                                    static_cast<int>(n), static_cast<int>(cap), 10 - clevel);
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
  int level = clevel < 9 ? clevel * 2 - 1 : ZSTD_maxCLevel();  // zstd
  if (clevel == 8) level = ZSTD_maxCLevel() - 2;
  const size_t r = ZSTD_compress(dst, cap, src, n, level);
  return ZSTD_isError(r) ? 0 : r;
}

// Blosc's byte shuffle: byte k of every item together, dst[k * items + i] = src[i * TS + k]
// (a trailing partial item copied as it is). The item size known at compile time for the
// common ones, so the inner loop unrolls into TS stores.
template <size_t TS> void shuffle_items(const uint8_t* src, size_t items, uint8_t* dst) {
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

// C-Blosc 1.x's block size (blosc.c, compute_blocksize, automatic): L1 (32 KiB) scaled by
// the level (twice for the high-ratio codecs), times the item size when blocks are split
// into one stream per byte of the items.
size_t block_size(const std::string& cname, int clevel, size_t typesize, size_t n, bool* split) {
  constexpr size_t kL1 = size_t(32) << 10;
  const bool hcr = cname == "lz4hc" || cname == "zlib" || cname == "zstd";
  if (n < typesize) {
    *split = false;
    return 1;
  }
  size_t bs = n;
  if (n >= kL1) {
    bs = hcr ? 2 * kL1 : kL1;
    static const int scale[10] = {0, 0, 1, 2, 4, 4, 8, 8, 8, 8};
    bs = clevel == 0 ? bs / 4 : clevel == 1 ? bs / 2 : bs * scale[clevel];
    if (clevel == 9 && hcr) bs *= 2;
  }
  // FORWARD_COMPAT split mode: every codec but zstd, small items, blocks of >= 128 items.
  auto splits = [&](size_t b) { return cname != "zstd" && typesize <= 16 && b / typesize >= 128; };
  if (clevel > 0 && splits(bs)) {
    bs = std::min<size_t>(bs, size_t(1) << 18) * typesize;
    bs = std::clamp<size_t>(bs, size_t(1) << 16, size_t(1) << 20);
  }
  bs = std::min(bs, n);
  if (bs > typesize) bs = bs / typesize * typesize;
  *split = splits(bs);  // (the header's flag is decided on the final block size)
  return bs;
}

}  // namespace

bool blosc1_writes(const std::string& cname) { return format_code(cname) >= 0; }

// As C-Blosc 1.x's blosc_compress_ctx with one thread (what numcodecs, so zarr-python and
// Dask, write), so that Zarr chunks are the same bytes: the same block size, per-byte
// streams when it splits, streams that do not compress stored as they are, and the whole
// chunk copied after the header when the compressed form would not fit in n + 16 bytes.
void blosc1_compress(const uint8_t* src, size_t n, size_t typesize, const std::string& cname, int clevel, bool shuffle,
                     std::vector<uint8_t>& out) {
  if (!blosc1_writes(cname))
    throw ValueError("Blosc compressor '" + cname + "' cannot be written for Zarr (lz4, lz4hc, zlib, zstd)");
  if (n > size_t(INT32_MAX) - 2 * kHeader)
    throw ValueError("a Zarr chunk of " + std::to_string(n) + " bytes exceeds Blosc's 2 GiB");
  if (clevel < 0 || clevel > 9) throw ValueError("Blosc's clevel must be 0..9, got " + std::to_string(clevel));
  if (typesize > 255 || typesize == 0) typesize = 1;
  bool split = false;
  const size_t bs = block_size(cname, clevel, typesize, n, &split);
  const size_t nblocks = n == 0 ? 0 : n / bs + (n % bs != 0);
  const size_t leftover = n == 0 ? 0 : n % bs;
  const size_t base = out.size(), most = n + kHeader;  // C-Blosc's destination size
  uint8_t flags = static_cast<uint8_t>((format_code(cname) << 5) | (split ? 0 : kDontSplit) | (shuffle ? kShuffle : 0));
  bool copied = clevel == 0 || n < 128;
  out.resize(base + std::max(most, kHeader + 4 * nblocks));
  uint8_t* h = out.data() + base;
  size_t pos = kHeader + 4 * nblocks;
  const bool shuf = shuffle && typesize > 1;
  std::vector<uint8_t> shuffled(shuf ? bs : 0);
  for (size_t b = 0; b < nblocks && !copied; ++b) {
    const bool last = b + 1 == nblocks && leftover > 0;
    const size_t len = last ? leftover : bs;
    const uint8_t* blk = src + b * bs;
    if (shuf) {
      byte_shuffle(blk, len, typesize, shuffled.data());
      blk = shuffled.data();
    }
    put32(h + kHeader + 4 * b, static_cast<uint32_t>(pos));
    const size_t nsplits = split && !last ? typesize : 1, part = len / nsplits;
    for (size_t j = 0; j < nsplits && !copied; ++j) {
      pos += 4;
      if (pos >= most) {  // no room left: the whole chunk is copied instead
        copied = true;
        break;
      }
      const size_t cap = std::min(part, most - pos);
      size_t c = compress_block(cname, clevel, blk + j * part, part, h + pos, cap);
      if (c == 0 || c == part) {  // does not compress: the stream as it is
        if (pos + part > most) {
          copied = true;
          break;
        }
        std::memcpy(h + pos, blk + j * part, part);
        c = part;
      }
      put32(h + pos - 4, static_cast<uint32_t>(c));
      pos += c;
    }
  }
  if (copied) {  // the whole chunk after the header (flags kept, as C-Blosc keeps them)
    flags |= kMemcpyed;
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
