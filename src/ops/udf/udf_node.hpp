// A user function called on blocks (b2lazy/udf.hpp).
#pragma once
#include "b2lazy/node.hpp"
#include "b2lazy/vocabulary.hpp"

namespace b2lazy {

class UdfNode : public Node {
 public:
  UdfNode(UdfFunction fn, std::vector<NodePtr> inputs, DType dtype, Shape shape, Shape depth, std::string name,
          UdfAllocator allocate = {}, Shape chunks = {});
  std::string kind() const override { return "udf"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  // A block grid's regular blocks, else the storage grid's chunks.
  Shape preferred_chunks() const override;
  // With chunks (a region source reading a chunked store): they are its storage grid, so
  // output chunks and reductions' slabs follow them (a slab cutting a chunk reads it twice).
  const ChunkGrid* storage_grid() const override { return chunks_.empty() ? nullptr : &storage_grid_; }
  // Calls see whole blocks of `grid` (lazyudf_on_grid) instead of a fixed depth.
  void set_grid(std::vector<GridAxis> grid) { grid_ = std::move(grid); }

 private:
  // The box of its inputs a block `b` reads: b widened by depth_, within the shape (or to
  // the grid blocks it meets).
  Box widened(const Box& b) const;
  void fill_box(const Box& b, void* out, ThreadState& ts) const;
  UdfFunction fn_;
  UdfAllocator allocate_;  // where inputs are pulled to (empty: the scratch)
  Shape depth_;
  std::vector<GridAxis> grid_;  // empty: widen by depth_
  std::string name_;
  Shape chunks_;  // the chunks its function reads best in (empty: none)
  ChunkGrid storage_grid_;
};

}  // namespace b2lazy
