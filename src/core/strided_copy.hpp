// N-d copies between strided layouts (strides in bytes, may be negative).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "b2lazy/box.hpp"

namespace b2lazy {

void copy_strided(size_t ndim, const int64_t* count, const char* src, const int64_t* src_strides, char* dst,
                  const int64_t* dst_strides, size_t itemsize);

// Byte strides of a dense C-order array.
Shape byte_strides(const Shape& shape, size_t itemsize);

// Broadcast `src` (dense, shape `src_shape` right-aligned against `dst_shape`, size-1
// axes repeated) into dense `dst` of shape `dst_shape`.
void broadcast_into(const void* src, const Shape& src_shape, void* dst, const Shape& dst_shape, size_t itemsize);

// Along one axis, a progression start + i*step (0 <= i < count) split by a grid of
// cells of size `cell`: the i-range falling in each cell, in order of i.
struct AxisSegment {
  int64_t cell, i_lo, i_hi;
};
void split_axis(int64_t start, int64_t step, int64_t count, int64_t cell, std::vector<AxisSegment>& out);
using AxisSegments = std::vector<std::vector<AxisSegment>>;
// `region` split along every axis by a grid of cells of shape `cells` (split_axis per axis).
AxisSegments split_region(const Region& region, const Shape& cells);
// The odometer over one segment per axis, C order: advances `k` (a segment index per
// axis, all 0 at first) and returns false once every combination has been visited.
bool next_segment(std::vector<size_t>& k, const AxisSegments& segs);

// `r` with unit steps along `axis` over its bounds there, other axes as requested: a node
// that computes along the axis (a scan, a moving window) fills that densely, then
// pick_along() copies the indices `r` asks for from `dense` (laid out as `u`) into `out`.
Region unit_along(const Region& r, int axis);
void pick_along(const Region& r, const Region& u, int axis, const void* dense, void* out, size_t itemsize);

}  // namespace b2lazy
