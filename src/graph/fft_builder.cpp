// b2lazy/fft.hpp: the Array API's fft extension. Dtype rules and lengths here; the
// transforms are FftNodes (src/ops/fft/): along an axis, whole lanes pulled and transformed
// by FFTW. A lane longer than fft_lane_length() elements is transformed in four steps
// (Bailey's), each a lazy node the plan computes once and keeps for the next.
#include "b2lazy/fft.hpp"

#include <atomic>
#include <cmath>
#include <string>
#include <vector>

#include "b2lazy/error.hpp"
#include "graph/axes.hpp"
#include "ops/fft/fft_node.hpp"

namespace b2lazy {

namespace {
std::atomic<int64_t> g_lane_length{int64_t(1) << 22};

// Complex of x's precision: complex64 for complex64, float32 and float16, else complex128.
Array as_complex(const Array& x) {
  if (x.dtype() == DType::C64 || x.dtype() == DType::C128) return x;
  return x.astype(x.dtype() == DType::F32 || x.dtype() == DType::F16 ? DType::C64 : DType::C128);
}

// Real of x's precision (rfft, ihfft): complex x is refused.
Array as_real(const Array& x, const char* fn) {
  if (is_complex(x.dtype()))
    throw TypeError(std::string(fn) + ": x must be real, got " + dtype_name(x.dtype()) +
                    " (use fft for complex input)");
  if (x.dtype() == DType::F32 || x.dtype() == DType::F64) return x;
  return x.astype(x.dtype() == DType::F16 ? DType::F32 : DType::F64);
}

void check_ndim(const Array& x, const char* fn) {
  if (x.ndim() == 0) throw ValueError(std::string(fn) + ": x must have at least one dimension, got a 0-d array");
}

void check_n(int64_t n, const char* fn, int axis, const Shape& shape) {
  if (n < 1)
    throw ValueError(std::string(fn) + ": invalid number of data points (" + std::to_string(n) + ") along axis " +
                     std::to_string(axis) + " of an array of shape " + shape_str(shape) + " (n must be >= 1)");
}

// The factor 1/n, 1/sqrt(n) or 1 a transform of length n is multiplied by.
double scale_of(FftNorm norm, bool inverse, int64_t n) {
  switch (norm) {
    case FftNorm::Ortho: return 1.0 / std::sqrt(static_cast<double>(n));
    case FftNorm::Backward: return inverse ? 1.0 / static_cast<double>(n) : 1.0;
    case FftNorm::Forward: return inverse ? 1.0 : 1.0 / static_cast<double>(n);
  }
  return 1.0;
}

FftNorm swapped(FftNorm norm) {
  return norm == FftNorm::Backward ? FftNorm::Forward : norm == FftNorm::Forward ? FftNorm::Backward : norm;
}

// x cropped or padded with zeros to length n along axis.
Array fit(const Array& x, int axis, int64_t n) {
  const int64_t m = x.shape()[static_cast<size_t>(axis)];
  if (m == n) return x;
  std::vector<Index> key(x.ndim(), Index::slice());
  if (m > n) {
    key[static_cast<size_t>(axis)] = Index::slice(0, n);
    return x[key];
  }
  Shape z = x.shape();
  z[static_cast<size_t>(axis)] = n - m;
  return concat({x, zeros(z, x.dtype())}, axis);
}

// n = n1 * n2 with n1 the largest factor up to sqrt(n); {0, 0} for a prime n.
std::pair<int64_t, int64_t> split(int64_t n) {
  for (auto d = static_cast<int64_t>(std::sqrt(static_cast<double>(n))) + 1; d >= 2; --d)
    if (d * d <= n && n % d == 0) return {d, n / d};
  return {0, 0};
}

Array c2c(const Array& x, int axis, int64_t n, bool inverse, double scale);

// The four-step FFT of x's lanes (complex, of length n = n1 * n2 along `axis`): element
// n2 * i1 + i2 of a lane at [i1, i2] of an (n1, n2) matrix; transforms of length n1 along
// its columns; each [k1, i2] multiplied by w_n^(k1 i2); transforms of length n2 along its
// rows; frequency k1 + n1 k2 read at [k1, k2] (the matrix transposed, then flattened).
Array four_step(const Array& x, int axis, int64_t n1, int64_t n2, bool inverse, double scale) {
  const int last = static_cast<int>(x.ndim()) - 1;
  const Array moved = axis == last ? x : moveaxis(x, {axis}, {last});
  Shape lead(moved.shape().begin(), moved.shape().end() - 1);
  Shape m = lead;
  m.push_back(n1);
  m.push_back(n2);
  const int r = static_cast<int>(m.size());
  const Array cols = c2c(reshape(moved, m), r - 2, n1, inverse, 1.0);
  const Array tw(std::make_shared<TwiddleNode>(x.dtype(), n1, n2, n1 * n2, inverse));
  const Array rows = c2c(cols * tw, r - 1, n2, inverse, scale);
  std::vector<int> perm(static_cast<size_t>(r));
  for (int d = 0; d < r; ++d) perm[static_cast<size_t>(d)] = d;
  std::swap(perm[static_cast<size_t>(r - 2)], perm[static_cast<size_t>(r - 1)]);
  Shape flat = lead;
  flat.push_back(n1 * n2);
  const Array back = reshape(permute_dims(rows, perm), flat);
  return axis == last ? back : moveaxis(back, {last}, {axis});
}

// Complex lanes (x complex, any length along axis) transformed at length n.
Array c2c(const Array& x, int axis, int64_t n, bool inverse, double scale) {
  if (n > g_lane_length.load()) {
    auto [n1, n2] = split(n);
    if (n1 > 1) return four_step(fit(x, axis, n), axis, n1, n2, inverse, scale);
  }
  return Array(std::make_shared<FftNode>(x.node(), axis, FftKind::C2C, n, inverse, scale));
}

Array r2c(const Array& x, int axis, int64_t n, double scale) {
  if (n > g_lane_length.load() && split(n).first > 1) {
    const Array full = c2c(as_complex(x), axis, n, false, scale);
    std::vector<Index> key(x.ndim(), Index::slice());
    key[static_cast<size_t>(axis)] = Index::slice(0, n / 2 + 1);
    return full[key];
  }
  return Array(std::make_shared<FftNode>(x.node(), axis, FftKind::R2C, n, false, scale));
}

// x complex: its first n / 2 + 1 frequencies (cropped or padded) to n real values.
Array c2r(const Array& x, int axis, int64_t n, double scale) {
  if (n > g_lane_length.load() && split(n).first > 1) {
    // the whole Hermitian spectrum: X[k] for k <= n / 2, conj(X[n - k]) above
    const int64_t h = n / 2 + 1;
    const Array half = fit(x, axis, h);
    std::vector<Index> key(x.ndim(), Index::slice());
    key[static_cast<size_t>(axis)] = Index::slice(n - h, 0, -1);
    const Array tail = elementwise(Op::Conj, {half[key]});
    const Array full = concat({half, tail}, axis);
    return elementwise(Op::Real, {c2c(full, axis, n, true, scale)});
  }
  return Array(std::make_shared<FftNode>(x.node(), axis, FftKind::C2R, n, true, scale));
}

struct Lane {
  int axis;
  int64_t n;
};

Lane lane(const Array& x, std::optional<int64_t> n, int axis, const char* fn, bool half) {
  check_ndim(x, fn);
  const int a = normalize_axis(axis, x.ndim(), fn, x.shape());
  const int64_t m = x.shape()[static_cast<size_t>(a)];
  const int64_t len = n ? *n : half ? 2 * (m - 1) : m;
  check_n(len, fn, a, x.shape());
  return {a, len};
}

Array fft1(const Array& x, std::optional<int64_t> n, int axis, FftNorm norm, bool inverse, const char* fn) {
  const Lane l = lane(x, n, axis, fn, false);
  return c2c(as_complex(x), l.axis, l.n, inverse, scale_of(norm, inverse, l.n));
}

Array rfft1(const Array& x, std::optional<int64_t> n, int axis, FftNorm norm, const char* fn) {
  const Lane l = lane(x, n, axis, fn, false);
  return r2c(as_real(x, fn), l.axis, l.n, scale_of(norm, false, l.n));
}

Array irfft1(const Array& x, std::optional<int64_t> n, int axis, FftNorm norm, const char* fn) {
  const Lane l = lane(x, n, axis, fn, true);
  return c2r(as_complex(x), l.axis, l.n, scale_of(norm, true, l.n));
}

// The axes and lengths of an n-dimensional transform (`half`: irfftn, whose last length
// defaults to 2 * (m - 1)).
std::vector<Lane> lanes(const Array& x, const std::optional<std::vector<int64_t>>& s,
                        const std::optional<std::vector<int>>& axes, const char* fn, bool half) {
  check_ndim(x, fn);
  const auto nd = static_cast<int>(x.ndim());
  std::vector<int> ax;
  if (axes) {
    for (int a : *axes) ax.push_back(normalize_axis(a, x.ndim(), fn, x.shape()));
    if (s && s->size() != ax.size())
      throw ValueError(std::string(fn) + ": s and axes must have the same length, got " + std::to_string(s->size()) +
                       " and " + std::to_string(ax.size()));
  } else {
    const int k = s ? static_cast<int>(s->size()) : nd;
    if (k > nd)
      throw ValueError(std::string(fn) + ": s has " + std::to_string(k) + " lengths for an array of shape " +
                       shape_str(x.shape()));
    for (int a = nd - k; a < nd; ++a) ax.push_back(a);
  }
  std::vector<Lane> out;
  for (size_t i = 0; i < ax.size(); ++i) {
    const int64_t m = x.shape()[static_cast<size_t>(ax[i])];
    const bool last_half = half && i + 1 == ax.size();
    int64_t n = s ? (*s)[i] : -1;
    if (n == -1) n = last_half ? 2 * (m - 1) : m;
    check_n(n, fn, ax[i], x.shape());
    out.push_back({ax[i], n});
  }
  return out;
}

Array fftn_(const Array& x, const std::optional<std::vector<int64_t>>& s, const std::optional<std::vector<int>>& axes,
            FftNorm norm, bool inverse, const char* fn) {
  const std::vector<Lane> ls = lanes(x, s, axes, fn, false);
  Array y = as_complex(x);
  for (auto it = ls.rbegin(); it != ls.rend(); ++it)
    y = c2c(y, it->axis, it->n, inverse, scale_of(norm, inverse, it->n));
  return y;
}
}  // namespace

FftNorm fft_norm(const std::string& name, const std::string& fn) {
  if (name == "backward") return FftNorm::Backward;
  if (name == "ortho") return FftNorm::Ortho;
  if (name == "forward") return FftNorm::Forward;
  throw ValueError(fn + ": norm must be 'backward', 'ortho' or 'forward', got '" + name + "'");
}

Array fft(const Array& x, std::optional<int64_t> n, int axis, FftNorm norm) {
  return fft1(x, n, axis, norm, false, "fft");
}
Array ifft(const Array& x, std::optional<int64_t> n, int axis, FftNorm norm) {
  return fft1(x, n, axis, norm, true, "ifft");
}
Array rfft(const Array& x, std::optional<int64_t> n, int axis, FftNorm norm) { return rfft1(x, n, axis, norm, "rfft"); }
Array irfft(const Array& x, std::optional<int64_t> n, int axis, FftNorm norm) {
  return irfft1(x, n, axis, norm, "irfft");
}
// NumPy's: hfft is irfft of conj(x) with the norm's direction swapped; ihfft the conjugate
// of rfft, likewise.
Array hfft(const Array& x, std::optional<int64_t> n, int axis, FftNorm norm) {
  check_ndim(x, "hfft");
  return irfft1(elementwise(Op::Conj, {as_complex(x)}), n, axis, swapped(norm), "hfft");
}
Array ihfft(const Array& x, std::optional<int64_t> n, int axis, FftNorm norm) {
  return elementwise(Op::Conj, {rfft1(x, n, axis, swapped(norm), "ihfft")});
}

Array fftn(const Array& x, const std::optional<std::vector<int64_t>>& s, const std::optional<std::vector<int>>& axes,
           FftNorm norm) {
  return fftn_(x, s, axes, norm, false, "fftn");
}
Array ifftn(const Array& x, const std::optional<std::vector<int64_t>>& s, const std::optional<std::vector<int>>& axes,
            FftNorm norm) {
  return fftn_(x, s, axes, norm, true, "ifftn");
}

// rfft along the last of the axes, then fft along the others.
Array rfftn(const Array& x, const std::optional<std::vector<int64_t>>& s, const std::optional<std::vector<int>>& axes,
            FftNorm norm) {
  const std::vector<Lane> ls = lanes(x, s, axes, "rfftn", false);
  if (ls.empty()) return as_complex(as_real(x, "rfftn"));
  const Lane& l = ls.back();
  Array y = r2c(as_real(x, "rfftn"), l.axis, l.n, scale_of(norm, false, l.n));
  for (auto it = ls.rbegin() + 1; it != ls.rend(); ++it)
    y = c2c(y, it->axis, it->n, false, scale_of(norm, false, it->n));
  return y;
}

// ifft along all the axes but the last, then irfft along the last.
Array irfftn(const Array& x, const std::optional<std::vector<int64_t>>& s, const std::optional<std::vector<int>>& axes,
             FftNorm norm) {
  const std::vector<Lane> ls = lanes(x, s, axes, "irfftn", true);
  Array y = as_complex(x);
  if (ls.empty()) return elementwise(Op::Real, {y});
  for (auto it = ls.rbegin() + 1; it != ls.rend(); ++it) y = c2c(y, it->axis, it->n, true, scale_of(norm, true, it->n));
  const Lane& l = ls.back();
  return c2r(y, l.axis, l.n, scale_of(norm, true, l.n));
}

namespace {
DType freq_dtype(std::optional<DType> dtype, const char* fn) {
  const DType t = dtype.value_or(DType::F64);
  if (t != DType::F32 && t != DType::F64)
    throw TypeError(std::string(fn) + ": dtype must be float32 or float64, got " + dtype_name(t));
  return t;
}

void check_freq(int64_t n, double d, const char* fn) {
  if (n < 1) throw ValueError(std::string(fn) + ": n must be a positive integer, got " + std::to_string(n));
  if (d == 0) throw ValueError(std::string(fn) + ": d must not be zero");
}
}  // namespace

// NumPy's: the integers [0, ..., (n - 1) // 2, -(n // 2), ..., -1] times 1 / (n d).
Array fftfreq(int64_t n, double d, std::optional<DType> dtype) {
  const DType t = freq_dtype(dtype, "fftfreq");
  check_freq(n, d, "fftfreq");
  const double val = 1.0 / (static_cast<double>(n) * d);
  const int64_t pos = (n - 1) / 2 + 1;
  Array k = arange_int(0, pos);
  if (pos < n) k = concat({k, arange_int(-(n / 2), 0)}, 0);
  const Array f = k * Scalar(val);
  return t == DType::F64 ? f : f.astype(t);
}

Array rfftfreq(int64_t n, double d, std::optional<DType> dtype) {
  const DType t = freq_dtype(dtype, "rfftfreq");
  check_freq(n, d, "rfftfreq");
  const double val = 1.0 / (static_cast<double>(n) * d);
  const Array f = arange_int(0, n / 2 + 1) * Scalar(val);
  return t == DType::F64 ? f : f.astype(t);
}

namespace {
Array shifted(const Array& x, const std::optional<std::vector<int>>& axes, bool inverse, const char* fn) {
  std::vector<int> ax;
  if (axes) {
    for (int a : *axes) ax.push_back(normalize_axis(a, x.ndim(), fn, x.shape()));
  } else {
    for (int a = 0; a < static_cast<int>(x.ndim()); ++a) ax.push_back(a);
  }
  if (ax.empty()) return x;
  std::vector<int64_t> shifts;
  for (int a : ax) {
    const int64_t h = x.shape()[static_cast<size_t>(a)] / 2;
    shifts.push_back(inverse ? -h : h);
  }
  return roll(x, shifts, ax);
}
}  // namespace

Array fftshift(const Array& x, const std::optional<std::vector<int>>& axes) {
  return shifted(x, axes, false, "fftshift");
}
Array ifftshift(const Array& x, const std::optional<std::vector<int>>& axes) {
  return shifted(x, axes, true, "ifftshift");
}

int64_t fft_lane_length() { return g_lane_length.load(); }

void set_fft_lane_length(int64_t n) {
  if (n < 1) throw ValueError("set_fft_lane_length: a lane needs at least one element, got " + std::to_string(n));
  g_lane_length.store(n);
}

}  // namespace b2lazy
