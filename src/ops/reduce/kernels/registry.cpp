// The registry of reductions: one row per Reduction with all that is known about it —
// name, result dtype rule, arguments, aliases, whether Array has it as a method, and its
// kernel family. Adding a reduction: its Reduction value (b2lazy/vocabulary.hpp) and its
// row here; a new kind of fold adds its kernel class in this folder.
#include <algorithm>

#include "b2lazy/ops.hpp"
#include "ops/reduce/kernels/arg.hpp"
#include "ops/reduce/kernels/fold.hpp"
#include "ops/reduce/kernels/kernel.hpp"
#include "ops/reduce/kernels/logsumexp.hpp"
#include "ops/reduce/kernels/moments.hpp"
#include "ops/reduce/kernels/range.hpp"

namespace b2lazy {

namespace {

using reduction::family_of;
using R = ReductionResult;

// The kernel templates with their flags bound, as FamilyOf takes them.
template <template <class> class Op, bool Mean = false, bool Counted = false> struct Fold {
  template <class A> using K = reduction::FoldKernel<A, Op, Mean, Counted>;
};
template <bool SkipNaN, bool Sqrt> struct Moments {
  template <class A> using K = reduction::MomentsKernel<A, SkipNaN, Sqrt>;
};
template <bool Max, bool SkipNaN> struct Arg { template <class A> using K = reduction::ArgKernel<A, Max, SkipNaN>; };

// Row flags.
enum : unsigned { Dtype = 1, Correction = 2, NoIdentity = 4, OneAxis = 8, Complex = 16, Method = 32, NoBool = 64 };

ReductionInfo row(Reduction r, const char* name, ReductionResult result, unsigned flags,
                  const reduction::Family* family, std::vector<std::string> aliases = {}) {
  return {r,
          name,
          result,
          (flags & Dtype) != 0,
          (flags & Correction) != 0,
          (flags & NoIdentity) != 0,
          (flags & OneAxis) != 0,
          (flags & Complex) != 0,
          (flags & NoBool) == 0,
          (flags & Method) != 0,
          std::move(aliases),
          family};
}

// The type accumulators work in for a result dtype.
DType accumulator_for(DType out) {
  switch (kind(out)) {
    case DKind::Float: return DType::F64;
    case DKind::Complex: return DType::C128;
    case DKind::Signed: return DType::I64;
    case DKind::Unsigned: return DType::U64;
    default: return DType::I64;
  }
}

}  // namespace

const std::vector<ReductionInfo>& reductions() {
  using namespace reduction;
  static const std::vector<ReductionInfo> table = {
      row(Reduction::Sum, "sum", R::Widened, Dtype | Complex | Method, family_of<Fold<SumOp>::K>()),
      row(Reduction::Prod, "prod", R::Widened, Dtype | Complex | Method, family_of<Fold<ProdOp>::K>()),
      row(Reduction::Min, "min", R::Same, NoIdentity | Method, family_of<Fold<MinOp>::K>(), {"amin"}),
      row(Reduction::Max, "max", R::Same, NoIdentity | Method, family_of<Fold<MaxOp>::K>(), {"amax"}),
      row(Reduction::Mean, "mean", R::Floating, Dtype | Complex | Method, family_of<Fold<SumOp, true>::K>()),
      row(Reduction::Var, "var", R::Floating, Dtype | Correction | Method, family_of<Moments<false, false>::K>()),
      row(Reduction::Std, "std", R::Floating, Dtype | Correction | Method, family_of<Moments<false, true>::K>()),
      row(Reduction::Any, "any", R::Bool, Complex | Method, family_of<Fold<AnyOp>::K>()),
      row(Reduction::All, "all", R::Bool, Complex | Method, family_of<Fold<AllOp>::K>()),
      row(Reduction::CountNonzero, "count_nonzero", R::Count, Complex, family_of<CountKernel>()),
      row(Reduction::Argmin, "argmin", R::Index, NoIdentity | OneAxis | Method, family_of<Arg<false, false>::K>()),
      row(Reduction::Argmax, "argmax", R::Index, NoIdentity | OneAxis | Method, family_of<Arg<true, false>::K>()),
      row(Reduction::NanSum, "nansum", R::Widened, Dtype | Complex, family_of<Fold<NanSumOp>::K>()),
      row(Reduction::NanProd, "nanprod", R::Widened, Dtype | Complex, family_of<Fold<NanProdOp>::K>()),
      row(Reduction::NanMin, "nanmin", R::Same, NoIdentity, family_of<Fold<NanMinOp>::K>()),
      row(Reduction::NanMax, "nanmax", R::Same, NoIdentity, family_of<Fold<NanMaxOp>::K>()),
      row(Reduction::NanMean, "nanmean", R::Floating, Dtype | Complex, family_of<Fold<NanSumOp, true, true>::K>()),
      row(Reduction::NanVar, "nanvar", R::Floating, Dtype | Correction, family_of<Moments<true, false>::K>()),
      row(Reduction::NanStd, "nanstd", R::Floating, Dtype | Correction, family_of<Moments<true, true>::K>()),
      row(Reduction::NanArgmin, "nanargmin", R::Index, NoIdentity | OneAxis, family_of<Arg<false, true>::K>()),
      row(Reduction::NanArgmax, "nanargmax", R::Index, NoIdentity | OneAxis, family_of<Arg<true, true>::K>()),
      row(Reduction::LogSumExp, "logsumexp", R::Floating, 0, family_of<LogSumExpKernel>()),
      row(Reduction::Ptp, "ptp", R::Same, NoIdentity | NoBool, family_of<RangeKernel>()),
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

ReductionDTypes reduction_dtypes(const ReductionInfo& info, DType t, std::optional<DType> dtype) {
  switch (info.result) {
    case R::Widened: {
      const DType out = dtype.value_or(sum_dtype(t));
      return {out, out == DType::Bool ? DType::I64 : accumulator_for(out)};
    }
    case R::Floating: {
      const DType out = dtype.value_or(is_inexact(t) ? t : DType::F64);
      if (!is_inexact(out))
        throw TypeError(std::string(info.name) + ": dtype must be a floating-point type, got " + dtype_name(out));
      return {out, is_complex(out) ? DType::C128 : DType::F64};
    }
    case R::Same: return {t, t == DType::F16 ? DType::F32 : t};  // (float16 compares as float32: exact)
    case R::Index: return {DType::I64, t == DType::F16 ? DType::F32 : t};
    case R::Bool: return {DType::Bool, DType::Bool};
    case R::Count: return {DType::I64, DType::Bool};
  }
  throw ValueError(std::string(info.name) + ": unknown result rule");
}

std::string reduction_dtype_rule(const ReductionInfo& info) {
  const std::string given = info.takes_dtype ? "dtype if given, else " : "";
  switch (info.result) {
    case R::Widened: return given + "x's (bool and small integers widened to int64 / uint64)";
    case R::Floating: return given + "x's made floating (integers: float64)";
    case R::Same: return "x's dtype";
    case R::Index:
    case R::Count: return "int64";
    case R::Bool: return "bool";
  }
  return "";
}

namespace reduction {
void cast_out(DType from, const void* src, DType to, void* out, int64_t n) {
  const void* in[1] = {src};
  kernels::lookup_cast(from, to)(out, in, n);
}
}  // namespace reduction

}  // namespace b2lazy
