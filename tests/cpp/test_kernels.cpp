// Elementwise block kernels and op metadata, checked against <cmath> / hand-computed
// NumPy 2 results.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "b2lazy/error.hpp"
#include "b2lazy/ops.hpp"
#include "core/half.hpp"

using namespace b2lazy;
using kernels::BlockFn;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

template <class R, class T> std::vector<R> run1(Op op, DType t, const std::vector<T>& a) {
  BlockFn fn = kernels::lookup(op, t);
  EXPECT_NE(fn, nullptr) << op_name(op);
  std::vector<R> out(a.size());
  const void* in[] = {a.data()};
  if (fn) fn(out.data(), in, static_cast<int64_t>(a.size()));
  return out;
}

template <class R, class T> std::vector<R> run2(Op op, DType t, const std::vector<T>& a, const std::vector<T>& b) {
  BlockFn fn = kernels::lookup(op, t);
  EXPECT_NE(fn, nullptr) << op_name(op);
  std::vector<R> out(a.size());
  const void* in[] = {a.data(), b.data()};
  if (fn) fn(out.data(), in, static_cast<int64_t>(a.size()));
  return out;
}

// Distance in units in the last place (0 for equal values, both NaN, or +0 vs -0).
template <class T> int64_t ulp_diff(T a, T b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<int64_t>::max();
  if (a == b) return 0;
  using I = std::conditional_t<sizeof(T) == 8, int64_t, int32_t>;
  auto ordered = [](T x) {
    I i = std::bit_cast<I>(x);
    return i < 0 ? int64_t(std::numeric_limits<I>::min()) - int64_t(i) : int64_t(i);
  };
  int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

// Same IEEE value, with NaN == NaN and the sign of zero significant.
template <class T> bool same(T a, T b) {
  if (std::isnan(a)) return std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

template <class T> std::vector<T> ramp(size_t n, double lo, double hi) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = T(lo + (hi - lo) * double(i) / double(n > 1 ? n - 1 : 1));
  return v;
}

}  // namespace

// ---------------------------------------------------------------- op metadata

TEST(OpInfo, NamesRoundTrip) {
  for (int i = 0; i < static_cast<int>(Op::Count_); ++i) {
    Op op = static_cast<Op>(i);
    ASSERT_NE(op_name(op), nullptr);
    EXPECT_EQ(op_from_name(op_name(op)), op) << op_name(op);
  }
  EXPECT_STREQ(op_name(Op::FloorDivide), "floor_divide");
  EXPECT_STREQ(op_name(Op::LeftShift), "bitwise_left_shift");
  EXPECT_STREQ(op_name(Op::Cast), "astype");
  EXPECT_STREQ(op_name(Op::Pow), "pow");
}

TEST(OpInfo, AliasesAndErrors) {
  EXPECT_EQ(op_from_name("true_divide"), Op::Divide);
  EXPECT_EQ(op_from_name("mod"), Op::Remainder);
  EXPECT_EQ(op_from_name("power"), Op::Pow);
  EXPECT_EQ(op_from_name("absolute"), Op::Abs);
  EXPECT_EQ(op_from_name("arctan2"), Op::Atan2);
  EXPECT_EQ(op_from_name("arccosh"), Op::Acosh);
  EXPECT_EQ(op_from_name("invert"), Op::BitwiseInvert);
  EXPECT_EQ(op_from_name("bitwise_not"), Op::BitwiseInvert);
  EXPECT_EQ(op_from_name("left_shift"), Op::LeftShift);
  EXPECT_EQ(op_from_name("right_shift"), Op::RightShift);
  EXPECT_THROW(op_from_name("xyz"), ValueError);
  try {
    op_from_name("xyz");
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "unknown function 'xyz'");
  }
}

TEST(OpInfo, ArityAndFamily) {
  EXPECT_EQ(op_arity(Op::Add), 2);
  EXPECT_EQ(op_arity(Op::Sin), 1);
  EXPECT_EQ(op_arity(Op::Where), 3);
  EXPECT_EQ(op_family(Op::Divide), OpFamily::Float);
  EXPECT_EQ(op_family(Op::Equal), OpFamily::Cmp);
  EXPECT_EQ(op_family(Op::Cast), OpFamily::Special);
}

// ---------------------------------------------------------------- coverage of the table

