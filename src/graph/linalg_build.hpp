// What the linalg builders (linalg_ext_builder.cpp, svd_compressed_builder.cpp) share.
#pragma once
#include "b2lazy/array.hpp"

namespace b2lazy {

// NumPy's linalg dtypes: integers and bool in float64, float16 in float32.
inline DType linalg_computing(DType t) {
  if (is_inexact(t)) return t == DType::F16 ? DType::F32 : t;
  return DType::F64;
}

// The conjugate transpose of the last two axes (the transpose for real dtypes).
inline Array hermitian(const Array& a) {
  return matrix_transpose(is_complex(a.dtype()) ? elementwise(Op::Conj, {a}) : a);
}

}  // namespace b2lazy
