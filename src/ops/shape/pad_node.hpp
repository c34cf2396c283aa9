// pad as a lazy node: along each axis an output index maps to an input index (edge,
// reflect, symmetric, wrap: clamped or folded back into the axis) or to none (constant,
// empty: a fill value). An output region pulls, per axis, the runs of input indices its
// positions map to (a run: neighbours at most one apart, so a reflection's turn stays one
// run and a wrap is two), one box per combination, and gathers from each; the fill values
// go where any axis maps to none, the last such axis choosing the value as NumPy's does.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "b2lazy/node.hpp"
#include "b2lazy/vocabulary.hpp"

namespace b2lazy {

class PadNode : public Node {
 public:
  // `fill`: itemsize bytes per (axis, side), axis-major (constant mode; zeros for empty).
  PadNode(NodePtr input, std::vector<std::pair<int64_t, int64_t>> widths, PadMode mode, std::vector<uint8_t> fill);
  std::string kind() const override { return "pad"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  std::vector<Region> pull_pieces(const Region& region, size_t input, size_t worker_bytes) const override;

  // Input index of output index `o` along axis `d`; -1 for a fill position.
  int64_t map(size_t d, int64_t o) const;
  const std::vector<std::pair<int64_t, int64_t>>& widths() const { return widths_; }
  PadMode mode() const { return mode_; }
  // The fill value (itemsize bytes) of axis `d`'s side before (or after) the data.
  const uint8_t* fill_value(size_t d, bool after) const {
    return fill_.data() + (2 * d + (after ? 1 : 0)) * itemsize(dtype());
  }

 private:
  struct Run {
    int64_t first, last;  // output positions (within the region) [first, last]
    int64_t lo, hi;       // the input indices they map to, [lo, hi]
  };
  // Per axis: each region position's input index, and its runs.
  struct AxisPlan {
    std::vector<int64_t> index;
    std::vector<Run> runs;
  };
  std::vector<AxisPlan> axis_plans(const Region& region) const;
  std::vector<Region> pieces(const std::vector<AxisPlan>& plans) const;
  void fill_constants(const Region& region, const std::vector<AxisPlan>& plans, char* out) const;

  std::vector<std::pair<int64_t, int64_t>> widths_;
  PadMode mode_;
  std::vector<uint8_t> fill_;
};

}  // namespace b2lazy
