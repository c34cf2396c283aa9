// Builds moving reductions: xarray's rolling semantics (moving_reduce), and reductions
// over the window axis of a sliding_window_view rewritten as one moving node — what
// xarray's rolling(...).sum()/max()/std() and its counts ask of the array namespace
// (pad, sliding_window_view, reduce over the window axis), planned as one pass per
// region with a halo instead of w shifted copies.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <type_traits>

#include "b2lazy/error.hpp"
#include "b2lazy/rolling.hpp"
#include "graph/axes.hpp"
#include "graph/rolling.hpp"
#include "ops/elementwise/elementwise_node.hpp"
#include "ops/rolling/moving_node.hpp"
#include "ops/shape/pad_node.hpp"
#include "ops/shape/window_node.hpp"
#include "storage/buffer_source.hpp"

namespace b2lazy {

namespace {
constexpr const char* kOps = "sum, mean, min, max, var, std, count";

// Is the value at `p` (dtype t) what a moving node takes a position beyond the axis to
// be for this op: a skipped NaN, or the identity (sum: 0; max, min without skipping NaNs:
// the lowest or highest value)? (Every window holds a data position: fold_pad.)
template <class T> bool neutral_as(const uint8_t* p, const MovingSpec& s) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  constexpr bool kFloat = std::is_floating_point_v<T>;
  if constexpr (kFloat) {
    if (std::isnan(v)) return s.skipna;
  }
  switch (s.op) {
    case MovingOp::Sum: return v == T(0) && s.min_count == 0;
    case MovingOp::Max:
      return !s.skipna && v == (kFloat ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest());
    case MovingOp::Min:
      return !s.skipna && v == (kFloat ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max());
    default: return false;
  }
}

bool neutral(const uint8_t* p, DType t, const MovingSpec& s) {
  switch (t) {
    case DType::Bool: return p[0] == 0 && s.op == MovingOp::Sum && s.min_count == 0;
    case DType::I8: return neutral_as<int8_t>(p, s);
    case DType::I16: return neutral_as<int16_t>(p, s);
    case DType::I32: return neutral_as<int32_t>(p, s);
    case DType::I64: return neutral_as<int64_t>(p, s);
    case DType::U8: return neutral_as<uint8_t>(p, s);
    case DType::U16: return neutral_as<uint16_t>(p, s);
    case DType::U32: return neutral_as<uint32_t>(p, s);
    case DType::U64: return neutral_as<uint64_t>(p, s);
    case DType::F32: return neutral_as<float>(p, s);
    case DType::F64: return neutral_as<double>(p, s);
    default: return false;
  }
}

// xarray pads before taking windows (constant NaN, 0, -inf or +inf: what the reduction
// skips or ignores): windows over the padding are windows cut at the axis' ends, so the
// moving node reads the data itself, one copy of every region fewer. `in` and `s`
// become the pad's input and the window placed on it.
void fold_pad(NodePtr& in, MovingSpec& s) {
  if (in->kind() != "pad") return;
  const auto& pad = static_cast<const PadNode&>(*in);
  const size_t k = static_cast<size_t>(s.axis);
  if (pad.mode() != PadMode::Constant) return;
  for (size_t d = 0; d < pad.ndim(); ++d)
    if (d != k && (pad.widths()[d].first || pad.widths()[d].second)) return;
  if (pad.widths()[k].first >= s.window || pad.widths()[k].second >= s.window) return;  // a window of padding alone
  const DType t = pad.dtype();
  if (!neutral(pad.fill_value(k, false), t, s) || !neutral(pad.fill_value(k, true), t, s)) return;
  s.offset -= pad.widths()[k].first;
  in = pad.inputs()[0];
}
// Do graphs `a` and `b` compute the same values? Structurally, for the nodes xarray's
// rolling builds above its data (elementwise operations, constants, pads, window views,
// moving reductions); any other node only when it is the same object. (False negatives
// are fine: the nodes are then simply not shared.) `budget` bounds the nodes compared.
bool same_graph(const Node& a, const Node& b, int& budget) {
  if (&a == &b) return true;
  if (--budget < 0 || a.kind() != b.kind() || a.dtype() != b.dtype() || a.shape() != b.shape() ||
      a.inputs().size() != b.inputs().size())
    return false;
  if (a.is_elementwise() && b.is_elementwise()) {  // (ElementwiseNode alone says it is)
    const auto &x = static_cast<const ElementwiseNode&>(a), &y = static_cast<const ElementwiseNode&>(b);
    if (x.op() != y.op() || x.compute_dtype() != y.compute_dtype()) return false;
  } else if (a.kind() == "constant") {
    const auto &x = static_cast<const ConstantNode&>(a), &y = static_cast<const ConstantNode&>(b);
    return std::memcmp(x.value(), y.value(), itemsize(a.dtype())) == 0;
  } else if (a.kind() == "pad") {
    const auto &x = static_cast<const PadNode&>(a), &y = static_cast<const PadNode&>(b);
    if (x.mode() != y.mode() || x.widths() != y.widths()) return false;
    for (size_t d = 0; d < a.ndim(); ++d)
      for (bool after : {false, true})
        if (std::memcmp(x.fill_value(d, after), y.fill_value(d, after), itemsize(a.dtype())) != 0) return false;
  } else if (a.kind() == WindowNode::kKind) {
    const auto &x = static_cast<const WindowNode&>(a), &y = static_cast<const WindowNode&>(b);
    if (x.axis() != y.axis() || x.window() != y.window()) return false;
  } else {
    return false;
  }
  for (size_t i = 0; i < a.inputs().size(); ++i)
    if (!same_graph(*a.inputs()[i], *b.inputs()[i], budget)) return false;
  return true;
}

bool same_spec(const MovingSpec& a, const MovingSpec& b) {
  return a.axis == b.axis && a.window == b.window && a.offset == b.offset && a.length == b.length && a.op == b.op &&
         a.skipna == b.skipna && a.min_count == b.min_count && a.ddof == b.ddof;
}

// The moving reductions built lately, so that one built again over an equal graph is the
// same node: xarray's rolling mean asks for the window counts twice (sum's validity and
// count()), each from a fresh notnull(x); one node is computed once per region, two were
// computed twice (ERA t, window 8: 3.0 s -> 1.6 s). Weak references: nothing kept alive.
class RecentMoving {
 public:
  NodePtr find_or_add(const NodePtr& input, const MovingSpec& s, DType out) {
    std::lock_guard<std::mutex> g(mu_);
    for (auto& w : recent_)
      if (auto n = w.lock()) {
        const auto& m = static_cast<const MovingNode&>(*n);
        int budget = 256;
        if (m.dtype() == out && same_spec(m.spec(), s) && same_graph(*m.inputs()[0], *input, budget)) return n;
      }
    NodePtr n = std::make_shared<MovingNode>(input, s, out);
    recent_[next_++ % recent_.size()] = n;
    return n;
  }

