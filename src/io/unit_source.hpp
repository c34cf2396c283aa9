// A stored array read in whole units — a format's chunks (Zarr's chunks or a shard's inner
// chunks, HDF5's chunks), each decoded whole by read_unit() — as a leaf of the graph. The
// region a fill() asks for is cut by the unit grid, each unit decoded (or taken from the
// plan's window of decoded units, runtime/block_window.hpp) and its part copied out.
#pragma once
#include <vector>

#include "b2lazy/node.hpp"

namespace b2lazy {

class BlockWindow;

class UnitSource : public Node {
 public:
  UnitSource(DType dtype, Shape shape) : Node(dtype, std::move(shape)) {}
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  // The read unit's grid.
  const ChunkGrid* storage_grid() const override { return &read_grid_; }
  bool decompresses() const override { return true; }
  int64_t decompressed_bytes(const Region& region) const override;
  // A window's blocks are the read units, decoded whole.
  int64_t window_block_bytes() const override;
  void blocks_touched(const Region& region, std::vector<int64_t>& ids) const override;
  // A run of a unit's C order decoded without the rest (read_unit_range), when the
  // format allows it.
  bool reads_ranges() const override { return unit_ranges(); }

  // A read fill() makes: unit `id` whole (n < 0), or items [start, start + n) of its C
  // order (read_unit_range).
  struct UnitRead {
    int64_t id;
    int64_t start = 0, n = -1;
  };
  // The reads fill(region) makes, in its order, but those of units the plan's window
  // keeps now: a remote source fetches them all at once before fill() asks for each.
  void planned_reads(const Region& region, ThreadState& ts, std::vector<UnitRead>& out) const;
  // The same, given the window (null: none; the prefetch lists reads without one).
  void planned_reads(const Region& region, BlockWindow* window, std::vector<UnitRead>& out) const;

 protected:
  // Unit `id` of read_grid_, whole (padded to the unit's shape at the array's edges) into
  // `dst`; counts what it decodes in ts.
  virtual void read_unit(int64_t id, void* dst, ThreadState& ts) const = 0;
  // Can read_unit_range decode items [start, start + n) of a unit's C order without the
  // rest of it (a Blosc buffer's blocks)? Fixed for the source's life.
  virtual bool unit_ranges() const { return false; }
  // Those items into `dst`, counted in ts (only when unit_ranges()).
  virtual void read_unit_range(int64_t id, int64_t start, int64_t n, void* dst, ThreadState& ts) const;
  ChunkGrid read_grid_;
};

}  // namespace b2lazy
