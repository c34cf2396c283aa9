// Node's default answers to the planner's queries.
#include "b2lazy/error.hpp"
#include "b2lazy/node.hpp"

namespace b2lazy {

void Node::fill_block_major(int64_t /*chunk*/, int64_t /*nitems*/, void* /*out*/, ThreadState& /*ts*/) const {
  throw Error("internal: " + kind() + " cannot fill chunks in block-major order");
}

}  // namespace b2lazy
