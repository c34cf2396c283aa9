#include "runtime/scratch.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "core/big_alloc.hpp"

namespace b2lazy {

namespace {
constexpr size_t kAlign = 64;
size_t round_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
}  // namespace

Scratch::~Scratch() {
  for (auto& b : blocks_) free_big(b.data);
}

void* Scratch::alloc(size_t bytes) {
  if (bytes > (SIZE_MAX >> 1)) throw std::bad_alloc();  // (a size this large was computed wrongly; never round it)
  bytes = round_up(bytes ? bytes : 1);
  if (!blocks_.empty() && blocks_[cur_].cap - blocks_[cur_].used >= bytes) {
    void* p = blocks_[cur_].data + blocks_[cur_].used;
    blocks_[cur_].used += bytes;
    return p;
  }
  // Later blocks are free (stack discipline); take the smallest one big enough, so that a
  // small request does not take the block a larger one will need next (which would then
  // add a block: the arena would grow past what its requests ever hold at once).
  size_t start = blocks_.empty() ? 0 : cur_ + 1, best = blocks_.size();
  for (size_t i = start; i < blocks_.size(); ++i)
    if (blocks_[i].cap >= bytes && (best == blocks_.size() || blocks_[i].cap < blocks_[best].cap)) best = i;
  if (best < blocks_.size()) {
    std::swap(blocks_[best], blocks_[start]);
    cur_ = start;
    blocks_[cur_].used = bytes;
    return blocks_[cur_].data;
  }
  // None is: free them (all too small) so that growing requests do not pile up blocks.
  for (size_t i = start; i < blocks_.size(); ++i) {
    free_big(blocks_[i].data);
    held_ -= blocks_[i].cap;
  }
  blocks_.resize(start);
  size_t cap = round_up(std::max(bytes, kMinBlockBytes));
  char* data = static_cast<char*>(alloc_big(cap));
  held_ += cap;
  capacity_ = std::max(capacity_, held_);
  blocks_.insert(blocks_.begin() + static_cast<long>(start), Block{data, cap, bytes});
  cur_ = start;
  return data;
}

void Scratch::release(Mark m) {
  if (blocks_.empty()) return;
  for (size_t i = m.block + 1; i <= cur_ && i < blocks_.size(); ++i) blocks_[i].used = 0;
  cur_ = m.block;
  blocks_[cur_].used = m.used;
}

void Scratch::trim() {
  if (blocks_.empty()) return;
  const size_t keep = blocks_[cur_].used ? cur_ + 1 : cur_;  // blocks before cur_ are in use
  for (size_t i = keep; i < blocks_.size(); ++i) {
    free_big(blocks_[i].data);
    held_ -= blocks_[i].cap;
  }
  blocks_.resize(keep);
  cur_ = keep ? keep - 1 : 0;
}

}  // namespace b2lazy
