// Large buffers (kept stages, scratch arenas, kept bands) on transparent huge pages where
// the kernel offers them on request (THP "madvise" mode, Debian's default), as NumPy does
// for its arrays: a 2 MiB page costs one fault instead of 512, and BLAS walking a product
// panel misses the TLB far less. Small buffers are ordinary 64-byte aligned allocations.
#pragma once
#include <cstddef>
#include <memory>

namespace b2lazy {

// Uninitialised, 64-byte aligned (2 MiB aligned from kHugeBytes up); throws std::bad_alloc.
// Free with free_big (std::free).
void* alloc_big(size_t bytes);
void free_big(void* p) noexcept;

// Bytes of freed mappings kept warm now (resident, not in use).
size_t warm_bytes();

// Freed mappings kept warm for reuse stay resident: an evaluation under a budget lowers
// how many bytes may stay so (they count in its peak) while it runs: the smallest limit
// of the evaluations running holds.
class WarmLimit {
 public:
  explicit WarmLimit(size_t bytes);
  ~WarmLimit();
  WarmLimit(const WarmLimit&) = delete;
  WarmLimit& operator=(const WarmLimit&) = delete;

 private:
  size_t bytes_;
};

// What alloc_big aligns to huge pages: smaller requests would waste most of a page.
constexpr size_t kHugeBytes = size_t(4) << 20;

struct BigDeleter {
  void operator()(void* p) const noexcept { free_big(p); }
};
using BigBuffer = std::unique_ptr<unsigned char[], BigDeleter>;
inline BigBuffer make_big(size_t bytes) { return BigBuffer(static_cast<unsigned char*>(alloc_big(bytes))); }

}  // namespace b2lazy
