// Operands a contraction reads more than once, kept when they are expensive to pull again.
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

// Sources and views of them (Node::is_view): pulling a panel again costs a read, not a
// computation.
bool cheap_to_pull(const Node& n);

// An expensive operand of a contraction, passed through unchanged but cacheable: when
// the output chunks are not the bands the contraction prefers (user-given chunks, say),
// several of them need the same rows of the operand, and the planner then computes it
// once per evaluation instead of once per output chunk.
class KeepNode : public Node {
 public:
  explicit KeepNode(NodePtr input) : Node(input->dtype(), input->shape(), {input}) {}
  std::string kind() const override { return "keep"; }
  std::string describe() const override { return "keep (computed once when several output chunks need it)"; }
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override { return {region}; }
  bool cacheable() const override { return true; }
  Shape preferred_chunks() const override { return inputs()[0]->preferred_chunks(); }
  int64_t alignment_along(size_t axis, const AlignmentQuery& q) const override;
};

// `n` itself when it is cheap to pull again (a source or a view of one) or cacheable
// already, else `n` behind a KeepNode (below a permutation, so it is still read as stored).
NodePtr keep_if_expensive(NodePtr n);

}  // namespace b2lazy
