// Complex kernels (complex64, complex128) and the real-input forms of real, imag, conj and
// angle. The transcendental functions are the C library's (glibc's cexp, clog, csqrt,
// casinh, ...: C99 Annex G, whose special cases the Array API standard adopts), reached
// through std::complex; quotients are gcc's (its Annex G routine __divdc3 takes over when
// the naive one gives NaN); products are the textbook formula, vectorised, with gcc's
// Annex G product redone where it gives NaN + NaN j; |z| is SLEEF's vector hypot.
#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>

#include "core/dispatch.hpp"
#include "core/float_to_int.hpp"
#include "kernel_util.hpp"

namespace b2lazy::kernels::detail {
namespace {

template <class C> using part_t = typename C::value_type;

struct CAdd {
  template <class C> static C f(C a, C b) { return a + b; }
};
struct CSub {
  template <class C> static C f(C a, C b) { return a - b; }
};
struct CDiv {
  template <class C> static C f(C a, C b) { return a / b; }
};
struct CNeg {
  template <class C> static C f(C a) { return -a; }
};
struct CReciprocal {
  template <class C> static C f(C a) { return C(1) / a; }
};
struct CConj {
  template <class C> static C f(C a) { return std::conj(a); }
};
// NumPy 2 / the standard: z / |z|, 0 for 0; NaN parts give NaN + NaN j.
struct CSign {
  template <class C> static C f(C a) {
    using R = part_t<C>;
    if (std::isnan(a.real()) || std::isnan(a.imag())) return C(NAN, NAN);
    if (a == C(0)) return C(0);
    const R m = std::abs(a);
    if (std::isinf(m)) {  // an infinite part: its direction; both infinite: NaN as NumPy
      if (std::isinf(a.real()) && std::isinf(a.imag())) return C(NAN, NAN);
      return C(std::isinf(a.real()) ? std::copysign(R(1), a.real()) : R(0),
               std::isinf(a.imag()) ? std::copysign(R(1), a.imag()) : R(0));
    }
    return C(a.real() / m, a.imag() / m);
  }
};
// Half to even, each part (np.round).
struct CRound {
  template <class C> static C f(C a) { return C(std::nearbyint(a.real()), std::nearbyint(a.imag())); }
};
// NumPy's power: z ** 0 is 1, 0 ** b is 0 for Re(b) > 0, integer exponents below 100 in
// magnitude by repeated squaring (exact where the product is); else cpow.
struct CPow {
  template <class C> static C f(C a, C b) {
    const auto e = b.real();
    if (b.imag() == 0 && e == 0) return C(1);
    if (a == C(0) && e > 0) return C(0);
    if (b.imag() == 0 && e == std::trunc(e) && std::fabs(e) < 100) {
      C r(1), base = a;
      for (auto k = static_cast<unsigned>(std::fabs(e)); k != 0; k >>= 1) {
        if (k & 1) r *= base;
        base *= base;
      }
      return e < 0 ? C(1) / r : r;
    }
    return std::pow(a, b);
  }
};

// ---- parts (complex -> real) ----
struct CReal {
  template <class C> static part_t<C> f(C a) { return a.real(); }
};
struct CImag {
  template <class C> static part_t<C> f(C a) { return a.imag(); }
};
struct CAngle {
  template <class C> static part_t<C> f(C a) { return std::atan2(a.imag(), a.real()); }
};

// ---- transcendental ----
struct CSqrt {
  template <class C> static C f(C a) { return std::sqrt(a); }
};
struct CExp2 {
  template <class C> static C f(C a) { return std::exp(a * part_t<C>(std::numbers::ln2)); }
};
// NumPy's nc_expm1, exact near 0; non-finite parts take exp's special cases.
struct CExpm1 {
  template <class C> static C f(C a) {
    using R = part_t<C>;
    const R x = a.real(), y = a.imag();
    if (!std::isfinite(x) || !std::isfinite(y)) return std::exp(a) - C(1);
    if (x == 0 && y == 0) return C(R(0), y);  // the standard: +0 real part for -0 too
    const R s = std::sin(y / 2);
    return C(std::expm1(x) * std::cos(y) - 2 * s * s, std::exp(x) * std::sin(y));
  }
};
struct CLog {
  template <class C> static C f(C a) { return std::log(a); }
};
struct CLog2 {
  template <class C> static C f(C a) { return std::log(a) / part_t<C>(std::numbers::ln2); }
};
struct CLog10 {
  template <class C> static C f(C a) { return std::log(a) / part_t<C>(std::numbers::ln10); }
};
// log(1 + z) without losing a small z; non-finite parts take log's special cases.
struct CLog1p {
  template <class C> static C f(C a) {
    using R = part_t<C>;
    const R x = a.real(), y = a.imag();
    if (!std::isfinite(x) || !std::isfinite(y)) return std::log(C(1) + a);
    if (std::fabs(x) < R(0.5) && std::fabs(y) < R(0.5)) {
      // |1 + z|^2 - 1 = 2x + x^2 + y^2: log1p of it halved keeps the digits of a small z.
      return C(std::log1p(x * (2 + x) + y * y) / 2, std::atan2(y, 1 + x));
    }
    return std::log(C(1) + a);
  }
};
struct CSin {
  template <class C> static C f(C a) { return std::sin(a); }
};
struct CCos {
  template <class C> static C f(C a) { return std::cos(a); }
};
struct CTan {
  template <class C> static C f(C a) { return std::tan(a); }
};
struct CAsin {
  template <class C> static C f(C a) { return std::asin(a); }
};
struct CAcos {
  template <class C> static C f(C a) { return std::acos(a); }
};
struct CAtan {
  template <class C> static C f(C a) { return std::atan(a); }
};
struct CSinh {
  template <class C> static C f(C a) { return std::sinh(a); }
};
struct CCosh {
  template <class C> static C f(C a) { return std::cosh(a); }
};
// An infinite real part gives +-1 with a zero imaginary part of b's sign, as the standard
// says (C99, glibc and NumPy: the sign of sin(2b)).
struct CTanh {
  template <class C> static C f(C a) {
    using R = part_t<C>;
    if (std::isinf(a.real()) && std::isfinite(a.imag()))
      return C(std::copysign(R(1), a.real()), std::copysign(R(0), a.imag()));
    return std::tanh(a);
  }
};
struct CAsinh {
  template <class C> static C f(C a) { return std::asinh(a); }
};
struct CAcosh {
  template <class C> static C f(C a) { return std::acosh(a); }
};
struct CAtanh {
  template <class C> static C f(C a) { return std::atanh(a); }
};

// ---- -> bool ----
struct CEq {
  template <class C> static uint8_t f(C a, C b) { return a == b; }
};
struct CNe {
  template <class C> static uint8_t f(C a, C b) { return a != b; }
};
struct CIsNan {
  template <class C> static uint8_t f(C a) { return std::isnan(a.real()) || std::isnan(a.imag()); }
};
struct CIsInf {
  template <class C> static uint8_t f(C a) { return std::isinf(a.real()) || std::isinf(a.imag()); }
};
struct CIsFinite {
  template <class C> static uint8_t f(C a) { return std::isfinite(a.real()) && std::isfinite(a.imag()); }
};

// ---- real inputs: real, imag, conj, angle ----
struct RIdentity {
  template <class T> static T f(T a) { return a; }
};
struct RZero {
  template <class T> static T f(T) { return T(0); }
};
// np.angle of a real number: 0, or pi for a negative one (and -0.0, as atan2(0, -0.0)).
struct RAngle {
  template <class T> static T f(T a) { return std::isnan(a) ? a : std::signbit(a) ? T(std::numbers::pi) : T(0); }
};

// Where: the two parts selected as one 16-byte (or 8-byte) unit.
template <class C> void where_complex(void* out, const void* const* in, int64_t n) {
  const auto* c = static_cast<const uint8_t*>(in[0]);
  const auto* x = static_cast<const C*>(in[1]);
  const auto* y = static_cast<const C*>(in[2]);
  auto* o = static_cast<C*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? x[i] : y[i];
}

// Casts into and out of complex. A real number is the real part; to a real type a complex
// value keeps its real part (NumPy's cast, which warns); to bool it is "either part != 0".
template <class To, class From> struct CastC {
  static To f(From x) {
    if constexpr (is_complex_v<To> && is_complex_v<From>) {
      return To(static_cast<part_t<To>>(x.real()), static_cast<part_t<To>>(x.imag()));
    } else if constexpr (is_complex_v<To>) {
      return To(static_cast<part_t<To>>(x), part_t<To>(0));
    } else {
      return numeric_cast<To>(x.real());
    }
  }
};
struct CToBool {
  template <class C> static uint8_t f(C x) { return x.real() != 0 || x.imag() != 0; }
};

// The real and imaginary parts of m complex values (interleaved in `z`) as two runs.
template <class R> void split_parts(const R* z, R* re, R* im, int64_t m) {
  for (int64_t i = 0; i < m; ++i) {
    re[i] = z[2 * i];
    im[i] = z[2 * i + 1];
  }
}

// |z| by SLEEF's vector hypot (u05: 0.5 ulp, inf beats NaN as C99's cabs): the parts are
// split into two local runs first (the C library's cabs is a scalar call per element).
template <class R, auto VH> void abs_kernel(void* out, const void* const* in, int64_t n) {
  constexpr int64_t kRun = 256;
  const R* z = static_cast<const R*>(in[0]);
  R* o = static_cast<R*>(out);
  alignas(64) R re[kRun], im[kRun];
  for (int64_t start = 0; start < n; start += kRun) {
    const int64_t m = std::min(kRun, n - start);
    split_parts(z + 2 * start, re, im, m);
    vapply2<R, VH>(o + start, re, im, m);
  }
}

// Products by the textbook formula, which gcc vectorises; only where it gives NaN + NaN j
// (an infinite or NaN part) is the element redone by gcc's C99 Annex G product. Kernels
// never run in place (the program gives every result its own slot), so the inputs are
// still there for the redo.
template <class C> void mul_kernel(void* out, const void* const* in, int64_t n) {
  using R = part_t<C>;
  const R* __restrict a = static_cast<const R*>(in[0]);
  const R* __restrict b = static_cast<const R*>(in[1]);
  R* __restrict o = static_cast<R*>(out);
  bool any_nan = false;
  for (int64_t i = 0; i < n; ++i) {
    const R ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];
    const R re = ar * br - ai * bi, im = ar * bi + ai * br;
    o[2 * i] = re;
    o[2 * i + 1] = im;
    any_nan |= (re != re) & (im != im);
  }
  if (!any_nan) return;
  const C* ca = static_cast<const C*>(in[0]);
  const C* cb = static_cast<const C*>(in[1]);
  C* co = static_cast<C*>(out);
  for (int64_t i = 0; i < n; ++i)
    if (std::isnan(co[i].real()) && std::isnan(co[i].imag())) co[i] = ca[i] * cb[i];
}

// exp(z) = exp(x) (cos y + i sin y) by SLEEF's vector exp, sin and cos over the split
// parts; an element with a non-finite part, a large x (where the C library scales to avoid
// a spurious overflow) or a non-finite result is redone by the C library's cexp, whose
// special cases are the standard's.
template <class R, auto VEXP, auto VSIN, auto VCOS> void exp_kernel(void* out, const void* const* in, int64_t n) {
  using C = std::complex<R>;
  constexpr int64_t kRun = 256;
  const C* z = static_cast<const C*>(in[0]);
  C* o = static_cast<C*>(out);
  alignas(64) R re[kRun], im[kRun], e[kRun], s[kRun], c[kRun];
  for (int64_t start = 0; start < n; start += kRun) {
    const int64_t m = std::min(kRun, n - start);
    split_parts(reinterpret_cast<const R*>(z + start), re, im, m);
    vapply1<R, VEXP>(e, re, m);
    vapply1<R, VSIN>(s, im, m);
    vapply1<R, VCOS>(c, im, m);
    for (int64_t i = 0; i < m; ++i) {
      const R a = e[i] * c[i], b = e[i] * s[i];
      if (std::isfinite(a) && std::isfinite(b) && std::isfinite(im[i]) && re[i] < R(sizeof(R) == 8 ? 700 : 85))
        o[start + i] = C(a, b);
      else o[start + i] = std::exp(z[start + i]);
    }
  }
}

template <class C> void square_kernel(void* out, const void* const* in, int64_t n) {
  const void* both[2] = {in[0], in[0]};
  mul_kernel<C>(out, both, n);
}

template <class C, class F> void reg1(Table& t, Op op, DType d) { t.set(op, d, unary<C, C, F>); }
template <class C, class F> void reg2(Table& t, Op op, DType d) { t.set(op, d, binary<C, C, F>); }

template <DType D> void register_one(Table& t) {
  using C = ctype<D>;
  using R = part_t<C>;
  reg2<C, CAdd>(t, Op::Add, D);
  reg2<C, CSub>(t, Op::Subtract, D);
  t.set(Op::Multiply, D, mul_kernel<C>);
  reg2<C, CDiv>(t, Op::Divide, D);
  reg2<C, CPow>(t, Op::Pow, D);
  reg1<C, CNeg>(t, Op::Negative, D);
  reg1<C, RIdentity>(t, Op::Positive, D);
  t.set(Op::Square, D, square_kernel<C>);
  reg1<C, CReciprocal>(t, Op::Reciprocal, D);
  reg1<C, CSign>(t, Op::Sign, D);
  reg1<C, CRound>(t, Op::Round, D);
  reg1<C, CConj>(t, Op::Conj, D);
  if constexpr (D == DType::C128) t.set(Op::Abs, D, abs_kernel<double, B2LAZY_SLEEF_D(hypot, u05)>);
  else t.set(Op::Abs, D, abs_kernel<float, B2LAZY_SLEEF_F(hypot, u05)>);
  t.set(Op::Real, D, unary<R, C, CReal>);
  t.set(Op::Imag, D, unary<R, C, CImag>);
  t.set(Op::Angle, D, unary<R, C, CAngle>);
  reg1<C, CSqrt>(t, Op::Sqrt, D);
  if constexpr (D == DType::C128)
    t.set(Op::Exp, D, exp_kernel<double, B2LAZY_SLEEF_D(exp, u10), B2LAZY_SLEEF_D(sin, u10), B2LAZY_SLEEF_D(cos, u10)>);
  else
    t.set(Op::Exp, D, exp_kernel<float, B2LAZY_SLEEF_F(exp, u10), B2LAZY_SLEEF_F(sin, u10), B2LAZY_SLEEF_F(cos, u10)>);
  reg1<C, CExp2>(t, Op::Exp2, D);
  reg1<C, CExpm1>(t, Op::Expm1, D);
  reg1<C, CLog>(t, Op::Log, D);
  reg1<C, CLog2>(t, Op::Log2, D);
  reg1<C, CLog10>(t, Op::Log10, D);
  reg1<C, CLog1p>(t, Op::Log1p, D);
  reg1<C, CSin>(t, Op::Sin, D);
  reg1<C, CCos>(t, Op::Cos, D);
  reg1<C, CTan>(t, Op::Tan, D);
  reg1<C, CAsin>(t, Op::Asin, D);
  reg1<C, CAcos>(t, Op::Acos, D);
  reg1<C, CAtan>(t, Op::Atan, D);
  reg1<C, CSinh>(t, Op::Sinh, D);
  reg1<C, CCosh>(t, Op::Cosh, D);
  reg1<C, CTanh>(t, Op::Tanh, D);
  reg1<C, CAsinh>(t, Op::Asinh, D);
  reg1<C, CAcosh>(t, Op::Acosh, D);
  reg1<C, CAtanh>(t, Op::Atanh, D);
  t.set(Op::Equal, D, binary<uint8_t, C, CEq>);
  t.set(Op::NotEqual, D, binary<uint8_t, C, CNe>);
  t.set(Op::Isnan, D, unary<uint8_t, C, CIsNan>);
  t.set(Op::Isinf, D, unary<uint8_t, C, CIsInf>);
  t.set(Op::Isfinite, D, unary<uint8_t, C, CIsFinite>);
  t.set(Op::Copy, D, copy<C>);
  t.set(Op::Where, D, where_complex<C>);
}

}  // namespace

