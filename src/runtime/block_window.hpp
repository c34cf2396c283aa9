// Decompressed storage blocks of one source, kept while a plan executes (Plan::windows):
// tasks that pull parts of the same blocks in turn then decompress each block once. A
// column-strip array read by row bands is the case it is for: each 16-row band of an
// (8192, 64)-chunked array touches 1/32 of the same 128 blocks, so without it every
// block is decompressed 32 times, and keeping the whole array dense (512 MiB) was the
// only other way to read it once. The plan sizes the window (plan/window.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace b2lazy {

class BlockWindow {
 public:
  using Block = std::shared_ptr<const char[]>;
  // At most `capacity` blocks of `block_bytes` kept (blocks held by a reader stay
  // allocated until it lets them go).
  BlockWindow(int64_t capacity, size_t block_bytes)
      : capacity_(capacity), block_bytes_(block_bytes), buffers_(std::make_shared<Buffers>()) {}
  // Block `key`, made by `make(dst)` (block_bytes into dst) when it is not kept: one
  // caller makes it, concurrent callers of the same key wait for that one.
  Block get(int64_t key, const std::function<void(void*)>& make);
  // Is block `key` kept (or being made) now? (A remote source fetches only the others.)
  bool contains(int64_t key) {
    std::lock_guard<std::mutex> g(mu_);
    return slots_.count(key) > 0;
  }
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }

 private:
  struct Slot {
    std::shared_future<Block> block;
    std::list<int64_t>::iterator age;  // in lru_, most recent first
    uint64_t made_by = 0;              // the get() that makes it
  };
  // Buffers of blocks no longer held, made again into blocks: freed and allocated anew,
  // they stayed in each worker's malloc arena, and a 32 MiB window grew the process by
  // about 60 MiB. Shared with the blocks' deleters (a reader may outlive the window).
  struct Buffers {
    std::mutex mu;
    std::vector<char*> free;
    ~Buffers() {
      for (char* b : free) delete[] b;
    }
  };
  std::shared_ptr<char[]> buffer();
  int64_t capacity_;
  size_t block_bytes_;
  std::shared_ptr<Buffers> buffers_;
  std::mutex mu_;
  std::unordered_map<int64_t, Slot> slots_;
  std::list<int64_t> lru_;
  int64_t hits_ = 0, misses_ = 0;
  uint64_t gets_ = 0;
};

}  // namespace b2lazy
