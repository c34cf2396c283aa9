// A reduction kernel (the pattern: Arrow's aggregate kernels): the state of the outputs
// one region reduces to, with consume (fold a slab of the input into it), merge (another
// part's state), finalize (the result values) and save / load (the state as bytes: a
// part folded in another process). One small class per family, in this folder; each
// reduction's row in the registry (registry.cpp) names its family.
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "b2lazy/box.hpp"
#include "b2lazy/dtype.hpp"
#include "b2lazy/error.hpp"
#include "b2lazy/vocabulary.hpp"
#include "core/dispatch.hpp"

namespace b2lazy::reduction {

// What a kernel is made for: `n` outputs, each folding `total` input elements.
struct KernelArgs {
  Reduction r;
  DType acc;  // the accumulator's dtype (A's; uint8_t is bool or uint8)
  int64_t n = 0;
  int64_t total = 0;
  Shape reduced_strides;  // flat index in the reduced sub-space of the input (arg*)
  double correction = 0;  // var, std
};

class KernelBase {
 public:
  virtual ~KernelBase() = default;
};

// A = the accumulator's C++ type (the slab is converted to it before consume).
template <class A> class Kernel : public KernelBase {
 public:
  // Whether the family folds complex accumulators (sum, prod, mean and their nan* forms).
  static constexpr bool kComplex = false;
  // `x`: the slab, dense; `slab`: its region of the input; `red`: the reduced axes.
  virtual void consume(const A* x, const Region& slab, const std::vector<bool>& red) = 0;
  // `other` comes from the same KernelArgs (the same family).
  virtual void merge(const Kernel& other) = 0;
  // The results, cast to `out_dtype`, into `out` (n values).
  virtual void finalize(void* out, DType out_dtype) const = 0;
  virtual void save(std::vector<uint8_t>& out) const = 0;
  virtual void load(const uint8_t* p, size_t n) = 0;
};

// A reduction's kernels: one for each accumulator type, made by its registry row's family.
class Family {
 public:
  virtual ~Family() = default;
  // A Kernel<A>, A the C++ type dispatch_computing gives args.acc.
  virtual std::unique_ptr<KernelBase> make(const KernelArgs& args) const = 0;
};

// The family of kernel template K: K<A> for every accumulator type, complex ones where
// K<double>::kComplex says it folds them (the builders refuse complex input first for
// the others).
template <template <class> class K> class FamilyOf final : public Family {
 public:
  std::unique_ptr<KernelBase> make(const KernelArgs& args) const override {
    return dispatch_computing(args.acc, [&]<class A>(A*) -> std::unique_ptr<KernelBase> {
      if constexpr (is_complex_v<A> && !K<double>::kComplex)
        throw TypeError(std::string(reduction_name(args.r)) + " is not supported for complex values");
      else return std::make_unique<K<A>>(args);
    });
  }
};
template <template <class> class K> const Family* family_of() {
  static const FamilyOf<K> family;
  return &family;
}

// The kernel of args.r for accumulator type A (the caller's dispatch_computing of args.acc).
template <class A> std::unique_ptr<Kernel<A>> make_kernel(const KernelArgs& args) {
  std::unique_ptr<KernelBase> k = reduction_info(args.r).family->make(args);
  auto* typed = dynamic_cast<Kernel<A>*>(k.get());
  if (!typed) throw std::logic_error(std::string(reduction_name(args.r)) + ": kernel of another accumulator type");
  k.release();
  return std::unique_ptr<Kernel<A>>(typed);
}

// Saving and loading a state made of vectors, in order.
class StateWriter {
 public:
  explicit StateWriter(std::vector<uint8_t>& out) : out_(out) {}
  template <class V> StateWriter& operator<<(const V& v) {
    const auto* p = reinterpret_cast<const uint8_t*>(v.data());
    out_.insert(out_.end(), p, p + v.size() * sizeof(v[0]));
    return *this;
  }

 private:
  std::vector<uint8_t>& out_;
};

class StateReader {
 public:
  // `want`: the bytes the vectors take (their sizes are known from KernelArgs).
  StateReader(const uint8_t* p, size_t n, size_t want, Reduction r) : p_(p) {
    if (n != want)
      throw ValueError("a partial " + std::string(reduction_name(r)) + " of " + std::to_string(n) +
                       " bytes where this region's is " + std::to_string(want));
  }
  template <class V> StateReader& operator>>(V& v) {
    std::memcpy(v.data(), p_, v.size() * sizeof(v[0]));
    p_ += v.size() * sizeof(v[0]);
    return *this;
  }

 private:
  const uint8_t* p_;
};

template <class V> size_t state_bytes(const V& v) { return v.size() * sizeof(v[0]); }

// Casts `n` values of dtype `from` at `src` into `out` of dtype `to`.
void cast_out(DType from, const void* src, DType to, void* out, int64_t n);

}  // namespace b2lazy::reduction
