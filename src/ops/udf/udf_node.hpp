// A user function called on blocks (b2lazy/udf.hpp).
#pragma once
#include "b2lazy/node.hpp"
#include "b2lazy/udf.hpp"

namespace b2lazy {

class UdfNode : public Node {
 public:
  UdfNode(UdfFunction fn, std::vector<NodePtr> inputs, DType dtype, Shape shape, Shape depth, std::string name,
          UdfAllocator allocate = {}, Shape chunks = {});
  std::string kind() const override { return "udf"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  Shape preferred_chunks() const override { return chunks_; }

 private:
  // The box of its inputs a block `b` reads: b widened by depth_, within the shape.
  Box widened(const Box& b) const;
  void fill_box(const Box& b, void* out, ThreadState& ts) const;
  UdfFunction fn_;
  UdfAllocator allocate_;  // where inputs are pulled to (empty: the scratch)
  Shape depth_;
  std::string name_;
  Shape chunks_;  // preferred output chunks (empty: none)
};

}  // namespace b2lazy