TEST(Lookup, Coverage) {
  const DType all[] = {DType::Bool, DType::I8,  DType::I16, DType::I32, DType::I64, DType::U8,
                       DType::U16,  DType::U32, DType::U64, DType::F32, DType::F64};
  for (int i = 0; i < static_cast<int>(Op::Count_); ++i) {
    Op op = static_cast<Op>(i);
    for (DType t : all) {
      const bool f = t == DType::F32 || t == DType::F64, b = t == DType::Bool;
      bool expect = false;
      switch (op_family(op)) {
        case OpFamily::Arith:
          expect = !b || op == Op::Add || op == Op::Multiply || op == Op::Maximum || op == Op::Minimum ||
                   op == Op::Abs || op == Op::Positive || op == Op::Floor || op == Op::Ceil || op == Op::Trunc ||
                   op == Op::Round || op == Op::Real || op == Op::Imag || op == Op::Conj;
          break;
        case OpFamily::Float: expect = f; break;
        case OpFamily::Int:
          expect = !f && (!b || op == Op::BitwiseAnd || op == Op::BitwiseOr || op == Op::BitwiseXor ||
                          op == Op::BitwiseInvert);
          break;
        case OpFamily::Cmp:
        case OpFamily::Pred: expect = true; break;
        case OpFamily::Logic: expect = b; break;
        case OpFamily::Special: expect = op != Op::Cast; break;
      }
      EXPECT_EQ(kernels::lookup(op, t) != nullptr, expect) << op_name(op) << " dtype " << static_cast<int>(t);
    }
  }
  const DType every[] = {DType::Bool, DType::I8,  DType::I16, DType::I32, DType::I64, DType::U8,  DType::U16,
                         DType::U32,  DType::U64, DType::F32, DType::F64, DType::C64, DType::C128};
  for (DType a : every)
    for (DType b : every) EXPECT_NE(kernels::lookup_cast(a, b), nullptr);
  // Complex: arithmetic, the math functions, ==, !=, the predicates; no ordering, no
  // rounding toward an integer, no bitwise ops.
  for (DType t : {DType::C64, DType::C128}) {
    for (Op op : {Op::Add, Op::Multiply, Op::Divide, Op::Pow, Op::Abs, Op::Sign, Op::Real, Op::Imag, Op::Conj,
                  Op::Angle, Op::Sqrt, Op::Expm1, Op::Log1p, Op::Atanh, Op::Equal, Op::Isinf, Op::Where, Op::Round})
      EXPECT_NE(kernels::lookup(op, t), nullptr) << op_name(op);
    for (Op op : {Op::Less, Op::Maximum, Op::Floor, Op::FloorDivide, Op::Remainder, Op::Atan2, Op::BitwiseAnd,
                  Op::Signbit, Op::Cbrt})
      EXPECT_EQ(kernels::lookup(op, t), nullptr) << op_name(op);
    EXPECT_EQ(op_out_dtype(Op::Abs, t), real_of(t));
    EXPECT_EQ(op_out_dtype(Op::Sqrt, t), t);
  }
  // float16: whatever float32 has (through float32, rounded once), and its own casts.
  for (int i = 0; i < static_cast<int>(Op::Count_); ++i) {
    const Op op = static_cast<Op>(i);
    if (op == Op::Cast) continue;
    EXPECT_EQ(kernels::lookup(op, DType::F16) != nullptr, kernels::lookup(op, DType::F32) != nullptr) << op_name(op);
  }
  for (DType t : every) {
    EXPECT_NE(kernels::lookup_cast(DType::F16, t), nullptr);
    EXPECT_NE(kernels::lookup_cast(t, DType::F16), nullptr);
  }
}

TEST(Half, RoundsOnceToNearestEvenAsNumPy) {
  // 2049 is halfway between float16's 2048 and 2050: to even (2048); 2051 -> 2052.
  const float in[4] = {2049.f, 2051.f, 65520.f, 1e-8f};
  uint16_t out[4];
  const void* src[1] = {in};
  kernels::lookup_cast(DType::F32, DType::F16)(out, src, 4);
  EXPECT_EQ(out[0], 0x6800);  // 2048
  EXPECT_EQ(out[1], 0x6802);  // 2052 (2050 is 0x6801: odd)
  EXPECT_EQ(out[2], 0x7C00);  // inf (past 65504 + half a step)
  EXPECT_EQ(out[3], 0x0000);  // below half the smallest subnormal
  // add: 2048 + 1 rounds to 2048 in float16, as NumPy's
  uint16_t a[1] = {0x6800}, b[1] = {0x3C00}, r[1];
  const void* ab[2] = {a, b};
  kernels::lookup(Op::Add, DType::F16)(r, ab, 1);
  EXPECT_EQ(r[0], 0x6800);
}

// ---------------------------------------------------------------- transcendentals

// The reference is computed in long double (glibc's double cbrt alone is off by 3-4 ULP).
template <class T> void check_unary(Op op, long double (*ref)(long double), double lo, double hi) {
  const DType t = sizeof(T) == 8 ? DType::F64 : DType::F32;
  for (size_t n : {size_t(1), size_t(5), size_t(4099)}) {
    auto a = ramp<T>(n, lo, hi);
    auto out = run1<T>(op, t, a);
    for (size_t i = 0; i < n; ++i)
      ASSERT_LE(ulp_diff(out[i], T(ref((long double)a[i]))), 2)
          << op_name(op) << "(" << a[i] << ") n=" << n << " got " << out[i];
  }
}

