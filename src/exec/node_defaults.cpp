// Node's default answers to the planner's queries.
#include "b2lazy/error.hpp"
#include "b2lazy/node.hpp"
#include "core/saturating.hpp"

namespace b2lazy {

int64_t Node::working_bytes(const Region& region, size_t /*per_worker*/) const {
  int64_t b = 0;
  const auto regions = input_regions(region);
  for (size_t i = 0; i < regions.size() && i < inputs().size(); ++i)
    b = sat_add(b, sat_mul(regions[i].size(), static_cast<int64_t>(itemsize(inputs()[i]->dtype()))));
  return b;
}

void Node::fill_block_major(int64_t /*chunk*/, int64_t /*nitems*/, void* /*out*/, ThreadState& /*ts*/) const {
  throw Error("internal: " + kind() + " cannot fill chunks in block-major order");
}

}  // namespace b2lazy
