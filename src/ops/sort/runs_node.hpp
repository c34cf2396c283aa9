// The first half of an out-of-core sort of lanes too long for one task (sorted runs and a
// k-way merge, src/ops/sort/merge_node.hpp): a lane of n elements cut into k runs of R,
// each sorted on its own. Both nodes are computed once per evaluation (cacheable: every
// output chunk of the merge reads them), kept dense, compressed or spilled by the planner.
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

// Lanes (outer, n) as (outer, k, R) runs, each sorted: its sort keys (uint64,
// ops/sort/sort_keys.hpp), or when `positions` (outer, k, R, 2): (position in the lane,
// key) pairs sorted by key then position (stable; -0.0 keyed as 0.0), laid out as
// sortkey::KeyPos. The last run is padded with keys after everything (positions >= n).
class RunsNode : public Node {
 public:
  RunsNode(NodePtr lanes, int64_t run, bool descending, bool positions);
  std::string kind() const override { return positions_ ? "sorted runs (positions)" : "sorted runs"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;
  bool cacheable() const override { return true; }
  bool computed_whole() const override { return true; }
  // Whole runs: a chunk cut inside a run would sort it again.
  Shape preferred_chunks() const override;
  Shape kept_chunks(const Shape&, size_t, size_t) const override { return preferred_chunks(); }
  // Small blocks: the merge reads a few hundred elements of every run at each boundary.
  size_t kept_block_bytes() const override { return size_t(32) << 10; }

 private:
  bool descending_, positions_;
};

// Every `every`-th key of each run of a RunsNode (its "samples"), merged: for each lane
// the run each sample came from, in the samples' sorted order (ties by position in the
// lane, as in the merge). What the merge narrows each output chunk's boundaries with.
class SamplesNode : public Node {
 public:
  SamplesNode(NodePtr runs, int64_t every);
  std::string kind() const override { return "run samples"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  bool cacheable() const override { return true; }
  int64_t every() const { return every_; }

 private:
  int64_t every_, per_run_;
};

}  // namespace b2lazy
