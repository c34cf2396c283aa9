// Reductions that are one associative fold per output: sum, prod, min, max, any, all,
// count_nonzero, and their nan* forms; mean and nanmean (a sum, and for nanmean a count
// of the values that are not NaN, divided at the end).
#pragma once
#include <cmath>
#include <limits>

#include "core/dispatch.hpp"
#include "ops/reduce/accumulate.hpp"
#include "ops/reduce/kernels/kernel.hpp"

namespace b2lazy::reduction {

template <class A> constexpr A lowest() {
  return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::lowest();
}
template <class A> constexpr A highest() {
  return std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity() : std::numeric_limits<A>::max();
}

// Each op: ident() (the fold's identity and the accumulators' start) and f(a, v); kComplex
// where it has a complex meaning.
// min and max propagate NaN (NumPy); nanmin and nanmax start from NaN and take any
// value over it, so an all-NaN slice stays NaN, as NumPy's does.
template <class A> struct SumOp {
  static constexpr bool kComplex = true;
  static A ident() { return A(0); }
  static A f(A a, A v) { return accum::add(a, v); }
};
template <class A> struct ProdOp {
  static constexpr bool kComplex = true;
  static A ident() { return A(1); }
  static A f(A a, A v) { return accum::mul(a, v); }
};
template <class A> struct MinOp {
  static A ident() { return highest<A>(); }
  static A f(A a, A v) { return (v < a || accum::is_nan(v)) ? v : a; }
};
template <class A> struct MaxOp {
  static A ident() { return lowest<A>(); }
  static A f(A a, A v) { return (v > a || accum::is_nan(v)) ? v : a; }
};
template <class A> struct AnyOp {
  static A ident() { return A(0); }
  static A f(A a, A v) { return A((a != A(0)) | (v != A(0))); }
};
template <class A> struct AllOp {
  static A ident() { return A(1); }
  static A f(A a, A v) { return A((a != A(0)) & (v != A(0))); }
};
template <class A> struct NanSumOp {
  static constexpr bool kComplex = true;
  static A ident() { return A(0); }
  static A f(A a, A v) { return accum::is_nan(v) ? a : accum::add(a, v); }
};
template <class A> struct NanProdOp {
  static constexpr bool kComplex = true;
  static A ident() { return A(1); }
  static A f(A a, A v) { return accum::is_nan(v) ? a : accum::mul(a, v); }
};
template <class A> struct NanMinOp {
  static A ident() {
    return std::numeric_limits<A>::has_quiet_NaN ? std::numeric_limits<A>::quiet_NaN() : highest<A>();
  }
  static A f(A a, A v) { return (v < a || accum::is_nan(a)) ? v : a; }
};
template <class A> struct NanMaxOp {
  static A ident() { return std::numeric_limits<A>::has_quiet_NaN ? std::numeric_limits<A>::quiet_NaN() : lowest<A>(); }
  static A f(A a, A v) { return (v > a || accum::is_nan(a)) ? v : a; }
};

// acc[k] = Op::f over the slab's values of output k. Mean divides by the elements folded;
// NanMean (Op = NanSumOp, counted) by those that were not NaN.
template <class A, template <class> class Op, bool Mean = false, bool Counted = false>
class FoldKernel : public Kernel<A> {
 public:
  static constexpr bool kComplex = requires { Op<double>::kComplex; };
  explicit FoldKernel(const KernelArgs& a) : args_(a), acc_(static_cast<size_t>(a.n), Op<A>::ident()) {
    if (Counted) count_.assign(static_cast<size_t>(a.n), 0);
  }
  void consume(const A* x, const Region& slab, const std::vector<bool>& red) override {
    accum::fold(
        x, slab.count, red, acc_.data(), [](A a, A v) { return Op<A>::f(a, v); }, Op<A>::ident());
    if constexpr (Counted)
      accum::fold(
          x, slab.count, red, count_.data(), [](int64_t c, A v) { return c + !accum::is_nan(v); }, int64_t(0),
          [](int64_t c, int64_t p) { return c + p; });
  }
  void merge(const Kernel<A>& other) override {
    const auto& o = static_cast<const FoldKernel&>(other);
    for (size_t k = 0; k < acc_.size(); ++k) acc_[k] = Op<A>::f(acc_[k], o.acc_[k]);
    for (size_t k = 0; k < count_.size(); ++k) count_[k] += o.count_[k];
  }
  void finalize(void* out, DType out_dtype) const override {
    if constexpr (Mean && is_complex_v<A>) {  // complex: divided in the accumulator's type
      std::vector<A> m(acc_.size());
      for (size_t k = 0; k < m.size(); ++k) {
        const double n = Counted ? static_cast<double>(count_[k]) : static_cast<double>(args_.total);
        m[k] = n == 0 ? A(std::nan(""), std::nan("")) : acc_[k] / typename A::value_type(n);
      }
      cast_out(args_.acc, m.data(), out_dtype, out, args_.n);
    } else if constexpr (Mean) {
      std::vector<double> m(acc_.size());
      for (size_t k = 0; k < m.size(); ++k) {
        const double n = Counted ? static_cast<double>(count_[k]) : static_cast<double>(args_.total);
        m[k] = n == 0 ? std::nan("") : static_cast<double>(acc_[k]) / n;
      }
      cast_out(DType::F64, m.data(), out_dtype, out, args_.n);
    } else {
      cast_out(args_.acc, acc_.data(), out_dtype, out, args_.n);
    }
  }
  void save(std::vector<uint8_t>& out) const override { StateWriter(out) << acc_ << count_; }
  void load(const uint8_t* p, size_t n) override {
    StateReader(p, n, state_bytes(acc_) + state_bytes(count_), args_.r) >> acc_ >> count_;
  }

 private:
  KernelArgs args_;
  std::vector<A> acc_;
  std::vector<int64_t> count_;
};

// count_nonzero: the slab is bool (0 / 1), counted in int64.
template <class A> class CountKernel : public Kernel<A> {
 public:
  explicit CountKernel(const KernelArgs& a) : args_(a), count_(static_cast<size_t>(a.n), 0) {}
  void consume(const A* x, const Region& slab, const std::vector<bool>& red) override {
    accum::fold(
        x, slab.count, red, count_.data(), [](int64_t c, A v) { return c + static_cast<int64_t>(v != A(0)); },
        int64_t(0), [](int64_t c, int64_t p) { return c + p; });
  }
  void merge(const Kernel<A>& other) override {
    const auto& o = static_cast<const CountKernel&>(other);
    for (size_t k = 0; k < count_.size(); ++k) count_[k] += o.count_[k];
  }
  void finalize(void* out, DType out_dtype) const override {
    cast_out(DType::I64, count_.data(), out_dtype, out, args_.n);
  }
  void save(std::vector<uint8_t>& out) const override { StateWriter(out) << count_; }
  void load(const uint8_t* p, size_t n) override { StateReader(p, n, state_bytes(count_), args_.r) >> count_; }

 private:
  KernelArgs args_;
  std::vector<int64_t> count_;
};

}  // namespace b2lazy::reduction
