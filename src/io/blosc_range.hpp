// Part of a Blosc chunk stored in a file, read without the rest: the header, the block
// starts and only the blocks that hold the items asked for (a Zarr chunk compressed by
// Blosc is one such buffer). What a unit source needs for partial reads.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "exec/thread_state.hpp"

namespace b2lazy {

struct BloscRangeRead {
  int fd;                // the file
  int64_t offset;        // where the Blosc buffer starts in it
  int64_t size;          // its stored size
  int64_t expected_bytes;  // the decoded chunk's size: anything else is a damaged file
  size_t itemsize;
  std::string where;     // names the file (and chunk) in errors
};

// A Blosc buffer's blocks where they are stored: its table of int32 block starts (after a
// header of `header_len` bytes: 16 for Blosc 1, 32 for Blosc2), each block ending where the
// next stored one starts (or at cbytes). Read by range from a file or a store
// (storage/store_io.hpp): only the blocks a read needs are fetched, packed into a smaller
// buffer that decompresses like the whole one for their items.
class BlockExtents {
 public:
  // `table`: the nblocks starts; IOError naming `where` when one lies outside the buffer.
  BlockExtents(const uint8_t* table, int64_t nblocks, int64_t header_len, int64_t cbytes, const std::string& where);
  int64_t table_end() const { return header_len_ + 4 * static_cast<int64_t>(starts_.size()); }
  // Block `b`'s bytes: [first, second) of the buffer.
  std::pair<int64_t, int64_t> extent(int64_t b) const;
  // The size of a buffer holding `blocks` only (header, table, their bytes).
  int64_t packed_size(const std::vector<int64_t>& blocks) const;
  // Writes that buffer into `out` (packed_size bytes): `header` with its cbytes set, the
  // table pointing at the blocks packed after it, each block's bytes got by copy(b, dst).
  void pack(const uint8_t* header, const std::vector<int64_t>& blocks,
            const std::function<void(int64_t b, uint8_t* dst)>& copy, uint8_t* out) const;

 private:
  int64_t header_len_, cbytes_;
  std::vector<int64_t> starts_, sorted_;
};

// Items [start, start + n) of the chunk into `dst`; returns the bytes decompressed (every
// block touched, whole). IOError naming `where` for a damaged buffer.
int64_t read_blosc_range(const BloscRangeRead& in, int64_t start, int64_t n, void* dst, ThreadState& ts);

}  // namespace b2lazy
