// Zarr codec pipelines (v3's codecs; v2's order, dtype byte order and compressor mapped
// onto them): decoding a stored chunk into a C-order array chunk, and encoding one.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "b2lazy/box.hpp"
#include "b2lazy/dtype.hpp"

namespace b2lazy {

class ThreadState;

namespace zarr {

// A bytes -> bytes codec. v2 "zlib" and "gzip" are both Deflate (zlib detects the header).
struct BytesCodec {
  enum class Kind { Blosc, Zstd, Deflate, Lz4, Crc32c } kind;
  std::string name;  // as the metadata names it, for messages and info
  int level = 0;
  // Blosc (writing): Blosc's compressor name and byte shuffle.
  std::string cname;
  bool shuffle = false;
};

struct Sharding;

// What turns a chunk of `shape` into stored bytes: array -> array transposes (composed
// into one permutation), an array -> bytes codec (the plain bytes, or sharding), then
// bytes -> bytes codecs, in encoding order.
struct Pipeline {
  std::vector<int> order;                    // transpose: encoded axis k is chunk axis order[k]; empty: none
  bool big_endian = false;                   // bytes codec
  std::shared_ptr<const Sharding> sharding;  // array -> bytes is sharding_indexed
  std::vector<BytesCodec> bytes_codecs;
  std::string describe() const;  // "bytes+blosc(zstd)", for explain and info
};

struct Sharding {
  Shape inner;  // inner chunk shape; the shard (outer chunk) holds whole inner chunks
  Pipeline codecs, index_codecs;
  bool index_at_end = true;
  // Bytes of the encoded index of a shard with `n` inner chunks (its codecs must be fixed-size).
  int64_t index_bytes(int64_t n) const;
};

constexpr uint64_t kMissing = ~uint64_t(0);  // an inner chunk's offset and size when it is absent

// Decodes `n` stored bytes into a chunk of `shape` (dense, C order, native byte order) at
// `out`. `where` names the chunk (path and key) in errors, which are IOError.
void decode(const Pipeline& p, const uint8_t* data, size_t n, const Shape& shape, DType t, void* out,
            const std::string& where, ThreadState& ts, const void* fill);

// Decodes a shard's index (`n` bytes): offset and size per inner chunk, in C order.
std::vector<uint64_t> decode_index(const Sharding& s, const uint8_t* data, size_t n, int64_t ninner,
                                   const std::string& where, ThreadState& ts);

// Encodes a chunk of `shape` (dense, C order, native byte order; whole, padded with the
// fill value) into `out`.
void encode(const Pipeline& p, const void* chunk, const Shape& shape, DType t, std::vector<uint8_t>& out,
            const void* fill);

// Undoes one bytes -> bytes codec on `n` bytes at `data`, the result (at most `most` bytes:
// a header claiming more is refused before its size is allocated) into `out` (resized):
// for formats whose filters are these codecs too (HDF5's deflate, zstd, blosc).
void undo_bytes(const BytesCodec& c, const uint8_t* data, size_t n, std::vector<uint8_t>& out, const std::string& where,
                ThreadState& ts, size_t most = size_t(INT32_MAX));
// The same into `dst`, which the result must fill exactly (`dst_n` bytes).
void undo_bytes_into(const BytesCodec& c, const uint8_t* data, size_t n, void* dst, size_t dst_n,
                     const std::string& where, ThreadState& ts);

// The most bytes codec `c` stores for `n` bytes (what does not compress, as it is, plus
// headers, with room to spare): a decoder's result for the next codec may not exceed it.
size_t max_encoded(const BytesCodec& c, size_t n);
// The most bytes a chunk of `shape` may be stored in through `p` (a larger file is damaged).
size_t max_stored(const Pipeline& p, const Shape& shape, DType t);
// The most bytes a shard of `shard` (its encoded shape) takes: its index and every inner
// chunk at its most.
size_t max_shard_bytes(const Sharding& s, const Shape& shard, DType t);

// Byte-order reversal of `n` items of `isz` bytes, in place.
void byteswap(void* data, int64_t n, size_t isz);
// Numbers per element, each swapped on its own: 2 for complex (real, imaginary), else 1.
int64_t parts_of(DType t);

}  // namespace zarr
}  // namespace b2lazy
