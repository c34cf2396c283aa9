// Builds segment reductions (b2lazy/groupby.hpp): codes checked, NumPy's result dtypes,
// count as a count of x == x (the values that are not NaN).
#include <algorithm>
#include <map>

#include "b2lazy/error.hpp"
#include "b2lazy/groupby.hpp"
#include "b2lazy/ops.hpp"
#include "ops/segment/segment_node.hpp"

namespace b2lazy {

namespace {

struct SegmentFunc {
  SegmentFold fold;
  Reduction r;
};

const std::map<std::string, SegmentFunc>& segment_table() {
  using F = SegmentFold;
  using R = Reduction;
  static const std::map<std::string, SegmentFunc> t = {
      {"sum", {F::Kernel, R::Sum}},
      {"nansum", {F::Kernel, R::NanSum}},
      {"prod", {F::Kernel, R::Prod}},
      {"nanprod", {F::Kernel, R::NanProd}},
      {"mean", {F::Kernel, R::Mean}},
      {"nanmean", {F::Kernel, R::NanMean}},
      {"min", {F::Kernel, R::Min}},
      {"nanmin", {F::Kernel, R::NanMin}},
      {"max", {F::Kernel, R::Max}},
      {"nanmax", {F::Kernel, R::NanMax}},
      {"var", {F::Kernel, R::Var}},
      {"nanvar", {F::Kernel, R::NanVar}},
      {"std", {F::Kernel, R::Std}},
      {"nanstd", {F::Kernel, R::NanStd}},
      {"any", {F::Kernel, R::Any}},
      {"all", {F::Kernel, R::All}},
      {"count", {F::Kernel, R::CountNonzero}},
      {"first", {F::First, R::Min}},
      {"last", {F::Last, R::Min}},
      {"nanfirst", {F::NanFirst, R::Min}},
      {"nanlast", {F::NanLast, R::Min}},
  };
  return t;
}

// The most groups segment_reduce takes for `n` codes (its per-group bookkeeping is
// allocated whole; an absurd ngroups must not allocate without bound).
int64_t most_groups(size_t n) { return std::max<int64_t>(int64_t(1) << 20, 4 * static_cast<int64_t>(n)); }

}  // namespace

const std::vector<std::string>& segment_functions() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& [name, f] : segment_table()) v.push_back(name);
    return v;
  }();
  return names;
}

Array segment_reduce(const Array& x0, const std::vector<int64_t>& codes, const std::string& func,
                     const SegmentOptions& o) {
  auto it = segment_table().find(func);
  if (it == segment_table().end()) {
    std::string names;
    for (const std::string& n : segment_functions()) names += (names.empty() ? "" : ", ") + n;
    throw ValueError("segment_reduce: func '" + func + "' is not one of " + names);
  }
  const SegmentFunc f = it->second;
  const int nd = static_cast<int>(x0.ndim());
  if (nd == 0) throw ValueError("segment_reduce: x is 0-d; it needs an axis to group along");
  if (o.axis < -nd || o.axis >= nd)
    throw AxisError("segment_reduce: axis " + std::to_string(o.axis) + " is out of bounds for x of shape " +
                    shape_str(x0.shape()));
  const size_t axis = static_cast<size_t>(o.axis < 0 ? o.axis + nd : o.axis);
  const int64_t n = x0.shape()[axis];
  if (static_cast<int64_t>(codes.size()) != n)
    throw ValueError("segment_reduce: codes has " + std::to_string(codes.size()) + " values; x has " +
                     std::to_string(n) + " along axis " + std::to_string(axis) + " (shape " + shape_str(x0.shape()) +
                     ")");
  int64_t top = -1;
  for (size_t i = 0; i < codes.size(); ++i) {
    if (codes[i] < -1)
      throw ValueError("segment_reduce: codes[" + std::to_string(i) + "] is " + std::to_string(codes[i]) +
                       "; codes are group numbers >= 0, or -1 to drop the element");
    top = std::max(top, codes[i]);
  }
  const int64_t ngroups = o.ngroups.value_or(top + 1);
  if (ngroups < 0) throw ValueError("segment_reduce: ngroups must be >= 0, got " + std::to_string(ngroups));
  if (top >= ngroups)
    throw ValueError("segment_reduce: codes holds group " + std::to_string(top) + " but ngroups is " +
                     std::to_string(ngroups));
  if (ngroups > most_groups(codes.size()))
    throw ValueError("segment_reduce: ngroups " + std::to_string(ngroups) + " is more than " +
                     std::to_string(most_groups(codes.size())) + " (max(2**20, 4 * len(codes)))");
  if (!(o.ddof >= 0)) throw ValueError("segment_reduce: ddof must be >= 0, got " + std::to_string(o.ddof));
  auto sc = std::make_shared<const SegmentCodes>(codes, ngroups);
  const bool any_empty = std::find(sc->count.begin(), sc->count.end(), 0) != sc->count.end();

  Array x = x0;
  const DType t0 = x.dtype();
  if (t0 == DType::F16) x = x.astype(DType::F32);  // computed in float32, given back in float16
  const DType t = x.dtype();
  const Reduction r = f.r;
  const bool folds = f.fold != SegmentFold::Kernel;
  const ReductionInfo& info = reduction_info(r);
  if (is_complex(t) && (folds || !info.complex_ok))
    throw TypeError("segment_reduce: " + func + " is not supported for " + dtype_name(t) + " (real dtypes only)");
  auto [out, acc] = reduction_dtypes(info, t);
  bool empty_nan = false;
  if (info.result == ReductionResult::Count) {
    x = elementwise(Op::Equal, {x, x});               // not NaN
  } else if (info.result == ReductionResult::Same) {  // min, max, first, last: empty groups NaN (then floating)
    empty_nan = any_empty;
    if (empty_nan && !is_inexact(t)) out = DType::F64;
    if (folds && !is_inexact(t)) out = any_empty ? DType::F64 : t;
  }
  auto node =
      std::make_shared<SegmentReduceNode>(x.node(), axis, std::move(sc), f.fold, r, out, acc, o.ddof, empty_nan, func);
  Array result(node);
  if (t0 == DType::F16 && out == DType::F32) result = result.astype(DType::F16);
  return result;
}

}  // namespace b2lazy
