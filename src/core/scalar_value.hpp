// A Python scalar (b2lazy::Scalar) as a value of a C++ element type: the one conversion
// the graph builders use for constants and fills.
#pragma once
#include "b2lazy/vocabulary.hpp"
#include "core/dispatch.hpp"
#include "core/float_to_int.hpp"

namespace b2lazy {

// Floats to integers as NumPy casts them (float_to_int); bool is "nonzero" (NaN is true);
// a complex scalar into a real type keeps its real part (NumPy's cast, which warns).
template <class T> T scalar_value(const Scalar& s) {
  const bool inexact = s.kind == ScalarKind::Float || s.kind == ScalarKind::Complex;
  if constexpr (is_complex_v<T>) {
    using R = typename T::value_type;
    return inexact ? T(static_cast<R>(s.f), static_cast<R>(s.im)) : T(static_cast<R>(s.i), R(0));
  } else if constexpr (std::is_same_v<T, bool>) {
    return inexact ? (s.f != 0 || s.im != 0) : s.i != 0;
  } else {
    return inexact ? numeric_cast<T>(s.f) : static_cast<T>(s.i);
  }
}

}  // namespace b2lazy
