#include "ops/construct/eye_node.hpp"

#include <cstring>

#include "core/dispatch.hpp"

namespace b2lazy {

EyeNode::EyeNode(DType dtype, int64_t rows, int64_t cols, int64_t k) : Node(dtype, Shape{rows, cols}), k_(k) {}

std::string EyeNode::describe() const {
  return "eye " + shape_str(shape()) + " k=" + std::to_string(k_) + " " + dtype_name(dtype());
}

void EyeNode::fill(const Region& r, void* out, ThreadState&) const {
  if (r.size() == 0) return;
  std::memset(out, 0, static_cast<size_t>(r.size()) * itemsize(dtype()));
  const int64_t cols = r.count[1];
  dispatch(dtype(), [&]<class T>(T*) {
    T* o = static_cast<T*>(out);
    for (int64_t i = 0; i < r.count[0]; ++i) {
      // The one column of this row on the diagonal, if the region selects it.
      const int64_t row = r.start[0] + i * r.step[0];
      if (k_ > 0 ? row > INT64_MAX - k_ : row < INT64_MIN - k_) continue;
      const int64_t d = row + k_ - r.start[1];
      if (d % r.step[1] != 0) continue;
      const int64_t j = d / r.step[1];
      if (j >= 0 && j < cols) o[i * cols + j] = static_cast<T>(1);
    }
  });
}

}  // namespace b2lazy
