#include "core/big_alloc.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>

namespace b2lazy {

namespace {
constexpr size_t kPage = size_t(2) << 20;
size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Sizes of the mappings handed out (few and large: a lock is cheap next to them).
std::mutex& maps_mutex() {
  static std::mutex m;
  return m;
}
std::unordered_map<void*, size_t>& maps() {
  static auto* m = new std::unordered_map<void*, size_t>;  // never destroyed: frees may come late
  return *m;
}
}  // namespace

void* alloc_big(size_t bytes) {
  if (bytes > (SIZE_MAX >> 2)) throw std::bad_alloc();
  if (bytes < kHugeBytes) {
    void* p = std::aligned_alloc(64, round_up(bytes ? bytes : 1, 64));
    if (!p) throw std::bad_alloc();
    return p;
  }
  // Mapped on its own, 2 MiB aligned: unmapped when freed, so nothing of it stays with
  // malloc's arenas (whose mmap threshold rises after large frees, so that later large
  // buffers came from the heap and stayed there, fragmented, after the evaluation).
  const size_t cap = round_up(bytes, kPage);
  void* raw = ::mmap(nullptr, cap + kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = round_up(start, kPage);
  if (aligned > start) ::munmap(raw, aligned - start);
  const size_t tail = (start + cap + kPage) - (aligned + cap);
  if (tail) ::munmap(reinterpret_cast<void*>(aligned + cap), tail);
  void* p = reinterpret_cast<void*>(aligned);
  // Advice only: without THP (or with it off) the pages are ordinary ones.
  (void)::madvise(p, cap, MADV_HUGEPAGE);
  try {
    std::lock_guard<std::mutex> g(maps_mutex());
    maps()[p] = cap;
  } catch (...) {
    ::munmap(p, cap);
    throw std::bad_alloc();
  }
  return p;
}

void free_big(void* p) noexcept {
  if (!p) return;
  size_t cap = 0;
  {
    std::lock_guard<std::mutex> g(maps_mutex());
    auto it = maps().find(p);
    if (it != maps().end()) {
      cap = it->second;
      maps().erase(it);
    }
  }
  if (cap) ::munmap(p, cap);
  else std::free(p);
}

}  // namespace b2lazy