TEST(Math, UnaryMatchesCmath) {
  struct Case {
    Op op;
    long double (*ref)(long double);
    double lo, hi;
  };
  const Case cases[] = {
      {Op::Sin, [](long double x) { return std::sin(x); }, -10, 10},
      {Op::Cos, [](long double x) { return std::cos(x); }, -10, 10},
      {Op::Tan, [](long double x) { return std::tan(x); }, -1.5, 1.5},
      {Op::Asin, [](long double x) { return std::asin(x); }, -1, 1},
      {Op::Acos, [](long double x) { return std::acos(x); }, -1, 1},
      {Op::Atan, [](long double x) { return std::atan(x); }, -50, 50},
      {Op::Sinh, [](long double x) { return std::sinh(x); }, -20, 20},
      {Op::Cosh, [](long double x) { return std::cosh(x); }, -20, 20},
      {Op::Tanh, [](long double x) { return std::tanh(x); }, -5, 5},
      {Op::Asinh, [](long double x) { return std::asinh(x); }, -100, 100},
      {Op::Acosh, [](long double x) { return std::acosh(x); }, 1, 100},
      {Op::Atanh, [](long double x) { return std::atanh(x); }, -0.99, 0.99},
      {Op::Exp, [](long double x) { return std::exp(x); }, -80, 80},
      {Op::Exp2, [](long double x) { return std::exp2(x); }, -100, 100},
      {Op::Expm1, [](long double x) { return std::expm1(x); }, -5, 5},
      {Op::Log, [](long double x) { return std::log(x); }, 1e-6, 1e6},
      {Op::Log2, [](long double x) { return std::log2(x); }, 1e-6, 1e6},
      {Op::Log10, [](long double x) { return std::log10(x); }, 1e-6, 1e6},
      {Op::Log1p, [](long double x) { return std::log1p(x); }, -0.9, 100},
      {Op::Cbrt, [](long double x) { return std::cbrt(x); }, -1000, 1000},
      {Op::Sqrt, [](long double x) { return std::sqrt(x); }, 0, 1e6},
  };
  for (const Case& c : cases) {
    check_unary<double>(c.op, c.ref, c.lo, c.hi);
    check_unary<float>(c.op, c.ref, c.lo, c.hi);
  }
}

TEST(Math, SpecialValues) {
  std::vector<double> a = {kNaN, kInf, -kInf, 0.0, -0.0};
  auto s = run1<double>(Op::Sin, DType::F64, a);
  EXPECT_TRUE(std::isnan(s[0]) && std::isnan(s[1]) && std::isnan(s[2]));
  EXPECT_TRUE(same(s[4], -0.0));
  auto l = run1<double>(Op::Log, DType::F64, std::vector<double>{0.0, -1.0, kInf});
  EXPECT_EQ(l[0], -kInf);
  EXPECT_TRUE(std::isnan(l[1]));
  EXPECT_EQ(l[2], kInf);
}

TEST(Math, BinaryMatchesCmath) {
  const size_t n = 4099;
  auto a = ramp<double>(n, -7, 9), b = ramp<double>(n, 5, -3);
  auto at = run2<double>(Op::Atan2, DType::F64, a, b);
  auto hy = run2<double>(Op::Hypot, DType::F64, a, b);
  auto pw = run2<double>(Op::Pow, DType::F64, a, ramp<double>(n, -3, 3));
  auto bp = ramp<double>(n, -3, 3);
  auto dv = run2<double>(Op::Divide, DType::F64, a, b);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_LE(ulp_diff(at[i], std::atan2(a[i], b[i])), 2) << i;
    ASSERT_LE(ulp_diff(hy[i], std::hypot(a[i], b[i])), 1) << i;
    ASSERT_LE(ulp_diff(pw[i], std::pow(a[i], bp[i])), 2) << a[i] << "**" << bp[i];
    ASSERT_TRUE(same(dv[i], a[i] / b[i])) << i;
  }
  auto af = ramp<float>(5, 0.5, 3), bf = ramp<float>(5, 2, -2);
  auto pf = run2<float>(Op::Pow, DType::F32, af, bf);
  for (size_t i = 0; i < 5; ++i) EXPECT_LE(ulp_diff(pf[i], float(std::pow(double(af[i]), double(bf[i])))), 2);
}

TEST(Math, CopysignNextafter) {
  std::vector<double> a = {1.0, -2.0, kNaN, 0.0, 3.0}, b = {-0.0, 1.0, -1.0, -5.0, kInf};
  auto c = run2<double>(Op::Copysign, DType::F64, a, b);
  EXPECT_TRUE(same(c[0], -1.0));
  EXPECT_TRUE(same(c[1], 2.0));
  EXPECT_TRUE(std::isnan(c[2]) && std::signbit(c[2]));
  EXPECT_TRUE(same(c[3], -0.0));
  auto na = run2<double>(Op::Nextafter, DType::F64, a, b);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(same(na[i], std::nextafter(a[i], b[i]))) << i;
  std::vector<float> fa = {1.0f, 0.0f}, fb = {2.0f, -1.0f};
  auto nf = run2<float>(Op::Nextafter, DType::F32, fa, fb);
  EXPECT_EQ(nf[0], std::nextafter(1.0f, 2.0f));
  EXPECT_EQ(nf[1], std::nextafter(0.0f, -1.0f));
}

TEST(Math, Logaddexp) {
  std::vector<double> a = {1.0, -kInf, kInf, kInf, kNaN, 2.0, 0.5, -800.0};
  std::vector<double> b = {1.0, -kInf, kInf, -kInf, 1.0, kNaN, -3.0, -801.0};
  auto r = run2<double>(Op::Logaddexp, DType::F64, a, b);
  EXPECT_DOUBLE_EQ(r[0], 1.0 + std::log(2.0));
  EXPECT_EQ(r[1], -kInf);
  EXPECT_EQ(r[2], kInf);
  EXPECT_EQ(r[3], kInf);
  EXPECT_TRUE(std::isnan(r[4]));
  EXPECT_TRUE(std::isnan(r[5]));
  EXPECT_LE(ulp_diff(r[6], 0.5 + std::log1p(std::exp(-3.5))), 2);
  EXPECT_LE(ulp_diff(r[7], -800.0 + std::log1p(std::exp(-1.0))), 2);
  // Long input crosses the internal chunking.
  auto la = ramp<float>(1000, -20, 20), lb = ramp<float>(1000, 5, -5);
  auto lr = run2<float>(Op::Logaddexp, DType::F32, la, lb);
  for (size_t i = 0; i < la.size(); ++i) {
    double x = la[i], y = lb[i], m = std::max(x, y);
    ASSERT_LE(ulp_diff(lr[i], float(m + std::log1p(std::exp(-std::fabs(x - y))))), 2) << i;
  }
}

