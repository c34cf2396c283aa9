#include "ops/shape/concat_node.hpp"

#include <algorithm>
#include <string>

#include "b2lazy/checked.hpp"

#include "core/strided_copy.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {
Shape concat_shape(const std::vector<NodePtr>& in, size_t axis) {
  Shape s = in[0]->shape();
  s[axis] = 0;
  for (auto& n : in)
    s[axis] = checked_add(s[axis], n->shape()[axis], "concat: the length along axis " + std::to_string(axis));
  return s;
}
// First i in [0, count) with start + i*step >= bound (step > 0) or <= bound (step < 0).
int64_t first_reaching(int64_t start, int64_t step, int64_t count, int64_t bound, bool up) {
  int64_t lo = 0, hi = count;
  while (lo < hi) {
    int64_t mid = (lo + hi) / 2, v = start + mid * step;
    if (up ? v >= bound : v <= bound) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
}  // namespace

ConcatNode::ConcatNode(std::vector<NodePtr> inputs, size_t axis)
    : Node(inputs[0]->dtype(), concat_shape(inputs, axis), inputs), axis_(axis) {
  int64_t off = 0;
  for (auto& n : this->inputs()) offsets_.push_back(off), off += n->shape()[axis];
}

std::string ConcatNode::describe() const {
  return "concat axis=" + std::to_string(axis_) + " of " + std::to_string(inputs().size()) + " -> " +
         shape_str(shape());
}

std::vector<ConcatNode::Part> ConcatNode::parts(const Region& r) const {
  std::vector<Part> out;
  const int64_t start = r.start[axis_], step = r.step[axis_], count = r.count[axis_];
  for (size_t k = 0; k < inputs().size(); ++k) {
    const int64_t lo = offsets_[k], hi = lo + inputs()[k]->shape()[axis_];  // [lo, hi)
    int64_t i_lo, i_hi;
    if (step > 0) {
      i_lo = first_reaching(start, step, count, lo, true);
      i_hi = first_reaching(start, step, count, hi, true);
    } else {
      i_lo = first_reaching(start, step, count, hi - 1, false);
      i_hi = first_reaching(start, step, count, lo - 1, false);
    }
    if (i_hi <= i_lo) continue;
    Region in = r;
    in.start[axis_] = start + i_lo * step - lo;
    in.count[axis_] = i_hi - i_lo;
    out.push_back({k, i_lo, i_hi, in});
  }
  return out;
}

std::vector<Region> ConcatNode::input_regions(const Region& r) const {
  std::vector<Region> out(inputs().size());
  for (size_t k = 0; k < out.size(); ++k) {  // inputs the region misses: an empty region
    out[k] = r;
    out[k].start[axis_] = 0;
    out[k].count[axis_] = 0;
  }
  for (const Part& p : parts(r)) out[p.input] = p.region;
  return out;
}

void ConcatNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const size_t isz = itemsize(dtype());
  const Shape dst_st = byte_strides(region.count, isz);
  for (const Part& p : parts(region)) {
    const Node& in = *inputs()[p.input];
    char* dst = static_cast<char*>(out) + p.i_lo * dst_st[axis_];
    bool outer = true;  // the part is contiguous in out when all axes before are length 1
    for (size_t d = 0; d < axis_; ++d) outer = outer && region.count[d] == 1;
    if (outer) {
      in.pull(p.region, dst, ts);
      continue;
    }
    ScratchScope scope(ts.scratch);
    char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(p.region.size()) * isz));
    in.pull(p.region, buf, ts);
    const Shape src_st = byte_strides(p.region.count, isz);
    copy_strided(region.ndim(), p.region.count.data(), buf, src_st.data(), dst, dst_st.data(), isz);
  }
}

}  // namespace b2lazy
