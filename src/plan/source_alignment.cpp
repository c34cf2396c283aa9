#include "plan/source_alignment.hpp"

#include <algorithm>

#include "ops/shape/reshape_node.hpp"
#include "ops/shape/slice_node.hpp"
#include "plan/chunking.hpp"

namespace b2lazy {

namespace {

// Depth of reshapes and slices looked through (a graph xarray builds has one or two).
constexpr int kMostDepth = 8;

// A unit-step slice keeps the boundaries of an axis that starts on one, and an axis
// within one chunk is whole.
Shape through_slice(const SliceNode& s, const Shape& in) {
  const Shape& out = s.shape();
  Shape a(out.size(), 0);
  for (size_t o = 0; o < out.size(); ++o) {
    const int i = s.out_to_in()[o];
    if (i < 0) {
      a[o] = 1;  // a new axis, extent 1
      continue;
    }
    const SliceNode::Axis& ax = s.axes()[static_cast<size_t>(i)];
    const int64_t c = in[static_cast<size_t>(i)];
    if (c <= 0 || ax.count <= 0) continue;
    if (ax.count == 1) a[o] = 1;
    else if (ax.step != 1) continue;
    else if (ax.start % c == 0) a[o] = c;
    else if (ax.start / c == (ax.start + ax.count - 1) / c) a[o] = ax.count;
  }
  return a;
}

// A reshape groups its axes: one input axis split into output axes (coarsen), input axes
// merged into one output axis, or the same axis. Split: the inner output axes that a
// chunk covers whole are whole, the next one is cut at (chunk / their product) when it is
// the group's outer axis or that divides it, the outer ones anywhere. Merged: inner input axes whole, the outer's chunk
// times their product.
Shape through_reshape(const Shape& is, const Shape& os, const Shape& in) {
  Shape a(os.size(), 0);
  size_t i = 0, j = 0;
  while (i < is.size() || j < os.size()) {
    if (j < os.size() && os[j] == 1) {
      a[j++] = 1;
      continue;
    }
    if (i < is.size() && is[i] == 1) {
      ++i;
      continue;
    }
    if (i >= is.size() || j >= os.size()) break;
    const size_t i0 = i, j0 = j;
    int64_t pi = is[i++], po = os[j++];
    while (pi != po) {
      if (pi < po && i < is.size()) pi *= is[i++];
      else if (po < pi && j < os.size()) po *= os[j++];
      else return Shape(os.size(), 0);
    }
    if (i - i0 == 1) {  // one input axis split into [j0, j)
      const int64_t c = std::min(in[i0], is[i0]);
      if (c <= 0) continue;
      int64_t p = 1;
      size_t m = j;
      while (m > j0 && c % (p * os[m - 1]) == 0) {
        a[m - 1] = os[m - 1];
        p *= os[--m];
      }
      if (m == j0) continue;
      const int64_t q = c / p;  // (c % p == 0)
      if (m - 1 == j0) {
        a[j0] = std::min(q, os[j0]);  // the group's outer axis: cut every q
      } else if (q < os[m - 1] && os[m - 1] % q == 0) {
        a[m - 1] = q;
        for (size_t k = j0; k + 1 < m; ++k) a[k] = 1;
      } else {
        for (size_t k = j0; k < j; ++k) a[k] = 0;
      }
    } else if (j - j0 == 1) {  // input axes [i0, i) merged into one
      int64_t inner = 1;
      bool whole = true;
      for (size_t k = i0 + 1; k < i; ++k) {
        whole = whole && in[k] >= is[k];
        inner *= is[k];
      }
      if (whole && in[i0] > 0) a[j0] = std::min(in[i0], is[i0]) * inner;
    }
  }
  return a;
}

SourceAlignment alignment_rec(const NodePtr& n, int depth) {
  if (const Node* src = aligned_storage_source(n)) return {src, src->storage_grid()->chunks()};
  if (depth >= kMostDepth || n->size() == 0) return {};
  if (auto* s = dynamic_cast<const SliceNode*>(n.get())) {
    SourceAlignment in = alignment_rec(n->inputs()[0], depth + 1);
    if (in.source) in.align = through_slice(*s, in.align);
    return in;
  }
  if (dynamic_cast<const ReshapeNode*>(n.get())) {
    SourceAlignment in = alignment_rec(n->inputs()[0], depth + 1);
    if (in.source) in.align = through_reshape(n->inputs()[0]->shape(), n->shape(), in.align);
    return in;
  }
  if (n->is_elementwise()) {  // (xarray's skipna sum: where(isnan(x), 0, x) of the reshape)
    for (const NodePtr& in : n->inputs())
      if (in->shape() == n->shape())
        if (SourceAlignment a = alignment_rec(in, depth + 1); a.source) return a;
  }
  return {};
}

}  // namespace

SourceAlignment source_alignment(const NodePtr& n) {
  SourceAlignment a = alignment_rec(n, 0);
  if (a.source && a.align.size() != n->ndim()) return {};
  return a;
}

}  // namespace b2lazy
