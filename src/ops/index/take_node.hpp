// Integer-array indexing as a lazy node: index arrays on `naxes` consecutive axes,
// broadcast to one index shape, select points (NumPy's advanced indexing; one axis is
// take()). An output region selects index cells; cells are grouped by the input's
// storage chunks along those axes, and each touched group is pulled once (only the box
// between its smallest and largest indices), so untouched chunks are never read. Along
// one axis, a group is further cut where whole storage blocks lie between two indices,
// so a partial read decompresses only the blocks holding selected rows.
#pragma once
#include <memory>
#include <vector>

#include "b2lazy/node.hpp"

namespace b2lazy {

class TakeNode : public Node {
 public:
  // indices[t]: the index into input axis `axis + t` of every cell (C order over
  // `index_shape`), already normalised to [0, length).
  TakeNode(NodePtr input, size_t axis, std::vector<std::shared_ptr<const std::vector<int64_t>>> indices,
           Shape index_shape);
  std::string kind() const override { return "take"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  // The box of the input between the smallest and largest indices the region selects.
  std::vector<Region> input_regions(const Region& region) const override;
  // A group of cells pulls at most one chunk's span of the taken axes, not their hull.
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;
  // The input's preferred chunks on the untaken axes and about one chunk's length of
  // index cells, so the box a group pulls stays about a chunk.
  Shape preferred_chunks() const override { return preferred_; }

 private:
  Shape compute_preferred_chunks() const;
  // Index tuples the region selects (naxes values per cell), in the region's C order.
  std::vector<int64_t> selected(const Region& region) const;
  Region input_box(const Region& region, const int64_t* lo, const int64_t* hi) const;
  size_t axis_, naxes_;
  std::vector<std::shared_ptr<const std::vector<int64_t>>> indices_;
  Shape index_shape_;
  Shape cell_;         // per taken axis: the input's storage chunk length (grouping unit)
  int64_t block_ = 0;  // one taken axis: the input's storage block length (0: unknown)
  Shape preferred_;    // looked up once: lookups recurse into the input's
};

}  // namespace b2lazy
