// Part of a Blosc chunk, read without the rest: the header, the block starts and only the
// blocks that hold the items asked for (a Zarr chunk compressed by Blosc is one such
// buffer). What a unit source needs for partial reads. The reads are steps of a plan
// (BloscRangePlan) so that any reader serves them: pread on a file (read_blosc_range), or
// a byte store's batched range requests for many chunks at once (io/zarr/zarr_keys.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/thread_state.hpp"

namespace b2lazy {

class BloscRangePlan {
 public:
  // Buffers the plan reads into: `alloc(n)` (kept until the plan is gone), or vectors.
  using Alloc = std::function<uint8_t*(size_t)>;
  // Items [start, start + n) of a Blosc buffer of `size` stored bytes (-1: not known, as
  // for a remote object; a read past its end is then the reader's error) whose decoded
  // chunk is `expected_bytes` long (anything else is damage). `direct`: where the items go
  // when they can be read as they are (a buffer stored uncompressed), or null.
  BloscRangePlan(int64_t size, int64_t expected_bytes, size_t itemsize, std::string where, int64_t start, int64_t n,
                 void* direct = nullptr, Alloc alloc = {});
  BloscRangePlan(const BloscRangePlan&) = delete;  // (its reads point into it)
  BloscRangePlan& operator=(const BloscRangePlan&) = delete;
  // A read the plan waits for: bytes [at, at + len) of the buffer into dst.
  struct Want {
    int64_t at, len;
    uint8_t* dst;
  };
  // The reads of the next step; empty when every step is done.
  const std::vector<Want>& wants() const { return wants_; }
  // Those reads are done: checks what they brought and sets the next step's.
  void advance();
  // The items into `dst` (the `direct` given, or any buffer); returns the bytes
  // decompressed (every block touched, whole). IOError naming `where` for damage.
  int64_t decode(void* dst, ThreadState& ts);
  const std::string& where() const { return where_; }

 private:
  enum class Step { Header, Table, Blocks, Whole, Run, Done };
  uint8_t* buffer(size_t n);
  [[noreturn]] void damaged(const std::string& what) const;
  void want(int64_t at, int64_t len, uint8_t* dst);
  void after_header();
  void after_table();
  int64_t size_, expected_, start_, n_;
  size_t isz_;
  std::string where_;
  void* direct_;
  Alloc alloc_;
  std::vector<std::vector<uint8_t>> owned_;
  Step step_ = Step::Header, read_ = Step::Header;  // read_: what the data read is (Run/Whole/Blocks)
  std::vector<Want> wants_;
  uint8_t header_[16];
  int64_t nbytes_ = 0, blocksize_ = 0, cbytes_ = 0, nblocks_ = 0, block_items_ = 0;
  uint8_t* table_ = nullptr;  // the block starts as stored
  uint8_t* data_ = nullptr;   // Run: the items; Whole: the buffer; Blocks: the packed buffer
  int64_t packed_ = 0, b0_ = 0, b1_ = 0;
};

struct BloscRangeRead {
  int fd;                  // the file
  int64_t offset;          // where the Blosc buffer starts in it
  int64_t size;            // its stored size
  int64_t expected_bytes;  // the decoded chunk's size: anything else is a damaged file
  size_t itemsize;
  std::string where;  // names the file (and chunk) in errors
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

// Items [start, start + n) of the chunk into `dst`, read by pread; returns the bytes
// decompressed (every block touched, whole). IOError naming `where` for a damaged buffer.
int64_t read_blosc_range(const BloscRangeRead& in, int64_t start, int64_t n, void* dst, ThreadState& ts);

}  // namespace b2lazy
