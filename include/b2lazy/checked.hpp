// Overflow-checked int64 arithmetic for shapes, element counts, offsets and byte sizes.
// A result that does not fit int64 throws ValueError naming what was computed; it never
// wraps (a wrapped size passes every later check and crashes or gives wrong values).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "b2lazy/box.hpp"
#include "b2lazy/dtype.hpp"

namespace b2lazy {

// ValueError "<what> does not fit in int64" (cold: kept out of the inline callers).
[[noreturn]] void throw_int64_overflow(std::string_view what);

inline int64_t checked_mul(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw_int64_overflow(what);
  return r;
}

inline int64_t checked_add(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw_int64_overflow(what);
  return r;
}

inline int64_t checked_sub(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) throw_int64_overflow(what);
  return r;
}

// ceil(a / b) for a >= 0, b > 0 (a + b - 1 could overflow).
inline int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

// The number of elements of `shape`; ValueError "<what> (a, b) has more elements than fit
// in int64" when it does not fit (`what` names the shape: "shape", "chunks", ...).
int64_t checked_prod(const Shape& shape, std::string_view what = "shape");

// The bytes of `shape` elements of `itemsize`; ValueError naming the shape and the item
// size when the element count or the byte count does not fit int64.
int64_t checked_nbytes(const Shape& shape, size_t itemsize, std::string_view what = "shape");

// The bytes of `n` (>= 0) elements of `itemsize`, as size_t for an allocation; ValueError
// naming `what` beyond int64.
inline size_t checked_bytes(int64_t n, size_t itemsize, std::string_view what) {
  return static_cast<size_t>(checked_mul(n, static_cast<int64_t>(itemsize), what));
}

// The rule for every array (Node's constructor): its element count and its byte size fit
// int64; ValueError naming the shape and dtype otherwise (NumPy: "array is too big").
void check_array_size(const Shape& shape, DType dtype);

}  // namespace b2lazy
