#include "ops/sort/search_node.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "b2lazy/error.hpp"
#include "core/dispatch.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

SearchNode::SearchNode(NodePtr sorted, NodePtr values, bool right)
    : Node(DType::I64, values->shape(), {sorted, values}), right_(right) {}

std::string SearchNode::describe() const {
  return std::string("searchsorted side=") + (right_ ? "right" : "left") + " -> int64 " + shape_str(shape());
}

std::vector<Region> SearchNode::input_regions(const Region& region) const {
  const Shape& s = inputs()[0]->shape();
  return {region.size() ? Region::whole(s) : Region{{0}, {1}, {0}}, region};
}

void SearchNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const Node& sorted = *inputs()[0];
  const Node& values = *inputs()[1];
  const size_t isz = itemsize(sorted.dtype());
  const int64_t n = sorted.shape()[0];
  ScratchScope scope(ts.scratch);
  const Region whole = Region::whole(sorted.shape());
  const void* s = sorted.pull_view(whole, ts);
  if (!s) {
    void* buf = scope.alloc(static_cast<size_t>(n) * isz);
    sorted.pull(whole, buf, ts);
    s = buf;
  }
  void* v = scope.alloc(static_cast<size_t>(region.size()) * isz);
  values.pull(region, v, ts);
  dispatch_real(sorted.dtype(), "searchsorted", [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* a = static_cast<const T*>(s);
    const T* x = static_cast<const T*>(v);
    int64_t* o = static_cast<int64_t*>(out);
    // NumPy's order: NaNs after every number.
    auto less = [](T p, T q) {
      if constexpr (std::is_floating_point_v<T>) return p < q || (!std::isnan(p) && std::isnan(q));
      else return p < q;
    };
    for (int64_t i = 0; i < region.size(); ++i) {
      const T* at = right_ ? std::upper_bound(a, a + n, x[i], less) : std::lower_bound(a, a + n, x[i], less);
      o[i] = at - a;
    }
  });
}

}  // namespace b2lazy
