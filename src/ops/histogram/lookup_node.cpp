#include "ops/histogram/lookup_node.hpp"

#include <algorithm>
#include <cmath>

#include "core/dispatch.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {
template <class T> bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}
// NumPy's sort order: NaN after every number.
template <class T> bool less(T a, T b) { return a < b || (is_nan(b) && !is_nan(a)); }
const char* mode_name(LookupMode m) {
  switch (m) {
    case LookupMode::Isin: return "isin";
    case LookupMode::IsinInvert: return "isin(invert)";
    case LookupMode::CountBelow: return "count below";
    case LookupMode::CountNotAbove: return "count not above";
    case LookupMode::HistogramBin: return "histogram bin";
  }
  return "";
}
}  // namespace

LookupNode::LookupNode(NodePtr input, std::vector<unsigned char> table, LookupMode mode)
    : Node(mode == LookupMode::Isin || mode == LookupMode::IsinInvert ? DType::Bool : DType::I64, input->shape(),
           {input}),
      table_(std::move(table)),
      n_(static_cast<int64_t>(table_.size() / itemsize(input->dtype()))),
      mode_(mode) {}

std::string LookupNode::describe() const {
  return std::string("lookup ") + mode_name(mode_) + " in a sorted table of " + std::to_string(n_) + " " +
         dtype_name(inputs()[0]->dtype()) + " -> " + dtype_name(dtype()) + " " + shape_str(shape());
}

void LookupNode::fill(const Region& region, void* out, ThreadState& ts) const {
  const Node& in = *inputs()[0];
  const int64_t m = region.size();
  if (m == 0) return;
  ScratchScope scope(ts.scratch);
  void* buf = scope.alloc(static_cast<size_t>(m) * itemsize(in.dtype()));
  in.pull(region, buf, ts);
  dispatch_real(in.dtype(), "lookup", [&]<class T>(T*) {
    const T* x = static_cast<const T*>(buf);
    const T* t = reinterpret_cast<const T*>(table_.data());
    const T* end = t + n_;
    auto lt = [](T a, T b) { return less(a, b); };
    if (mode_ == LookupMode::Isin || mode_ == LookupMode::IsinInvert) {
      auto* o = static_cast<bool*>(out);
      const bool invert = mode_ == LookupMode::IsinInvert;
      for (int64_t i = 0; i < m; ++i) {
        const T* p = std::lower_bound(t, end, x[i], lt);
        o[i] = (p != end && *p == x[i]) != invert;  // (NaN == NaN is false: never found)
      }
      return;
    }
    auto* o = static_cast<int64_t*>(out);
    for (int64_t i = 0; i < m; ++i) {
      switch (mode_) {
        case LookupMode::CountBelow: o[i] = std::lower_bound(t, end, x[i], lt) - t; break;
        case LookupMode::CountNotAbove: o[i] = std::upper_bound(t, end, x[i], lt) - t; break;
        default: {
          const int64_t nbins = n_ - 1;
          const T v = x[i];
          if (is_nan(v) || v < t[0] || v > t[n_ - 1]) o[i] = nbins;
          else if (v == t[n_ - 1]) o[i] = nbins - 1;
          else o[i] = (std::upper_bound(t, end, v, lt) - t) - 1;
        }
      }
    }
  });
}

}  // namespace b2lazy
