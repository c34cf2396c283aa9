// Moving-window reductions along one axis (xarray's rolling, pandas' rolling, and
// reductions over NumPy's sliding_window_view), as one lazy node.
//
// Output index i along the axis reduces the input window [i + offset, i + offset + w),
// clipped to the axis (positions outside count as missing). An output region pulls its
// own rows plus a halo of w - 1 rows once, and makes one pass over them per lane:
// sums, means, counts and variances slide (add the row entering, subtract the row
// leaving; float data in float64 with NaN and ±inf counted apart, so they leave the
// window again; sums restarted every kRestart rows so rounding cannot drift along a long
// axis; variance from sums shifted by a value of the window); min and max by van Herk /
// Gil-Werman block prefix and suffix extremes (three passes, no deque, vectorisable over
// lanes). Windows with fewer than `min_count` valid values give NaN.
#pragma once
#include <cstdint>

#include "b2lazy/node.hpp"
#include "b2lazy/vocabulary.hpp"

namespace b2lazy {

struct MovingSpec {
  int axis = 0;
  int64_t window = 1;
  int64_t offset = 0;  // the window of output i starts at input i + offset
  int64_t length = 0;  // output length along the axis
  MovingOp op = MovingOp::Sum;
  bool skipna = true;     // NaN values are missing; otherwise a NaN in the window gives NaN
  int64_t min_count = 0;  // fewer valid (present, non-NaN) values: NaN
  double ddof = 0;
};

class MovingNode : public Node {
 public:
  MovingNode(NodePtr input, const MovingSpec& spec, DType out);
  std::string kind() const override { return "moving_reduce"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;
  bool cacheable() const override { return true; }
  Shape preferred_chunks() const override { return preferred_; }
  const MovingSpec& spec() const { return spec_; }

 private:
  Region input_region(const Region& region) const;  // region unit-stepped along the axis
  void fill_unit(const Region& region, void* out, ThreadState& ts) const;
  MovingSpec spec_;
  DType acc_;  // F64, I64 or U64: what the input is converted to
  Shape preferred_;
};

}  // namespace b2lazy
