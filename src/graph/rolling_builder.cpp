// Builds moving reductions: xarray's rolling semantics (moving_reduce), and reductions
// over the window axis of a sliding_window_view rewritten as one moving node — what
// xarray's rolling(...).sum()/max()/std() and its counts ask of the array namespace
// (pad, sliding_window_view, reduce over the window axis), planned as one pass per
// region with a halo instead of w shifted copies.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "b2lazy/error.hpp"
#include "b2lazy/rolling.hpp"
#include "graph/axes.hpp"
#include "graph/rolling.hpp"
#include "ops/rolling/moving_node.hpp"
#include "ops/shape/pad_node.hpp"
#include "ops/shape/window_node.hpp"

namespace b2lazy {

namespace {
constexpr const char* kOps = "sum, mean, min, max, var, std, count";

// Is the value at `p` (dtype t) what a moving node takes a position beyond the axis to
// be for this op: a skipped NaN, or the identity (sum: 0; max, min without skipping NaNs:
// the lowest or highest value)? (Every window holds a data position: fold_pad.)
template <class T>
bool neutral_as(const uint8_t* p, const MovingSpec& s) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  constexpr bool kFloat = std::is_floating_point_v<T>;
  if constexpr (kFloat) {
    if (std::isnan(v)) return s.skipna;
  }
  switch (s.op) {
    case MovingOp::Sum: return v == T(0) && s.min_count == 0;
    case MovingOp::Max: return !s.skipna && v == (kFloat ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest());
    case MovingOp::Min: return !s.skipna && v == (kFloat ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max());
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
  if (is_complex(t)) throw TypeError(std::string("moving_reduce: complex input is not supported (got ") + dtype_name(t) + ")");
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
    case Reduction::Var: case Reduction::Std:
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
  Array y(std::make_shared<MovingNode>(data, s, out));
  return o.keepdims ? expand_dims(y, last) : y;
}

}  // namespace b2lazy
