// Float family kernels (float32/float64 only; the graph builder casts ints first).
// Transcendentals use SLEEF's vector functions at 1.0 ULP (hypot at 0.5 ULP).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numbers>

#include "kernel_util.hpp"

namespace b2lazy::kernels::detail {
namespace {

struct Div {
  template <class T> static T f(T a, T b) { return a / b; }
};
// Degrees and radians as NumPy converts them: a times pi / 180 (180 / pi), the constant
// computed in T from pi rounded to T, so the results are NumPy's to the bit.
struct Deg2rad {
  template <class T> static T f(T a) { return a * (std::numbers::pi_v<T> / T(180)); }
};
struct Rad2deg {
  template <class T> static T f(T a) { return a * (T(180) / std::numbers::pi_v<T>); }
};
struct Sqrt {  // vectorises to vsqrtp[sd] with -fno-math-errno
  template <class T> static T f(T a) { return std::sqrt(a); }
};
// Magnitude of a with the sign bit of b (also for NaN and -0.0).
struct Copysign {
  template <class T> static T f(T a, T b) {
    using U = bits_t<T>;
    constexpr U sign = U(1) << (8 * sizeof(T) - 1);
    return std::bit_cast<T>((std::bit_cast<U>(a) & ~sign) | (std::bit_cast<U>(b) & sign));
  }
};

// log(exp(a) + exp(b)) as NumPy computes it: a == b gives a + log(2) (so equal infinities
// do not produce inf - inf), otherwise max + log1p(exp(-|a - b|)); NaN propagates through
// the difference. Works on fixed-size stack chunks so the SLEEF calls stay vectorised.
template <class T, auto Exp, auto Log1p> void logaddexp(void* out, const void* const* in, int64_t n) {
  constexpr int64_t kChunk = 256;
  constexpr T kLn2 = T(0.693147180559945309417232121458176568L);
  const T* a = static_cast<const T*>(in[0]);
  const T* b = static_cast<const T*>(in[1]);
  T* o = static_cast<T*>(out);
  alignas(32) T tmp[kChunk];
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t m = std::min(kChunk, n - start);
    const T* __restrict ca = a + start;
    const T* __restrict cb = b + start;
    for (int64_t i = 0; i < m; ++i) tmp[i] = -std::fabs(ca[i] - cb[i]);
    vapply1<T, Exp>(tmp, tmp, m);
    vapply1<T, Log1p>(tmp, tmp, m);
    T* __restrict co = o + start;
    for (int64_t i = 0; i < m; ++i) {
      const T x = ca[i], y = cb[i];
      co[i] = x == y ? x + kLn2 : (x > y ? x : y) + tmp[i];
    }
  }
}

// SLEEF's asinh/acosh (|x| < 1.34e154, float 1.8e19) and log1p (x < 1e307, float 1e38)
// overflow beyond their documented domain. There log(2|x|) and log(x) are exact to the
// last bit, so those lanes are redone with std:: after the vector call. Copies of the
// inputs are kept on the stack because `out` may alias `in`.
struct LargeAsinh {
  template <class T> static T f(T x) {
    return std::copysign(std::log(std::fabs(x)) + T(0.693147180559945309417232121458176568L), x);
  }
  template <class T> static T limit() { return sizeof(T) == 8 ? T(1e150) : T(1e18); }
};
struct LargeAcosh {
  template <class T> static T f(T x) { return std::log(x) + T(0.693147180559945309417232121458176568L); }
  template <class T> static T limit() { return sizeof(T) == 8 ? T(1e150) : T(1e18); }
};
struct LargeLog1p {
  template <class T> static T f(T x) { return std::log(x); }
  template <class T> static T limit() { return sizeof(T) == 8 ? T(1e300) : T(1e30); }
};

// SLEEF's sinh/cosh overflow where exp(|x|) does (|x| > 709.78, float 88.72), a ln 2
// before sinh and cosh themselves (710.48, float 89.42): those lanes are redone with std::.
struct LargeSinh {
  template <class T> static T f(T x) { return std::sinh(x); }
  template <class T> static T limit() { return sizeof(T) == 8 ? T(709) : T(88); }
};
struct LargeCosh {
  template <class T> static T f(T x) { return std::cosh(x); }
  template <class T> static T limit() { return sizeof(T) == 8 ? T(709) : T(88); }
};

template <class T, auto VF, class Large> void unary_with_large(void* out, const void* const* in, int64_t n) {
  constexpr int64_t kChunk = 256;
  const T* a = static_cast<const T*>(in[0]);
  T* o = static_cast<T*>(out);
  alignas(32) T copy[kChunk];
  const T lim = Large::template limit<T>();
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t m = std::min(kChunk, n - start);
    std::memcpy(copy, a + start, m * sizeof(T));
    vapply1<T, VF>(o + start, copy, m);
    bool any = false;
    for (int64_t i = 0; i < m; ++i) any |= std::fabs(copy[i]) > lim;
    if (any)
      for (int64_t i = 0; i < m; ++i)
        if (std::fabs(copy[i]) > lim) o[start + i] = Large::f(copy[i]);
  }
}

}  // namespace

