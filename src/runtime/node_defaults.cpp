// Node's default answers to the planner's queries.
#include "b2lazy/error.hpp"
#include "b2lazy/node.hpp"

namespace b2lazy {

const void* Node::view_rows(const Region& region, int64_t& row_stride) const {
  const void* p = view(region);
  if (p) row_stride = region.ndim() ? region.count.back() : 1;
  return p;
}

void Node::fill_block_major(int64_t /*chunk*/, int64_t /*nitems*/, void* /*out*/, ThreadState& /*ts*/) const {
  throw Error("internal: " + kind() + " cannot fill chunks in block-major order");
}

std::vector<uint8_t> Node::fold_part(const Region& /*region*/, int64_t /*lo*/, int64_t /*hi*/,
                                     ThreadState& /*ts*/) const {
  throw Error("internal: " + kind() + " is not filled in parts");
}
void Node::fold_merge(const Region& /*region*/, std::vector<uint8_t>& /*into*/, const uint8_t* /*part*/,
                      size_t /*n*/) const {
  throw Error("internal: " + kind() + " is not filled in parts");
}
void Node::fold_finish(const Region& /*region*/, const uint8_t* /*state*/, size_t /*n*/, void* /*out*/) const {
  throw Error("internal: " + kind() + " is not filled in parts");
}

}  // namespace b2lazy
