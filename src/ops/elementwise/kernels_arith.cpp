// Arith family kernels (NumPy arithmetic on ints, uints, float32/64 and a few on bool).
// Integer ops never hit UB or SIGFPE: +,-,* wrap in an unsigned type, and division by
// zero / INT_MIN // -1 are special-cased to NumPy's results.
#include <algorithm>
#include <cmath>

#include "kernel_util.hpp"

namespace b2lazy::kernels::detail {
namespace {

template <class T> constexpr bool is_int = std::is_integral_v<T>;

// ---- ops shared by ints and floats ----
struct Add {
  template <class T> static T f(T a, T b) {
    if constexpr (is_int<T>) return T(wrap_t<T>(a) + wrap_t<T>(b));
    else return a + b;
  }
};
struct Sub {
  template <class T> static T f(T a, T b) {
    if constexpr (is_int<T>) return T(wrap_t<T>(a) - wrap_t<T>(b));
    else return a - b;
  }
};
struct Mul {
  template <class T> static T f(T a, T b) {
    if constexpr (is_int<T>) return T(wrap_t<T>(a) * wrap_t<T>(b));
    else return a * b;
  }
};
struct Neg {
  template <class T> static T f(T a) {
    if constexpr (is_int<T>) return T(wrap_t<T>(0) - wrap_t<T>(a));
    else return -a;
  }
};
struct Square {
  template <class T> static T f(T a) { return Mul::f(a, a); }
};
struct Identity {
  template <class T> static T f(T a) { return a; }
};

// ---- integers ----
struct IMax {
  template <class T> static T f(T a, T b) { return std::max(a, b); }
};
struct IMin {
  template <class T> static T f(T a, T b) { return std::min(a, b); }
};
// Python floor division; x // 0 -> 0 and INT_MIN // -1 -> INT_MIN (wraps) as in NumPy.
struct IFloorDiv {
  template <class T> static T f(T a, T b) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return Neg::f(a);
      T q = T(a / b);
      return (a % b != 0 && (a < 0) != (b < 0)) ? T(q - 1) : q;
    } else {
      return T(a / b);
    }
  }
};
// Python remainder: the sign follows the divisor; x % 0 -> 0.
struct IRem {
  template <class T> static T f(T a, T b) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return 0;  // avoids the INT_MIN % -1 trap
      T r = T(a % b);
      return (r != 0 && (r < 0) != (b < 0)) ? T(r + b) : r;
    } else {
      return T(a % b);
    }
  }
};
// Repeated squaring with wraparound. NumPy raises for negative exponents; we return the
// exact result where it is an integer (base 1 or -1) and 0 otherwise.
struct IPow {
  template <class T> static T f(T a, T b) {
    if constexpr (std::is_signed_v<T>) {
      if (b < 0) return a == 1 ? T(1) : a == -1 ? T((b & 1) ? -1 : 1) : T(0);
    }
    wrap_t<T> r = 1, base = wrap_t<T>(a);
    for (auto e = std::make_unsigned_t<T>(b); e != 0; e >>= 1) {
      if (e & 1) r *= base;
      base *= base;
    }
    return T(r);
  }
};
struct IAbs {
  template <class T> static T f(T a) {
    if constexpr (std::is_signed_v<T>) return a < 0 ? Neg::f(a) : a;  // INT_MIN stays INT_MIN
    else return a;
  }
};
struct ISign {
  template <class T> static T f(T a) { return T((a > 0) - (a < 0)); }
};
struct IReciprocal {
  template <class T> static T f(T a) { return a == 0 ? T(0) : T(T(1) / a); }
};

// ---- floats ----
// NaN-propagating maximum/minimum (np.maximum / np.minimum, not fmax/fmin). Equal
// operands give the second, as NumPy's: minimum(-0.0, 0.0) is 0.0, minimum(0.0, -0.0)
// is -0.0 (and so clip(-0.0, None, 0) is 0.0, whose sign a later division shows).
struct FMax {
  template <class T> static T f(T a, T b) { return (a > b || a != a) ? a : b; }
};
struct FMin {
  template <class T> static T f(T a, T b) { return (a < b || a != a) ? a : b; }
};
// NumPy's npy_divmod: fmod, adjusted so the remainder takes the divisor's sign, and the
// quotient (a - mod) / b snapped to the nearest integer.
template <class T> T divmod(T a, T b, T& mod) {
  mod = std::fmod(a, b);
  if (b == 0) return a / b;  // inf or nan, like NumPy
  T div = (a - mod) / b;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= T(1);
    }
  } else {
    mod = std::copysign(T(0), b);
  }
  if (div == 0) return std::copysign(T(0), a / b);
  T fl = std::floor(div);
  return (div - fl > T(0.5)) ? fl + T(1) : fl;
}
struct FFloorDiv {
  template <class T> static T f(T a, T b) {
    T mod;
    return divmod(a, b, mod);
  }
};
struct FRem {
  template <class T> static T f(T a, T b) {
    T mod;
    divmod(a, b, mod);
    return mod;
  }
};
struct FAbs {
  template <class T> static T f(T a) { return std::fabs(a); }
};
// NaN -> NaN, +-0 -> +0.
struct FSign {
  template <class T> static T f(T a) { return a > 0 ? T(1) : a < 0 ? T(-1) : a == 0 ? T(0) : a; }
};
struct FReciprocal {
  template <class T> static T f(T a) { return T(1) / a; }
};
struct FFloor {
  template <class T> static T f(T a) { return std::floor(a); }
};
struct FCeil {
  template <class T> static T f(T a) { return std::ceil(a); }
};
struct FTrunc {
  template <class T> static T f(T a) { return std::trunc(a); }
};
// Half to even under the default rounding mode, like np.round.
struct FRound {
  template <class T> static T f(T a) { return std::nearbyint(a); }
};

