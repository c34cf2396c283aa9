#include "runtime/graph_queries.hpp"

#include <functional>
#include <unordered_set>
#include <utility>
#include <vector>

namespace b2lazy {

namespace {
// Of the nodes with root's shape reachable through elementwise nodes (each visited once,
// iteratively), the one whose chunks(node) is largest, with those chunks; chunks(node)
// empty means "look through it". When chunk grids nest, evaluating on the largest reads
// every other operand chunk once.
template <class Chunks> std::pair<const Node*, Shape> largest_chunked(const NodePtr& root, Chunks chunks) {
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

}  // namespace b2lazy
