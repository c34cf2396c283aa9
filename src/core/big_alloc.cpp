#include "core/big_alloc.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <set>
#include <unordered_map>
#include <vector>

namespace b2lazy {

namespace {
constexpr size_t kPage = size_t(2) << 20;
size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Freed mappings kept for the next evaluation, up to this many bytes: a fresh page costs a
// fault and zeroing (13 % of a 45 ms sum over 128 MiB: its arenas are new each compute),
// while malloc'd buffers, as NumPy's, come back from the heap warm. A miss gives the warm
// mappings back before mapping more, so the process's peak never grows for them.
// An evaluation under a budget lowers the limit for its duration (WarmLimit).
constexpr size_t kWarmBytes = size_t(64) << 20;

struct Mapping {
  void* p;
  size_t cap;
};

// The mappings handed out and the warm ones (few and large: a lock is cheap next to them).
struct Maps {
  std::mutex m;
  std::unordered_map<void*, size_t> live;
  std::vector<Mapping> warm;  // oldest first
  size_t warm_bytes = 0;
  std::multiset<size_t> limits;  // of the evaluations running (concurrent ones end in any order)
};
Maps& maps() {
  static auto* m = new Maps;  // never destroyed: frees may come late
  return *m;
}

void* map_huge(size_t cap) {
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
  return p;
}

// How many bytes may stay warm: the smallest limit of the evaluations running. Lock held.
size_t warm_limit(const Maps& ms) { return ms.limits.empty() ? kWarmBytes : *ms.limits.begin(); }

// Unmaps the oldest warm mappings until at most `keep` bytes stay warm. Lock held.
void shrink_warm(Maps& ms, size_t keep) {
  while (ms.warm_bytes > keep) {
    ::munmap(ms.warm.front().p, ms.warm.front().cap);
    ms.warm_bytes -= ms.warm.front().cap;
    ms.warm.erase(ms.warm.begin());
  }
}

// A warm mapping of at least `cap` bytes and at most twice that (the smallest), or null;
// on a miss every warm mapping is unmapped. Called with the lock held.
Mapping take_warm(Maps& ms, size_t cap) {
  size_t best = ms.warm.size();
  for (size_t i = 0; i < ms.warm.size(); ++i)
    if (ms.warm[i].cap >= cap && ms.warm[i].cap / 2 <= cap &&
        (best == ms.warm.size() || ms.warm[i].cap < ms.warm[best].cap))
      best = i;
  if (best < ms.warm.size()) {
    const Mapping w = ms.warm[best];
    ms.warm.erase(ms.warm.begin() + static_cast<long>(best));
    ms.warm_bytes -= w.cap;
    return w;
  }
  shrink_warm(ms, 0);
  return {nullptr, 0};
}
}  // namespace

void* alloc_big(size_t bytes) {
  if (bytes > (SIZE_MAX >> 2)) throw std::bad_alloc();
  if (bytes < kHugeBytes) {
    void* p = std::aligned_alloc(64, round_up(bytes ? bytes : 1, 64));
    if (!p) throw std::bad_alloc();
    return p;
  }
  // Mapped on its own, 2 MiB aligned: unmapped when freed (or kept warm, bounded), so
  // nothing of it stays with malloc's arenas (whose mmap threshold rises after large
  // frees, so that later large buffers came from the heap and stayed there, fragmented,
  // after the evaluation).
  const size_t cap = round_up(bytes, kPage);
  Maps& ms = maps();
  std::lock_guard<std::mutex> g(ms.m);
  Mapping w = take_warm(ms, cap);
  if (!w.p) w = {map_huge(cap), cap};
  try {
    ms.live[w.p] = w.cap;
  } catch (...) {
    ::munmap(w.p, w.cap);
    throw std::bad_alloc();
  }
  return w.p;
}

void free_big(void* p) noexcept {
  if (!p) return;
  Maps& ms = maps();
  std::lock_guard<std::mutex> g(ms.m);
  auto it = ms.live.find(p);
  if (it == ms.live.end()) return std::free(p);
  const size_t cap = it->second;
  ms.live.erase(it);
  const size_t limit = warm_limit(ms);
  if (cap > limit) return (void)::munmap(p, cap);
  shrink_warm(ms, limit - cap);  // the oldest give way
  try {
    ms.warm.push_back({p, cap});
    ms.warm_bytes += cap;
  } catch (...) {
    ::munmap(p, cap);
  }
}

size_t warm_bytes() {
  Maps& ms = maps();
  std::lock_guard<std::mutex> g(ms.m);
  return ms.warm_bytes;
}

WarmLimit::WarmLimit(size_t bytes) : bytes_(bytes) {
  Maps& ms = maps();
  std::lock_guard<std::mutex> g(ms.m);
  ms.limits.insert(bytes_);
  shrink_warm(ms, warm_limit(ms));
}

WarmLimit::~WarmLimit() {
  Maps& ms = maps();
  std::lock_guard<std::mutex> g(ms.m);
  ms.limits.erase(ms.limits.find(bytes_));
}

}  // namespace b2lazy
