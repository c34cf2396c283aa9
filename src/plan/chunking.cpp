#include "plan/chunking.hpp"

#include <algorithm>
#include <functional>

namespace b2lazy {

Shape contiguous_chunks(const Shape& shape, size_t itemsize, size_t target_bytes) {
  Shape c(shape.size(), 1);
  int64_t items = std::max<int64_t>(1, static_cast<int64_t>(target_bytes / itemsize));
  int64_t acc = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t len = std::max<int64_t>(1, shape[d]);
    if (acc * len <= items) {
      c[d] = len;
      acc *= len;
    } else {
      c[d] = std::max<int64_t>(1, items / acc);
      break;
    }
  }
  return c;
}

Shape balanced_chunks(const Shape& shape, size_t itemsize, size_t target_bytes) {
  Shape c(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) c[d] = std::max<int64_t>(1, shape[d]);
  while (prod(c) * static_cast<int64_t>(itemsize) > static_cast<int64_t>(target_bytes)) {
    size_t big = static_cast<size_t>(std::max_element(c.begin(), c.end()) - c.begin());
    if (c[big] == 1) break;
    c[big] = (c[big] + 1) / 2;
  }
  return c;
}

const Node* aligned_storage_source(const NodePtr& root) {
  // Of several stored operands, take the one with the largest chunks: when chunk grids
  // nest, every operand chunk is then decompressed once.
  const Node* best = nullptr;
  std::function<void(const Node&)> walk = [&](const Node& n) {
    if (n.shape() != root->shape()) return;
    if (const ChunkGrid* g = n.storage_grid()) {
      if (!best || prod(g->chunks()) > prod(best->storage_grid()->chunks())) best = &n;
      return;
    }
    if (n.is_elementwise())
      for (auto& in : n.inputs()) walk(*in);
  };
  walk(*root);
  return best;
}

Shape preferred_chunks_of(const NodePtr& root) {
  Shape best;
  std::function<void(const Node&)> walk = [&](const Node& n) {
    if (n.shape() != root->shape()) return;
    Shape c = n.preferred_chunks();
    if (!c.empty()) {
      if (best.empty() || prod(c) > prod(best)) best = c;
      return;
    }
    if (n.is_elementwise())
      for (auto& in : n.inputs()) walk(*in);
  };
  walk(*root);
  return best;
}

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
