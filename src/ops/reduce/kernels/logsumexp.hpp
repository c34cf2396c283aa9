// logsumexp (SciPy's scipy.special.logsumexp): log(sum(exp(x))) computed as
// m + log(sum(exp(x - m))) with m the running maximum, so nothing overflows. Per output:
// m and the sum scaled to it; a slab is folded in two passes (its maxima, then the sums),
// and states merge by rescaling the smaller maximum's sum.
#pragma once
#include <cmath>
#include <limits>

#include "ops/reduce/accumulate.hpp"
#include "ops/reduce/kernels/kernel.hpp"

namespace b2lazy::reduction {

template <class A> class LogSumExpKernel : public Kernel<A> {
 public:
  explicit LogSumExpKernel(const KernelArgs& a)
      : args_(a), max_(static_cast<size_t>(a.n), -kInf), sum_(max_.size(), 0.0) {}

  void consume(const A* x, const Region& slab, const std::vector<bool>& red) override {
    const size_t n = max_.size();
    std::vector<double> m(n, -kInf), s(n, 0.0);
    const Shape zero(slab.ndim(), 0);
    accum::fold_indexed(x, slab.count, red, zero, 0, [&](int64_t k, A v, int64_t) {
      const double d = static_cast<double>(v);
      if (d > m[k] || std::isnan(d)) m[k] = std::isnan(m[k]) ? m[k] : d;
    });
    accum::fold_indexed(x, slab.count, red, zero, 0, [&](int64_t k, A v, int64_t) {
      if (std::isfinite(m[k])) s[k] += std::exp(static_cast<double>(v) - m[k]);
    });
    for (size_t k = 0; k < n; ++k) add(k, m[k], s[k]);
  }
  void merge(const Kernel<A>& other) override {
    const auto& o = static_cast<const LogSumExpKernel&>(other);
    for (size_t k = 0; k < max_.size(); ++k) add(k, o.max_[k], o.sum_[k]);
  }
  void finalize(void* out, DType out_dtype) const override {
    std::vector<double> v(max_.size());
    for (size_t k = 0; k < v.size(); ++k)  // NaN, +inf and -inf (no elements, or all -inf) as they are
      v[k] = std::isfinite(max_[k]) ? max_[k] + std::log(sum_[k]) : max_[k];
    cast_out(DType::F64, v.data(), out_dtype, out, args_.n);
  }
  void save(std::vector<uint8_t>& out) const override { StateWriter(out) << max_ << sum_; }
  void load(const uint8_t* p, size_t n) override { StateReader(p, n, 2 * state_bytes(max_), args_.r) >> max_ >> sum_; }

 private:
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  void add(size_t k, double mb, double sb) {
    double& ma = max_[k];
    if (std::isnan(ma) || mb == -kInf) return;
    if (std::isnan(mb) || ma == -kInf || !std::isfinite(mb)) {  // NaN, or the first values, or +inf
      if (std::isnan(mb) || mb == kInf || ma == -kInf) ma = mb, sum_[k] = sb;
      return;
    }
    if (ma == kInf) return;
    if (mb > ma) {
      sum_[k] = sum_[k] * std::exp(ma - mb) + sb;
      ma = mb;
    } else {
      sum_[k] += sb * std::exp(mb - ma);
    }
  }
  KernelArgs args_;
  std::vector<double> max_, sum_;
};

}  // namespace b2lazy::reduction