// ---- bool (0/1 bytes) ----
struct BOr {
  static uint8_t f(uint8_t a, uint8_t b) { return a | b; }
};
struct BAnd {
  static uint8_t f(uint8_t a, uint8_t b) { return a & b; }
};

// Registers F for op on the given dtypes (same type in and out).
template <class F, DType... Ds> void reg1(Table& t, Op op) {
  for_dtypes<Ds...>([&]<DType D>() { t.set(op, D, unary<ctype<D>, ctype<D>, F>); });
}
template <class F, DType... Ds> void reg2(Table& t, Op op) {
  for_dtypes<Ds...>([&]<DType D>() { t.set(op, D, binary<ctype<D>, ctype<D>, F>); });
}

}  // namespace

void register_arith(Table& t) {
  // Same semantics for ints and floats.
  reg2<Add, B2LAZY_INT_DTYPES, B2LAZY_FLOAT_DTYPES>(t, Op::Add);
  reg2<Sub, B2LAZY_INT_DTYPES, B2LAZY_FLOAT_DTYPES>(t, Op::Subtract);
  reg2<Mul, B2LAZY_INT_DTYPES, B2LAZY_FLOAT_DTYPES>(t, Op::Multiply);
  reg1<Neg, B2LAZY_INT_DTYPES, B2LAZY_FLOAT_DTYPES>(t, Op::Negative);
  reg1<Identity, B2LAZY_INT_DTYPES, B2LAZY_FLOAT_DTYPES>(t, Op::Positive);
  reg1<Square, B2LAZY_INT_DTYPES, B2LAZY_FLOAT_DTYPES>(t, Op::Square);

  // Integers.
  reg2<IFloorDiv, B2LAZY_INT_DTYPES>(t, Op::FloorDivide);
  reg2<IRem, B2LAZY_INT_DTYPES>(t, Op::Remainder);
  reg2<IPow, B2LAZY_INT_DTYPES>(t, Op::Pow);
  reg2<IMax, B2LAZY_INT_DTYPES>(t, Op::Maximum);
  reg2<IMin, B2LAZY_INT_DTYPES>(t, Op::Minimum);
  reg1<IAbs, B2LAZY_INT_DTYPES>(t, Op::Abs);
  reg1<ISign, B2LAZY_INT_DTYPES>(t, Op::Sign);
  reg1<IReciprocal, B2LAZY_INT_DTYPES>(t, Op::Reciprocal);
  for (Op op : {Op::Floor, Op::Ceil, Op::Trunc, Op::Round})
    for_dtypes<B2LAZY_INT_DTYPES>([&]<DType D>() { t.set(op, D, t.fn[size_t(Op::Positive)][size_t(D)]); });

  // Floats.
  reg2<FFloorDiv, B2LAZY_FLOAT_DTYPES>(t, Op::FloorDivide);
  reg2<FRem, B2LAZY_FLOAT_DTYPES>(t, Op::Remainder);
  B2LAZY_SLEEF2(t, Pow, pow, u10);
  reg2<FMax, B2LAZY_FLOAT_DTYPES>(t, Op::Maximum);
  reg2<FMin, B2LAZY_FLOAT_DTYPES>(t, Op::Minimum);
  reg1<FAbs, B2LAZY_FLOAT_DTYPES>(t, Op::Abs);
  reg1<FSign, B2LAZY_FLOAT_DTYPES>(t, Op::Sign);
  reg1<FReciprocal, B2LAZY_FLOAT_DTYPES>(t, Op::Reciprocal);
#ifdef B2LAZY_HAVE_VROUND
  // Round uses the current rounding mode (default: half to even), i.e. nearbyint.
  for_dtypes<B2LAZY_FLOAT_DTYPES>([&]<DType D>() {
    using T = ctype<D>;
    using V = typename Simd<T>::V;
    t.set(Op::Floor, D, vec_unary<T, static_cast<V (*)(V)>(vround<_MM_FROUND_TO_NEG_INF>)>);
    t.set(Op::Ceil, D, vec_unary<T, static_cast<V (*)(V)>(vround<_MM_FROUND_TO_POS_INF>)>);
    t.set(Op::Trunc, D, vec_unary<T, static_cast<V (*)(V)>(vround<_MM_FROUND_TO_ZERO>)>);
    t.set(Op::Round, D, vec_unary<T, static_cast<V (*)(V)>(vround<_MM_FROUND_CUR_DIRECTION>)>);
  });
#else
  reg1<FFloor, B2LAZY_FLOAT_DTYPES>(t, Op::Floor);
  reg1<FCeil, B2LAZY_FLOAT_DTYPES>(t, Op::Ceil);
  reg1<FTrunc, B2LAZY_FLOAT_DTYPES>(t, Op::Trunc);
  reg1<FRound, B2LAZY_FLOAT_DTYPES>(t, Op::Round);
#endif

  // Bool: NumPy's ? loops are logical or/and; the rounding-like ops are identities.
  reg2<BOr, DType::Bool>(t, Op::Add);
  reg2<BOr, DType::Bool>(t, Op::Maximum);
  reg2<BAnd, DType::Bool>(t, Op::Multiply);
  reg2<BAnd, DType::Bool>(t, Op::Minimum);
  for (Op op : {Op::Abs, Op::Positive, Op::Floor, Op::Ceil, Op::Trunc, Op::Round})
    t.set(op, DType::Bool, unary<uint8_t, uint8_t, Identity>);
}

}  // namespace b2lazy::kernels::detail