void register_math(Table& t) {
  for_dtypes<B2LAZY_FLOAT_DTYPES>([&]<DType D>() {
    using T = ctype<D>;
    t.set(Op::Divide, D, binary<T, T, Div>);
    t.set(Op::Copysign, D, binary<T, T, Copysign>);
    t.set(Op::Sqrt, D, unary<T, T, Sqrt>);
    t.set(Op::Deg2rad, D, unary<T, T, Deg2rad>);
    t.set(Op::Rad2deg, D, unary<T, T, Rad2deg>);
  });
  t.set(Op::Logaddexp, DType::F64, logaddexp<double, B2LAZY_SLEEF_D(exp, u10), B2LAZY_SLEEF_D(log1p, u10)>);
  t.set(Op::Logaddexp, DType::F32, logaddexp<float, B2LAZY_SLEEF_F(exp, u10), B2LAZY_SLEEF_F(log1p, u10)>);

  B2LAZY_SLEEF2(t, Atan2, atan2, u10);
  B2LAZY_SLEEF2(t, Hypot, hypot, u05);
  B2LAZY_SLEEF2(t, Nextafter, nextafter, );

  B2LAZY_SLEEF1(t, Cbrt, cbrt, u10);
  B2LAZY_SLEEF1(t, Exp, exp, u10);
  B2LAZY_SLEEF1(t, Exp2, exp2, u10);
  B2LAZY_SLEEF1(t, Expm1, expm1, u10);
  B2LAZY_SLEEF1(t, Log, log, u10);
  B2LAZY_SLEEF1(t, Log2, log2, u10);
  B2LAZY_SLEEF1(t, Log10, log10, u10);
  t.set(Op::Log1p, DType::F64, unary_with_large<double, B2LAZY_SLEEF_D(log1p, u10), LargeLog1p>);
  t.set(Op::Log1p, DType::F32, unary_with_large<float, B2LAZY_SLEEF_F(log1p, u10), LargeLog1p>);
  B2LAZY_SLEEF1(t, Sin, sin, u10);
  B2LAZY_SLEEF1(t, Cos, cos, u10);
  B2LAZY_SLEEF1(t, Tan, tan, u10);
  B2LAZY_SLEEF1(t, Asin, asin, u10);
  B2LAZY_SLEEF1(t, Acos, acos, u10);
  B2LAZY_SLEEF1(t, Atan, atan, u10);
  t.set(Op::Sinh, DType::F64, unary_with_large<double, B2LAZY_SLEEF_D(sinh, u10), LargeSinh>);
  t.set(Op::Sinh, DType::F32, unary_with_large<float, B2LAZY_SLEEF_F(sinh, u10), LargeSinh>);
  t.set(Op::Cosh, DType::F64, unary_with_large<double, B2LAZY_SLEEF_D(cosh, u10), LargeCosh>);
  t.set(Op::Cosh, DType::F32, unary_with_large<float, B2LAZY_SLEEF_F(cosh, u10), LargeCosh>);
  B2LAZY_SLEEF1(t, Tanh, tanh, u10);
  t.set(Op::Asinh, DType::F64, unary_with_large<double, B2LAZY_SLEEF_D(asinh, u10), LargeAsinh>);
  t.set(Op::Asinh, DType::F32, unary_with_large<float, B2LAZY_SLEEF_F(asinh, u10), LargeAsinh>);
  t.set(Op::Acosh, DType::F64, unary_with_large<double, B2LAZY_SLEEF_D(acosh, u10), LargeAcosh>);
  t.set(Op::Acosh, DType::F32, unary_with_large<float, B2LAZY_SLEEF_F(acosh, u10), LargeAcosh>);
  B2LAZY_SLEEF1(t, Atanh, atanh, u10);
}

}  // namespace b2lazy::kernels::detail
