// Float -> integer conversion without undefined behaviour. C++ leaves NaN and out-of-range
// values undefined (UBSan reports them; NumPy warns "invalid value encountered in cast"
// and returns what its platform's code gives). Ours is x86's truncating conversion: the
// value goes through int32 (int64 for 32-bit unsigned and 64-bit targets), NaN and values
// outside that type's range become its minimum ("integer indefinite"), narrower targets
// wrap. That equals NumPy 2.4 on x86-64 for every in-range value and for NaN and
// out-of-range values into signed types, uint8, uint16 and uint64; into uint32 NumPy's
// out-of-range results follow its SIMD code and differ.
#pragma once
#include <cstdint>
#include <limits>
#include <type_traits>

namespace b2lazy {

namespace detail {
template <class W, class F> W truncate_or_min(F x) {
  // 2**31 and 2**63 are exact in float and double; NaN fails both comparisons.
  constexpr double hi = -static_cast<double>(std::numeric_limits<W>::min());
  return (x >= -hi && x < hi) ? static_cast<W>(x) : std::numeric_limits<W>::min();
}
}  // namespace detail

template <class I, class F> I float_to_int(F x) {
  static_assert(std::is_integral_v<I> && std::is_floating_point_v<F>);
  if constexpr (sizeof(I) < 4 || (sizeof(I) == 4 && std::is_signed_v<I>)) {
    return static_cast<I>(detail::truncate_or_min<int32_t>(x));
  } else if constexpr (std::is_signed_v<I> || sizeof(I) == 4) {
    return static_cast<I>(detail::truncate_or_min<int64_t>(x));
  } else {  // uint64: values from 2**63 up are shifted down first, as compilers do
    constexpr F two63 = static_cast<F>(9223372036854775808.0);
    if (!(x >= two63)) return static_cast<I>(detail::truncate_or_min<int64_t>(x));
    return static_cast<I>(detail::truncate_or_min<int64_t>(x - two63)) ^ (uint64_t(1) << 63);
  }
}

// static_cast<T>(x) where it is defined, float_to_int where x is a float and T an integer.
template <class T, class F> T numeric_cast(F x) {
  if constexpr (std::is_floating_point_v<F> && std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return float_to_int<T>(x);
  else return static_cast<T>(x);
}

}  // namespace b2lazy