 private:
  std::mutex mu_;
  std::array<std::weak_ptr<const Node>, 16> recent_;
  size_t next_ = 0;
};
}  // namespace

MovingOp moving_op(const std::string& name) {
  if (name == "sum") return MovingOp::Sum;
  if (name == "mean") return MovingOp::Mean;
  if (name == "min") return MovingOp::Min;
  if (name == "max") return MovingOp::Max;
  if (name == "var") return MovingOp::Var;
  if (name == "std") return MovingOp::Std;
  if (name == "count") return MovingOp::Count;
  throw ValueError("moving_reduce: func '" + name + "' is not supported (supported: " + kOps + ")");
}

const char* moving_op_name(MovingOp op) {
  switch (op) {
    case MovingOp::Sum: return "sum";
    case MovingOp::Mean: return "mean";
    case MovingOp::Min: return "min";
    case MovingOp::Max: return "max";
    case MovingOp::Var: return "var";
    case MovingOp::Std: return "std";
    case MovingOp::Count: return "count";
  }
  return "";
}

Array moving_reduce(const Array& x, int64_t window, MovingOp op, const MovingOptions& o) {
  if (x.ndim() == 0) throw ValueError("moving_reduce: x must have at least one dimension (got a 0-d array)");
  const int axis = normalize_axis(o.axis, x.ndim(), "moving_reduce", x.shape());
  if (window < 1) throw ValueError("moving_reduce: window must be at least 1, got " + std::to_string(window));
  const int64_t min_periods = o.min_periods.value_or(window);
  if (min_periods < 1)
    throw ValueError("moving_reduce: min_periods must be at least 1, got " + std::to_string(min_periods));
  if (min_periods > window)
    throw ValueError("moving_reduce: min_periods " + std::to_string(min_periods) + " is larger than the window " +
                     std::to_string(window));
  if (!(o.ddof >= 0) || !std::isfinite(o.ddof))
    throw ValueError("moving_reduce: ddof must be a finite number >= 0, got " + std::to_string(o.ddof));
  const DType t = x.dtype();
  if (is_complex(t))
    throw TypeError(std::string("moving_reduce: complex input is not supported (got ") + dtype_name(t) + ")");
  const int64_t n = x.shape()[static_cast<size_t>(axis)];
  // The window reaches b positions before i and a after; beyond the axis' length on
  // either side it only adds missing positions, so it is cut there (a window of 10**12
  // costs what one of the axis' length does).
  const int64_t before = o.center ? window / 2 : window - 1, after = window - 1 - before;
  const int64_t b = std::min(before, n), a = std::min(after, n);
  MovingSpec s;
  s.axis = axis;
  s.window = a + b + 1;
  s.offset = -b;
  s.length = n;
  s.op = op;
  s.skipna = o.skipna;
  s.min_count = min_periods;
  s.ddof = o.ddof;
  const DType out = op == MovingOp::Count || !is_float(t) ? DType::F64 : t;
  return Array(std::make_shared<MovingNode>(x.node(), s, out));
}

