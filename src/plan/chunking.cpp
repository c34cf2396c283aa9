#include "plan/chunking.hpp"

#include <algorithm>

namespace b2lazy {

size_t chunk_target_bytes(const Node& root, size_t max_memory, int nthreads) {
  // Each thread holds about (inputs + output + decompression buffer) chunk-sized buffers.
  size_t per_thread = max_memory / static_cast<size_t>(std::max(1, nthreads)) / 8;
  size_t total = static_cast<size_t>(root.size()) * itemsize(root.dtype());
  size_t spread = total / static_cast<size_t>(4 * std::max(1, nthreads));  // enough tasks
  size_t t = std::min<size_t>(size_t(4) << 20, per_thread);
  t = std::min(t, std::max<size_t>(spread, 256 << 10));
  return std::max<size_t>(t, 64 << 10);
}

}  // namespace b2lazy
