#include "ops/shape/permute_node.hpp"

#include "runtime/alignment.hpp"

#include "core/strided_copy.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {
Shape permuted_shape(const Shape& in, const std::vector<int>& perm) {
  Shape s(perm.size());
  for (size_t o = 0; o < perm.size(); ++o) s[o] = in[static_cast<size_t>(perm[o])];
  return s;
}
}  // namespace

PermuteNode::PermuteNode(NodePtr input, std::vector<int> perm)
    : Node(input->dtype(), permuted_shape(input->shape(), perm), {input}), perm_(std::move(perm)) {}

std::string PermuteNode::describe() const {
  std::string s = "permute_dims (";
  for (size_t o = 0; o < perm_.size(); ++o) s += (o ? ", " : "") + std::to_string(perm_[o]);
  return s + ") -> " + shape_str(shape());
}

Region PermuteNode::input_region(const Region& r) const {
  Region in{Shape(r.ndim()), Shape(r.ndim()), Shape(r.ndim())};
  for (size_t o = 0; o < perm_.size(); ++o) {
    size_t d = static_cast<size_t>(perm_[o]);
    in.start[d] = r.start[o];
    in.step[d] = r.step[o];
    in.count[d] = r.count[o];
  }
  return in;
}

Shape PermuteNode::preferred_chunks() const {
  Shape c = inputs()[0]->preferred_chunks();
  return c.empty() ? c : permuted_shape(c, perm_);
}

void PermuteNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const size_t isz = itemsize(dtype());
  Region in = input_region(region);
  ScratchScope scope(ts.scratch);
  void* buf = scope.alloc(static_cast<size_t>(in.size()) * isz);
  inputs()[0]->pull(in, buf, ts);
  // Walk the output in C order, reading the input buffer through permuted strides.
  Shape in_st = byte_strides(in.count, isz);
  Shape src_st(perm_.size());
  for (size_t o = 0; o < perm_.size(); ++o) src_st[o] = in_st[static_cast<size_t>(perm_[o])];
  Shape dst_st = byte_strides(region.count, isz);
  copy_strided(region.ndim(), region.count.data(), static_cast<const char*>(buf), src_st.data(),
               static_cast<char*>(out), dst_st.data(), isz);
}

int64_t PermuteNode::alignment_along(size_t axis, const AlignmentQuery& q) const {
  return q.of(*inputs()[0], static_cast<size_t>(perm_[axis]));
}

bool is_matrix_transpose(const Node& n) {
  auto* p = dynamic_cast<const PermuteNode*>(&n);
  if (!p) return false;
  const auto& perm = p->perm();
  const size_t r = perm.size();
  if (r < 2) return false;
  for (size_t d = 0; d + 2 < r; ++d)
    if (perm[d] != static_cast<int>(d)) return false;
  return perm[r - 2] == static_cast<int>(r - 1) && perm[r - 1] == static_cast<int>(r - 2);
}

}  // namespace b2lazy
