#include "ops/elementwise/elementwise_node.hpp"

#include "core/saturating.hpp"
#include "core/strided_copy.hpp"
#include "ops/elementwise/program.hpp"
#include "runtime/memory_model.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

ElementwiseNode::ElementwiseNode(Op op, DType t, DType out, Shape shape, std::vector<NodePtr> inputs)
    : Node(out, std::move(shape), std::move(inputs)), op_(op), t_(t) {}

ElementwiseNode::~ElementwiseNode() = default;

std::string ElementwiseNode::describe() const {
  const Program& p = program();
  return "fused elementwise -> " + std::string(dtype_name(dtype())) + " " + shape_str(shape()) + " (" +
         std::to_string(p.code.size()) + " instructions, " + std::to_string(p.leaves.size()) + " inputs)";
}

std::string ElementwiseNode::listing() const { return program().to_string(); }

// Elementwise work does not care about order: over leaves stored exactly like the output,
// the program runs on their decompressed block-major chunks as they are.
bool ElementwiseNode::block_major(const Shape& chunks, const Shape& blocks) const {
  const Program& p = program();
  if (p.leaves.empty()) return false;
  for (auto& leaf : p.leaves)
    if (leaf->shape() != shape() || !leaf->block_major(chunks, blocks)) return false;
  return true;
}

void ElementwiseNode::fill_block_major(int64_t chunk, int64_t nitems, void* out, ThreadState& ts) const {
  const Program& p = program();
  ScratchScope scope(ts.scratch);
  std::vector<const void*> data(p.leaves.size());
  for (size_t i = 0; i < p.leaves.size(); ++i) {
    void* buf = scope.alloc(nitems * itemsize(p.leaves[i]->dtype()));
    p.leaves[i]->fill_block_major(chunk, nitems, buf, ts);
    data[i] = buf;
  }
  p.run(data.data(), out, nitems, scope);
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

int64_t ElementwiseNode::fill_bytes(const Region& region, const MemoryModel& m) const {
  const int64_t n = region.size();
  if (n == 0) return 0;
  const Program& prog = program();
  int64_t held = 0, deepest = 0;
  bool out_free = true;
  for (size_t i = 0; i < prog.leaves.size(); ++i) {
    const Node& leaf = *prog.leaves[i];
    Region lr = broadcast_region(region, shape(), leaf.shape());
    const int64_t isz = static_cast<int64_t>(itemsize(leaf.dtype()));
    if (!leaf.view(lr)) {
      const bool into_out = out_free && leaf.dtype() == dtype() && lr.size() == n;
      out_free = out_free && !into_out;
      if (!into_out) held = sat_add(held, sat_mul(lr.size(), isz));
      deepest = std::max(deepest, sat_add(held, m.pull_bytes(leaf, lr)));
    }
    if (lr.size() != n) held = sat_add(held, sat_mul(n, isz));
  }
  const int64_t temps = sat_mul(static_cast<int64_t>(prog.ntemp_slots) + static_cast<int64_t>(prog.consts.size()),
                                static_cast<int64_t>(prog.slot_bytes));
  return sat_add(std::max(deepest, held), temps);
}

}  // namespace b2lazy
