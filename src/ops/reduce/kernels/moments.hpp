// var and std (and nanvar, nanstd): per output the count, mean and sum of squared
// deviations of the values folded so far. A slab is folded in two passes (its means, then
// the squared deviations from them) and merged with Chan's formula, which stays accurate
// where the textbook sum-of-squares formula cancels.
#pragma once
#include <cmath>

#include "ops/reduce/accumulate.hpp"
#include "ops/reduce/kernels/kernel.hpp"

namespace b2lazy::reduction {

template <class A, bool SkipNaN, bool Sqrt> class MomentsKernel : public Kernel<A> {
 public:
  explicit MomentsKernel(const KernelArgs& a)
      : args_(a), n_(static_cast<size_t>(a.n), 0.0), mean_(n_.size(), 0.0), m2_(n_.size(), 0.0) {}

  void consume(const A* x, const Region& slab, const std::vector<bool>& red) override {
    const size_t n = n_.size();
    std::vector<double> ns(n, 0.0), sum(n, 0.0), q(n, 0.0);
    const Shape zero(slab.ndim(), 0);
    accum::fold_indexed(x, slab.count, red, zero, 0, [&](int64_t k, A v, int64_t) {
      if (SkipNaN && accum::is_nan(v)) return;
      ns[k] += 1;
      sum[k] += static_cast<double>(v);
    });
    for (size_t k = 0; k < n; ++k) sum[k] = ns[k] > 0 ? sum[k] / ns[k] : 0.0;  // the slab's means
    accum::fold_indexed(x, slab.count, red, zero, 0, [&](int64_t k, A v, int64_t) {
      if (SkipNaN && accum::is_nan(v)) return;
      const double d = static_cast<double>(v) - sum[k];
      q[k] += d * d;
    });
    for (size_t k = 0; k < n; ++k) add(k, ns[k], sum[k], q[k]);
  }
  void merge(const Kernel<A>& other) override {
    const auto& o = static_cast<const MomentsKernel&>(other);
    for (size_t k = 0; k < n_.size(); ++k) add(k, o.n_[k], o.mean_[k], o.m2_[k]);
  }
  void finalize(void* out, DType out_dtype) const override {
    std::vector<double> v(n_.size());
    for (size_t k = 0; k < v.size(); ++k) {
      // NaN for no elements (NumPy: 0/0) and, as the Array API says, where N - correction
      // <= 0 (NumPy's var divides by max(N - correction, 0): inf, or nan for constant data;
      // its nanvar gives NaN there too).
      const double divisor = n_[k] - args_.correction;
      const double var = n_[k] == 0 || !(divisor > 0) ? std::nan("") : m2_[k] / divisor;
      v[k] = Sqrt ? std::sqrt(var) : var;
    }
    cast_out(DType::F64, v.data(), out_dtype, out, args_.n);
  }
  void save(std::vector<uint8_t>& out) const override { StateWriter(out) << n_ << mean_ << m2_; }
  void load(const uint8_t* p, size_t n) override {
    StateReader(p, n, 3 * state_bytes(n_), args_.r) >> n_ >> mean_ >> m2_;
  }

 private:
  void add(size_t k, double nb, double mean_b, double m2_b) {
    if (nb == 0) return;
    const double na = n_[k], tot = na + nb, delta = mean_b - mean_[k];
    mean_[k] += delta * nb / tot;
    m2_[k] += m2_b + delta * delta * na * nb / tot;
    n_[k] = tot;
  }
  KernelArgs args_;
  std::vector<double> n_, mean_, m2_;
};

}  // namespace b2lazy::reduction