// ---------------------------------------------------------------- float arithmetic

TEST(FloatArith, MaxMinPropagateNaN) {
  std::vector<double> a = {1.0, kNaN, 3.0, kNaN, -kInf}, b = {2.0, 1.0, kNaN, kNaN, 5.0};
  auto mx = run2<double>(Op::Maximum, DType::F64, a, b);
  auto mn = run2<double>(Op::Minimum, DType::F64, a, b);
  EXPECT_EQ(mx[0], 2.0);
  EXPECT_EQ(mn[0], 1.0);
  for (int i : {1, 2, 3}) EXPECT_TRUE(std::isnan(mx[i]) && std::isnan(mn[i])) << i;
  EXPECT_EQ(mx[4], 5.0);
  EXPECT_EQ(mn[4], -kInf);
  // Float32 with n crossing the vector width.
  auto fa = ramp<float>(4099, -1, 1);
  auto fb = std::vector<float>(4099, 0.0f);
  fa[4098] = std::numeric_limits<float>::quiet_NaN();
  auto fm = run2<float>(Op::Maximum, DType::F32, fa, fb);
  EXPECT_EQ(fm[0], 0.0f);
  EXPECT_EQ(fm[4097], fa[4097]);
  EXPECT_TRUE(std::isnan(fm[4098]));
}

TEST(FloatArith, FloorDivideRemainderSigns) {
  // Expected values are NumPy's.
  std::vector<double> a = {7, -7, 7, -7, 5.5, -5.5, 1, -1, 1, 0, 6, -6};
  std::vector<double> b = {2, 2, -2, -2, 2, 2, kInf, kInf, 0, 0, 3, 3};
  auto q = run2<double>(Op::FloorDivide, DType::F64, a, b);
  auto r = run2<double>(Op::Remainder, DType::F64, a, b);
  const double eq[] = {3, -4, -4, 3, 2, -3, 0, -1, kInf, kNaN, 2, -2};
  const double er[] = {1, 1, -1, -1, 1.5, 0.5, 1, kInf, kNaN, kNaN, 0, 0};
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(same(q[i], eq[i])) << a[i] << " // " << b[i] << " = " << q[i];
    EXPECT_TRUE(same(r[i], er[i])) << a[i] << " % " << b[i] << " = " << r[i];
  }
  // Zero remainder takes the divisor's sign.
  auto rz = run2<double>(Op::Remainder, DType::F64, std::vector<double>{6, -6}, std::vector<double>{-3, 3});
  EXPECT_TRUE(same(rz[0], -0.0));
  EXPECT_TRUE(same(rz[1], 0.0));
  // float32 path
  auto qf = run2<float>(Op::FloorDivide, DType::F32, std::vector<float>{-7.5f}, std::vector<float>{2.0f});
  auto rf = run2<float>(Op::Remainder, DType::F32, std::vector<float>{-7.5f}, std::vector<float>{2.0f});
  EXPECT_EQ(qf[0], -4.0f);
  EXPECT_EQ(rf[0], 0.5f);
}

TEST(FloatArith, UnaryOps) {
  std::vector<double> a = {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.0, kNaN, 3.7, -kInf};
  auto rd = run1<double>(Op::Round, DType::F64, a);
  auto fl = run1<double>(Op::Floor, DType::F64, a);
  auto ce = run1<double>(Op::Ceil, DType::F64, a);
  auto tr = run1<double>(Op::Trunc, DType::F64, a);
  auto sg = run1<double>(Op::Sign, DType::F64, a);
  auto ab = run1<double>(Op::Abs, DType::F64, a);
  auto sq = run1<double>(Op::Square, DType::F64, a);
  auto rc = run1<double>(Op::Reciprocal, DType::F64, a);
  auto ng = run1<double>(Op::Negative, DType::F64, a);
  const double er[] = {-2, -2, -0.0, 0, 2, 2, -0.0, kNaN, 4, -kInf};
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(same(rd[i], er[i])) << "round " << a[i];
    EXPECT_TRUE(same(fl[i], std::floor(a[i]))) << a[i];
    EXPECT_TRUE(same(ce[i], std::ceil(a[i]))) << a[i];
    EXPECT_TRUE(same(tr[i], std::trunc(a[i]))) << a[i];
    EXPECT_TRUE(same(ab[i], std::fabs(a[i])));
    EXPECT_TRUE(same(sq[i], a[i] * a[i]));
    EXPECT_TRUE(same(rc[i], 1.0 / a[i]));
    EXPECT_TRUE(same(ng[i], -a[i]));
  }
  const double es[] = {-1, -1, -1, 1, 1, 1, 0, kNaN, 1, -1};
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(same(sg[i], es[i])) << "sign " << a[i];
  // float32 rounding with a tail (n = 5 < 8 lanes)
  auto rf = run1<float>(Op::Round, DType::F32, std::vector<float>{0.5f, 1.5f, 2.5f, -3.5f, 4.4f});
  EXPECT_EQ(rf, (std::vector<float>{0, 2, 2, -4, 4}));
}

