#include "ops/shape/window_node.hpp"

#include "core/strided_copy.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {
Shape window_shape(const Shape& in, int axis, int64_t w) {
  Shape s = in;
  s[static_cast<size_t>(axis)] = in[static_cast<size_t>(axis)] - w + 1;
  s.push_back(w);
  return s;
}
}  // namespace

WindowNode::WindowNode(NodePtr input, int axis, int64_t window)
    : Node(input->dtype(), window_shape(input->shape(), axis, window), {input}), axis_(axis), window_(window) {}

std::string WindowNode::describe() const {
  return "sliding_window axis " + std::to_string(axis_) + " window " + std::to_string(window_) + " " +
         shape_str(inputs()[0]->shape()) + " -> " + shape_str(shape());
}

// The input's box: the region's own on the other axes; along the axis every index
// i + k its positions and window offsets reach, with unit steps.
Region WindowNode::input_region(const Region& r) const {
  const size_t nd = inputs()[0]->ndim(), a = static_cast<size_t>(axis_);
  Region in{Shape(r.start.begin(), r.start.begin() + static_cast<int64_t>(nd)),
            Shape(r.step.begin(), r.step.begin() + static_cast<int64_t>(nd)),
            Shape(r.count.begin(), r.count.begin() + static_cast<int64_t>(nd))};
  in.start[a] = r.start[a] + r.start[nd];
  in.step[a] = 1;
  in.count[a] = r.last(a) + r.last(nd) + 1 - in.start[a];
  return in;
}

std::vector<Region> WindowNode::input_regions(const Region& region) const {
  if (region.size() == 0) return {};
  return {input_region(region)};
}

void WindowNode::fill(const Region& r, void* out, ThreadState& ts) const {
  if (r.size() == 0) return;
  const size_t nd = inputs()[0]->ndim(), a = static_cast<size_t>(axis_), isz = itemsize(dtype());
  const Region in = input_region(r);
  ScratchScope scope(ts.scratch);
  char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(in.size()) * isz));
  inputs()[0]->pull(in, buf, ts);
  // out[idx, kk] reads the dense box at idx (other axes), idx[a]*step + kk*kstep along a.
  const Shape ist = byte_strides(in.count, isz);
  Shape src(nd + 1);
  for (size_t d = 0; d < nd; ++d) src[d] = ist[d];
  src[a] = ist[a] * r.step[a];
  src[nd] = ist[a] * r.step[nd];
  const Shape dst = byte_strides(r.count, isz);
  copy_strided(nd + 1, r.count.data(), buf, src.data(), static_cast<char*>(out), dst.data(), isz);
}

}  // namespace b2lazy
