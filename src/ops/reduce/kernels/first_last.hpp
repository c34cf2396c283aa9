// first and last (and nanfirst, nanlast: the first / last value that is not NaN) along
// the one reduced axis, for segment reductions: per output the value taken and its
// position along that axis, so partials folded on any worker merge by position.
#pragma once
#include <limits>

#include "ops/reduce/accumulate.hpp"
#include "ops/reduce/kernels/kernel.hpp"

namespace b2lazy::reduction {

template <class A, bool Last, bool SkipNaN> class FirstLastKernel : public Kernel<A> {
 public:
  explicit FirstLastKernel(const KernelArgs& a)
      : args_(a), val_(static_cast<size_t>(a.n), A(0)), pos_(val_.size(), kNone) {}

  void consume(const A* x, const Region& slab, const std::vector<bool>& red) override {
    Shape rst(red.size(), 0);
    int64_t j0 = 0;
    for (size_t d = 0; d < red.size(); ++d)
      if (red[d]) rst[d] = 1, j0 += slab.start[d];  // (one reduced axis: j is the position along it)
    accum::fold_indexed(x, slab.count, red, rst, j0,
                        [&](int64_t k, A v, int64_t j) { take(static_cast<size_t>(k), v, j); });
  }
  void merge(const Kernel<A>& other) override {
    const auto& o = static_cast<const FirstLastKernel&>(other);
    for (size_t k = 0; k < val_.size(); ++k)
      if (o.pos_[k] != kNone) take(k, o.val_[k], o.pos_[k]);
  }
  // An output that took no value (every value NaN, or none) is NaN; the builder makes such
  // outputs floating.
  void finalize(void* out, DType out_dtype) const override {
    if constexpr (std::numeric_limits<A>::has_quiet_NaN) {
      std::vector<A> v(val_);
      for (size_t k = 0; k < v.size(); ++k)
        if (pos_[k] == kNone) v[k] = std::numeric_limits<A>::quiet_NaN();
      cast_out(args_.acc, v.data(), out_dtype, out, args_.n);
    } else {
      cast_out(args_.acc, val_.data(), out_dtype, out, args_.n);
    }
  }
  void save(std::vector<uint8_t>& out) const override { StateWriter(out) << val_ << pos_; }
  void load(const uint8_t* p, size_t n) override {
    StateReader(p, n, state_bytes(val_) + state_bytes(pos_), args_.r) >> val_ >> pos_;
  }

 private:
  static constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
  void take(size_t k, A v, int64_t j) {
    if constexpr (SkipNaN)
      if (accum::is_nan(v)) return;
    if (pos_[k] == kNone || (Last ? j > pos_[k] : j < pos_[k])) val_[k] = v, pos_[k] = j;
  }
  KernelArgs args_;
  std::vector<A> val_;
  std::vector<int64_t> pos_;
};

}  // namespace b2lazy::reduction
