// bincount as a reduction: out[k] = the number (or the summed weights) of the elements of
// x equal to k. Any region of the counts streams x (and the weights) whole in slabs of a
// bounded size, never holding x; the output is best computed in one chunk (its preferred
// chunks), so x is read once per evaluation. Unweighted counts spread the slabs over the
// workers (counts of their own, added at the end).
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

class BincountNode : public Node {
 public:
  // x: 1-d int64 (its values >= 0, checked by the builder); weights: none or 1-d float64
  // of x's length. Output: int64 counts, or float64 sums of weights, of `length`.
  BincountNode(const NodePtr& x, const NodePtr& weights, int64_t length);
  std::string kind() const override { return "bincount"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  std::vector<Region> pull_pieces(const Region& region, size_t input, size_t worker_bytes) const override;
  bool cacheable() const override { return true; }
  Shape preferred_chunks() const override { return shape(); }
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;

 private:
  void count_slab(int64_t first_element, const Region& region, void* out, ThreadState& ts) const;
};

}  // namespace b2lazy
