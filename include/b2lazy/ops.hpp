// The elementwise operations the fused kernel (VM) knows, and their typed block kernels.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "b2lazy/dtype.hpp"

namespace b2lazy {

// X(Enum, snake_case_name, arity, family): the one registration of an elementwise op
// (its kernels live in src/ops/elementwise/kernels_*.cpp).
// families: Arith (any numeric; NumPy arithmetic), Float (computes in float_for(dtype)),
// Int (integers and bool only), Cmp (-> bool), Pred (-> bool, unary), Logic (bool in/out),
// Special (handled one by one in the graph builder).
// clang-format off
#define B2LAZY_ELEMENTWISE_OPS(X)                                                       \
  X(Add, add, 2, Arith) X(Subtract, subtract, 2, Arith)                                 \
  X(Multiply, multiply, 2, Arith) X(Divide, divide, 2, Float)                           \
  X(FloorDivide, floor_divide, 2, Arith) X(Remainder, remainder, 2, Arith)              \
  X(Pow, pow, 2, Arith) X(Maximum, maximum, 2, Arith) X(Minimum, minimum, 2, Arith)     \
  X(Atan2, atan2, 2, Float) X(Hypot, hypot, 2, Float) X(Copysign, copysign, 2, Float)   \
  X(Logaddexp, logaddexp, 2, Float) X(Nextafter, nextafter, 2, Float)                   \
  X(BitwiseAnd, bitwise_and, 2, Int) X(BitwiseOr, bitwise_or, 2, Int)                   \
  X(BitwiseXor, bitwise_xor, 2, Int) X(LeftShift, bitwise_left_shift, 2, Int)           \
  X(RightShift, bitwise_right_shift, 2, Int) X(Equal, equal, 2, Cmp)                    \
  X(NotEqual, not_equal, 2, Cmp) X(Less, less, 2, Cmp)                                  \
  X(LessEqual, less_equal, 2, Cmp) X(Greater, greater, 2, Cmp)                          \
  X(GreaterEqual, greater_equal, 2, Cmp) X(LogicalAnd, logical_and, 2, Logic)           \
  X(LogicalOr, logical_or, 2, Logic) X(LogicalXor, logical_xor, 2, Logic)               \
  X(LogicalNot, logical_not, 1, Logic) X(Negative, negative, 1, Arith)                  \
  X(Positive, positive, 1, Arith) X(Abs, abs, 1, Arith) X(Square, square, 1, Arith)     \
  X(Sign, sign, 1, Arith) X(Reciprocal, reciprocal, 1, Arith)                           \
  X(Floor, floor, 1, Arith) X(Ceil, ceil, 1, Arith) X(Trunc, trunc, 1, Arith)           \
  X(Round, round, 1, Arith) X(BitwiseInvert, bitwise_invert, 1, Int)                    \
  X(Sqrt, sqrt, 1, Float) X(Cbrt, cbrt, 1, Float) X(Exp, exp, 1, Float)                 \
  X(Exp2, exp2, 1, Float) X(Expm1, expm1, 1, Float) X(Log, log, 1, Float)               \
  X(Log2, log2, 1, Float) X(Log10, log10, 1, Float) X(Log1p, log1p, 1, Float)           \
  X(Sin, sin, 1, Float) X(Cos, cos, 1, Float) X(Tan, tan, 1, Float)                     \
  X(Asin, asin, 1, Float) X(Acos, acos, 1, Float) X(Atan, atan, 1, Float)               \
  X(Sinh, sinh, 1, Float) X(Cosh, cosh, 1, Float) X(Tanh, tanh, 1, Float)               \
  X(Asinh, asinh, 1, Float) X(Acosh, acosh, 1, Float) X(Atanh, atanh, 1, Float)         \
  X(Isnan, isnan, 1, Pred) X(Isinf, isinf, 1, Pred) X(Isfinite, isfinite, 1, Pred)      \
  X(Signbit, signbit, 1, Pred) X(Real, real, 1, Arith) X(Imag, imag, 1, Arith)         \
  X(Conj, conj, 1, Arith) X(Angle, angle, 1, Float) X(Deg2rad, deg2rad, 1, Float)  \
  X(Rad2deg, rad2deg, 1, Float) X(Where, where, 3, Special)         \
  X(Cast, astype, 1, Special) X(Copy, copy, 1, Special)
// clang-format on

enum class Op : uint8_t {
#define B2LAZY_OP_ENUM(name, snake, arity, family) name,
  B2LAZY_ELEMENTWISE_OPS(B2LAZY_OP_ENUM)
#undef B2LAZY_OP_ENUM
      Count_
};

enum class OpFamily : uint8_t { Arith, Float, Int, Cmp, Pred, Logic, Special };

int op_arity(Op op);
OpFamily op_family(Op op);
const char* op_name(Op op);  // snake_case, e.g. "floor_divide"
// The dtype an op computing in `t` writes: bool for the Cmp and Pred families; the part
// type (float32 / float64) for abs, real, imag and angle of complex; else `t`.
DType op_out_dtype(Op op, DType t);
// Lookup by name; also accepts NumPy/Array API aliases (absolute, arctan2, pow, power,
// bitwise_not, invert, bitwise_left_shift, ...). Throws ValueError for unknown names.
Op op_from_name(const std::string& name);
// Those aliases, (alias, canonical name): the expression parser and the Python package
// read this one list.
std::vector<std::pair<std::string, std::string>> op_aliases();

namespace kernels {

// A block kernel: out[i] = op(in[0][i], in[1][i], ...) for 0 <= i < n, all buffers dense.
// Inputs are in the op's compute dtype `t`, except: Where's first input is bool;
// Cast reads `from` and writes `t`. Outputs: Cmp/Pred families write bool (uint8 0/1),
// every other op writes `t`.
using BlockFn = void (*)(void* out, const void* const* in, int64_t n);

// Returns nullptr when the op is not defined for that dtype (e.g. Sin on int32 —
// the graph builder casts first; BitwiseAnd on float64 is a TypeError there).
BlockFn lookup(Op op, DType t);
BlockFn lookup_cast(DType from, DType to);

}  // namespace kernels
}  // namespace b2lazy