void register_complex(Table& t) {
  register_one<DType::C64>(t);
  register_one<DType::C128>(t);
  // Real inputs (NumPy): real and conj are the value, imag is zero, angle is 0 or pi.
  for_dtypes<B2LAZY_ALL_DTYPES>([&]<DType D>() {
    using T = ctype<D>;
    t.set(Op::Real, D, unary<T, T, RIdentity>);
    t.set(Op::Imag, D, unary<T, T, RZero>);
    t.set(Op::Conj, D, unary<T, T, RIdentity>);
  });
  for_dtypes<B2LAZY_FLOAT_DTYPES>([&]<DType D>() {
    using T = ctype<D>;
    t.set(Op::Angle, D, unary<T, T, RAngle>);
  });
  // The cast matrix's complex rows and columns.
  for_dtypes<DType::C64, DType::C128>([&]<DType C>() {
    for_dtypes<B2LAZY_ALL_DTYPES, DType::C64, DType::C128>([&]<DType O>() {
      if constexpr (C == O) {
        t.cast[size_t(C)][size_t(O)] = copy<ctype<C>>;
      } else {
        t.cast[size_t(O)][size_t(C)] = unary<ctype<C>, ctype<O>, CastC<ctype<C>, ctype<O>>>;
        if constexpr (O == DType::Bool) t.cast[size_t(C)][size_t(O)] = unary<uint8_t, ctype<C>, CToBool>;
        else t.cast[size_t(C)][size_t(O)] = unary<ctype<O>, ctype<C>, CastC<ctype<O>, ctype<C>>>;
      }
    });
  });
}

}  // namespace b2lazy::kernels::detail
