// float16 kernels. NumPy's float16 loops widen each operand to float32, compute, and
// round the result to float16 once per operation; every op here does the same through
// the float32 kernel of the table, in runs that stay on the stack. Casts go through
// float32 out of float16 (exact) and through float64 into it (one rounding, from the value).
#include <algorithm>
#include <cstring>
#include <utility>

#include "core/half.hpp"
#include "kernel_util.hpp"

namespace b2lazy::kernels::detail {
namespace {

constexpr size_t kOps = static_cast<size_t>(Op::Count_);
constexpr int64_t kRun = 512;
BlockFn g_f32[kOps] = {};  // the float32 kernel each float16 one wraps

// Conversions 8 at a time with F16C where the build targets it (gcc does not vectorise
// the scalar ones: the struct's bits go through memcpy), rounding to nearest even.
void widen(float* o, const half* a, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(o + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i))));
#endif
  for (; i < n; ++i) o[i] = static_cast<float>(a[i]);
}
void narrow(half* o, const float* a, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(a + i), _MM_FROUND_TO_NEAREST_INT));
#endif
  for (; i < n; ++i) o[i] = half(a[i]);
}

template <size_t I> void via_float32(void* out, const void* const* in, int64_t n) {
  constexpr Op op = static_cast<Op>(I);
  const int arity = op_arity(op);
  const bool to_bool = op_out_dtype(op, DType::F32) == DType::Bool;
  alignas(64) float args[3][kRun], res[kRun];
  const void* ins[3] = {args[0], args[1], args[2]};
  for (int64_t start = 0; start < n; start += kRun) {
    const int64_t m = std::min(kRun, n - start);
    for (int k = 0; k < arity; ++k) widen(args[k], static_cast<const half*>(in[k]) + start, m);
    if (to_bool) {
      g_f32[I](static_cast<uint8_t*>(out) + start, ins, m);
    } else {
      g_f32[I](res, ins, m);
      narrow(static_cast<half*>(out) + start, res, m);
    }
  }
}

// float16 -> To: widened to float32, then the float32 cast.
template <DType To> void cast_from_half(void* out, const void* const* in, int64_t n) {
  alignas(64) float buf[kRun];
  const void* src[1] = {buf};
  const BlockFn cast = kernels::lookup_cast(DType::F32, To);
  for (int64_t start = 0; start < n; start += kRun) {
    const int64_t m = std::min(kRun, n - start);
    widen(buf, static_cast<const half*>(in[0]) + start, m);
    cast(static_cast<char*>(out) + start * static_cast<int64_t>(sizeof(ctype<To>)), src, m);
  }
}
// From -> float16: the value as float64 (exact but for integers beyond 2**53, which
// float16 rounds to infinity anyway), rounded once.
template <DType From> void cast_to_half(void* out, const void* const* in, int64_t n) {
  alignas(64) double buf[kRun];
  const BlockFn to_f64 = kernels::lookup_cast(From, DType::F64);
  for (int64_t start = 0; start < n; start += kRun) {
    const int64_t m = std::min(kRun, n - start);
    const void* src[1] = {static_cast<const char*>(in[0]) + start * static_cast<int64_t>(sizeof(ctype<From>))};
    to_f64(buf, src, m);
    half* o = static_cast<half*>(out) + start;
    for (int64_t i = 0; i < m; ++i) o[i] = half(buf[i]);
  }
}

// nextafter steps in float16's own spacing (through float32 it would round back): the
// bit pattern moves by one, away from zero when y is farther from it than x.
void nextafter_half(void* out, const void* const* in, int64_t n) {
  const half* x = static_cast<const half*>(in[0]);
  const half* y = static_cast<const half*>(in[1]);
  half* o = static_cast<half*>(out);
  for (int64_t i = 0; i < n; ++i) {
    const float fx = static_cast<float>(x[i]), fy = static_cast<float>(y[i]);
    if (fx != fx || fy != fy) {
      o[i] = half(fx + fy);  // NaN
    } else if (fx == fy) {
      o[i] = y[i];
    } else if (fx == 0) {  // the smallest subnormal, on y's side
      o[i].bits = static_cast<uint16_t>((y[i].bits & 0x8000) | 1);
    } else {
      const bool away = (fy > fx) == (fx > 0);
      o[i].bits = static_cast<uint16_t>(away ? x[i].bits + 1 : x[i].bits - 1);
    }
  }
}

template <size_t... I> void wrap_float32_ops(Table& t, std::index_sequence<I...>) {
  (((g_f32[I] = t.fn[I][size_t(DType::F32)]),
    (t.fn[I][size_t(DType::F16)] =
         g_f32[I] && op_family(static_cast<Op>(I)) != OpFamily::Special ? via_float32<I> : nullptr)),
   ...);
}

}  // namespace

// Called last: it wraps the float32 kernels the other files registered.
void register_half(Table& t) {
  wrap_float32_ops(t, std::make_index_sequence<kOps>{});
  t.set(Op::Nextafter, DType::F16, nextafter_half);
  t.set(Op::Copy, DType::F16, copy<half>);
  t.set(Op::Where, DType::F16, t.fn[size_t(Op::Where)][size_t(DType::I16)]);  // the bits, 2 bytes
  t.cast[size_t(DType::F16)][size_t(DType::F16)] = t.fn[size_t(Op::Copy)][size_t(DType::F16)];
  for_dtypes<B2LAZY_ALL_DTYPES, DType::C64, DType::C128>([&]<DType D>() {
    t.cast[size_t(DType::F16)][size_t(D)] = cast_from_half<D>;  // (they look up the other
    t.cast[size_t(D)][size_t(DType::F16)] = cast_to_half<D>;    //  cast when called)
  });
}

}  // namespace b2lazy::kernels::detail
