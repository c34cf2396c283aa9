#include "ops/elementwise/elementwise_node.hpp"

#include "core/strided_copy.hpp"
#include "exec/thread_state.hpp"
#include "ops/elementwise/program.hpp"

namespace b2lazy {

ElementwiseNode::ElementwiseNode(Op op, DType t, DType out, Shape shape, std::vector<NodePtr> inputs)
    : Node(out, std::move(shape), std::move(inputs)), op_(op), t_(t) {}

ElementwiseNode::~ElementwiseNode() = default;

std::string ElementwiseNode::describe() const {
  return std::string(op_name(op_)) + " -> " + dtype_name(dtype()) + " " + shape_str(shape());
}

const Program& ElementwiseNode::program() const {
  std::call_once(once_, [this] { program_ = std::make_unique<Program>(compile_program(*this)); });
  return *program_;
}

Region broadcast_region(const Region& region, const Shape& out_shape, const Shape& in_shape) {
  size_t off = out_shape.size() - in_shape.size();
  Region r;
  for (size_t d = 0; d < in_shape.size(); ++d) {
    size_t o = off + d;
    if (in_shape[d] == 1 && out_shape[o] != 1) {
      r.start.push_back(0);
      r.step.push_back(1);
      r.count.push_back(region.count[o] == 0 ? 0 : 1);
    } else {
      r.start.push_back(region.start[o]);
      r.step.push_back(region.step[o]);
      r.count.push_back(region.count[o]);
    }
  }
  return r;
}

std::vector<Region> ElementwiseNode::input_regions(const Region& region) const {
  std::vector<Region> r;
  for (auto& in : inputs()) r.push_back(broadcast_region(region, shape(), in->shape()));
  return r;
}

void ElementwiseNode::fill(const Region& region, void* out, ThreadState& ts) const {
  const int64_t n = region.size();
  if (n == 0) return;
  const Program& prog = program();
  ScratchScope scope(ts.scratch);
  std::vector<const void*> data(prog.leaves.size());
  // One leaf of the output's dtype and size may be pulled straight into `out`: the
  // program then runs in place (a block of `out` is written only by the last
  // instruction, after every read of that block, and kernels are exact element maps).
  bool out_free = true;
  for (size_t i = 0; i < prog.leaves.size(); ++i) {
    const Node& leaf = *prog.leaves[i];
    Region lr = broadcast_region(region, shape(), leaf.shape());
    const size_t isz = itemsize(leaf.dtype());
    const void* p = leaf.pull_view(lr, ts);
    if (!p) {
      const bool into_out = out_free && leaf.dtype() == dtype() && lr.size() == n;
      out_free = out_free && !into_out;
      void* buf = into_out ? out : scope.alloc(lr.size() * isz);
      leaf.pull(lr, buf, ts);
      p = buf;
    }
    if (lr.size() != n) {  // broadcast leaf: expand to the region's shape
      void* full = scope.alloc(n * isz);
      broadcast_into(p, lr.count, full, region.count, isz);
      p = full;
    }
    data[i] = p;
  }
  prog.run(data.data(), out, n, scope);
}

}  // namespace b2lazy
