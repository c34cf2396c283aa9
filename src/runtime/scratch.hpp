// Per-thread stack arena: buffers for one output chunk, reused across chunks.
#pragma once
#include <cstddef>
#include <memory>
#include <new>
#include <vector>

namespace b2lazy {

class Scratch {
 public:
  // Blocks are at least this large (a thread that allocates anything holds one), so that
  // growing requests do not pile up small blocks.
  static constexpr size_t kMinBlockBytes = size_t(256) << 10;
  struct Mark {
    size_t block = 0, used = 0;
  };
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  ~Scratch();
  // 64-byte aligned, uninitialised; valid until release() of an earlier mark.
  void* alloc(size_t bytes);
  Mark mark() const { return {cur_, blocks_.empty() ? 0 : blocks_[cur_].used}; }
  void release(Mark m);
  // Frees the blocks nothing holds: between passes, so that one pass's large buffers (a
  // row of a re-packed stage) are not held through the next, beside what it allocates.
  void trim();
  size_t capacity() const { return capacity_; }  // the high-water mark of bytes held
  size_t held() const { return held_; }          // bytes held now

 private:
  struct Block {
    char* data;
    size_t cap, used;
  };
  std::vector<Block> blocks_;
  size_t cur_ = 0;
  size_t held_ = 0, capacity_ = 0;
};

// Releases everything allocated through it at scope exit.
class ScratchScope {
 public:
  explicit ScratchScope(Scratch& s) : s_(s), m_(s.mark()) {}
  ~ScratchScope() { s_.release(m_); }
  void* alloc(size_t bytes) { return s_.alloc(bytes); }
  template <class T> T* alloc_n(size_t n) {
    size_t bytes;
    if (__builtin_mul_overflow(n, sizeof(T), &bytes)) throw std::bad_alloc();
    return static_cast<T*>(s_.alloc(bytes));
  }

 private:
  Scratch& s_;
  Scratch::Mark m_;
};

}  // namespace b2lazy
