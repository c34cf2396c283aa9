#include "core/big_alloc.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

namespace b2lazy {

namespace {
constexpr size_t kPage = size_t(2) << 20;
size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }
}  // namespace

void* alloc_big(size_t bytes) {
  if (bytes > (SIZE_MAX >> 1)) throw std::bad_alloc();
  const bool huge = bytes >= kHugeBytes;
  const size_t align = huge ? kPage : 64;
  const size_t cap = round_up(bytes ? bytes : 1, align);
  void* p = std::aligned_alloc(align, cap);
  if (!p) throw std::bad_alloc();
  // Advice only: without THP (or with it off) the pages are ordinary ones.
  if (huge) (void)::madvise(p, cap, MADV_HUGEPAGE);
  return p;
}

void free_big(void* p) noexcept { std::free(p); }

}  // namespace b2lazy
