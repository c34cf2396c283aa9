// The elementwise operations the fused kernel (VM) knows, and their typed block kernels.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "b2lazy/dtype.hpp"

namespace b2lazy {

// X(name, arity, family)
// families: Arith (any numeric; NumPy arithmetic), Float (computes in float_for(dtype)),
// Int (integers and bool only), Cmp (-> bool), Pred (-> bool, unary), Logic (bool in/out),
// Special (handled one by one in the graph builder).
#define B2LAZY_ELEMENTWISE_OPS(X)                                                      \
  X(Add, 2, Arith) X(Subtract, 2, Arith) X(Multiply, 2, Arith) X(Divide, 2, Float)     \
  X(FloorDivide, 2, Arith) X(Remainder, 2, Arith) X(Pow, 2, Arith)                     \
  X(Maximum, 2, Arith) X(Minimum, 2, Arith) X(Atan2, 2, Float) X(Hypot, 2, Float)      \
  X(Copysign, 2, Float) X(Logaddexp, 2, Float) X(Nextafter, 2, Float)                  \
  X(BitwiseAnd, 2, Int) X(BitwiseOr, 2, Int) X(BitwiseXor, 2, Int)                     \
  X(LeftShift, 2, Int) X(RightShift, 2, Int)                                           \
  X(Equal, 2, Cmp) X(NotEqual, 2, Cmp) X(Less, 2, Cmp) X(LessEqual, 2, Cmp)            \
  X(Greater, 2, Cmp) X(GreaterEqual, 2, Cmp)                                           \
  X(LogicalAnd, 2, Logic) X(LogicalOr, 2, Logic) X(LogicalXor, 2, Logic)               \
  X(LogicalNot, 1, Logic)                                                              \
  X(Negative, 1, Arith) X(Positive, 1, Arith) X(Abs, 1, Arith) X(Square, 1, Arith)     \
  X(Sign, 1, Arith) X(Reciprocal, 1, Arith)                                            \
  X(Floor, 1, Arith) X(Ceil, 1, Arith) X(Trunc, 1, Arith) X(Round, 1, Arith)           \
  X(BitwiseInvert, 1, Int)                                                             \
  X(Sqrt, 1, Float) X(Cbrt, 1, Float) X(Exp, 1, Float) X(Exp2, 1, Float)               \
  X(Expm1, 1, Float) X(Log, 1, Float) X(Log2, 1, Float) X(Log10, 1, Float)             \
  X(Log1p, 1, Float) X(Sin, 1, Float) X(Cos, 1, Float) X(Tan, 1, Float)                \
  X(Asin, 1, Float) X(Acos, 1, Float) X(Atan, 1, Float) X(Sinh, 1, Float)              \
  X(Cosh, 1, Float) X(Tanh, 1, Float) X(Asinh, 1, Float) X(Acosh, 1, Float)            \
  X(Atanh, 1, Float)                                                                   \
  X(Isnan, 1, Pred) X(Isinf, 1, Pred) X(Isfinite, 1, Pred) X(Signbit, 1, Pred)         \
  X(Where, 3, Special) X(Cast, 1, Special) X(Copy, 1, Special)

enum class Op : uint8_t {
#define B2LAZY_OP_ENUM(name, arity, family) name,
  B2LAZY_ELEMENTWISE_OPS(B2LAZY_OP_ENUM)
#undef B2LAZY_OP_ENUM
      Count_
};

enum class OpFamily : uint8_t { Arith, Float, Int, Cmp, Pred, Logic, Special };

int op_arity(Op op);
OpFamily op_family(Op op);
const char* op_name(Op op);  // snake_case, e.g. "floor_divide"
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
