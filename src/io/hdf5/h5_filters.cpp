#include "io/hdf5/h5_filters.hpp"

#include <blosc2.h>
#include <b2nd.h>
#include <lz4.h>

#include <cstring>
#include <memory>

#include "b2lazy/error.hpp"
#include "io/zarr/codecs.hpp"

namespace b2lazy::h5 {

namespace {

constexpr int kDeflate = 1, kShuffle = 2, kFletcher32 = 3, kLz4 = 32004, kBlosc = 32001, kZstd = 32015,
              kBlosc2 = 32026;

[[noreturn]] void bad(const std::string& where, const std::string& filter, const std::string& what) {
  throw IOError("'" + where + "': HDF5 filter " + filter + ": " + what);
}

uint64_t big_endian(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = v << 8 | p[i];
  return v;
}

// HDF5's byte shuffle: byte b of item i at b * nitems + i; the bytes past whole items stay.
void unshuffle(std::vector<uint8_t>& bytes, size_t isz) {
  const size_t n = bytes.size() / isz;
  if (isz <= 1 || n <= 1) return;
  std::vector<uint8_t> out(bytes.size());
  for (size_t b = 0; b < isz; ++b) {
    const uint8_t* src = bytes.data() + b * n;
    for (size_t i = 0; i < n; ++i) out[i * isz + b] = src[i];
  }
  std::memcpy(out.data() + n * isz, bytes.data() + n * isz, bytes.size() - n * isz);
  bytes.swap(out);
}

// The LZ4 filter's layout: total size (8 bytes), block size (4), then per block its
// compressed size (4) and data, all big-endian; a block stored as is when no smaller.
void un_lz4(std::vector<uint8_t>& bytes, const std::string& where) {
  if (bytes.size() < 12) bad(where, "lz4", "shorter than its header");
  const uint64_t total = big_endian(bytes.data(), 8), block = big_endian(bytes.data() + 8, 4);
  if (total > (uint64_t(1) << 40) || block == 0 || block > INT32_MAX) bad(where, "lz4", "damaged header");
  std::vector<uint8_t> out(total);
  size_t pos = 12, done = 0;
  while (done < total) {
    if (pos + 4 > bytes.size()) bad(where, "lz4", "truncated");
    const uint64_t c = big_endian(bytes.data() + pos, 4);
    pos += 4;
    const size_t want = static_cast<size_t>(std::min<uint64_t>(block, total - done));
    if (c > bytes.size() - pos) bad(where, "lz4", "truncated");
    if (c == want) {
      std::memcpy(out.data() + done, bytes.data() + pos, want);
    } else {
      const int r = LZ4_decompress_safe(reinterpret_cast<const char*>(bytes.data() + pos),
                                        reinterpret_cast<char*>(out.data() + done), static_cast<int>(c),
                                        static_cast<int>(want));
      if (r < 0 || static_cast<size_t>(r) != want) bad(where, "lz4", "cannot decompress (damaged)");
    }
    pos += c;
    done += want;
  }
  bytes.swap(out);
}

// The Blosc2 filter stores each chunk as a Blosc2 frame (of a b2nd array when the filter
// was given the chunk's shape): its items in C order.
void un_blosc2(std::vector<uint8_t>& bytes, const std::string& where) {
  // (No copy: `bytes` outlives the super-chunk.)
  blosc2_schunk* sc = blosc2_schunk_from_buffer(bytes.data(), static_cast<int64_t>(bytes.size()), false);
  if (!sc) bad(where, "blosc2", "not a Blosc2 frame");
  std::unique_ptr<blosc2_schunk, int (*)(blosc2_schunk*)> hold(sc, blosc2_schunk_free);
  std::vector<uint8_t> out(static_cast<size_t>(sc->nbytes));
  if (blosc2_meta_exists(sc, "b2nd") >= 0) {
    b2nd_array_t* arr = nullptr;
    if (b2nd_from_schunk(sc, &arr) < 0) bad(where, "blosc2", "its b2nd metalayer cannot be read");
    hold.release();  // (the array owns the super-chunk now)
    const int64_t n = arr->nitems * arr->sc->typesize;
    out.resize(static_cast<size_t>(n));
    const int rc = b2nd_to_cbuffer(arr, out.data(), n);
    b2nd_free(arr);
    if (rc < 0) bad(where, "blosc2", "cannot decompress");
  } else {
    size_t done = 0;
    for (int64_t i = 0; i < sc->nchunks; ++i) {
      const int r = blosc2_schunk_decompress_chunk(sc, i, out.data() + done, static_cast<int32_t>(out.size() - done));
      if (r < 0) bad(where, "blosc2", "cannot decompress chunk " + std::to_string(i));
      done += static_cast<size_t>(r);
    }
    out.resize(done);
  }
  bytes.swap(out);
}

}  // namespace

bool decodes(const std::vector<Filter>& pipeline) {
  for (const Filter& f : pipeline)
    switch (f.id) {
      case kDeflate: case kShuffle: case kFletcher32: case kLz4: case kBlosc: case kZstd: case kBlosc2: break;
      default: return false;
    }
  return true;
}

void decode(const std::vector<Filter>& pipeline, unsigned mask, size_t itemsize, std::vector<uint8_t>& bytes,
            const std::string& where, ThreadState& ts) {
  std::vector<uint8_t> out;
  for (size_t i = pipeline.size(); i-- > 0;) {
    if (mask & (1u << i)) continue;  // not applied to this chunk
    const Filter& f = pipeline[i];
    switch (f.id) {
      case kFletcher32:
        if (bytes.size() < 4) bad(where, "fletcher32", "shorter than its checksum");
        bytes.resize(bytes.size() - 4);
        break;
      case kShuffle: unshuffle(bytes, f.cd.empty() ? itemsize : f.cd[0]); break;
      case kLz4: un_lz4(bytes, where); break;
      case kBlosc2: un_blosc2(bytes, where); break;
      case kDeflate: case kZstd: case kBlosc: {
        using K = zarr::BytesCodec::Kind;
        zarr::BytesCodec c{f.id == kDeflate ? K::Deflate : f.id == kZstd ? K::Zstd : K::Blosc, f.name};
        zarr::undo_bytes(c, bytes.data(), bytes.size(), out, where, ts);
        bytes.swap(out);
        break;
      }
      default: bad(where, f.name.empty() ? std::to_string(f.id) : f.name, "not decoded by b2lazy");
    }
  }
}

}  // namespace b2lazy::h5
