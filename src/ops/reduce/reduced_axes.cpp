#include "ops/reduce/reduced_axes.hpp"

namespace b2lazy {

ReducedAxes::ReducedAxes(const Shape& in, std::vector<bool> red, bool keep)
    : in_shape(in), reduced(std::move(red)), keepdims(keep) {
  int o = 0;
  for (size_t d = 0; d < in_shape.size(); ++d) out_axis.push_back(reduced[d] && !keepdims ? -1 : o++);
}

Shape ReducedAxes::out_shape() const {
  Shape s;
  for (size_t d = 0; d < in_shape.size(); ++d)
    if (!reduced[d] || keepdims) s.push_back(reduced[d] ? 1 : in_shape[d]);
  return s;
}

Region ReducedAxes::widen(const Region& r) const {
  const size_t n = in_shape.size();
  Region w{Shape(n, 0), Shape(n, 1), Shape(n)};
  for (size_t d = 0; d < n; ++d) {
    if (reduced[d]) {
      w.count[d] = in_shape[d];
      continue;
    }
    const int o = out_axis[d];
    w.start[d] = r.start[o], w.step[d] = r.step[o], w.count[d] = r.count[o];
  }
  return w;
}

int64_t ReducedAxes::count() const {
  int64_t n = 1;
  for (size_t d = 0; d < in_shape.size(); ++d)
    if (reduced[d]) n *= in_shape[d];
  return n;
}

std::string ReducedAxes::axes() const {
  std::string s;
  for (size_t d = 0; d < reduced.size(); ++d)
    if (reduced[d]) s += (s.empty() ? "" : ",") + std::to_string(d);
  return s;
}

}  // namespace b2lazy
