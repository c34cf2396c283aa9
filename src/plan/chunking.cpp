#include "plan/chunking.hpp"

#include <algorithm>
#include <functional>
#include <unordered_set>
#include <utility>


namespace b2lazy {

Shape contiguous_chunks(const Shape& shape, size_t itemsize, size_t target_bytes) {
  Shape c(shape.size(), 1);
  int64_t items = std::max<int64_t>(1, static_cast<int64_t>(target_bytes / itemsize));
  int64_t acc = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t len = std::max<int64_t>(1, shape[d]);
    if (len <= items / acc) {  // (acc * len could overflow)
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
  const int64_t target_items = static_cast<int64_t>(target_bytes / itemsize);  // (prod * itemsize could overflow)
  while (prod(c) > target_items) {
    size_t big = static_cast<size_t>(std::max_element(c.begin(), c.end()) - c.begin());
    if (c[big] == 1) break;
    c[big] -= c[big] / 2;  // halved, rounding up ((c + 1) / 2 could overflow)
  }
  return c;
}

namespace {
// Of the nodes with root's shape reachable through elementwise nodes (each visited once,
// iteratively), the one whose chunks(node) is largest, with those chunks; chunks(node)
// empty means "look through it". When chunk grids nest, evaluating on the largest reads
// every other operand chunk once.
template <class Chunks>
std::pair<const Node*, Shape> largest_chunked(const NodePtr& root, Chunks chunks) {
  const Node* best = nullptr;
  Shape best_chunks;
  std::unordered_set<const Node*> visited;
  std::vector<const Node*> todo{root.get()};
  while (!todo.empty()) {
    const Node& n = *todo.back();
    todo.pop_back();
    if (!visited.insert(&n).second) continue;
    Shape c = chunks(n);
    if (!c.empty()) {
      if (!best || prod(c) > prod(best_chunks)) best = &n, best_chunks = c;
      continue;
    }
    if (!n.is_elementwise()) continue;
    // Pushed last to first: depth-first in input order, so ties go to the first found.
    for (size_t i = n.inputs().size(); i-- > 0;) {
      const Node* in = n.inputs()[i].get();
      if (in->shape() == root->shape() && !visited.count(in)) todo.push_back(in);
    }
  }
  return {best, best_chunks};
}
}  // namespace

const Node* aligned_storage_source(const NodePtr& root) {
  return largest_chunked(root, [](const Node& n) { return n.storage_grid() ? n.storage_grid()->chunks() : Shape{}; })
      .first;
}

Shape read_unit(const Node& n) {
  const ChunkGrid* g = n.storage_grid();
  if (!g) return {};
  const Shape b = n.storage_blocks();
  return n.reads_ranges() && b.size() == g->chunks().size() ? b : g->chunks();
}

namespace {
Shape largest_preferred(const NodePtr& root, bool products_only) {
  Shape c = largest_chunked(root, [products_only](const Node& x) {
              return !products_only || x.shares_rows() ? x.preferred_chunks() : Shape{};
            }).second;
  for (auto& e : c) e = std::max<int64_t>(e, 1);  // extent 0 of an empty stored axis
  return c;
}
}  // namespace

Shape product_chunks_of(const NodePtr& root) { return largest_preferred(root, true); }

Shape preferred_chunks_of(const NodePtr& root) {
  if (Shape asked = requested_chunks_of(root); !asked.empty()) return asked;  // rechunk's, over any storage's
  return largest_preferred(root, false);
}

Shape requested_chunks_of(const NodePtr& root) {
  std::vector<const Node*> todo{root.get()};
  std::unordered_set<const Node*> visited;
  while (!todo.empty()) {
    const Node* n = todo.back();
    todo.pop_back();
    if (!visited.insert(n).second) continue;
    if (n->chunks_requested()) return n->preferred_chunks();
    if (!n->is_elementwise()) continue;
    for (size_t i = n->inputs().size(); i-- > 0;)  // depth-first in input order: the first wins
      if (n->inputs()[i]->shape() == root->shape()) todo.push_back(n->inputs()[i].get());
  }
  return {};
}

bool any_node(const Node& root, const std::function<bool(const Node&)>& pred) {
  std::unordered_set<const Node*> visited;
  std::vector<const Node*> todo{&root};
  while (!todo.empty()) {
    const Node* n = todo.back();
    todo.pop_back();
    if (!visited.insert(n).second) continue;
    if (pred(*n)) return true;
    for (auto& in : n->inputs()) todo.push_back(in.get());
  }
  return false;
}

bool has_row_sharing(const Node& root) {
  return any_node(root, [](const Node& n) { return n.shares_rows(); });
}

Shape shrink_chunks(Shape c, size_t itemsize, size_t max_bytes) {
  const int64_t max_items = static_cast<int64_t>(max_bytes / itemsize);  // (prod * itemsize could overflow)
  for (size_t d = 0; d < c.size() && prod(c) > max_items; ++d)
    while (c[d] > 1 && prod(c) > max_items) c[d] -= c[d] / 2;
  return c;
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
