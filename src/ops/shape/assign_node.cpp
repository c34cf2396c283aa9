#include "ops/shape/assign_node.hpp"

#include <numeric>

#include "b2lazy/error.hpp"
#include "core/strided_copy.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

bool key_meets(const std::vector<KeyAxis>& key, const Region& r, KeyMeet& m) {
  const size_t nd = key.size();
  m = KeyMeet{Shape(nd), Shape(nd), Shape(nd), Shape(nd), Shape(nd)};
  for (size_t d = 0; d < nd; ++d) {
    const KeyAxis& k = key[d];
    const int64_t n = r.count[d];
    if (n == 0 || k.count == 0) return false;
    // A region walked backwards is met as the same positions walked forwards, reversed below.
    const bool back = n > 1 && r.step[d] < 0;
    const int64_t q = n > 1 ? (back ? -r.step[d] : r.step[d]) : 1;
    const int64_t s = back ? r.start[d] + (n - 1) * r.step[d] : r.start[d];
    const int64_t last = k.start + (k.count - 1) * k.step;  // the key's last position
    // The region's indices i whose positions s + i*q lie within [k.start, last] ...
    const int64_t lo = k.start > s ? (k.start - s + q - 1) / q : 0;
    const int64_t hi = last >= s ? std::min(n - 1, (last - s) / q) : -1;
    if (lo > hi) return false;
    // ... and on the key's progression: i*q = k.start - s (mod step), every step/g indices.
    const int64_t g = std::gcd(q, k.step), period = k.step / g;
    int64_t i = lo;
    while (i < hi && i < lo + period - 1 && (s + i * q - k.start) % k.step != 0) ++i;
    if ((s + i * q - k.start) % k.step != 0) return false;
    m.i0[d] = i;
    m.period[d] = period;
    m.count[d] = (hi - i) / period + 1;
    m.j0[d] = (s + i * q - k.start) / k.step;
    m.jstep[d] = q / g;
    if (back) {  // region index n-1-i holds what forward index i does: the value read backwards
      m.i0[d] = n - 1 - (i + (m.count[d] - 1) * period);
      m.j0[d] += (m.count[d] - 1) * m.jstep[d];
      m.jstep[d] = -m.jstep[d];
    }
  }
  return true;
}

Region KeyMeet::value_region() const {
  Region v{j0, Shape(j0.size(), 1), count};
  for (size_t d = 0; d < j0.size(); ++d)
    if (count[d] > 1) v.step[d] = jstep[d];
  return v;
}

AssignNode::AssignNode(NodePtr old, NodePtr value, std::vector<KeyAxis> key)
    : Node(old->dtype(), old->shape(), {old, std::move(value)}), axes_(std::move(key)) {}  // (old read first)

std::string AssignNode::describe() const {
  std::string s = "assign [";
  for (size_t d = 0; d < axes_.size(); ++d)
    s += (d ? ", " : "") + std::to_string(axes_[d].start) + ":+" + std::to_string(axes_[d].step) + "*" +
         std::to_string(axes_[d].count);
  return s + "] -> " + shape_str(shape());
}

std::vector<Region> AssignNode::input_regions(const Region& region) const {
  const Region none{Shape(axes_.size(), 0), Shape(axes_.size(), 1), Shape(axes_.size(), 0)};
  KeyMeet m;
  if (region.size() && key_meets(axes_, region, m))  // old values read only where the value leaves some
    return {m.count == region.count ? none : region, m.value_region()};
  return {region, none};
}

void AssignNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  KeyMeet m;
  const bool meets = key_meets(axes_, region, m);
  // A region the value covers whole reads nothing of x (to_zarr into a region of an
  // existing array reads only the chunks it covers in part).
  if (!meets || m.count != region.count) inputs()[0]->pull(region, out, ts);
  if (!meets) return;
  const Region v = m.value_region();
  const size_t isz = itemsize(dtype());
  ScratchScope scope(ts.scratch);
  char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(v.size()) * isz));
  inputs()[1]->pull(v, buf, ts);
  scatter_meet(m, region.count, buf, out, isz);
}

void scatter_meet(const KeyMeet& m, const Shape& region_count, const void* value, void* out, size_t isz) {
  const Shape out_st = byte_strides(region_count, isz);
  Shape dst_st(out_st.size());
  char* dst = static_cast<char*>(out);
  for (size_t d = 0; d < out_st.size(); ++d) {
    dst += m.i0[d] * out_st[d];
    dst_st[d] = m.period[d] * out_st[d];
  }
  const Shape src_st = byte_strides(m.count, isz);
  copy_strided(m.count.size(), m.count.data(), static_cast<const char*>(value), src_st.data(), dst, dst_st.data(), isz);
}

}  // namespace b2lazy
