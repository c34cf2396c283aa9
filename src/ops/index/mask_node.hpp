// x[mask] for a lazy boolean mask of x's shape, in two counted passes: MaskCountsNode
// counts the True values of each row strip of the mask (strips are contiguous in C order,
// so strip order is NumPy's order); the selection's length is their sum. MaskSelectNode
// then fills any range of the 1-d result from the strips it overlaps: each strip's mask
// and values are pulled and compacted, so memory stays one strip per worker.
#pragma once
#include <memory>
#include <vector>

#include "b2lazy/node.hpp"

namespace b2lazy {

// One int64 count per strip: shape (number of strips,). Strips of whole rows thinner than
// the mask's storage read unit (`unit`: 32-row strips of Zarr's (1024, 1024) chunks) are
// counted a unit's rows at a time, in tiles of the unit: each stored chunk decompressed
// once, not once per strip through it.
class MaskCountsNode : public Node {
 public:
  MaskCountsNode(NodePtr mask, Shape strip, const Shape& unit = {});
  std::string kind() const override { return "mask_counts"; }
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  std::vector<Region> pull_pieces(const Region& region, size_t input, size_t worker_bytes) const override;
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;
  bool cacheable() const override { return true; }
  // A strip (or a unit's rows of them) per output chunk, so the counting pass is shared
  // out among the workers.
  Shape preferred_chunks() const override { return {group_}; }

 private:
  // What fill(region) pulls, in order: each strip, or tiles of each unit's rows.
  std::vector<Box> pieces(const Region& region) const;
  Shape strip_;
  Shape tile_;         // the trailing extents of a tile (grouped strips)
  int64_t group_ = 1;  // strips per unit's rows (1: strip by strip)
};

class MaskSelectNode : public Node {
 public:
  // `counts`: the True values per strip (strips of `strip` elements' shape, C order).
  MaskSelectNode(NodePtr values, NodePtr mask, Shape strip, std::vector<int64_t> counts);
  std::string kind() const override { return "mask_select"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  // One strip's values and mask, and their pulls: fill() takes the strips one at a time
  // (input_regions reports their bounding box, which a long selection makes the array).
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;

 private:
  Box strip_box(int64_t s) const;
  // Writes the selected values of one strip (mask m, values v, n elements) that fall in
  // `region` of the result.
  void compact(const bool* m, const char* v, int64_t n, int64_t g, const Region& region, char* out) const;
  Shape strip_;
  ChunkGrid grid_;
  std::vector<int64_t> first_;  // result position of each strip's first selected value (+ total)
};

}  // namespace b2lazy
