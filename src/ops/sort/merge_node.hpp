// The second half of an out-of-core sort (ops/sort/runs_node.hpp): lanes (outer, n) in
// sorted order, merged from their k sorted runs one output region at a time. A region
// [s, e) of a lane needs, from each run j, the slice [p_j(s), p_j(e)) where p_j(s) counts
// run j's elements among the lane's s first; p_j(s) is found by narrowing it with the
// runs' samples to a window of about (2k + 1) * every elements in all, then searching
// the windows' keys. Memory: the region, its slices and the windows — never a run.
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

class MergeNode : public Node {
 public:
  // inputs: the runs (keys, or (position, key) pairs for positions: an argsort) and their
  // samples. `values`: the dtype the keys decode to (a values sort); `n`: the lanes'
  // length; `flat`: the result is the one lane, 1-D.
  MergeNode(NodePtr runs, NodePtr samples, DType values, int64_t n, int64_t every, bool descending, bool flat);
  std::string kind() const override { return positions() ? "merge runs (positions)" : "merge runs"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  // What a region reads of the runs, for the cost model: a share of each run in
  // proportion (as if the values were spread evenly), plus the windows.
  std::vector<Region> pull_pieces(const Region& region, size_t input, size_t worker_bytes) const override;
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;
  Shape preferred_chunks() const override;
  // The samples' spacing (`every`) for lanes of `n` elements in runs of `run`: the
  // windows of all runs stay within a fixed size.
  static int64_t sample_spacing(int64_t n, int64_t run);

 private:
  bool positions() const { return inputs()[0]->ndim() == 4; }
  // The region over (lanes, n): a 1-D result (one lane) is that lane's row 0.
  Region lanes_region(const Region& region) const;
  // Run j's elements [lo, hi) of lane `row`: keys, or of pair runs the keys alone
  // (`keys_only`) or the (position, key) pairs.
  Region run_slice(int64_t row, int64_t j, int64_t lo, int64_t hi, bool keys_only) const;
  // p_j(s) for each run j of lane `row`, given that lane's samples (run ids, sorted order).
  std::vector<int64_t> splits(int64_t row, int64_t s, const int64_t* samples, ThreadState& ts) const;
  // Lane `row`'s elements [s, e) in sorted order, into `out` (dtype()).
  void merge(int64_t row, int64_t s, int64_t e, const int64_t* samples, void* out, ThreadState& ts) const;

  int64_t every_;
  bool descending_;
};

}  // namespace b2lazy
