// float16 values: NumPy's "half", a storage type. Arithmetic never happens in it: kernels
// widen to float32, compute, and round back once per operation (NumPy's float16 loops do
// the same), reductions and scans accumulate in wider types. The struct is deliberately
// not arithmetic (gcc 12's _Float16 is not std::is_floating_point, so generic code would
// silently take its integer branches): a site that meets float16 says what it does.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/float_to_int.hpp"

namespace b2lazy {

struct half {
  uint16_t bits = 0;
  half() = default;
  // Rounded to nearest even from the value itself (a double is not rounded to float first).
  template <class T>
    requires std::is_arithmetic_v<T>
  explicit half(T v) {
    const _Float16 h = std::is_same_v<T, double> ? static_cast<_Float16>(static_cast<double>(v))
                                                 : static_cast<_Float16>(static_cast<float>(v));
    std::memcpy(&bits, &h, sizeof bits);
  }
  explicit operator float() const {
    _Float16 h;
    std::memcpy(&h, &bits, sizeof h);
    return static_cast<float>(h);
  }
  explicit operator double() const { return static_cast<double>(static_cast<float>(*this)); }
  template <class T>
    requires std::is_integral_v<T>
  explicit operator T() const {
    return numeric_cast<T>(static_cast<float>(*this));
  }
};
static_assert(sizeof(half) == 2);

}  // namespace b2lazy
