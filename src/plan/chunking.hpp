// How the result is split into output chunks.
#pragma once
#include <cstddef>

#include "b2lazy/node.hpp"
#include "core/chunk_shapes.hpp"
#include "runtime/graph_queries.hpp"

namespace b2lazy {

// Default output chunk size for an evaluation within `max_memory` on `nthreads`.
size_t chunk_target_bytes(const Node& root, size_t max_memory, int nthreads);

}  // namespace b2lazy
