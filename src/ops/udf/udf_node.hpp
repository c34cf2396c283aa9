// A user function called on blocks (b2lazy/udf.hpp).
#pragma once
#include "b2lazy/node.hpp"
#include "b2lazy/udf.hpp"
#include "b2lazy/udf_grid.hpp"

namespace b2lazy {

class UdfNode : public Node {
 public:
  UdfNode(UdfFunction fn, std::vector<NodePtr> inputs, DType dtype, Shape shape, Shape depth, std::string name,
          UdfAllocator allocate = {});
  std::string kind() const override { return "udf"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  Shape preferred_chunks() const override;
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
};

}  // namespace b2lazy
