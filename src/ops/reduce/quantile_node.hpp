// Holistic reductions: quantile, median (its 0.5) and percentile over axes, NumPy's
// methods "linear" (its default), "lower", "higher", "nearest" and "midpoint"; a slice
// holding NaN gives NaN, as NumPy's do, or (nanquantile, nanmedian) its NaNs are left out. No fold: a quantile needs
// every value of its slice, so an output region pulls the input widened to the reduced axes whole, in pieces of outputs
// whose values fit a worker's share of max_memory, and selects in each slice (std::nth_element). A single slice larger
// than that share is answered exactly by passes over it in slabs: each pass histograms the values still in question and
// keeps the bin holding the wanted rank, until they fit and are selected directly.
#pragma once
#include <vector>

#include "b2lazy/node.hpp"
#include "b2lazy/vocabulary.hpp"
#include "ops/reduce/reduced_axes.hpp"

namespace b2lazy {

class QuantileNode : public Node {
 public:
  // median: np.median's rule, the mean of the two middle values (q = 0.5).
  // skip_nan: nanquantile / nanmedian (NaNs left out of each slice; all NaN gives NaN).
  QuantileNode(NodePtr input, double q, QuantileMethod method, bool median, std::vector<bool> reduced, bool keepdims,
               DType out, bool skip_nan = false);
  std::string kind() const override { return "quantile"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override { return {widen(region)}; }
  bool cacheable() const override { return true; }
  // The widened pieces fill() pulls one after another (its slices, as many as fit a
  // worker's share at a time), so the plan sees what reading them costs.
  std::vector<Region> pull_pieces(const Region& region, size_t input, size_t worker_bytes) const override;
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;
  // Elements of each slice.
  int64_t slice_size() const { return slice_; }

 private:
  Region widen(const Region& out) const { return ax_.widen(out); }
  // Bytes a worker may hold for the values of the slices it selects in.
  static size_t share(size_t max_memory, int nworkers);
  static size_t share_of(size_t worker_bytes);
  // Outputs per piece: as many slices as fit `share` (at least 1).
  int64_t piece_outputs(size_t share) const;
  std::vector<Region> output_pieces(const Region& region, size_t share) const;
  // Fills the outputs of `piece` (C order), whose slices fit in memory together.
  void fill_piece(const Region& piece, char* out, ThreadState& ts) const;
  // The quantile of the one slice of output region `one` (one element), in passes
  // (compared as float64).
  double select_in_passes(const Region& one, size_t share, ThreadState& ts) const;
  double q_;
  QuantileMethod method_;
  bool median_;
  bool skip_nan_;
  ReducedAxes ax_;
  int64_t slice_ = 1;
};

}  // namespace b2lazy
