#include "core/strided_copy.hpp"

#include <algorithm>
#include <cstring>

namespace b2lazy {

namespace {
template <class T> void copy_row(int64_t n, const char* s, int64_t ss, char* d, int64_t ds) {
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(d, s, sizeof(T));
    s += ss;
    d += ds;
  }
}

void copy_inner(int64_t n, const char* s, int64_t ss, char* d, int64_t ds, size_t isz) {
  if (ss == static_cast<int64_t>(isz) && ds == static_cast<int64_t>(isz)) {
    std::memcpy(d, s, n * isz);
    return;
  }
  switch (isz) {
    case 1: return copy_row<uint8_t>(n, s, ss, d, ds);
    case 2: return copy_row<uint16_t>(n, s, ss, d, ds);
    case 4: return copy_row<uint32_t>(n, s, ss, d, ds);
    case 8: return copy_row<uint64_t>(n, s, ss, d, ds);
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * ds, s + i * ss, isz);
  }
}
}  // namespace

void copy_strided(size_t ndim, const int64_t* count, const char* src, const int64_t* src_strides, char* dst,
                  const int64_t* dst_strides, size_t itemsize) {
  for (size_t d = 0; d < ndim; ++d)
    if (count[d] == 0) return;
  if (ndim == 0) {
    std::memcpy(dst, src, itemsize);
    return;
  }
  // Iterate the outer ndim-1 axes with an odometer; copy the innermost as a row.
  size_t outer = ndim - 1;
  int64_t idx[64] = {0};
  while (true) {
    copy_inner(count[outer], src, src_strides[outer], dst, dst_strides[outer], itemsize);
    size_t d = outer;
    while (d-- > 0) {
      src += src_strides[d];
      dst += dst_strides[d];
      if (++idx[d] < count[d]) break;
      src -= src_strides[d] * count[d];
      dst -= dst_strides[d] * count[d];
      idx[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

Shape byte_strides(const Shape& shape, size_t itemsize) {
  Shape s = c_strides(shape);
  for (auto& v : s) v *= static_cast<int64_t>(itemsize);
  return s;
}

void broadcast_into(const void* src, const Shape& src_shape, void* dst, const Shape& dst_shape, size_t itemsize) {
  size_t nd = dst_shape.size(), off = nd - src_shape.size();
  Shape dense = byte_strides(src_shape, itemsize);
  Shape ss(nd, 0);
  for (size_t d = 0; d < src_shape.size(); ++d) ss[off + d] = src_shape[d] == 1 ? 0 : dense[d];
  Shape ds = byte_strides(dst_shape, itemsize);
  copy_strided(nd, dst_shape.data(), static_cast<const char*>(src), ss.data(), static_cast<char*>(dst), ds.data(),
               itemsize);
}

void split_axis(int64_t start, int64_t step, int64_t count, int64_t cell, std::vector<AxisSegment>& out) {
  out.clear();
  if (step == 1 && count > 0) {  // contiguous: one division, then cell after cell (the planner's block walks)
    const int64_t first = start / cell;
    for (int64_t c = first, i = 0; i < count; ++c) {
      const int64_t end = std::min(count, (c + 1) * cell - start);
      out.push_back({c, i, end});
      i = end;
    }
    return;
  }
  int64_t i = 0;
  while (i < count) {
    int64_t pos = start + i * step;
    int64_t c = pos / cell;
    int64_t end;
    if (step > 0) {
      int64_t last_pos = (c + 1) * cell - 1;
      end = (last_pos - start) / step + 1;
    } else {
      int64_t first_pos = c * cell;
      end = (start - first_pos) / (-step) + 1;
    }
    if (end > count) end = count;
    out.push_back({c, i, end});
    i = end;
  }
}

AxisSegments split_region(const Region& region, const Shape& cells) {
  AxisSegments segs(region.ndim());
  for (size_t d = 0; d < region.ndim(); ++d)
    split_axis(region.start[d], region.step[d], region.count[d], cells[d], segs[d]);
  return segs;
}

bool next_segment(std::vector<size_t>& k, const AxisSegments& segs) {
  for (size_t d = k.size(); d-- > 0;) {
    if (++k[d] < segs[d].size()) return true;
    k[d] = 0;
  }
  return false;
}

Region unit_along(const Region& r, int axis) {
  const size_t k = static_cast<size_t>(axis);
  const Box b = r.bounds();
  Region u = r;
  u.start[k] = b.start[k];
  u.step[k] = 1;
  u.count[k] = b.stop[k] - b.start[k];
  return u;
}

void pick_along(const Region& r, const Region& u, int axis, const void* dense, void* out, size_t itemsize) {
  const size_t k = static_cast<size_t>(axis);
  Shape ss = byte_strides(u.count, itemsize), ds = byte_strides(r.count, itemsize);
  const char* first = static_cast<const char*>(dense) + (r.start[k] - u.start[k]) * ss[k];
  ss[k] *= r.step[k];
  copy_strided(r.ndim(), r.count.data(), first, ss.data(), static_cast<char*>(out), ds.data(), itemsize);
}

}  // namespace b2lazy
