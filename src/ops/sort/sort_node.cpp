#include "ops/sort/sort_node.hpp"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "b2lazy/error.hpp"
#include "core/dispatch.hpp"
#include "ops/sort/sort_keys.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

SortNode::SortNode(NodePtr input, int axis, bool descending, bool indices)
    : Node(indices ? DType::I64 : input->dtype(), input->shape(), {input}),
      axis_(axis),
      descending_(descending),
      indices_(indices) {}

std::string SortNode::describe() const {
  return kind() + " axis=" + std::to_string(axis_) + (descending_ ? " descending" : "") + " -> " +
         std::string(dtype_name(dtype())) + " " + shape_str(shape());
}

std::vector<Region> SortNode::input_regions(const Region& region) const {
  Region in = region;
  in.start[axis_] = 0;
  in.step[axis_] = 1;
  in.count[axis_] = region.size() ? shape()[axis_] : 0;
  return {in};
}

// The input's chunks, whole along the axis (a chunk cut along it would sort its lanes
// again), the other axes cut so that a chunk stays near 8 MiB (at least one lane).
Shape SortNode::preferred_chunks() const {
  Shape c = inputs()[0]->preferred_chunks();
  if (c.size() != shape().size()) c = shape();
  c[axis_] = std::max<int64_t>(1, shape()[axis_]);
  const int64_t most = std::max<int64_t>(1, (int64_t(8) << 20) / static_cast<int64_t>(itemsize(inputs()[0]->dtype())));
  for (size_t d = 0; d < c.size(); ++d) c[d] = std::max<int64_t>(1, c[d]);
  for (size_t d = 0; d < c.size() && prod(c) > most; ++d)
    if (static_cast<int>(d) != axis_) c[d] = std::max<int64_t>(1, c[d] / std::max<int64_t>(1, prod(c) / most));
  return c;
}

void SortNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const Node& in = *inputs()[0];
  const Region ir = input_regions(region)[0];
  const size_t isz = itemsize(in.dtype());
  ScratchScope scope(ts.scratch);
  char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(ir.size()) * isz));
  in.pull(ir, buf, ts);
  const int64_t len = shape()[axis_];
  // Lanes: every position of the other axes; `inner` elements between a lane's neighbours.
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis_) + 1; d < ndim(); ++d) inner *= region.count[d];
  const int64_t outer = region.size() / std::max<int64_t>(1, region.count[axis_]) / std::max<int64_t>(1, inner);
  const int64_t cnt = region.count[axis_], first = region.start[axis_], step = region.step[axis_];
  dispatch_real(in.dtype(), "sort", [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* src = reinterpret_cast<const T*>(buf);
    std::vector<uint64_t> keys;
    std::vector<sortkey::KeyPos> pairs;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const T* lane = src + o * len * inner + i;  // element k at lane[k * inner]
        const int64_t at = o * cnt * inner + i;     // output element k at out[at + k * inner]
        if (!indices_) {                            // values: equal ones are interchangeable, so keys alone will do
          sortkey::sorted_keys(lane, len, inner, static_cast<size_t>(len), descending_, keys);
          T* o_ = static_cast<T*>(out) + at;
          for (int64_t k = 0; k < cnt; ++k)
            o_[k * inner] = sortkey::from_key<T>(keys[static_cast<size_t>(first + k * step)], descending_);
          continue;
        }
        // positions: (key, position) pairs, so equal values keep their order
        sortkey::sorted_pairs(lane, len, inner, static_cast<size_t>(len), 0, descending_, pairs);
        int64_t* o_ = static_cast<int64_t*>(out) + at;
        for (int64_t k = 0; k < cnt; ++k)
          o_[k * inner] = static_cast<int64_t>(pairs[static_cast<size_t>(first + k * step)].pos);
      }
  });
}

}  // namespace b2lazy
