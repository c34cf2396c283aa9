// argmin and argmax (and nanargmin, nanargmax): per output the best value so far and its
// flat index in the reduced sub-space; ties keep the first index, as NumPy's do.
#pragma once
#include <limits>

#include "ops/reduce/accumulate.hpp"
#include "ops/reduce/kernels/kernel.hpp"

namespace b2lazy::reduction {

template <class A, bool Max, bool SkipNaN> class ArgKernel : public Kernel<A> {
 public:
  explicit ArgKernel(const KernelArgs& a) : args_(a), val_(static_cast<size_t>(a.n), A(0)), idx_(val_.size(), kNone) {}

  void consume(const A* x, const Region& slab, const std::vector<bool>& red) override {
    Shape rst(red.size(), 0);
    int64_t j0 = 0;
    for (size_t d = 0; d < red.size(); ++d)
      if (red[d]) {
        rst[d] = args_.reduced_strides[d];
        j0 += slab.start[d] * args_.reduced_strides[d];
      }
    accum::fold_indexed(x, slab.count, red, rst, j0,
                        [&](int64_t k, A v, int64_t j) { take(static_cast<size_t>(k), v, j); });
  }
  void merge(const Kernel<A>& other) override {
    const auto& o = static_cast<const ArgKernel&>(other);
    for (size_t k = 0; k < val_.size(); ++k)
      if (o.idx_[k] != kNone) take(k, o.val_[k], o.idx_[k]);
  }
  void finalize(void* out, DType out_dtype) const override {
    for (int64_t i : idx_)
      if (i == kNone && args_.total > 0)  // only nanarg* leave one: every value was NaN
        throw ValueError(std::string(reduction_name(args_.r)) + ": All-NaN slice encountered");
    cast_out(DType::I64, idx_.data(), out_dtype, out, args_.n);
  }
  void save(std::vector<uint8_t>& out) const override { StateWriter(out) << val_ << idx_; }
  void load(const uint8_t* p, size_t n) override {
    StateReader(p, n, state_bytes(val_) + state_bytes(idx_), args_.r) >> val_ >> idx_;
  }

 private:
  static constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  // Is (v, j) better than what output k holds? NaN wins (the first one) unless skipped.
  bool better(size_t k, A v, int64_t j) const {
    const int64_t cj = idx_[k];
    if (cj == kNone) return !(SkipNaN && accum::is_nan(v));
    const A cur = val_[k];
    const bool vn = accum::is_nan(v), cn = accum::is_nan(cur);
    if (SkipNaN && vn) return false;
    if (vn || cn) return vn && (!cn || j < cj);
    if (v == cur) return j < cj;
    return Max ? v > cur : v < cur;
  }
  void take(size_t k, A v, int64_t j) {
    if (better(k, v, j)) val_[k] = v, idx_[k] = j;
  }
  KernelArgs args_;
  std::vector<A> val_;
  std::vector<int64_t> idx_;
};

}  // namespace b2lazy::reduction
