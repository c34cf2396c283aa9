#include "core/chunk_shapes.hpp"

#include <algorithm>

namespace b2lazy {

Shape contiguous_chunks(const Shape& shape, size_t itemsize, size_t target_bytes) {
  Shape c(shape.size(), 1);
  int64_t items = std::max<int64_t>(1, static_cast<int64_t>(target_bytes / itemsize));
  int64_t acc = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t len = std::max<int64_t>(1, shape[d]);
    if (len <= items / acc) {  // (acc * len could overflow)
      c[d] = len;
      acc *= len;
    } else {
      c[d] = std::max<int64_t>(1, items / acc);
      break;
    }
  }
  return c;
}

Shape balanced_chunks(const Shape& shape, size_t itemsize, size_t target_bytes) {
  Shape c(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) c[d] = std::max<int64_t>(1, shape[d]);
  const int64_t target_items = static_cast<int64_t>(target_bytes / itemsize);  // (prod * itemsize could overflow)
  while (prod(c) > target_items) {
    size_t big = static_cast<size_t>(std::max_element(c.begin(), c.end()) - c.begin());
    if (c[big] == 1) break;
    c[big] -= c[big] / 2;  // halved, rounding up ((c + 1) / 2 could overflow)
  }
  return c;
}

Shape shrink_chunks(Shape c, size_t itemsize, size_t max_bytes) {
  const int64_t max_items = static_cast<int64_t>(max_bytes / itemsize);  // (prod * itemsize could overflow)
  for (size_t d = 0; d < c.size() && prod(c) > max_items; ++d)
    while (c[d] > 1 && prod(c) > max_items) c[d] -= c[d] / 2;
  return c;
}

}  // namespace b2lazy
