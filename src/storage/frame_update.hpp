// Chunks of a contiguous b2nd file (one Blosc2 frame) replaced so that a crash at any point
// leaves either the old array or the new one, whole.
//
// C-Blosc2's own update rewrites a frame in place: it moves every chunk after the one
// replaced, writes the chunk, the offsets index and the header; a process killed in
// between leaves a file nobody can read. Here nothing the current frame uses is written
// to: the new chunks, then a new offsets index and a copy of the trailer, are appended
// after the frame's end, and only then does one small write of the header (its frame
// length and chunk-bytes fields, 31 bytes in the file's first page) switch readers to
// them. The replaced chunks become dead space inside the frame; when it outweighs the live
// chunks, the frame is rewritten compactly into a temporary file renamed over the old one.
#pragma once
#include <b2nd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "b2lazy/box.hpp"

namespace b2lazy {

// `data` (dense C order, shape `box`: a chunk's box, smaller than the chunk shape at the
// array's edges) compressed as chunk of `arr`: its blocks, padding and compression.
std::vector<uint8_t> compress_chunk_like(const b2nd_array_t* arr, const Shape& box, const void* data);

class FrameUpdate {
 public:
  // Opens the contiguous b2nd file at `path`, of `nchunks` chunks, for writing and reads its
  // header, offsets index and trailer. Throws IOError naming the file when they are not
  // consistent.
  FrameUpdate(const std::string& path, int64_t nchunks);
  ~FrameUpdate();
  FrameUpdate(const FrameUpdate&) = delete;
  FrameUpdate& operator=(const FrameUpdate&) = delete;

  int64_t nchunks() const { return static_cast<int64_t>(offsets_.size()); }
  // Chunk `id` becomes `chunk` (a Blosc2 chunk of `cbytes` bytes) at commit().
  void replace(int64_t id, const uint8_t* chunk, int32_t cbytes);
  // Makes the replacements visible at once (see above), then compacts if worth it.
  void commit();

  // For tests: bytes of the frame's chunk region that no chunk uses.
  int64_t dead_bytes() const { return cbytes_ - live_bytes_; }

 private:
  void append(const void* data, int64_t n);
  void compact();

  std::string path_;
  int fd_ = -1;
  std::vector<uint8_t> header_;    // the frame's header, as read
  int64_t header_len_ = 0, frame_len_ = 0, cbytes_ = 0;
  std::vector<int64_t> offsets_;   // chunk positions after the header; < 0: special chunks
  std::vector<int32_t> sizes_;     // each regular chunk's stored bytes (0 for special ones)
  std::vector<uint8_t> trailer_;   // copied verbatim after the new index
  int64_t end_ = 0;                // where the next appended byte goes
  int64_t live_bytes_ = 0;         // sum of sizes_
};

}  // namespace b2lazy
