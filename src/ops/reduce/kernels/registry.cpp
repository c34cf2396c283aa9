// The registry of reductions: names and argument rules, one row per Reduction.
#include <algorithm>

#include "b2lazy/ops.hpp"
#include "ops/reduce/kernels/kernel.hpp"

namespace b2lazy {

const std::vector<ReductionInfo>& reductions() {
  //                      reduction               name             dtype  corr.  no id. one axis
  static const std::vector<ReductionInfo> table = {
      {Reduction::Sum, "sum", true, false, false, false},
      {Reduction::Prod, "prod", true, false, false, false},
      {Reduction::Min, "min", false, false, true, false},
      {Reduction::Max, "max", false, false, true, false},
      {Reduction::Mean, "mean", true, false, false, false},
      {Reduction::Var, "var", true, true, false, false},
      {Reduction::Std, "std", true, true, false, false},
      {Reduction::Any, "any", false, false, false, false},
      {Reduction::All, "all", false, false, false, false},
      {Reduction::CountNonzero, "count_nonzero", false, false, false, false},
      {Reduction::Argmin, "argmin", false, false, true, true},
      {Reduction::Argmax, "argmax", false, false, true, true},
      {Reduction::NanSum, "nansum", true, false, false, false},
      {Reduction::NanProd, "nanprod", true, false, false, false},
      {Reduction::NanMin, "nanmin", false, false, true, false},
      {Reduction::NanMax, "nanmax", false, false, true, false},
      {Reduction::NanMean, "nanmean", true, false, false, false},
      {Reduction::NanVar, "nanvar", true, true, false, false},
      {Reduction::NanStd, "nanstd", true, true, false, false},
      {Reduction::NanArgmin, "nanargmin", false, false, true, true},
      {Reduction::NanArgmax, "nanargmax", false, false, true, true},
      {Reduction::LogSumExp, "logsumexp", false, false, false, false},
  };
  return table;
}

const ReductionInfo& reduction_info(Reduction r) {
  const auto& t = reductions();
  auto it = std::find_if(t.begin(), t.end(), [r](const ReductionInfo& i) { return i.r == r; });
  if (it == t.end()) throw ValueError("unknown reduction " + std::to_string(static_cast<int>(r)));
  return *it;
}

const ReductionInfo* find_reduction(const std::string& name) {
  for (const auto& i : reductions())
    if (name == i.name) return &i;
  return nullptr;
}

const char* reduction_name(Reduction r) { return reduction_info(r).name; }

namespace reduction {
void cast_out(DType from, const void* src, DType to, void* out, int64_t n) {
  const void* in[1] = {src};
  kernels::lookup_cast(from, to)(out, in, n);
}
}  // namespace reduction

}  // namespace b2lazy
