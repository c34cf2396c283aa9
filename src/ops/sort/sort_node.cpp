#include "ops/sort/sort_node.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

#include "b2lazy/array.hpp"
#include "b2lazy/error.hpp"
#include "core/dispatch.hpp"
#include "exec/scratch.hpp"
#include "exec/thread_state.hpp"
#include "graph/axes.hpp"

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
  dispatch(in.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* src = reinterpret_cast<const T*>(buf);
    auto nan = [](T v) {
      if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
      else return (void)v, false;
    };
    std::vector<T> vals;
    std::vector<std::pair<T, int64_t>> pairs;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const T* lane = src + o * len * inner + i;  // element k at lane[k * inner]
        auto put = [&](int64_t k, T v, int64_t at) {
          const int64_t dst = (o * cnt + k) * inner + i;
          if (indices_) static_cast<int64_t*>(out)[dst] = at;
          else static_cast<T*>(out)[dst] = v;
        };
        if (!indices_) {  // values: equal ones are interchangeable, so any sort will do
          vals.resize(static_cast<size_t>(len));
          for (int64_t k = 0; k < len; ++k) vals[static_cast<size_t>(k)] = lane[k * inner];
          const auto numbers = std::partition(vals.begin(), vals.end(), [&](T v) { return !nan(v); });  // NaNs last
          if (descending_) std::sort(vals.begin(), numbers, [](T x, T y) { return y < x; });
          else std::sort(vals.begin(), numbers);
          for (int64_t k = 0; k < cnt; ++k) put(k, vals[static_cast<size_t>(first + k * step)], 0);
          continue;
        }
        // positions: stable, by (value, position) with NaNs after every number
        pairs.resize(static_cast<size_t>(len));
        for (int64_t k = 0; k < len; ++k) pairs[static_cast<size_t>(k)] = {lane[k * inner], k};
        std::stable_sort(pairs.begin(), pairs.end(), [&](const auto& x, const auto& y) {
          if (nan(x.first) || nan(y.first)) return !nan(x.first) && nan(y.first);
          return descending_ ? y.first < x.first : x.first < y.first;
        });
        for (int64_t k = 0; k < cnt; ++k) put(k, T{}, pairs[static_cast<size_t>(first + k * step)].second);
      }
  });
}

Array sort(const Array& x, int axis, bool descending, bool stable) {
  (void)stable;  // always stable
  if (x.ndim() == 0) throw ValueError("sort: the array must have at least one dimension");
  const int d = normalize_axis(axis, x.ndim(), "sort", x.shape());
  return Array(std::make_shared<SortNode>(x.node(), d, descending, false));
}

Array argsort(const Array& x, int axis, bool descending, bool stable) {
  (void)stable;
  if (x.ndim() == 0) throw ValueError("argsort: the array must have at least one dimension");
  const int d = normalize_axis(axis, x.ndim(), "argsort", x.shape());
  return Array(std::make_shared<SortNode>(x.node(), d, descending, true));
}

}  // namespace b2lazy
