// Chunks of a stored b2nd array replaced so that a crash at any point leaves every chunk
// wholly old or wholly new, and the array readable (x[key] = value with mode="r+").
//
// C-Blosc2's own update rewrites a contiguous frame in place: it moves every chunk after
// the one replaced, writes the chunk, the offsets index and the header, and a process
// killed in between leaves a file nobody can read; in a sparse directory it truncates a
// chunk's file before writing it. Here nothing a reader uses is written to in place:
//  - contiguous file: the new chunks, then a new offsets index and a copy of the trailer,
//    are appended after the frame's end, and only then does one small write of the header
//    (its frame length and chunk-bytes fields, 31 bytes in the file's first page) switch
//    readers to them — all of a statement's chunks at once. The replaced chunks become dead
//    space; when it outweighs the live chunks the frame is rewritten compactly into a
//    temporary file renamed over the old one.
//  - sparse directory: each chunk file is written under a temporary name and renamed over
//    the old one; when the index changes (a chunk of zeros, NaNs or uninitialised values
//    is a mark in it, not a file) the new index is renamed over chunks.b2frame last.
#pragma once
#include <b2nd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "b2lazy/box.hpp"

namespace b2lazy {

class ChunkUpdate {
 public:
  // The contiguous file or sparse directory at `urlpath`, of `nchunks` chunks, opened for
  // replacing chunks. Throws IOError naming it when its frame is not consistent.
  static std::unique_ptr<ChunkUpdate> open(const std::string& urlpath, int64_t nchunks);
  virtual ~ChunkUpdate() = default;
  // Chunk `id` becomes `chunk` (a Blosc2 chunk of `cbytes` bytes), at commit() at the latest.
  virtual void replace(int64_t id, const uint8_t* chunk, int32_t cbytes) = 0;
  // Makes every replacement visible (see above).
  virtual void commit() = 0;
};

// `data` (dense C order, shape `box`: a chunk's box, smaller than the chunk shape at the
// array's edges) compressed as a chunk of `arr`: its blocks, padding and compression.
std::vector<uint8_t> compress_chunk_like(const b2nd_array_t* arr, const Shape& box, const void* data);

}  // namespace b2lazy
