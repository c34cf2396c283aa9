// float16 values: NumPy's "half", a storage type. Arithmetic never happens in it: kernels
// widen to float32, compute, and round back once per operation (NumPy's float16 loops do
// the same), reductions and scans accumulate in wider types. The struct is deliberately
// not arithmetic (gcc 12's _Float16 is not std::is_floating_point, so generic code would
// silently take its integer branches): a site that meets float16 says what it does.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/float_to_int.hpp"

namespace b2lazy {

namespace detail {
// Software conversions for compilers without _Float16 on the target (clang 14 on x86-64,
// which the sanitizer build uses): correctly rounded, to nearest even, from the value.
inline uint16_t double_to_half_bits(double d) {
  const uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  const double a = std::fabs(d);
  if (a != a) return static_cast<uint16_t>(sign | 0x7E00);        // NaN (quiet)
  if (a >= 65520.0) return static_cast<uint16_t>(sign | 0x7C00);  // inf, or rounds past 65504
  if (a < 0x1p-14) return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(a * 0x1p24)));
  int k;
  std::frexp(a, &k);  // a = m 2^k, m in [0.5, 1): a in [2^(k-1), 2^k)
  int e = k - 1;
  double q = std::nearbyint(std::ldexp(a, 10 - e));  // [1024, 2048], exact before rounding
  if (q == 2048.0) {
    q = 1024.0;
    ++e;
  }
  if (e > 15) return static_cast<uint16_t>(sign | 0x7C00);
  return static_cast<uint16_t>(sign | ((e + 15) << 10) | (static_cast<int>(q) - 1024));
}
inline float half_bits_to_float(uint16_t h) {
  const int exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  float v;
  if (exp == 0) v = std::ldexp(static_cast<float>(man), -24);
  else if (exp == 31) v = man ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else v = std::ldexp(static_cast<float>(1024 + man), exp - 25);
  return (h & 0x8000) ? -v : v;
}
}  // namespace detail

struct half {
  uint16_t bits = 0;
  half() = default;
  // Rounded to nearest even from the value itself (a double is not rounded to float first).
  template <class T>
  requires std::is_arithmetic_v<T>
  explicit half(T v) {
#if defined(__FLT16_MANT_DIG__)
    const _Float16 h = std::is_same_v<T, double> ? static_cast<_Float16>(static_cast<double>(v))
                                                 : static_cast<_Float16>(static_cast<float>(v));
    std::memcpy(&bits, &h, sizeof bits);
#else
    bits = detail::double_to_half_bits(std::is_same_v<T, double> ? static_cast<double>(v)
                                                                 : static_cast<double>(static_cast<float>(v)));
#endif
  }
  explicit operator float() const {
#if defined(__FLT16_MANT_DIG__)
    _Float16 h;
    std::memcpy(&h, &bits, sizeof h);
    return static_cast<float>(h);
#else
    return detail::half_bits_to_float(bits);
#endif
  }
  explicit operator double() const { return static_cast<double>(static_cast<float>(*this)); }
  template <class T>
  requires std::is_integral_v<T>
  explicit operator T() const { return numeric_cast<T>(static_cast<float>(*this)); }
};
static_assert(sizeof(half) == 2);

}  // namespace b2lazy
