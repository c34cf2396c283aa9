#include "ops/shape/rechunk_node.hpp"

namespace b2lazy {

void RechunkNode::fill(const Region& region, void* out, ThreadState& ts) const { inputs()[0]->pull(region, out, ts); }

}  // namespace b2lazy
