#include "ops/shape/slice_node.hpp"

#include <algorithm>
#include <cstdint>

#include "b2lazy/error.hpp"

namespace b2lazy {

SliceNode::SliceNode(NodePtr input, std::vector<Axis> axes, std::vector<int> out_to_in, Shape out_shape)
    : Node(input->dtype(), std::move(out_shape), {input}), axes_(std::move(axes)), out_to_in_(std::move(out_to_in)) {}

std::string SliceNode::describe() const {
  std::string s = "slice [";
  for (size_t d = 0; d < axes_.size(); ++d) {
    if (d) s += ", ";
    const Axis& a = axes_[d];
    s += a.fixed ? std::to_string(a.start)
                 : std::to_string(a.start) + ":+" + std::to_string(a.step) + "*" + std::to_string(a.count);
  }
  return s + "] -> " + shape_str(shape());
}

Region SliceNode::input_region(const Region& r) const {
  const size_t nin = axes_.size();
  Region in{Shape(nin), Shape(nin, 1), Shape(nin, 1)};
  for (size_t d = 0; d < nin; ++d) in.start[d] = axes_[d].start;
  for (size_t o = 0; o < out_to_in_.size(); ++o) {
    int d = out_to_in_[o];
    if (d < 0) continue;
    const Axis& a = axes_[d];
    in.start[d] = a.start + r.start[o] * a.step;  // an index of the input: bounded by its length
    // With one index or none the step is moot (and a product of moot steps could overflow).
    in.step[d] = r.count[o] > 1 ? r.step[o] * a.step : 1;
    in.count[d] = r.count[o];
  }
  // A region empty along a new axis selects nothing.
  for (size_t o = 0; o < out_to_in_.size(); ++o)
    if (out_to_in_[o] < 0 && r.count[o] == 0 && nin) in.count[0] = 0;
  return in;
}

void SliceNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  // Dropped and new axes have extent 1, so the C-order layout is the same.
  inputs()[0]->pull(input_region(region), out, ts);
}

const void* SliceNode::view(const Region& region) const { return inputs()[0]->view(input_region(region)); }

BasicKey normalize_basic_key(const Shape& sh, const std::vector<Index>& index) {
  size_t n_consuming = 0, n_ellipsis = 0;
  for (auto& ix : index) {
    if (ix.kind == Index::Kind::Ellipsis) ++n_ellipsis;
    else if (ix.kind != Index::Kind::NewAxis) ++n_consuming;
  }
  if (n_ellipsis > 1) throw IndexError("an index can only have a single ellipsis ('...')");
  if (n_consuming > sh.size())
    throw IndexError("too many indices for array: array is " + std::to_string(sh.size()) + "-dimensional, but " +
                     std::to_string(n_consuming) + " were indexed");
  std::vector<Index> full;
  for (auto& ix : index) {
    if (ix.kind == Index::Kind::Ellipsis) {
      for (size_t k = 0; k < sh.size() - n_consuming; ++k) full.push_back(Index::slice());
    } else {
      full.push_back(ix);
    }
  }
  if (!n_ellipsis)
    for (size_t k = n_consuming; k < sh.size(); ++k) full.push_back(Index::slice());

  BasicKey key;
  std::vector<SliceNode::Axis>& axes = key.axes;
  std::vector<int>& out_to_in = key.out_to_in;
  Shape& out_shape = key.out_shape;
  bool& identity = key.identity;
  for (auto& ix : full) {
    if (ix.kind == Index::Kind::NewAxis) {
      out_to_in.push_back(-1);
      out_shape.push_back(1);
      identity = false;
      continue;
    }
    size_t d = axes.size();
    int64_t len = sh[d];
    if (ix.kind == Index::Kind::Int) {
      int64_t i = ix.i < 0 ? ix.i + len : ix.i;
      if (i < 0 || i >= len)
        throw IndexError("index " + std::to_string(ix.i) + " is out of bounds for axis " + std::to_string(d) +
                         " with size " + std::to_string(len));
      axes.push_back({true, i, 1, 1});
      identity = false;
      continue;
    }
    int64_t step = ix.step.value_or(1);
    if (step == 0) throw ValueError("slice step cannot be zero (axis " + std::to_string(d) + ")");
    step = std::max(step, -INT64_MAX);  // as CPython: -step must fit
    // Python's slice.indices()
    int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? len : len - 1;
    auto clampv = [&](std::optional<int64_t> v, int64_t dflt) {
      if (!v) return dflt;
      int64_t x = *v;
      if (x < 0) x = std::max(x + len, lo);
      else x = std::min(x, hi);
      return x;
    };
    int64_t start = clampv(ix.start, step > 0 ? 0 : len - 1);
    int64_t stop = clampv(ix.stop, step > 0 ? len : -1);
    // (stop - start - 1) / step + 1, as CPython (start and stop are in [-1, len]; adding
    // step - 1 first would overflow for steps near int64's limits).
    int64_t count = step > 0 ? (stop > start ? (stop - start - 1) / step + 1 : 0)
                             : (start > stop ? (start - stop - 1) / (-step) + 1 : 0);
    if (count == 0) start = 0;
    if (count <= 1) step = 1;  // one index or none: the step is moot (products of it could overflow)
    if (!(start == 0 && step == 1 && count == len)) identity = false;
    axes.push_back({false, start, step, count});
    out_to_in.push_back(static_cast<int>(d));
    out_shape.push_back(count);
  }
  return key;
}

// A unit-step slice keeps the boundaries of an axis that starts on one, and an axis
// within one chunk is whole.
std::optional<Shape> SliceNode::alignment_through_view(const Shape& in) const {
  const Shape& out = shape();
  Shape a(out.size(), 0);
  for (size_t o = 0; o < out.size(); ++o) {
    const int i = out_to_in_[o];
    if (i < 0) {
      a[o] = 1;  // a new axis, extent 1
      continue;
    }
    const Axis& ax = axes_[static_cast<size_t>(i)];
    const int64_t c = in[static_cast<size_t>(i)];
    if (c <= 0 || ax.count <= 0) continue;
    if (ax.count == 1) a[o] = 1;
    else if (ax.step != 1) continue;
    else if (ax.start % c == 0) a[o] = c;
    else if (ax.start / c == (ax.start + ax.count - 1) / c) a[o] = ax.count;
  }
  return a;
}

}  // namespace b2lazy
