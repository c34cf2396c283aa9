// Regions of N-d index space: Box (half-open, unit step), Region (strided), ChunkGrid.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace b2lazy {

using Shape = std::vector<int64_t>;

int64_t prod(const Shape& s);
std::string shape_str(const Shape& s);
// C-order strides in elements.
Shape c_strides(const Shape& s);

// Half-open box [start, stop) per axis.
struct Box {
  Shape start, stop;

  static Box whole(const Shape& shape);
  size_t ndim() const { return start.size(); }
  Shape shape() const;
  int64_t size() const;
  bool empty() const;
  Box intersect(const Box& o) const;
  bool contains(const Box& o) const;
  Box shift(const Shape& by) const;  // start+by, stop+by
  bool operator==(const Box& o) const = default;
};

// Is `b` one contiguous range of a C-order array of `shape` (leading extent-1 axes,
// then one partial axis, then whole axes)?
bool is_contiguous_range(const Box& b, const Shape& shape);
// Do b's rows (runs along the last axis) lie at one stride in a C-order array of
// `shape` (its last axis' extent)? As above, except that the last axis may be a part.
bool is_row_strided_range(const Box& b, const Shape& shape);

// A strided selection: along axis d, indices start[d] + i*step[d] for 0 <= i < count[d].
// Steps may be negative. A Box is a Region with unit steps.
struct Region {
  Shape start, step, count;

  static Region from_box(const Box& b);
  static Region whole(const Shape& shape);
  size_t ndim() const { return start.size(); }
  const Shape& shape() const { return count; }
  int64_t size() const { return prod(count); }
  bool unit_steps() const;
  // The smallest Box holding every selected index (empty box if count has a 0).
  Box bounds() const;
  int64_t last(size_t d) const { return start[d] + (count[d] - 1) * step[d]; }
  bool operator==(const Region& o) const = default;
};

// A shape split into chunks; chunk ids are C-order over the grid. Chunk extents are
// positive, except 0 on an axis of length 0 (as python-blosc2 writes): no chunks.
class ChunkGrid {
 public:
  ChunkGrid() = default;
  ChunkGrid(Shape shape, Shape chunks);
  const Shape& shape() const { return shape_; }
  const Shape& chunks() const { return chunks_; }
  const Shape& grid() const { return grid_; }  // number of chunks per axis
  int64_t nchunks() const { return prod(grid_); }
  Shape chunk_coords(int64_t id) const;
  int64_t chunk_id(const Shape& coords) const;
  Box chunk_box(int64_t id) const;  // clipped to shape
  // Ids of the chunks a box touches, in C order.
  std::vector<int64_t> chunks_touching(const Box& b) const;

 private:
  Shape shape_, chunks_, grid_;
};

}  // namespace b2lazy
