// Chunk shapes from a shape, an item size and a byte target: no graph involved.
#pragma once
#include <cstddef>

#include "b2lazy/box.hpp"

namespace b2lazy {

// Chunks covering whole trailing axes, so each chunk is one contiguous C-order range.
Shape contiguous_chunks(const Shape& shape, size_t itemsize, size_t target_bytes);
// Roughly cubic chunks: the longest axis is halved until the chunk fits target_bytes.
Shape balanced_chunks(const Shape& shape, size_t itemsize, size_t target_bytes);
// `chunks` with leading axes halved until a chunk is at most `max_bytes`.
Shape shrink_chunks(Shape chunks, size_t itemsize, size_t max_bytes);

}  // namespace b2lazy
