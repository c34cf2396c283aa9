// Saturating arithmetic on non-negative int64 estimates (the plan's costs and projections):
// a figure past INT64_MAX is "too much", never a wrapped size.
#pragma once
#include <cstdint>
#include <limits>

namespace b2lazy {

inline int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}
inline int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}
// A non-negative double as int64, saturated.
inline int64_t sat_cast(double v) {
  return v >= 9.2e18 ? std::numeric_limits<int64_t>::max() : v <= 0 ? 0 : static_cast<int64_t>(v);
}

}  // namespace b2lazy
