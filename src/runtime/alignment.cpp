#include "runtime/alignment.hpp"

#include <algorithm>

#include "runtime/graph_queries.hpp"

namespace b2lazy {

int64_t AlignmentQuery::of(const Node& n, size_t axis) const {
  if (const ChunkGrid* g = n.storage_grid()) return g->chunks()[axis];
  auto [it, fresh] = memo_.try_emplace({&n, axis}, 0);
  if (!fresh) return it->second;
  const int64_t a = n.alignment_along(axis, *this);
  memo_[{&n, axis}] = a;
  return a;
}

int64_t Node::alignment_along(size_t axis, const AlignmentQuery& q) const {
  int64_t a = 0;
  if (is_elementwise())  // the largest alignment among same-shaped inputs
    for (auto& in : inputs())
      if (in->shape() == shape()) a = std::max(a, q.of(*in, axis));
  return a;
}

int64_t storage_alignment(const Node& n, size_t axis) { return AlignmentQuery().of(n, axis); }

namespace {

// Depth of views looked through (a graph xarray builds has one or two).
constexpr int kMostDepth = 8;

SourceAlignment alignment_rec(const NodePtr& n, int depth) {
  if (const Node* src = aligned_storage_source(n)) return {src, src->storage_grid()->chunks()};
  if (depth >= kMostDepth || n->size() == 0) return {};
  if (n->is_elementwise()) {  // (xarray's skipna sum: where(isnan(x), 0, x) of the reshape)
    for (const NodePtr& in : n->inputs())
      if (in->shape() == n->shape())
        if (SourceAlignment a = alignment_rec(in, depth + 1); a.source) return a;
    return {};
  }
  // (Asked with no alignment first: a node that is no such view is not looked below.)
  if (n->inputs().empty() || !n->alignment_through_view(Shape(n->inputs()[0]->ndim(), 0))) return {};
  SourceAlignment in = alignment_rec(n->inputs()[0], depth + 1);
  if (!in.source) return {};
  std::optional<Shape> seen = n->alignment_through_view(in.align);
  if (!seen) return {};
  in.align = std::move(*seen);
  return in;
}

}  // namespace

SourceAlignment source_alignment(const NodePtr& n) {
  SourceAlignment a = alignment_rec(n, 0);
  if (a.source && a.align.size() != n->ndim()) return {};
  return a;
}

}  // namespace b2lazy