// ---------------------------------------------------------------- integer arithmetic

TEST(IntArith, WrapAround) {
  auto s = run2<int8_t>(Op::Add, DType::I8, std::vector<int8_t>{127, -128}, std::vector<int8_t>{1, -1});
  EXPECT_EQ(s, (std::vector<int8_t>{-128, 127}));
  auto m = run2<uint16_t>(Op::Multiply, DType::U16, std::vector<uint16_t>{65535}, std::vector<uint16_t>{65535});
  EXPECT_EQ(m[0], 1);
  auto mi = run2<int64_t>(Op::Multiply, DType::I64, std::vector<int64_t>{INT64_MAX}, std::vector<int64_t>{2});
  EXPECT_EQ(mi[0], -2);
  auto ab = run1<int32_t>(Op::Abs, DType::I32, std::vector<int32_t>{INT32_MIN, -5, 5});
  EXPECT_EQ(ab, (std::vector<int32_t>{INT32_MIN, 5, 5}));
  auto ng = run1<uint8_t>(Op::Negative, DType::U8, std::vector<uint8_t>{1, 0});
  EXPECT_EQ(ng, (std::vector<uint8_t>{255, 0}));
  auto sg = run1<int16_t>(Op::Sign, DType::I16, std::vector<int16_t>{-7, 0, 9});
  EXPECT_EQ(sg, (std::vector<int16_t>{-1, 0, 1}));
  auto sq = run1<int8_t>(Op::Square, DType::I8, std::vector<int8_t>{16, -3});
  EXPECT_EQ(sq, (std::vector<int8_t>{0, 9}));
}

TEST(IntArith, FloorDivideRemainder) {
  std::vector<int32_t> a = {7, -7, 7, -7, 6, 5, INT32_MIN, INT32_MIN, 0};
  std::vector<int32_t> b = {2, 2, -2, -2, -3, 0, -1, 1, 0};
  auto q = run2<int32_t>(Op::FloorDivide, DType::I32, a, b);
  auto r = run2<int32_t>(Op::Remainder, DType::I32, a, b);
  EXPECT_EQ(q, (std::vector<int32_t>{3, -4, -4, 3, -2, 0, INT32_MIN, INT32_MIN, 0}));
  EXPECT_EQ(r, (std::vector<int32_t>{1, 1, -1, -1, 0, 0, 0, 0, 0}));
  // Every signed width, including the promotion to int for int8/int16.
  auto q8 = run2<int8_t>(Op::FloorDivide, DType::I8, std::vector<int8_t>{-128, -7}, std::vector<int8_t>{-1, 0});
  EXPECT_EQ(q8, (std::vector<int8_t>{-128, 0}));
  auto q64 =
      run2<int64_t>(Op::FloorDivide, DType::I64, std::vector<int64_t>{INT64_MIN, -1}, std::vector<int64_t>{-1, 3});
  EXPECT_EQ(q64, (std::vector<int64_t>{INT64_MIN, -1}));
  auto r64 = run2<int64_t>(Op::Remainder, DType::I64, std::vector<int64_t>{INT64_MIN, -1}, std::vector<int64_t>{-1, 3});
  EXPECT_EQ(r64, (std::vector<int64_t>{0, 2}));
  auto qu = run2<uint32_t>(Op::FloorDivide, DType::U32, std::vector<uint32_t>{7, 7}, std::vector<uint32_t>{2, 0});
  auto ru = run2<uint32_t>(Op::Remainder, DType::U32, std::vector<uint32_t>{7, 7}, std::vector<uint32_t>{2, 0});
  EXPECT_EQ(qu, (std::vector<uint32_t>{3, 0}));
  EXPECT_EQ(ru, (std::vector<uint32_t>{1, 0}));
}

TEST(IntArith, PowAndReciprocal) {
  std::vector<int32_t> a = {2, 3, -2, 1, -1, -1, 5, 2, 0, 7};
  std::vector<int32_t> b = {10, 0, 3, -5, -3, -4, -1, 31, 0, 1};
  auto p = run2<int32_t>(Op::Pow, DType::I32, a, b);
  EXPECT_EQ(p, (std::vector<int32_t>{1024, 1, -8, 1, -1, 1, 0, INT32_MIN, 1, 7}));
  auto p8 = run2<uint8_t>(Op::Pow, DType::U8, std::vector<uint8_t>{3, 2}, std::vector<uint8_t>{5, 8});
  EXPECT_EQ(p8, (std::vector<uint8_t>{243, 0}));
  auto p64 = run2<int64_t>(Op::Pow, DType::I64, std::vector<int64_t>{3}, std::vector<int64_t>{40});
  int64_t e = 1;
  for (int i = 0; i < 40; ++i) e = int64_t(uint64_t(e) * 3u);
  EXPECT_EQ(p64[0], e);
  auto rc = run1<int16_t>(Op::Reciprocal, DType::I16, std::vector<int16_t>{0, 1, -1, 2, -5});
  EXPECT_EQ(rc, (std::vector<int16_t>{0, 1, -1, 0, 0}));
}

TEST(IntArith, MaxMinAndLongBlocks) {
  for (size_t n : {size_t(1), size_t(5), size_t(4099)}) {
    std::vector<int64_t> a(n), b(n);
    for (size_t i = 0; i < n; ++i) {
      a[i] = int64_t(i * 7919 % 1000) - 500;
      b[i] = int64_t(i * 104729 % 1000) - 500;
    }
    auto mx = run2<int64_t>(Op::Maximum, DType::I64, a, b);
    auto sb = run2<int64_t>(Op::Subtract, DType::I64, a, b);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(mx[i], std::max(a[i], b[i]));
      ASSERT_EQ(sb[i], a[i] - b[i]);
    }
  }
}

