// rechunk: the identity on values, carrying the chunks the user asked for. A pull passes
// straight through to the input (into the caller's buffer, no copy of its own); the
// planner writes these chunks (Node::chunks_requested).
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

class RechunkNode : public Node {
 public:
  RechunkNode(NodePtr input, Shape chunks)
      : Node(input->dtype(), input->shape(), {input}), chunks_(std::move(chunks)) {}
  std::string kind() const override { return "rechunk"; }
  std::string describe() const override { return "rechunk to " + shape_str(chunks_); }
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override { return {region}; }
  const void* view(const Region& region) const override { return inputs()[0]->view(region); }
  const void* view_rows(const Region& region, int64_t& row_stride) const override {
    return inputs()[0]->view_rows(region, row_stride);
  }
  Shape preferred_chunks() const override { return chunks_; }
  bool chunks_requested() const override { return true; }

 private:
  Shape chunks_;
};

}  // namespace b2lazy
