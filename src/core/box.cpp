#include "b2lazy/box.hpp"

#include <algorithm>

#include "b2lazy/checked.hpp"
#include "b2lazy/error.hpp"

namespace b2lazy {

int64_t prod(const Shape& s) { return checked_prod(s, "shape"); }

std::string shape_str(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    r += std::to_string(s[i]);
    if (s.size() == 1 || i + 1 < s.size()) r += s.size() == 1 ? "," : ", ";
  }
  return r + ")";
}

Shape c_strides(const Shape& s) {
  Shape st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    if (i) acc = checked_mul(acc, s[i], "a C-order stride");
  }
  return st;
}

Box Box::whole(const Shape& shape) { return Box{Shape(shape.size(), 0), shape}; }

Shape Box::shape() const {
  Shape s(ndim());
  for (size_t i = 0; i < ndim(); ++i) s[i] = std::max<int64_t>(0, stop[i] - start[i]);
  return s;
}
int64_t Box::size() const { return prod(shape()); }
bool Box::empty() const { return size() == 0; }

Box Box::intersect(const Box& o) const {
  Box r{start, stop};
  for (size_t i = 0; i < ndim(); ++i) {
    r.start[i] = std::max(start[i], o.start[i]);
    r.stop[i] = std::max(r.start[i], std::min(stop[i], o.stop[i]));
  }
  return r;
}

bool Box::contains(const Box& o) const {
  for (size_t i = 0; i < ndim(); ++i)
    if (o.start[i] < start[i] || o.stop[i] > stop[i]) return false;
  return true;
}

Box Box::shift(const Shape& by) const {
  Box r{start, stop};
  for (size_t i = 0; i < ndim(); ++i) {
    r.start[i] += by[i];
    r.stop[i] += by[i];
  }
  return r;
}

Region Region::from_box(const Box& b) { return Region{b.start, Shape(b.ndim(), 1), b.shape()}; }
Region Region::whole(const Shape& shape) { return from_box(Box::whole(shape)); }

bool Region::unit_steps() const {
  for (auto s : step)
    if (s != 1) return false;
  return true;
}

Box Region::bounds() const {
  Box b{start, start};
  for (size_t d = 0; d < ndim(); ++d) {
    if (count[d] == 0) return Box{start, start};
    int64_t a = start[d], z = last(d);
    b.start[d] = std::min(a, z);
    b.stop[d] = std::max(a, z) + 1;
  }
  return b;
}

ChunkGrid::ChunkGrid(Shape shape, Shape chunks) : shape_(std::move(shape)), chunks_(std::move(chunks)) {
  if (shape_.size() != chunks_.size())
    throw ValueError("chunks " + shape_str(chunks_) + " do not match shape " + shape_str(shape_));
  grid_.resize(shape_.size());
  for (size_t i = 0; i < shape_.size(); ++i) {
    // python-blosc2 stores an axis of length 0 with chunk extent 0: no chunks along it.
    if (chunks_[i] == 0 && shape_[i] == 0) {
      grid_[i] = 0;
      continue;
    }
    if (chunks_[i] <= 0) throw ValueError("chunks " + shape_str(chunks_) + " must be positive");
    grid_[i] = ceil_div(shape_[i], chunks_[i]);
  }
}

Shape ChunkGrid::chunk_coords(int64_t id) const {
  Shape c(grid_.size());
  for (size_t i = grid_.size(); i-- > 0;) {
    c[i] = grid_[i] ? id % grid_[i] : 0;
    id = grid_[i] ? id / grid_[i] : 0;
  }
  return c;
}

int64_t ChunkGrid::chunk_id(const Shape& coords) const {
  int64_t id = 0;
  for (size_t i = 0; i < grid_.size(); ++i) id = id * grid_[i] + coords[i];
  return id;
}

Box ChunkGrid::chunk_box(int64_t id) const {
  Shape c = chunk_coords(id);
  Box b{Shape(c.size()), Shape(c.size())};
  for (size_t i = 0; i < c.size(); ++i) {
    b.start[i] = c[i] * chunks_[i];  // < shape: c < grid
    b.stop[i] = b.start[i] + std::min(shape_[i] - b.start[i], chunks_[i]);
  }
  return b;
}

std::vector<int64_t> ChunkGrid::chunks_touching(const Box& b) const {
  std::vector<int64_t> ids;
  if (b.empty()) return ids;
  size_t n = grid_.size();
  Shape lo(n), hi(n), cur(n);
  for (size_t i = 0; i < n; ++i) {
    lo[i] = b.start[i] / chunks_[i];
    hi[i] = (b.stop[i] - 1) / chunks_[i];
  }
  cur = lo;
  while (true) {
    ids.push_back(chunk_id(cur));
    size_t d = n;
    while (d-- > 0) {
      if (++cur[d] <= hi[d]) break;
      cur[d] = lo[d];
    }
    if (d == static_cast<size_t>(-1)) break;
  }
  return ids;
}

bool is_row_strided_range(const Box& b, const Shape& shape) {
  size_t d = 0;
  while (d + 1 < shape.size() && b.stop[d] - b.start[d] == 1) ++d;
  for (size_t e = d + 1; e + 1 < shape.size(); ++e)
    if (b.start[e] != 0 || b.stop[e] != shape[e]) return false;
  return true;
}

bool is_contiguous_range(const Box& b, const Shape& shape) {
  size_t d = 0;
  while (d < shape.size() && b.stop[d] - b.start[d] == 1) ++d;
  for (size_t e = d + 1; e < shape.size(); ++e)
    if (b.start[e] != 0 || b.stop[e] != shape[e]) return false;
  return true;
}

}  // namespace b2lazy
