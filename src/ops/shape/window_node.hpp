// NumPy's sliding_window_view along one axis as one lazy node: the window axis appended
// last, out[..., i, ..., k] = x[..., i + k, ...]. One node (not a stack of w shifted
// slices) so that a reduction over the window axis can be planned as a moving reduction
// (src/graph/rolling_builder.cpp): xarray's rolling(...).sum() is exactly that graph.
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

class WindowNode : public Node {
 public:
  WindowNode(NodePtr input, int axis, int64_t window);
  static constexpr const char* kKind = "sliding_window";
  std::string kind() const override { return kKind; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  int axis() const { return axis_; }
  int64_t window() const { return window_; }

 private:
  Region input_region(const Region& region) const;
  int axis_;
  int64_t window_;
};

}  // namespace b2lazy
