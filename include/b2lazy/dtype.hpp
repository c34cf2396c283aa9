// Element types and NumPy 2 / Array API type promotion.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace b2lazy {

// Order matters: kernels and promotion tables index by this value.
// (F16 last: added after the others, so older values keep their numbers.)
enum class DType : uint8_t { Bool, I8, I16, I32, I64, U8, U16, U32, U64, F32, F64, C64, C128, F16 };
constexpr int kNumDTypes = 14;
// The widest item (complex128): block buffers and constants are sized by it.
constexpr size_t kMaxItemsize = 16;

enum class DKind : uint8_t { Bool, Signed, Unsigned, Float, Complex };

size_t itemsize(DType t);
DKind kind(DType t);
inline bool is_float(DType t) { return kind(t) == DKind::Float; }
inline bool is_complex(DType t) { return kind(t) == DKind::Complex; }
// Float or complex: the inexact kinds, where math functions compute.
inline bool is_inexact(DType t) { return is_float(t) || is_complex(t); }
inline bool is_integral(DType t) { return kind(t) == DKind::Signed || kind(t) == DKind::Unsigned; }
// complex64 -> float32, complex128 -> float64 (the type of a part); other types unchanged.
DType real_of(DType t);
// The complex type whose parts hold `t`'s values: float32 (and small ints) -> complex64,
// others -> complex128; complex types unchanged.
DType complex_of(DType t);
// NumPy's dtype name: "float64", "int8", "bool", ...
const char* dtype_name(DType t);
// Accepts NumPy names ("float64", "f8", "<f8", "int", "float", "bool", "?").
DType dtype_from_name(const std::string& name);

// Promotion of two array dtypes (NumPy result_type for arrays).
DType promote(DType a, DType b);
// The float type a math function (sin, sqrt, /) computes in for input `t`.
// As NumPy: float16 for bool/int8/uint8, float32 for int16/uint16, float64 for wider
// integers; float and complex types compute in themselves.
DType float_for(DType t);

// NumPy's default result of sum, prod, cumsum and cumprod: bool and signed integers
// widen to int64, unsigned to uint64, floats stay.
DType sum_dtype(DType t);

// A Python scalar taking part in an expression is "weak" (NEP 50): it adopts the array's
// dtype within its kind.
enum class ScalarKind : uint8_t { Bool, Int, Float, Complex };
DType promote_with_scalar(DType array, ScalarKind scalar);

}  // namespace b2lazy