TEST(BoolArith, LogicalForms) {
  std::vector<uint8_t> a = {0, 0, 1, 1}, b = {0, 1, 0, 1};
  EXPECT_EQ(run2<uint8_t>(Op::Add, DType::Bool, a, b), (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(run2<uint8_t>(Op::Multiply, DType::Bool, a, b), (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(run2<uint8_t>(Op::Maximum, DType::Bool, a, b), (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(run2<uint8_t>(Op::Minimum, DType::Bool, a, b), (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(run1<uint8_t>(Op::Floor, DType::Bool, a), a);
  EXPECT_EQ(kernels::lookup(Op::Subtract, DType::Bool), nullptr);
  EXPECT_EQ(kernels::lookup(Op::Sin, DType::I32), nullptr);
}

// ---------------------------------------------------------------- bitwise, compare, logic

TEST(Bitwise, ShiftsOutOfRange) {
  std::vector<int32_t> a = {1, 1, 1, -8, -8, 8, 3};
  std::vector<int32_t> b = {31, 32, -1, 40, 1, 100, 2};
  EXPECT_EQ(run2<int32_t>(Op::LeftShift, DType::I32, a, b), (std::vector<int32_t>{INT32_MIN, 0, 0, 0, -16, 0, 12}));
  EXPECT_EQ(run2<int32_t>(Op::RightShift, DType::I32, a, b), (std::vector<int32_t>{0, 0, 0, -1, -4, 0, 0}));
  auto l8 = run2<int8_t>(Op::LeftShift, DType::I8, std::vector<int8_t>{1, 1, -1}, std::vector<int8_t>{7, 8, 3});
  EXPECT_EQ(l8, (std::vector<int8_t>{-128, 0, -8}));
  auto r8 = run2<int8_t>(Op::RightShift, DType::I8, std::vector<int8_t>{-128, -128, 64}, std::vector<int8_t>{7, 8, 9});
  EXPECT_EQ(r8, (std::vector<int8_t>{-1, -1, 0}));
  auto ru =
      run2<uint64_t>(Op::RightShift, DType::U64, std::vector<uint64_t>{~0ull, ~0ull}, std::vector<uint64_t>{63, 64});
  EXPECT_EQ(ru, (std::vector<uint64_t>{1, 0}));
  auto lu = run2<uint16_t>(Op::LeftShift, DType::U16, std::vector<uint16_t>{0xFFFF}, std::vector<uint16_t>{4});
  EXPECT_EQ(lu[0], 0xFFF0);
}

TEST(Bitwise, AndOrXorInvert) {
  std::vector<uint8_t> a = {0xF0, 0x0F}, b = {0xFF, 0x01};
  EXPECT_EQ(run2<uint8_t>(Op::BitwiseAnd, DType::U8, a, b), (std::vector<uint8_t>{0xF0, 0x01}));
  EXPECT_EQ(run2<uint8_t>(Op::BitwiseXor, DType::U8, a, b), (std::vector<uint8_t>{0x0F, 0x0E}));
  EXPECT_EQ(run1<int16_t>(Op::BitwiseInvert, DType::I16, std::vector<int16_t>{0, -1}), (std::vector<int16_t>{-1, 0}));
  EXPECT_EQ(run1<uint8_t>(Op::BitwiseInvert, DType::Bool, std::vector<uint8_t>{0, 1}), (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(run2<uint8_t>(Op::BitwiseXor, DType::Bool, std::vector<uint8_t>{0, 1, 1}, std::vector<uint8_t>{1, 1, 0}),
            (std::vector<uint8_t>{1, 0, 1}));
}

TEST(Compare, FloatNaNAndTail) {
  std::vector<double> a = {1, kNaN, 2, kNaN, -0.0}, b = {1, 1, 3, kNaN, 0.0};
  EXPECT_EQ(run2<uint8_t>(Op::Equal, DType::F64, a, b), (std::vector<uint8_t>{1, 0, 0, 0, 1}));
  EXPECT_EQ(run2<uint8_t>(Op::NotEqual, DType::F64, a, b), (std::vector<uint8_t>{0, 1, 1, 1, 0}));
  EXPECT_EQ(run2<uint8_t>(Op::Less, DType::F64, a, b), (std::vector<uint8_t>{0, 0, 1, 0, 0}));
  EXPECT_EQ(run2<uint8_t>(Op::GreaterEqual, DType::F64, a, b), (std::vector<uint8_t>{1, 0, 0, 0, 1}));
  auto ia = ramp<int16_t>(4099, -100, 100);
  std::vector<int16_t> ib(4099, 0);
  auto g = run2<uint8_t>(Op::Greater, DType::I16, ia, ib);
  for (size_t i = 0; i < ia.size(); ++i) ASSERT_EQ(g[i], ia[i] > 0);
  auto lu = run2<uint8_t>(Op::LessEqual, DType::U64, std::vector<uint64_t>{~0ull, 1}, std::vector<uint64_t>{1, 1});
  EXPECT_EQ(lu, (std::vector<uint8_t>{0, 1}));
  EXPECT_EQ(run2<uint8_t>(Op::Less, DType::Bool, std::vector<uint8_t>{0, 1}, std::vector<uint8_t>{1, 1}),
            (std::vector<uint8_t>{1, 0}));
}

TEST(Pred, FloatsIntsBool) {
  std::vector<float> f = {1.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()};
  EXPECT_EQ(run1<uint8_t>(Op::Isnan, DType::F32, f), (std::vector<uint8_t>{0, 0, 1, 0, 0}));
  EXPECT_EQ(run1<uint8_t>(Op::Isinf, DType::F32, f), (std::vector<uint8_t>{0, 0, 0, 1, 1}));
  EXPECT_EQ(run1<uint8_t>(Op::Isfinite, DType::F32, f), (std::vector<uint8_t>{1, 1, 0, 0, 0}));
  EXPECT_EQ(run1<uint8_t>(Op::Signbit, DType::F32, f), (std::vector<uint8_t>{0, 1, 0, 0, 1}));
  std::vector<int64_t> i = {-3, 0, 4};
  EXPECT_EQ(run1<uint8_t>(Op::Isnan, DType::I64, i), (std::vector<uint8_t>{0, 0, 0}));
  EXPECT_EQ(run1<uint8_t>(Op::Isfinite, DType::I64, i), (std::vector<uint8_t>{1, 1, 1}));
  EXPECT_EQ(run1<uint8_t>(Op::Signbit, DType::I64, i), (std::vector<uint8_t>{1, 0, 0}));
  EXPECT_EQ(run1<uint8_t>(Op::Signbit, DType::U8, std::vector<uint8_t>{255}), (std::vector<uint8_t>{0}));
  EXPECT_EQ(run1<uint8_t>(Op::Isinf, DType::Bool, std::vector<uint8_t>{1}), (std::vector<uint8_t>{0}));
}

TEST(Logic, BoolOnly) {
  std::vector<uint8_t> a = {0, 0, 1, 1}, b = {0, 1, 0, 1};
  EXPECT_EQ(run2<uint8_t>(Op::LogicalAnd, DType::Bool, a, b), (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(run2<uint8_t>(Op::LogicalOr, DType::Bool, a, b), (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(run2<uint8_t>(Op::LogicalXor, DType::Bool, a, b), (std::vector<uint8_t>{0, 1, 1, 0}));
  EXPECT_EQ(run1<uint8_t>(Op::LogicalNot, DType::Bool, a), (std::vector<uint8_t>{1, 1, 0, 0}));
  EXPECT_EQ(kernels::lookup(Op::LogicalAnd, DType::I32), nullptr);
}

// ---------------------------------------------------------------- where, copy, cast

template <class T> void check_where(DType t, size_t n) {
  std::vector<uint8_t> c(n);
  std::vector<T> x(n), y(n), out(n);
  for (size_t i = 0; i < n; ++i) {
    c[i] = (i % 3) == 0;
    x[i] = T(i);
    y[i] = T(-1);
  }
  const void* in[] = {c.data(), x.data(), y.data()};
  kernels::lookup(Op::Where, t)(out.data(), in, static_cast<int64_t>(n));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], c[i] ? x[i] : y[i]) << i;
}

TEST(Where, AllWidths) {
  for (size_t n : {size_t(1), size_t(5), size_t(4099)}) {
    check_where<double>(DType::F64, n);
    check_where<float>(DType::F32, n);
    check_where<int16_t>(DType::I16, n);
    check_where<uint8_t>(DType::U8, n);
  }
  // NaN passes through bit-exactly.
  std::vector<uint8_t> c = {1, 0};
  std::vector<double> x = {kNaN, 1.0}, y = {2.0, -kInf}, out(2);
  const void* in[] = {c.data(), x.data(), y.data()};
  kernels::lookup(Op::Where, DType::F64)(out.data(), in, 2);
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_EQ(out[1], -kInf);
}

TEST(Copy, Bytes) {
  std::vector<uint16_t> a = {1, 2, 3, 65535, 9};
  EXPECT_EQ(run1<uint16_t>(Op::Copy, DType::U16, a), a);
}

template <class To, class From> std::vector<To> cast(DType from, DType to, const std::vector<From>& a) {
  std::vector<To> out(a.size());
  const void* in[] = {a.data()};
  kernels::lookup_cast(from, to)(out.data(), in, static_cast<int64_t>(a.size()));
  return out;
}

TEST(Cast, ToBoolAndBack) {
  std::vector<double> f = {0.0, -0.0, kNaN, 0.5, -kInf};
  EXPECT_EQ((cast<uint8_t>(DType::F64, DType::Bool, f)), (std::vector<uint8_t>{0, 0, 1, 1, 1}));
  std::vector<float> f32 = {0.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f};
  EXPECT_EQ((cast<uint8_t>(DType::F32, DType::Bool, f32)), (std::vector<uint8_t>{0, 1, 1}));
  EXPECT_EQ((cast<uint8_t>(DType::I64, DType::Bool, std::vector<int64_t>{0, -5, 1LL << 40})),
            (std::vector<uint8_t>{0, 1, 1}));
  EXPECT_EQ((cast<double>(DType::Bool, DType::F64, std::vector<uint8_t>{0, 1})), (std::vector<double>{0.0, 1.0}));
  EXPECT_EQ((cast<int32_t>(DType::Bool, DType::I32, std::vector<uint8_t>{1, 0})), (std::vector<int32_t>{1, 0}));
}

TEST(Cast, NumericPairs) {
  EXPECT_EQ((cast<int32_t>(DType::F64, DType::I32, std::vector<double>{-2.7, 2.7, 1e3})),
            (std::vector<int32_t>{-2, 2, 1000}));
  EXPECT_EQ((cast<int8_t>(DType::I32, DType::I8, std::vector<int32_t>{300, -129})), (std::vector<int8_t>{44, 127}));
  EXPECT_EQ((cast<uint32_t>(DType::I16, DType::U32, std::vector<int16_t>{-1})), (std::vector<uint32_t>{0xFFFFFFFFu}));
  EXPECT_EQ((cast<float>(DType::F64, DType::F32, std::vector<double>{0.1, 1e300})),
            (std::vector<float>{0.1f, std::numeric_limits<float>::infinity()}));
  EXPECT_EQ((cast<double>(DType::U64, DType::F64, std::vector<uint64_t>{~0ull})),
            (std::vector<double>{18446744073709551616.0}));
  auto same_t = cast<int64_t>(DType::I64, DType::I64, std::vector<int64_t>{INT64_MIN, 5});
  EXPECT_EQ(same_t, (std::vector<int64_t>{INT64_MIN, 5}));
  // Out-of-range / NaN float -> int: value is implementation-defined, but must not trap.
  auto wild = cast<int32_t>(DType::F64, DType::I32, std::vector<double>{kNaN, kInf, -1e300, 1e20});
  EXPECT_EQ(wild.size(), 4u);
  auto wildu = cast<uint8_t>(DType::F32, DType::U8, std::vector<float>{std::numeric_limits<float>::quiet_NaN(), 1e30f});
  EXPECT_EQ(wildu.size(), 2u);
}

TEST(Cast, FloatToIntIsDefinedForNaNAndOutOfRange) {
  // What NumPy 2.4 gives on x86-64 (np.array(x).astype(t)), without UB in our code.
  const std::vector<double> x = {kNaN, 1e20, -1e20, 300.0, -1.0, 9223372036854775808.0, -2.5, -2147483649.0};
  EXPECT_EQ((cast<int8_t>(DType::F64, DType::I8, x)), (std::vector<int8_t>{0, 0, 0, 44, -1, 0, -2, 0}));
  EXPECT_EQ((cast<int32_t>(DType::F64, DType::I32, x)),
            (std::vector<int32_t>{INT32_MIN, INT32_MIN, INT32_MIN, 300, -1, INT32_MIN, -2, INT32_MIN}));
  EXPECT_EQ((cast<int64_t>(DType::F64, DType::I64, x)),
            (std::vector<int64_t>{INT64_MIN, INT64_MIN, INT64_MIN, 300, -1, INT64_MIN, -2, -2147483649LL}));
  EXPECT_EQ((cast<uint8_t>(DType::F64, DType::U8, x)), (std::vector<uint8_t>{0, 0, 0, 44, 255, 0, 254, 0}));
  EXPECT_EQ(
      (cast<uint64_t>(DType::F64, DType::U64, x)),
      (std::vector<uint64_t>{1ull << 63, 0, 1ull << 63, 300, ~0ull, 1ull << 63, ~0ull - 1, 18446744071562067967ull}));
  const std::vector<float> f = {std::numeric_limits<float>::quiet_NaN(), 1e20f, -3.5f};
  EXPECT_EQ((cast<int16_t>(DType::F32, DType::I16, f)), (std::vector<int16_t>{0, 0, -3}));
}

// The software conversions (clang builds, without _Float16) against the compiler's own,
// where it has one: every float16 value back, and doubles at, between and around them.
TEST(Half, SoftwareConversionsMatchTheCompilers) {
  std::mt19937_64 rng(7);
  for (uint32_t b = 0; b < 0x10000; ++b) {
    half h;
    h.bits = static_cast<uint16_t>(b);
    const float f = static_cast<float>(h), g = detail::half_bits_to_float(h.bits);
    if (f != f) {
      EXPECT_TRUE(g != g) << b;
      continue;
    }
    EXPECT_EQ(std::memcmp(&f, &g, sizeof f), 0) << b;
    // the value itself, the midpoint to the next one (a tie), and a hair on either side
    const uint16_t next = static_cast<uint16_t>(b + 1);
    half hn;
    hn.bits = next;
    const double x = f, y = static_cast<float>(hn);
    for (double d : {x, (x + y) / 2, std::nextafter((x + y) / 2, 0.0), std::nextafter((x + y) / 2, 1e300)}) {
      if (d != d || std::isinf(y)) continue;
      EXPECT_EQ(half(d).bits, detail::double_to_half_bits(d)) << b << " " << d;
      EXPECT_EQ(half(static_cast<float>(d)).bits, detail::double_to_half_bits(static_cast<float>(d))) << b;
    }
  }
  for (int i = 0; i < 20000; ++i) {
    const double d =
        std::ldexp(static_cast<double>(rng() >> 11) / 9007199254740992.0 - 0.5, static_cast<int>(rng() % 44) - 28);
    EXPECT_EQ(half(d).bits, detail::double_to_half_bits(d)) << d;
  }
  for (double d : {65504.0, 65519.99, 65520.0, 1e300, -0.0, 0x1p-25, 0x1p-24, 3 * 0x1p-26})
    EXPECT_EQ(half(d).bits, detail::double_to_half_bits(d)) << d;
}
