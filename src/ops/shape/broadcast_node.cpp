#include "ops/shape/broadcast_node.hpp"

#include "core/strided_copy.hpp"
#include "ops/elementwise/elementwise_node.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

std::vector<Region> BroadcastNode::input_regions(const Region& region) const {
  return {broadcast_region(region, shape(), inputs()[0]->shape())};
}

void BroadcastNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const Region in = broadcast_region(region, shape(), inputs()[0]->shape());
  if (in.size() == region.size()) {  // nothing repeated within this region
    inputs()[0]->pull(in, out, ts);
    return;
  }
  ScratchScope scope(ts.scratch);
  const size_t isz = itemsize(dtype());
  void* buf = scope.alloc(static_cast<size_t>(in.size()) * isz);
  inputs()[0]->pull(in, buf, ts);
  broadcast_into(buf, in.count, out, region.count, isz);
}

}  // namespace b2lazy
