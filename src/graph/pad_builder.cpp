// pad: NumPy's arguments checked and normalised, the fill values evaluated (a few
// numbers), the PadNode built.
#include <cmath>

#include "b2lazy/error.hpp"
#include "b2lazy/pad.hpp"
#include "graph/axes.hpp"
#include "ops/shape/pad_node.hpp"
#include "ops/shape/window_node.hpp"

namespace b2lazy {

PadMode pad_mode(const std::string& name) {
  if (name == "constant") return PadMode::Constant;
  if (name == "edge") return PadMode::Edge;
  if (name == "reflect") return PadMode::Reflect;
  if (name == "symmetric") return PadMode::Symmetric;
  if (name == "wrap") return PadMode::Wrap;
  if (name == "empty") return PadMode::Empty;
  const char* supported = "constant, edge, reflect, symmetric, wrap, empty";
  if (name == "linear_ramp" || name == "maximum" || name == "mean" || name == "median" || name == "minimum")
    throw ValueError("pad: mode '" + name + "' is not supported by b2lazy (supported: " + supported + ")");
  throw ValueError("pad: mode '" + name + "' is not a pad mode (supported: " + supported + ")");
}

std::vector<std::pair<int64_t, int64_t>> pad_widths(const std::vector<int64_t>& values, const Shape& shape,
                                                    size_t ndim) {
  // NumPy broadcasts pad_width to (ndim, 2).
  const size_t k = shape.size();
  const bool fits = k <= 2 && (k < 1 || shape[k - 1] == 1 || shape[k - 1] == 2) &&
                    (k < 2 || shape[0] == 1 || shape[0] == static_cast<int64_t>(ndim));
  if (!fits || prod(shape) == 0)
    throw ValueError("pad: pad_width of shape " + shape_str(shape) + " does not broadcast to (" + std::to_string(ndim) +
                     ", 2) (an int, (before, after), or one (before, after) per axis)");
  std::vector<std::pair<int64_t, int64_t>> w(ndim);
  const int64_t cols = k >= 1 ? shape[k - 1] : 1, rows = k == 2 ? shape[0] : 1;
  for (size_t d = 0; d < ndim; ++d) {
    const size_t row = rows == 1 ? 0 : d;
    const int64_t b = values[row * static_cast<size_t>(cols)],
                  a = values[row * static_cast<size_t>(cols) + (cols == 2 ? 1 : 0)];
    if (b < 0 || a < 0) throw ValueError("pad: pad_width can't contain negative values");
    w[d] = {b, a};
  }
  return w;
}

namespace {
std::vector<uint8_t> fill_bytes(const Array& x, PadMode mode, const std::optional<Array>& values) {
  const size_t nd = x.ndim(), isz = itemsize(x.dtype());
  std::vector<uint8_t> out(2 * nd * isz, 0);
  if (mode != PadMode::Constant || !values || nd == 0) return out;  // empty: zeros
  Array v = *values;
  try {
    v = broadcast_to(v, Shape{static_cast<int64_t>(nd), 2});
  } catch (const ValueError&) {
    throw ValueError("pad: constant_values of shape " + shape_str(values->shape()) + " does not broadcast to (" +
                     std::to_string(nd) + ", 2)");
  }
  if (is_inexact(v.dtype()) && !is_inexact(x.dtype()))
    for (double f : v.to_vector())
      if (!std::isfinite(f))
        throw ValueError("pad: constant_values " + std::to_string(f) + " cannot be converted to " +
                         dtype_name(x.dtype()) + " (the array's dtype)");
  v.astype(x.dtype()).to_buffer(out.data());
  return out;
}
}  // namespace

Array pad(const Array& x, const std::vector<std::pair<int64_t, int64_t>>& widths_in, PadMode mode,
          const std::optional<Array>& constant_values) {
  const size_t nd = x.ndim();
  if (widths_in.size() != nd && widths_in.size() != 1)
    throw ValueError("pad: " + std::to_string(widths_in.size()) + " pad widths for an array of " + std::to_string(nd) +
                     " dimensions (shape " + shape_str(x.shape()) + ")");
  std::vector<std::pair<int64_t, int64_t>> widths(nd);
  bool none = true;
  for (size_t d = 0; d < nd; ++d) {
    widths[d] = widths_in.size() == 1 ? widths_in[0] : widths_in[d];
    if (widths[d].first < 0 || widths[d].second < 0) throw ValueError("pad: pad_width can't contain negative values");
    none = none && widths[d].first == 0 && widths[d].second == 0;
    if (x.shape()[d] == 0 && (widths[d].first || widths[d].second) && mode != PadMode::Constant &&
        mode != PadMode::Empty)
      throw ValueError("pad: can't extend empty axis " + std::to_string(d) +
                       " using modes other than 'constant' or 'empty' (shape " + shape_str(x.shape()) + ")");
  }
  std::vector<uint8_t> fill = fill_bytes(x, mode, constant_values);
  if (none) return x;
  return Array(std::make_shared<PadNode>(x.node(), std::move(widths), mode, std::move(fill)));
}

Array sliding_window_view(const Array& x, const std::vector<int64_t>& window_shape,
                          const std::optional<std::vector<int>>& axes_in) {
  std::vector<int> axes;
  if (axes_in) {
    for (int a : *axes_in) axes.push_back(normalize_axis(a, x.ndim(), "sliding_window_view", x.shape()));
  } else {
    for (size_t d = 0; d < x.ndim(); ++d) axes.push_back(static_cast<int>(d));
  }
  if (axes.size() != window_shape.size())
    throw ValueError("sliding_window_view: window_shape has " + std::to_string(window_shape.size()) + " entries for " +
                     std::to_string(axes.size()) + " axes (shape " + shape_str(x.shape()) + ")");
  Array y = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t w = window_shape[i], n = y.shape()[static_cast<size_t>(axes[i])];
    if (w <= 0) throw ValueError("sliding_window_view: window_shape must be positive, got " + std::to_string(w));
    if (w > n)
      throw ValueError("sliding_window_view: window " + std::to_string(w) + " is longer than axis " +
                       std::to_string(axes[i]) + " of shape " + shape_str(x.shape()));
    y = Array(std::make_shared<WindowNode>(y.node(), axes[i], w));
  }
  return y;
}

}  // namespace b2lazy