std::optional<Array> reduce_over_window(Reduction r, const Array& x, const ReduceOptions& o, DType out) {
  const Node& n = *x.node();
  if (n.kind() != WindowNode::kKind || !o.axis || o.axis->size() != 1) return std::nullopt;
  const int last = static_cast<int>(x.ndim()) - 1;
  const int ax = (*o.axis)[0] < 0 ? (*o.axis)[0] + last + 1 : (*o.axis)[0];
  if (ax != last) return std::nullopt;
  const auto& win = static_cast<const WindowNode&>(n);
  const NodePtr& in = n.inputs()[0];
  const DType t = in->dtype();
  if (is_complex(t) || is_complex(out) || (is_float(t) && !is_inexact(out))) return std::nullopt;
  MovingSpec s;
  s.axis = win.axis();
  s.window = win.window();
  s.offset = 0;
  s.length = x.shape()[static_cast<size_t>(win.axis())];
  s.ddof = o.correction;
  switch (r) {
    case Reduction::Sum: s.op = MovingOp::Sum, s.skipna = false; break;
    case Reduction::NanSum: s.op = MovingOp::Sum; break;
    case Reduction::Mean: s.op = MovingOp::Mean, s.skipna = false; break;
    case Reduction::NanMean: s.op = MovingOp::Mean, s.min_count = 1; break;
    case Reduction::Min: s.op = MovingOp::Min, s.skipna = false; break;
    case Reduction::NanMin: s.op = MovingOp::Min; break;
    case Reduction::Max: s.op = MovingOp::Max, s.skipna = false; break;
    case Reduction::NanMax: s.op = MovingOp::Max; break;
    case Reduction::Var:
    case Reduction::Std:
      // (NumPy divides by n - ddof <= 0 into inf or NaN with a warning: left to the plain reduction)
      if (o.correction >= static_cast<double>(s.window)) return std::nullopt;
      s.op = r == Reduction::Var ? MovingOp::Var : MovingOp::Std, s.skipna = false;
      break;
    case Reduction::NanVar: s.op = MovingOp::Var; break;
    case Reduction::NanStd: s.op = MovingOp::Std; break;
    default: return std::nullopt;
  }
  if (t == DType::Bool && s.op != MovingOp::Sum) return std::nullopt;
  NodePtr data = in;
  fold_pad(data, s);
  static RecentMoving recent;
  Array y(recent.find_or_add(data, s, out));
  return o.keepdims ? expand_dims(y, last) : y;
}

}  // namespace b2lazy
