// b2nd frames read from a ByteStore (b2lazy/byte_store.hpp): a second C-Blosc2 I/O backend
// beside pinned_io's. At open the frame's header and its tail (the chunk-offsets index and
// the trailer) are read once, by range, and kept: C-Blosc2's reads of them are answered
// from memory. Chunks are then fetched by the source itself (B2ndSource), many at once:
// one range per chunk, or a chunk's header and block table then only the blocks a region
// needs (storage/blosc_range.hpp). Chunk headers are checked before anything is allocated for
// them (ChunkFetch), and errors name the object's URL.
#pragma once
#include <b2nd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "b2lazy/byte_store.hpp"
#include "b2lazy/node.hpp"

namespace b2lazy {

class ThreadState;

class StoreFrame {
 public:
  // The object at key "" of `store` as a b2nd frame; nullptr arr with `why` when it is not
  // one. IOError naming the URL when it is missing or cannot be read.
  struct Opened {
    b2nd_array_t* arr = nullptr;
    std::shared_ptr<StoreFrame> frame;
    std::string why;
  };
  static Opened open(const StorePtr& store);
  StoreFrame() = default;
  ~StoreFrame();
  StoreFrame(const StoreFrame&) = delete;
  StoreFrame& operator=(const StoreFrame&) = delete;

  const std::string& url() const { return url_; }
  const StorePtr& store() const { return store_; }
  int64_t nchunks() const { return static_cast<int64_t>(offsets_.size()); }
  // Where chunk `id` starts in the object, or -1 for a special chunk (zeros, NaNs,
  // uninitialised: C-Blosc2 makes it from the index alone, reading nothing).
  int64_t chunk_position(int64_t id) const;
  // The bytes stored from chunk `id`'s start to the next chunk's (or the chunks' end): an
  // upper bound of its compressed size, read whole in one range.
  int64_t chunk_span(int64_t id) const;

  // What a read needs of a chunk: all of it, or these blocks (ascending block ids).
  struct Want {
    int64_t id;
    bool whole;
    std::vector<int64_t> blocks;
  };
  // A chunk fetched: a Blosc2 buffer (whole, or packed with the wanted blocks only), its
  // own or shared with the fetch cache (a whole chunk it holds: several fills read it).
  struct Fetched {
    std::vector<uint8_t> bytes;
    std::shared_ptr<const void> shared;  // when set: `size` bytes at `at`, kept alive by it
    const uint8_t* at = nullptr;
    size_t size = 0;
    bool whole = true;
    std::vector<int64_t> blocks;  // when not whole
    const uint8_t* data() const { return shared ? at : bytes.data(); }
    size_t length() const { return shared ? size : bytes.size(); }
  };
  // Fetches every chunk of `wants` (none special) with at most two batches of requests:
  // whole chunks and headers with block tables, then the blocks. `expected_bytes` and
  // `typesize`: what each chunk holds (headers are checked against them first).
  // Its reads go through the execution's fetch cache (runtime/fetch_cache.hpp): those the
  // prefetch sent ahead (first_read, Node::store_reads) are taken from there.
  std::vector<Fetched> fetch(const std::vector<Want>& wants, int64_t expected_bytes, int32_t typesize,
                             ThreadState& ts) const;
  // fetch()'s first read of `w`: the whole chunk, or its header and block table.
  StoreRead first_read(const Want& w, int64_t expected_bytes) const;
  // The chunks' mean stored size (what a first read of a whole chunk fetches).
  int64_t mean_chunk_bytes() const;

 private:
  friend struct StoreIO;
  StorePtr store_;
  std::string url_;
  int64_t size_ = 0;
  int64_t header_len_ = 0, chunks_end_ = 0;  // the frame's chunks: [header_len_, chunks_end_)
  std::vector<uint8_t> head_, tail_;         // bytes [0, head_.size()) and [tail_at_, size_)
  int64_t tail_at_ = 0;
  int64_t blocksize_ = 0;
  // C-Blosc2 takes the frame's size from stat() of the path it is given (not from the
  // backend): a sparse anonymous file of the object's size stands in, never read.
  int placeholder_fd_ = -1;       // the frame's block size in bytes
  std::vector<int64_t> offsets_;  // per chunk, relative to header_len_ (< 0: special)
  std::vector<int64_t> sorted_;   // the distinct offsets >= 0, ascending
};

}  // namespace b2lazy
