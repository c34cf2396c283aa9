// Builds scan nodes: axis checks, NumPy result dtypes, flattening for axis=None.
#include <string>
#include "b2lazy/array.hpp"
#include "b2lazy/error.hpp"
#include "graph/axes.hpp"
#include "ops/scan/scan_node.hpp"
#include "ops/shape/reshape_node.hpp"

namespace b2lazy {

namespace {

Array scan(ScanOp op, const Array& x, const ScanOptions& o, const char* fn, bool flatten_if_no_axis) {
  NodePtr in = x.node();
  int axis;
  if (!o.axis) {
    if (flatten_if_no_axis || x.ndim() <= 1) {
      in = flatten(x).node();
      axis = 0;
    } else {
      throw ValueError(std::string(fn) + ": axis must be given for arrays of more than one dimension (got " +
                       std::to_string(x.ndim()) + "-d)");
    }
  } else {
    axis = normalize_axis(*o.axis, x.ndim(), fn, x.shape());
  }
  DType out = o.dtype.value_or(sum_dtype(x.dtype()));
  if (out == DType::Bool) throw TypeError(std::string(fn) + ": dtype bool is not supported for a scan");
  return Array(std::make_shared<ScanNode>(in, axis, op, out, o.include_initial));
}

}  // namespace

Array cumulative_sum(const Array& x, const ScanOptions& o) { return scan(ScanOp::Sum, x, o, "cumulative_sum", false); }
Array cumulative_prod(const Array& x, const ScanOptions& o) {
  return scan(ScanOp::Prod, x, o, "cumulative_prod", false);
}

Array cumsum(const Array& x, std::optional<int> axis, std::optional<DType> dtype) {
  return scan(ScanOp::Sum, x, ScanOptions{axis, dtype, false}, "cumsum", true);
}
Array cumprod(const Array& x, std::optional<int> axis, std::optional<DType> dtype) {
  return scan(ScanOp::Prod, x, ScanOptions{axis, dtype, false}, "cumprod", true);
}

Array forward_fill(const Array& x, int axis) {
  axis = normalize_axis(axis, x.ndim(), "forward_fill", x.shape());
  if (!is_float(x.dtype()))
    throw TypeError(std::string("forward_fill: x must be of a real floating dtype (only those hold NaN), got ") +
                    dtype_name(x.dtype()));
  return Array(std::make_shared<ScanNode>(x.node(), axis, ScanOp::Push, x.dtype(), false));
}

}  // namespace b2lazy
