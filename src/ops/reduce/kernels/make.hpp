// Each Reduction's kernel family (the registry's table of names and argument rules is
// in registry.cpp). Adding a reduction: its Reduction value, its row in the table, and
// its family here (or a new family's file in this folder).
#pragma once
#include "ops/reduce/kernels/arg.hpp"
#include "ops/reduce/kernels/fold.hpp"
#include "ops/reduce/kernels/logsumexp.hpp"
#include "ops/reduce/kernels/moments.hpp"

namespace b2lazy::reduction {

// complex: the folds with a complex meaning (the builder refuses the others first).
template <class A> std::unique_ptr<Kernel<A>> make_complex_kernel(const KernelArgs& a) {
  switch (a.r) {
    case Reduction::Sum: return std::make_unique<FoldKernel<A, SumOp>>(a);
    case Reduction::Prod: return std::make_unique<FoldKernel<A, ProdOp>>(a);
    case Reduction::Mean: return std::make_unique<FoldKernel<A, SumOp, true>>(a);
    case Reduction::NanSum: return std::make_unique<FoldKernel<A, NanSumOp>>(a);
    case Reduction::NanProd: return std::make_unique<FoldKernel<A, NanProdOp>>(a);
    case Reduction::NanMean: return std::make_unique<FoldKernel<A, NanSumOp, true, true>>(a);
    default: throw TypeError(std::string(reduction_name(a.r)) + " is not supported for complex values");
  }
}

template <class A> std::unique_ptr<Kernel<A>> make_kernel(const KernelArgs& a) {
  if constexpr (is_complex_v<A>) return make_complex_kernel<A>(a);
  else {
    switch (a.r) {
      case Reduction::Sum: return std::make_unique<FoldKernel<A, SumOp>>(a);
      case Reduction::Prod: return std::make_unique<FoldKernel<A, ProdOp>>(a);
      case Reduction::Min: return std::make_unique<FoldKernel<A, MinOp>>(a);
      case Reduction::Max: return std::make_unique<FoldKernel<A, MaxOp>>(a);
      case Reduction::Any: return std::make_unique<FoldKernel<A, AnyOp>>(a);
      case Reduction::All: return std::make_unique<FoldKernel<A, AllOp>>(a);
      case Reduction::Mean: return std::make_unique<FoldKernel<A, SumOp, true>>(a);
      case Reduction::NanSum: return std::make_unique<FoldKernel<A, NanSumOp>>(a);
      case Reduction::NanProd: return std::make_unique<FoldKernel<A, NanProdOp>>(a);
      case Reduction::NanMin: return std::make_unique<FoldKernel<A, NanMinOp>>(a);
      case Reduction::NanMax: return std::make_unique<FoldKernel<A, NanMaxOp>>(a);
      case Reduction::NanMean: return std::make_unique<FoldKernel<A, NanSumOp, true, true>>(a);
      case Reduction::CountNonzero: return std::make_unique<CountKernel<A>>(a);
      case Reduction::Var:
      case Reduction::Std: return std::make_unique<MomentsKernel<A, false>>(a);
      case Reduction::NanVar:
      case Reduction::NanStd: return std::make_unique<MomentsKernel<A, true>>(a);
      case Reduction::Argmin: return std::make_unique<ArgKernel<A, false, false>>(a);
      case Reduction::Argmax: return std::make_unique<ArgKernel<A, true, false>>(a);
      case Reduction::NanArgmin: return std::make_unique<ArgKernel<A, false, true>>(a);
      case Reduction::NanArgmax: return std::make_unique<ArgKernel<A, true, true>>(a);
      case Reduction::LogSumExp: return std::make_unique<LogSumExpKernel<A>>(a);
    }
    throw ValueError("no kernel for reduction " + std::to_string(static_cast<int>(a.r)));
  }
}

}  // namespace b2lazy::reduction
