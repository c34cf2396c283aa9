// Private helpers for the elementwise block kernels: dtype -> C++ type mapping, loop
// templates over __restrict pointers (so gcc auto-vectorises them), SLEEF vector wrappers
// and the [op][dtype] dispatch table that the kernels_*.cpp files fill in.
#pragma once
#include <immintrin.h>
#include <sleef.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "b2lazy/ops.hpp"
#include "core/half.hpp"

namespace b2lazy::kernels::detail {

// ---- dtype <-> C++ type -------------------------------------------------------------
template <DType D> struct CType;
template <> struct CType<DType::Bool> { using type = uint8_t; };  // 0/1 bytes
template <> struct CType<DType::I8> { using type = int8_t; };
template <> struct CType<DType::I16> { using type = int16_t; };
template <> struct CType<DType::I32> { using type = int32_t; };
template <> struct CType<DType::I64> { using type = int64_t; };
template <> struct CType<DType::U8> { using type = uint8_t; };
template <> struct CType<DType::U16> { using type = uint16_t; };
template <> struct CType<DType::U32> { using type = uint32_t; };
template <> struct CType<DType::U64> { using type = uint64_t; };
template <> struct CType<DType::F32> { using type = float; };
template <> struct CType<DType::F64> { using type = double; };
template <> struct CType<DType::C64> { using type = std::complex<float>; };
template <> struct CType<DType::C128> { using type = std::complex<double>; };
template <> struct CType<DType::F16> { using type = half; };
template <DType D> using ctype = typename CType<D>::type;

// Unsigned type in which +, -, * on T wrap without UB: at least `unsigned`, because
// uint8/uint16 operands would otherwise promote to (signed) int and could overflow.
template <class T> using wrap_t = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

// Unsigned integer with the same size as T (bit manipulation of floats, Where).
template <class T>
using bits_t = std::conditional_t<
    sizeof(T) == 8, uint64_t,
    std::conditional_t<sizeof(T) == 4, uint32_t, std::conditional_t<sizeof(T) == 2, uint16_t, uint8_t>>>;

// Calls f.template operator()<D>() for each D in Ds (register a kernel per dtype).
template <DType... Ds, class F> void for_dtypes(F&& f) { (f.template operator()<Ds>(), ...); }

#define B2LAZY_INT_DTYPES DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16, DType::U32, DType::U64
#define B2LAZY_FLOAT_DTYPES DType::F32, DType::F64
#define B2LAZY_ALL_DTYPES DType::Bool, B2LAZY_INT_DTYPES, B2LAZY_FLOAT_DTYPES

// ---- scalar-functor loops ---------------------------------------------------------------
// F is a stateless struct with a static (usually templated) f(...). The inner loops take
// __restrict parameters; out == in (exact in-place) is fine for these pure element maps.
template <class R, class T, class F> inline void loop1(R* __restrict o, const T* __restrict a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = F::f(a[i]);
}
template <class R, class T, class F>
inline void loop2(R* __restrict o, const T* __restrict a, const T* __restrict b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = F::f(a[i], b[i]);
}
template <class R, class T, class F> void unary(void* out, const void* const* in, int64_t n) {
  loop1<R, T, F>(static_cast<R*>(out), static_cast<const T*>(in[0]), n);
}
template <class R, class T, class F> void binary(void* out, const void* const* in, int64_t n) {
  loop2<R, T, F>(static_cast<R*>(out), static_cast<const T*>(in[0]), static_cast<const T*>(in[1]), n);
}

// The Copy kernel (and the cast of a type to itself).
template <class T> void copy(void* out, const void* const* in, int64_t n) { std::memcpy(out, in[0], n * sizeof(T)); }

// ---- SLEEF vector functions ---------------------------------------------------------------
// The widest variant the build targets is called directly (no dispatcher): AVX-512F (8
// doubles: sin of 16 M doubles 26 ms against AVX2's 45 ms on the benchmark machine, same
// u10 accuracy), else AVX2, else SSE2, the x86-64 baseline.
#if defined(__AVX512F__)
#define B2LAZY_SLEEF_D(name, acc) Sleef_##name##d8_##acc##avx512f
#define B2LAZY_SLEEF_F(name, acc) Sleef_##name##f16_##acc##avx512f
template <class T> struct Simd;
template <> struct Simd<double> {
  using V = __m512d;
  static constexpr int W = 8;
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static void store(double* p, V v) { _mm512_storeu_pd(p, v); }
};
template <> struct Simd<float> {
  using V = __m512;
  static constexpr int W = 16;
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
};
#elif defined(__AVX2__)
#define B2LAZY_SLEEF_D(name, acc) Sleef_##name##d4_##acc##avx2
#define B2LAZY_SLEEF_F(name, acc) Sleef_##name##f8_##acc##avx2
template <class T> struct Simd;
template <> struct Simd<double> {
  using V = __m256d;
  static constexpr int W = 4;
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
};
template <> struct Simd<float> {
  using V = __m256;
  static constexpr int W = 8;
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
};
#else
#define B2LAZY_SLEEF_D(name, acc) Sleef_##name##d2_##acc##sse2
#define B2LAZY_SLEEF_F(name, acc) Sleef_##name##f4_##acc##sse2
template <class T> struct Simd;
template <> struct Simd<double> {
  using V = __m128d;
  static constexpr int W = 2;
  static V load(const double* p) { return _mm_loadu_pd(p); }
  static void store(double* p, V v) { _mm_storeu_pd(p, v); }
};
template <> struct Simd<float> {
  using V = __m128;
  static constexpr int W = 4;
  static V load(const float* p) { return _mm_loadu_ps(p); }
  static void store(float* p, V v) { _mm_storeu_ps(p, v); }
};
#endif

// gcc vectorises floor/ceil/trunc/nearbyint only under -fno-trapping-math, so the AVX
// builds round with vroundp[sd] by hand (Mode: _MM_FROUND_TO_NEG_INF, ...).
#if defined(__AVX512F__)
#define B2LAZY_HAVE_VROUND 1
// (The masked form with every lane set: gcc 12 warns that the unmasked one's undefined
// source may be used uninitialized.)
template <int Mode> inline __m512d vround(__m512d v) {
  return _mm512_mask_roundscale_pd(v, 0xFF, v, Mode | _MM_FROUND_NO_EXC);
}
template <int Mode> inline __m512 vround(__m512 v) {
  return _mm512_mask_roundscale_ps(v, 0xFFFF, v, Mode | _MM_FROUND_NO_EXC);
}
#elif defined(__AVX2__)
#define B2LAZY_HAVE_VROUND 1
template <int Mode> inline __m256d vround(__m256d v) { return _mm256_round_pd(v, Mode | _MM_FROUND_NO_EXC); }
template <int Mode> inline __m256 vround(__m256 v) { return _mm256_round_ps(v, Mode | _MM_FROUND_NO_EXC); }
#endif

// o[i] = VF(a[i]) for a SLEEF vector function; the tail (n % W) goes through a padded
// local vector so we never read or write past the buffers. Works in place (o == a).
template <class T, auto VF> inline void vapply1(T* o, const T* a, int64_t n) {
  using S = Simd<T>;
  int64_t i = 0;
  for (; i + S::W <= n; i += S::W) S::store(o + i, VF(S::load(a + i)));
  if (i < n) {
    alignas(64) T pa[S::W] = {};
    std::memcpy(pa, a + i, (n - i) * sizeof(T));
    S::store(pa, VF(S::load(pa)));
    std::memcpy(o + i, pa, (n - i) * sizeof(T));
  }
}
template <class T, auto VF> inline void vapply2(T* o, const T* a, const T* b, int64_t n) {
  using S = Simd<T>;
  int64_t i = 0;
  for (; i + S::W <= n; i += S::W) S::store(o + i, VF(S::load(a + i), S::load(b + i)));
  if (i < n) {
    alignas(64) T pa[S::W] = {}, pb[S::W] = {};
    std::memcpy(pa, a + i, (n - i) * sizeof(T));
    std::memcpy(pb, b + i, (n - i) * sizeof(T));
    S::store(pa, VF(S::load(pa), S::load(pb)));
    std::memcpy(o + i, pa, (n - i) * sizeof(T));
  }
}
template <class T, auto VF> void vec_unary(void* out, const void* const* in, int64_t n) {
  vapply1<T, VF>(static_cast<T*>(out), static_cast<const T*>(in[0]), n);
}
template <class T, auto VF> void vec_binary(void* out, const void* const* in, int64_t n) {
  vapply2<T, VF>(static_cast<T*>(out), static_cast<const T*>(in[0]), static_cast<const T*>(in[1]), n);
}

// Registers the SLEEF function `name` (accuracy suffix acc: u10, u05 or empty) for float32/64.
#define B2LAZY_SLEEF1(tab, op, name, acc)                                      \
  (tab).set(Op::op, DType::F64, vec_unary<double, B2LAZY_SLEEF_D(name, acc)>), \
      (tab).set(Op::op, DType::F32, vec_unary<float, B2LAZY_SLEEF_F(name, acc)>)
#define B2LAZY_SLEEF2(tab, op, name, acc)                                       \
  (tab).set(Op::op, DType::F64, vec_binary<double, B2LAZY_SLEEF_D(name, acc)>), \
      (tab).set(Op::op, DType::F32, vec_binary<float, B2LAZY_SLEEF_F(name, acc)>)

// ---- dispatch table -----------------------------------------------------------------------
struct Table {
  BlockFn fn[static_cast<size_t>(Op::Count_)][kNumDTypes] = {};
  BlockFn cast[kNumDTypes][kNumDTypes] = {};
  void set(Op op, DType t, BlockFn f) { fn[static_cast<size_t>(op)][static_cast<size_t>(t)] = f; }
};

// One per kernels_*.cpp file, called once when the table is built.
void register_arith(Table& t);    // Arith family
void register_math(Table& t);     // Float family
void register_compare(Table& t);  // Cmp, Pred, Logic and Int families
void register_special(Table& t);  // Where, Copy and the cast matrix
void register_complex(Table& t);  // complex64/128, and real/imag/conj/angle of real types
void register_half(Table& t);     // float16: every float32 kernel wrapped; its casts (last)

}  // namespace b2lazy::kernels::detail
