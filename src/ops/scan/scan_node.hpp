// Cumulative sums and products along one axis as lazy nodes, and the forward fill (each
// NaN replaced by the last non-NaN value before it: xarray's ffill), the same scan with
// "last valid value" as its associative operation.
//
// The axis is cut into segments of `seg` elements (the input's preferred chunks with
// leading axes cut down to 1 MiB, along it, when known). Input is pulled in pieces of
// about 1 MiB (whole storage chunks deep when the storage cannot decompress part of a
// chunk: Zarr), so a scan holds a few pieces per worker, never a whole region.
// SegmentTotals holds each segment's total; it is cacheable, so when many output chunks
// need prefixes of it the planner computes it once. A region of
// the scan then costs: its prefix of totals, the part of one segment before it, and
// the input it covers. Floats accumulate in float64, integers in int64 / uint64.
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

class CarryBoard;

enum class ScanOp : uint8_t { Sum, Prod, Push };

class SegmentTotals : public Node {
 public:
  SegmentTotals(NodePtr input, int axis, int64_t seg, ScanOp op, DType acc);
  std::string kind() const override { return "segment_totals"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;
  bool cacheable() const override { return true; }

 private:
  Region input_region(const Region& r) const;
  bool cuts_strips(const Region& r) const;  // fill() takes `r` in strips of the last axis
  bool fill_strips(const Region& r, void* out, ThreadState& ts) const;
  int axis_;
  int64_t seg_;
  ScanOp op_;
  int64_t depth_;  // pieces whole storage chunks (or block rows) deep along the axis (0: any depth)
  int64_t width_;  // and cut in strips of storage chunks along the last axis (0: never)
};

class ScanNode : public Node {
 public:
  ScanNode(NodePtr input, int axis, ScanOp op, DType out, bool include_initial);
  std::string kind() const override {
    return op_ == ScanOp::Sum ? "cumulative_sum" : op_ == ScanOp::Prod ? "cumulative_prod" : "forward_fill";
  }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  // One piece of input along the axis (converted, scanned), never the whole region.
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;
  bool cacheable() const override { return true; }
  Shape preferred_chunks() const override { return preferred_; }
  // The carry of a region is the fold of everything before it: the region before along
  // the axis hands it on, so in-order runs need no segment totals (one pass over the input).
  Carry carry() const override { return include_initial_ ? Carry{} : Carry{1, axis_}; }

 private:
  // fill() with the carry from the region before (ts.eval's CarryBoard for this node):
  // scans the region from zero, takes the carry, hands on the carry at its end, adds.
  void fill_carried(const Region& region, void* out, ThreadState& ts, CarryBoard& board) const;
  // `input_chunks`: preferred_chunks_of(input), looked up once.
  ScanNode(NodePtr input, int axis, ScanOp op, DType out, bool include_initial, Shape input_chunks);
  // For output indices [lo, hi) along the axis: input elements [e0, e1) to scan, after a
  // carry over [0, e0) made of totals [0, s) and input [s*seg, e0).
  struct Plan {
    int64_t e0, e1, s;
  };
  Plan plan(int64_t lo, int64_t hi) const;
  int axis_;
  ScanOp op_;
  DType acc_;
  bool include_initial_;
  int64_t seg_;
  Shape preferred_;  // the input's preferred chunks with segments along the axis
  int64_t depth_;    // pieces whole storage chunks (or block rows) deep along the axis (0: any depth)
};

}  // namespace b2lazy
