// ptp (NumPy's peak to peak): max - min per output in one pass over the input, where
// max(x) - min(x) would read it twice. The difference is taken in x's type, so integers
// wrap as NumPy's do (int8 [-128, 127] gives -1); NaN propagates.
#pragma once
#include <type_traits>

#include "ops/reduce/kernels/fold.hpp"

namespace b2lazy::reduction {

template <class A> class RangeKernel : public Kernel<A> {
 public:
  explicit RangeKernel(const KernelArgs& a)
      : args_(a), min_(static_cast<size_t>(a.n), MinOp<A>::ident()), max_(min_.size(), MaxOp<A>::ident()) {}
  void consume(const A* x, const Region& slab, const std::vector<bool>& red) override {
    accum::fold(
        x, slab.count, red, min_.data(), [](A a, A v) { return MinOp<A>::f(a, v); }, MinOp<A>::ident());
    accum::fold(
        x, slab.count, red, max_.data(), [](A a, A v) { return MaxOp<A>::f(a, v); }, MaxOp<A>::ident());
  }
  void merge(const Kernel<A>& other) override {
    const auto& o = static_cast<const RangeKernel&>(other);
    for (size_t k = 0; k < min_.size(); ++k) {
      min_[k] = MinOp<A>::f(min_[k], o.min_[k]);
      max_[k] = MaxOp<A>::f(max_[k], o.max_[k]);
    }
  }
  void finalize(void* out, DType out_dtype) const override {
    std::vector<A> d(min_.size());
    for (size_t k = 0; k < d.size(); ++k) {
      if constexpr (std::is_integral_v<A>) {  // wraps without signed overflow
        using U = std::make_unsigned_t<A>;
        d[k] = static_cast<A>(static_cast<U>(static_cast<U>(max_[k]) - static_cast<U>(min_[k])));
      } else {
        d[k] = max_[k] - min_[k];
      }
    }
    cast_out(args_.acc, d.data(), out_dtype, out, args_.n);
  }
  void save(std::vector<uint8_t>& out) const override { StateWriter(out) << min_ << max_; }
  void load(const uint8_t* p, size_t n) override {
    StateReader(p, n, state_bytes(min_) + state_bytes(max_), args_.r) >> min_ >> max_;
  }

 private:
  KernelArgs args_;
  std::vector<A> min_, max_;
};

}  // namespace b2lazy::reduction
