// The Array API's fft extension as registry rows (b2lazy/fft.hpp), named as b2lazy.fft's
// functions call them: fft_fft(x, n=8), fft_rfftn(x, axes=(0, 1)), fft_fftfreq(16, d=0.1)
// (b2lazy.fft.fft is fft_fft), with the standard's signatures.
#include "b2lazy/error.hpp"
#include "b2lazy/fft.hpp"
#include "expr/registry/rows.hpp"
#include "expr/value.hpp"

namespace b2lazy::expr {

namespace {
Value arr(Array a, const Args& x) { return Value::of(std::move(a), x.column()); }

FftNorm norm_of(const Args& x) {
  const Value& v = x.get("norm");
  if (v.kind != Value::Kind::String) x.bad("norm", "'backward', 'ortho' or 'forward'");
  return fft_norm(v.str, x.fn() + "()");
}

std::optional<std::vector<int64_t>> s_of(const Args& x) {
  if (!x.has("s")) return std::nullopt;
  return x.integers("s");
}

using One = Array (*)(const Array&, std::optional<int64_t>, int, FftNorm);
using Nd = Array (*)(const Array&, const std::optional<std::vector<int64_t>>&, const std::optional<std::vector<int>>&,
                     FftNorm);

FunctionCall one(One f) {
  return [f](Args& x) {
    x.bind();
    return arr(f(x.array("x"), x.opt_integer("n"), x.axis("axis"), norm_of(x)), x);
  };
}

FunctionCall nd(Nd f) {
  return [f](Args& x) {
    x.bind();
    return arr(f(x.array("x"), s_of(x), x.opt_axes("axes"), norm_of(x)), x);
  };
}

FunctionCall freq(bool real) {
  return [real](Args& x) {
    x.bind();
    check_device(x);
    const int64_t n = x.integer("n");
    const double d = x.number("d");
    return arr(real ? rfftfreq(n, d, x.opt_dtype("dtype")) : fftfreq(n, d, x.opt_dtype("dtype")), x);
  };
}

FunctionCall shift(bool inverse) {
  return [inverse](Args& x) {
    x.bind();
    return arr(inverse ? ifftshift(x.array("x"), x.opt_axes("axes")) : fftshift(x.array("x"), x.opt_axes("axes")), x);
  };
}
}  // namespace

void fft_rows(Rows& r) {
  const char* c = "complex64 for complex64, float32 and float16 x, else complex128";
  const char* cr = "complex64 for float32 and float16 x, else complex128 (x real)";
  const char* real = "float32 for complex64, float32 and float16 x, else float64";
  const char* s1 = "x, /, *, n=None, axis=-1, norm='backward'";
  const char* sn = "x, /, *, s=None, axes=None, norm='backward'";
  row(r, "fft_fft", F::Linalg, s1, c, one(&fft));
  row(r, "fft_ifft", F::Linalg, s1, c, one(&ifft));
  row(r, "fft_fftn", F::Linalg, sn, c, nd(&fftn));
  row(r, "fft_ifftn", F::Linalg, sn, c, nd(&ifftn));
  row(r, "fft_rfft", F::Linalg, s1, cr, one(&rfft));
  row(r, "fft_irfft", F::Linalg, s1, real, one(&irfft));
  row(r, "fft_rfftn", F::Linalg, sn, cr, nd(&rfftn));
  row(r, "fft_irfftn", F::Linalg, sn, real, nd(&irfftn));
  row(r, "fft_hfft", F::Linalg, s1, real, one(&hfft));
  row(r, "fft_ihfft", F::Linalg, s1, cr, one(&ihfft));
  const char* f = "n, /, *, d=1.0, dtype=None, device=None";
  const char* ft = "dtype if given (float32 or float64), else float64";
  row(r, "fft_fftfreq", F::Creation, f, ft, freq(false));
  row(r, "fft_rfftfreq", F::Creation, f, ft, freq(true));
  row(r, "fft_fftshift", F::Shape, "x, /, *, axes=None", "x's dtype", shift(false));
  row(r, "fft_ifftshift", F::Shape, "x, /, *, axes=None", "x's dtype", shift(true));
}

}  // namespace b2lazy::expr
