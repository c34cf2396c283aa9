// A reduction kernel (the pattern: Arrow's aggregate kernels): the state of the outputs
// one region reduces to, with consume (fold a slab of the input into it), merge (another
// part's state), finalize (the result values) and save / load (the state as bytes: a
// part folded in another process). One small class per family, in this folder; the
// registry (registry.cpp) maps each Reduction to its family and argument rules.
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "b2lazy/box.hpp"
#include "b2lazy/dtype.hpp"
#include "b2lazy/error.hpp"
#include "b2lazy/vocabulary.hpp"

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

// A = the accumulator's C++ type (the slab is converted to it before consume).
template <class A> class Kernel {
 public:
  virtual ~Kernel() = default;
  // `x`: the slab, dense; `slab`: its region of the input; `red`: the reduced axes.
  virtual void consume(const A* x, const Region& slab, const std::vector<bool>& red) = 0;
  // `other` comes from the same KernelArgs (the same family).
  virtual void merge(const Kernel& other) = 0;
  // The results, cast to `out_dtype`, into `out` (n values).
  virtual void finalize(void* out, DType out_dtype) const = 0;
  virtual void save(std::vector<uint8_t>& out) const = 0;
  virtual void load(const uint8_t* p, size_t n) = 0;
};

template <class A> std::unique_ptr<Kernel<A>> make_kernel(const KernelArgs& args);

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
