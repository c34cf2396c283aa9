// Part of a Blosc chunk stored in a file, read without the rest: the header, the block
// starts and only the blocks that hold the items asked for (a Zarr chunk compressed by
// Blosc is one such buffer). What a unit source needs for partial reads.
#pragma once
#include <cstdint>
#include <string>

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

// Items [start, start + n) of the chunk into `dst`; returns the bytes decompressed (every
// block touched, whole). IOError naming `where` for a damaged buffer.
int64_t read_blosc_range(const BloscRangeRead& in, int64_t start, int64_t n, void* dst, ThreadState& ts);

}  // namespace b2lazy
