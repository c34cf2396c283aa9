// An elementwise operation. The first time a node is evaluated it compiles the maximal
// elementwise subgraph below it into one fused Program; inner elementwise nodes are
// then never evaluated on their own.
#pragma once
#include <memory>
#include <mutex>

#include "b2lazy/node.hpp"
#include "b2lazy/ops.hpp"

namespace b2lazy {

struct Program;

class ElementwiseNode : public Node {
 public:
  // `t` is the compute dtype: inputs already have it (Cast nodes are inserted by the
  // builder), except Where's condition (bool) and Cast's input.
  ElementwiseNode(Op op, DType t, DType out, Shape shape, std::vector<NodePtr> inputs);
  ~ElementwiseNode() override;
  Op op() const { return op_; }
  DType compute_dtype() const { return t_; }
  std::string kind() const override { return op_name(op_); }
  std::string describe() const override;
  bool is_elementwise() const override { return true; }
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  bool block_major(const Shape& chunks, const Shape& blocks) const override;
  void fill_block_major(int64_t chunk, int64_t nitems, void* out, ThreadState& ts) const override;
  std::string listing() const override;
  // As fill(): a buffer per leaf not viewed (one may be `out`), broadcast leaves expanded,
  // the program's block temporaries, and the deepest leaf pull.
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;
  // The fused program rooted here (compiled on first use, thread-safe).
  const Program& program() const;

 private:
  Op op_;
  DType t_;
  mutable std::once_flag once_;
  mutable std::unique_ptr<Program> program_;
};

// Region of `input` (shape `in_shape`, right-aligned) that an elementwise consumer
// with shape `out_shape` needs for its `region`: broadcast axes collapse to index 0.
Region broadcast_region(const Region& region, const Shape& out_shape, const Shape& in_shape);

}  // namespace b2lazy
