// sort / argsort along one axis (Array API), lazy: a region of the result pulls the whole
// lanes it crosses (the axis entire, the other axes as asked) and sorts each lane. A lane
// must fit a worker's share of max_memory (the plan's projection refuses it otherwise).
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

class SortNode : public Node {
 public:
  // `indices`: the positions (argsort, int64) instead of the values. Stable always (so
  // `stable=False` is served too); NaNs last in either order, as NumPy's sort puts them.
  SortNode(NodePtr input, int axis, bool descending, bool indices);
  std::string kind() const override { return indices_ ? "argsort" : "sort"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  Shape preferred_chunks() const override;
  // Whole lanes: cut by the output chunks, a sort is computed once (kept) in its own.
  bool cacheable() const override { return true; }
  Region computed_region(const Region& region) const override { return input_regions(region)[0]; }
  Shape kept_chunks(const Shape&, size_t, size_t) const override { return preferred_chunks(); }

 private:
  int axis_;
  bool descending_, indices_;
};

}  // namespace b2lazy
