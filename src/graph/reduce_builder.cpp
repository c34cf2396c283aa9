// Builds reduction nodes: axis normalisation, NumPy result dtypes, argument checks.
#include "b2lazy/array.hpp"
#include "b2lazy/error.hpp"
#include "graph/axes.hpp"
#include "ops/reduce/reduce_node.hpp"

namespace b2lazy {

namespace {

// The type accumulators work in for a result dtype.
DType accumulator_for(DType out) {
  switch (kind(out)) {
    case DKind::Float: return DType::F64;
    case DKind::Signed: return DType::I64;
    case DKind::Unsigned: return DType::U64;
    default: return DType::I64;
  }
}

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
  const char* fn = reduction_name(r);
  std::vector<bool> red = normalize_axes(o.axis, x.shape(), fn);
  const DType t = x.dtype();
  DType out = t, acc = t;
  switch (r) {
    case Reduction::Sum: case Reduction::Prod:
      out = o.dtype.value_or(sum_dtype(t));
      acc = accumulator_for(out);
      if (out == DType::Bool) acc = DType::I64;
      break;
    case Reduction::Mean: case Reduction::Var: case Reduction::Std:
      out = o.dtype.value_or(is_float(t) ? t : DType::F64);
      if (!is_float(out)) throw TypeError(std::string(fn) + ": dtype must be a floating-point type, got " + dtype_name(out));
      acc = DType::F64;
      break;
    case Reduction::Min: case Reduction::Max: case Reduction::Argmin: case Reduction::Argmax:
      out = (r == Reduction::Argmin || r == Reduction::Argmax) ? DType::I64 : t;
      acc = t;
      break;
    case Reduction::Any: case Reduction::All:
      out = DType::Bool;
      acc = DType::Bool;
      break;
    case Reduction::CountNonzero:
      out = DType::I64;
      acc = DType::Bool;
      break;
  }
  if (o.dtype && r != Reduction::Sum && r != Reduction::Prod && r != Reduction::Mean && r != Reduction::Var &&
      r != Reduction::Std)
    throw TypeError(std::string(fn) + "() does not take a dtype argument");
  if (o.correction != 0 && r != Reduction::Var && r != Reduction::Std)
    throw TypeError(std::string(fn) + "() does not take a correction argument");
  if (r == Reduction::Argmin || r == Reduction::Argmax) {
    int nred = 0;
    for (bool b : red) nred += b;
    if (o.axis && o.axis->size() != 1)
      throw ValueError(std::string(fn) + ": axis must be None or a single integer");
    (void)nred;
  }
  auto node = std::make_shared<ReduceNode>(x.node(), r, red, o.keepdims, out, acc, o.correction);
  const int64_t count = node->reduced_count();
  if (count == 0 &&
      (r == Reduction::Min || r == Reduction::Max || r == Reduction::Argmin || r == Reduction::Argmax))
    throw ValueError(std::string(fn) + ": zero-size array to reduction operation " + fn + " which has no identity");
  return Array(node);
}

}  // namespace b2lazy
