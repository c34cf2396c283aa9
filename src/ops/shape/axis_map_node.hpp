// tile and repeat as a lazy node: output index i along axis d reads input index map_d(i),
// where map_d is the identity, i mod n (tile) or the input element whose run of repeats
// holds i (repeat). An output region pulls the input box its indices map to (a whole
// axis only when a tiled region crosses a period) and gathers from it; nothing is
// materialised.
#pragma once
#include <memory>
#include <vector>

#include "b2lazy/node.hpp"

namespace b2lazy {

class AxisMapNode : public Node {
 public:
  struct AxisMap {
    enum class Kind { Identity, Tile, Repeat } kind = Kind::Identity;
    int64_t each = 1;  // Repeat with one count for every element (when `ends` is null)
    // Repeat with a count per element: ends[j] = counts[0] + ... + counts[j].
    std::shared_ptr<const std::vector<int64_t>> ends;
  };
  AxisMapNode(NodePtr input, Shape shape, std::vector<AxisMap> maps);
  std::string kind() const override;
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override { return {input_region(region)}; }

 private:
  struct Segment {
    int64_t begin, end;  // output positions [begin, end) of a region along one axis
  };
  int64_t map(size_t axis, int64_t i) const;  // input index of output index i
  // The region's positions along axis d cut where a tiled axis enters another period
  // (at most two pieces, else one: the whole input axis is pulled).
  std::vector<Segment> segments(const Region& region, size_t d) const;
  // One piece: pulls the input box it maps to and gathers it into `out` (byte strides `out_st`).
  void fill_part(const Region& part, char* out, const Shape& out_st, ThreadState& ts) const;
  Region input_region(const Region& region) const;
  std::vector<AxisMap> maps_;
};

}  // namespace b2lazy
