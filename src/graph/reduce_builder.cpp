// Builds reduction nodes: axis normalisation, NumPy result dtypes, argument checks.
#include "b2lazy/array.hpp"
#include "b2lazy/error.hpp"
#include "graph/axes.hpp"
#include "graph/rolling.hpp"
#include "ops/reduce/quantile_node.hpp"
#include "ops/reduce/reduce_node.hpp"

namespace b2lazy {

namespace {

// Per axis of `shape`: is it reduced?
std::vector<bool> normalize_axes(const std::optional<std::vector<int>>& axis, const Shape& shape, const char* fn) {
  const size_t ndim = shape.size();
  std::vector<bool> red(ndim, !axis.has_value());
  if (!axis) return red;
  for (int d : normalize_axis_list(*axis, ndim, fn, shape)) red[static_cast<size_t>(d)] = true;
  return red;
}

}  // namespace

Array reduce(Reduction r, const Array& x, const ReduceOptions& o) {
  const ReductionInfo& info = reduction_info(r);
  const char* fn = info.name;
  std::vector<bool> red = normalize_axes(o.axis, x.shape(), fn);
  const DType t = x.dtype();
  if (is_complex(t) && !info.complex_ok)
    throw TypeError(std::string(fn) + " is not supported for " + dtype_name(t) + " (real dtypes only)");
  if (t == DType::Bool && !info.bool_ok) throw TypeError(std::string(fn) + " is not supported for bool");
  if (o.dtype && !info.takes_dtype) throw TypeError(std::string(fn) + "() does not take a dtype argument");
  if (o.correction != 0 && !info.takes_correction)
    throw TypeError(std::string(fn) + "() does not take a correction argument");
  const auto [out, acc] = reduction_dtypes(info, t, o.dtype);
  if (info.single_axis && o.axis && o.axis->size() != 1)
    throw ValueError(std::string(fn) + ": axis must be None or a single integer");
  // Over the window axis of a sliding window view (xarray's rolling): one moving node.
  if (auto moving = reduce_over_window(r, x, o, out)) return *moving;
  auto node = std::make_shared<ReduceNode>(x.node(), r, red, o.keepdims, out, acc, o.correction);
  if (node->reduced_count() == 0 && info.no_identity)
    throw ValueError(std::string(fn) + ": zero-size array to reduction operation " + fn + " which has no identity");
  return Array(node);
}

}  // namespace b2lazy

namespace b2lazy {

namespace {
Array quantile_node(const Array& x, double q, const QuantileOptions& o, bool median, const char* fn) {
  if (!(q >= 0 && q <= 1))
    throw ValueError(std::string(fn) + ": quantiles must be in the range [0, 1]" +
                     (std::string(fn).ends_with("percentile") ? " (percentiles in [0, 100])" : "") + ", got " +
                     std::to_string(std::string(fn).ends_with("percentile") ? q * 100 : q));
  std::vector<bool> red = normalize_axes(o.axis, x.shape(), fn);
  const DType t = x.dtype();
  if (is_complex(t))
    throw TypeError(std::string(fn) + " is not supported for " + dtype_name(t) + " (real dtypes only)");
  if (t == DType::F16)  // selected and interpolated in float32, the result in float16 as NumPy's
    return quantile_node(x.astype(DType::F32), q, o, median, fn).astype(DType::F16);
  const bool interpolates = o.method == QuantileMethod::Linear || o.method == QuantileMethod::Midpoint;
  // NumPy: interpolating methods give float (float inputs keep their type), the others
  // the input's type.
  const DType out = interpolates ? (is_float(t) ? t : DType::F64) : t;
  auto node = std::make_shared<QuantileNode>(x.node(), q, o.method, median, red, o.keepdims, out, o.skip_nan);
  if (node->slice_size() == 0 && !is_float(out))
    throw ValueError(std::string(fn) + ": an empty slice has no " + fn + " of dtype " + dtype_name(out));
  return Array(node);
}
}  // namespace

Array quantile(const Array& x, double q, const QuantileOptions& o) { return quantile_node(x, q, o, false, "quantile"); }
Array percentile(const Array& x, double p, const QuantileOptions& o) {
  return quantile_node(x, p / 100, o, false, "percentile");
}
Array median(const Array& x, const QuantileOptions& o) {
  if (o.method != QuantileMethod::Linear) throw TypeError("median() does not take a method");
  return quantile_node(x, 0.5, o, true, o.skip_nan ? "nanmedian" : "median");
}
Array nanquantile(const Array& x, double q, QuantileOptions o) {
  o.skip_nan = true;
  return quantile_node(x, q, o, false, "nanquantile");
}
Array nanpercentile(const Array& x, double p, QuantileOptions o) {
  o.skip_nan = true;
  return quantile_node(x, p / 100, o, false, "nanpercentile");
}
Array nanmedian(const Array& x, QuantileOptions o) {
  o.skip_nan = true;
  return median(x, o);
}

}  // namespace b2lazy
