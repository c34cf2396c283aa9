#include "ops/linalg/keep_node.hpp"

#include <utility>

#include "ops/shape/permute_node.hpp"
#include "runtime/alignment.hpp"

namespace b2lazy {

bool cheap_to_pull(const Node& n) {
  if (n.inputs().empty()) return true;
  return n.is_view() && cheap_to_pull(*n.inputs()[0]);
}

NodePtr keep_if_expensive(NodePtr n) {
  if (cheap_to_pull(*n) || n->cacheable()) return n;
  // Keep below a permutation, so that a transposed operand is still read as stored.
  if (auto* p = dynamic_cast<const PermuteNode*>(n.get()))
    return std::make_shared<PermuteNode>(keep_if_expensive(n->inputs()[0]), p->perm());
  return std::make_shared<KeepNode>(std::move(n));
}

void KeepNode::fill(const Region& region, void* out, ThreadState& ts) const { inputs()[0]->pull(region, out, ts); }

int64_t KeepNode::alignment_along(size_t axis, const AlignmentQuery& q) const { return q.of(*inputs()[0], axis); }

}  // namespace b2lazy
