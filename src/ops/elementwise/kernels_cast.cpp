// Special ops: Copy, Where and the 11x11 Cast matrix.
#include "core/float_to_int.hpp"
#include "kernel_util.hpp"

namespace b2lazy::kernels::detail {
namespace {

// Branch-free select on the raw bits (U is the same-size unsigned type, so one kernel per
// item size serves ints, floats and bool, and NaN payloads pass through untouched).
template <class U>
void where_loop(U* __restrict o, const uint8_t* __restrict c, const U* __restrict x, const U* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const U m = static_cast<U>(-static_cast<int>(c[i] != 0));  // all ones if c[i]
    o[i] = static_cast<U>((x[i] & m) | (y[i] & static_cast<U>(~m)));
  }
}
template <class U> void where(void* out, const void* const* in, int64_t n) {
  where_loop<U>(static_cast<U*>(out), static_cast<const uint8_t*>(in[0]), static_cast<const U*>(in[1]),
                static_cast<const U*>(in[2]), n);
}

// To bool is x != 0 (NaN -> true). Float -> integer is float_to_int (out of range and NaN
// as x86 converts them, without UB); everything else is a static_cast, as in NumPy.
template <DType To> struct Cast {
  template <class From> static ctype<To> f(From x) {
    if constexpr (To == DType::Bool) return x != 0;
    else return numeric_cast<ctype<To>>(x);
  }
};

}  // namespace

void register_special(Table& t) {
  for_dtypes<B2LAZY_ALL_DTYPES>([&]<DType D>() {
    using T = ctype<D>;
    t.set(Op::Copy, D, copy<T>);
    t.set(Op::Where, D, where<bits_t<T>>);
  });
  for_dtypes<B2LAZY_ALL_DTYPES>([&]<DType From>() {
    for_dtypes<B2LAZY_ALL_DTYPES>([&]<DType To>() {
      BlockFn& slot = t.cast[size_t(From)][size_t(To)];
      if constexpr (From == To) slot = copy<ctype<To>>;
      else slot = unary<ctype<To>, ctype<From>, Cast<To>>;
    });
  });
}

}  // namespace b2lazy::kernels::detail
