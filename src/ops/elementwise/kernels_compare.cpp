// Cmp and Pred families (any dtype -> bool), Logic family (bool only) and the Int family
// (bitwise ops and shifts on ints; and/or/xor/invert on bool). Bool is stored as 0/1 bytes.
#include <bit>
#include <cmath>
#include <limits>

#include "kernel_util.hpp"

namespace b2lazy::kernels::detail {
namespace {

// ---- comparisons (IEEE: any comparison with NaN is false, except !=) ----
struct Eq {
  template <class T> static uint8_t f(T a, T b) { return a == b; }
};
struct Ne {
  template <class T> static uint8_t f(T a, T b) { return a != b; }
};
struct Lt {
  template <class T> static uint8_t f(T a, T b) { return a < b; }
};
struct Le {
  template <class T> static uint8_t f(T a, T b) { return a <= b; }
};
struct Gt {
  template <class T> static uint8_t f(T a, T b) { return a > b; }
};
struct Ge {
  template <class T> static uint8_t f(T a, T b) { return a >= b; }
};

// ---- predicates ----
struct IsNan {
  template <class T> static uint8_t f(T a) { return a != a; }
};
struct IsInf {
  template <class T> static uint8_t f(T a) { return std::fabs(a) == std::numeric_limits<T>::infinity(); }
};
struct IsFinite {  // false for NaN too
  template <class T> static uint8_t f(T a) { return std::fabs(a) < std::numeric_limits<T>::infinity(); }
};
struct SignBit {
  template <class T> static uint8_t f(T a) {
    if constexpr (std::is_floating_point_v<T>) return uint8_t(std::bit_cast<bits_t<T>>(a) >> (8 * sizeof(T) - 1));
    else if constexpr (std::is_signed_v<T>) return a < 0;
    else return 0;
  }
};
template <int V> struct Const {  // isnan/isinf/isfinite on integers
  template <class T> static uint8_t f(T) { return V; }
};

// ---- logic (robust to any nonzero byte, always writes 0/1) ----
struct LAnd {
  static uint8_t f(uint8_t a, uint8_t b) { return (a != 0) & (b != 0); }
};
struct LOr {
  static uint8_t f(uint8_t a, uint8_t b) { return (a | b) != 0; }
};
struct LXor {
  static uint8_t f(uint8_t a, uint8_t b) { return (a != 0) ^ (b != 0); }
};
struct LNot {
  static uint8_t f(uint8_t a) { return a == 0; }
};

// ---- bitwise ----
struct BitAnd {
  template <class T> static T f(T a, T b) { return T(a & b); }
};
struct BitOr {
  template <class T> static T f(T a, T b) { return T(a | b); }
};
struct BitXor {
  template <class T> static T f(T a, T b) { return T(a ^ b); }
};
struct BitInvert {
  template <class T> static T f(T a) { return T(~a); }
};
// NumPy: a count outside [0, bits) shifts everything out (no UB). The count is compared
// as unsigned so negative counts are out of range too.
template <class T> constexpr std::make_unsigned_t<T> kBits = 8 * sizeof(T);
struct Shl {
  template <class T> static T f(T a, T b) {
    using U = std::make_unsigned_t<T>;
    return U(b) < kBits<T> ? T(wrap_t<T>(a) << U(b)) : T(0);
  }
};
struct Shr {  // arithmetic for signed (C++20): a negative value shifted out gives -1
  template <class T> static T f(T a, T b) {
    using U = std::make_unsigned_t<T>;
    if (U(b) < kBits<T>) return T(a >> U(b));
    if constexpr (std::is_signed_v<T>) return a < 0 ? T(-1) : T(0);
    return T(0);
  }
};

}  // namespace

void register_compare(Table& t) {
  for_dtypes<B2LAZY_ALL_DTYPES>([&]<DType D>() {
    using T = ctype<D>;
    t.set(Op::Equal, D, binary<uint8_t, T, Eq>);
    t.set(Op::NotEqual, D, binary<uint8_t, T, Ne>);
    t.set(Op::Less, D, binary<uint8_t, T, Lt>);
    t.set(Op::LessEqual, D, binary<uint8_t, T, Le>);
    t.set(Op::Greater, D, binary<uint8_t, T, Gt>);
    t.set(Op::GreaterEqual, D, binary<uint8_t, T, Ge>);
    if constexpr (std::is_floating_point_v<T>) {
      t.set(Op::Isnan, D, unary<uint8_t, T, IsNan>);
      t.set(Op::Isinf, D, unary<uint8_t, T, IsInf>);
      t.set(Op::Isfinite, D, unary<uint8_t, T, IsFinite>);
    } else {
      t.set(Op::Isnan, D, unary<uint8_t, T, Const<0>>);
      t.set(Op::Isinf, D, unary<uint8_t, T, Const<0>>);
      t.set(Op::Isfinite, D, unary<uint8_t, T, Const<1>>);
    }
    t.set(Op::Signbit, D, unary<uint8_t, T, SignBit>);
  });

  for_dtypes<B2LAZY_INT_DTYPES>([&]<DType D>() {
    using T = ctype<D>;
    t.set(Op::BitwiseAnd, D, binary<T, T, BitAnd>);
    t.set(Op::BitwiseOr, D, binary<T, T, BitOr>);
    t.set(Op::BitwiseXor, D, binary<T, T, BitXor>);
    t.set(Op::BitwiseInvert, D, unary<T, T, BitInvert>);
    t.set(Op::LeftShift, D, binary<T, T, Shl>);
    t.set(Op::RightShift, D, binary<T, T, Shr>);
  });

  // Bool: bitwise ops are the logical ones (inputs are 0/1), invert is logical not.
  t.set(Op::LogicalAnd, DType::Bool, binary<uint8_t, uint8_t, LAnd>);
  t.set(Op::LogicalOr, DType::Bool, binary<uint8_t, uint8_t, LOr>);
  t.set(Op::LogicalXor, DType::Bool, binary<uint8_t, uint8_t, LXor>);
  t.set(Op::LogicalNot, DType::Bool, unary<uint8_t, uint8_t, LNot>);
  t.set(Op::BitwiseAnd, DType::Bool, binary<uint8_t, uint8_t, LAnd>);
  t.set(Op::BitwiseOr, DType::Bool, binary<uint8_t, uint8_t, LOr>);
  t.set(Op::BitwiseXor, DType::Bool, binary<uint8_t, uint8_t, LXor>);
  t.set(Op::BitwiseInvert, DType::Bool, unary<uint8_t, uint8_t, LNot>);
}

}  // namespace b2lazy::kernels::detail
