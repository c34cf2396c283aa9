// The fft extension from C++ (b2lazy/fft.hpp): FftNode's transforms along each axis against
// a direct O(n^2) DFT (the oracle), through output chunks that cut the axis, padded and
// cropped lengths, the norms, real transforms' round trips, and the four-step path.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <random>

#include "b2lazy/b2lazy.hpp"
#include "test_util.hpp"

using namespace b2lazy;
using cd = std::complex<double>;

namespace {
struct LaneLength {  // graphs built while it lives transform lanes longer than n in four steps
  explicit LaneLength(int64_t n) : old(fft_lane_length()) { set_fft_lane_length(n); }
  ~LaneLength() { set_fft_lane_length(old); }
  int64_t old;
};

Array complex_array(const std::vector<cd>& v, const Shape& shape) {
  auto data = std::make_shared<std::vector<cd>>(v);
  return from_buffer(data->data(), DType::C128, shape, {}, std::shared_ptr<const void>(data, data->data()));
}

std::vector<cd> values(const Array& a, Context& ctx) {
  std::vector<cd> out(static_cast<size_t>(a.size()));
  a.to_buffer(out.data(), &ctx);
  return out;
}

// The DFT of `rows` x `cols` values along axis 1 (or 0), length n (cropped or padded).
std::vector<cd> dft(const std::vector<cd>& x, int64_t rows, int64_t cols, int axis, int64_t n, int sign, double scale) {
  const int64_t lanes = axis == 1 ? rows : cols, m = axis == 1 ? cols : rows;
  std::vector<cd> out(static_cast<size_t>(lanes * n));
  for (int64_t l = 0; l < lanes; ++l)
    for (int64_t k = 0; k < n; ++k) {
      cd s = 0;
      for (int64_t j = 0; j < std::min(n, m); ++j) {
        const cd v = axis == 1 ? x[static_cast<size_t>(l * cols + j)] : x[static_cast<size_t>(j * cols + l)];
        s += v *
             std::polar(1.0, sign * 2 * std::numbers::pi * static_cast<double>((j * k) % n) / static_cast<double>(n));
      }
      const size_t at = axis == 1 ? static_cast<size_t>(l * n + k) : static_cast<size_t>(k * lanes + l);
      out[at] = s * scale;
    }
  return out;
}

void expect_near(const std::vector<cd>& got, const std::vector<cd>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) ASSERT_LT(std::abs(got[i] - want[i]), tol) << what << " at " << i;
}

std::vector<cd> random_values(size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g;
  std::vector<cd> v(n);
  for (auto& c : v) c = cd(g(rng), g(rng));
  return v;
}
}  // namespace

TEST(Fft, AlongEachAxisMatchesADirectDft) {
  Context ctx(2);
  const int64_t rows = 12, cols = 10;
  const std::vector<cd> x = random_values(static_cast<size_t>(rows * cols), 1);
  const Array stored = test::stored(complex_array(x, {rows, cols}), {5, 3}, {5, 3}, ctx);
  for (int axis : {0, 1})
    for (int64_t n : {int64_t(7), int64_t(10), int64_t(12), int64_t(17)})
      for (FftNorm norm : {FftNorm::Backward, FftNorm::Ortho, FftNorm::Forward}) {
        const double fs = norm == FftNorm::Backward ? 1.0 : norm == FftNorm::Forward ? 1.0 / n : 1 / std::sqrt(n);
        const double is = norm == FftNorm::Backward ? 1.0 / n : norm == FftNorm::Forward ? 1.0 : 1 / std::sqrt(n);
        const std::string what = "axis " + std::to_string(axis) + " n " + std::to_string(n);
        const Array f = fft(stored, n, axis, norm);
        ASSERT_EQ(f.dtype(), DType::C128);
        expect_near(values(f, ctx), dft(x, rows, cols, axis, n, -1, fs), 1e-9, what);
        expect_near(values(ifft(stored, n, axis, norm), ctx), dft(x, rows, cols, axis, n, 1, is), 1e-9, what);
        // output chunks that cut the transformed axis: each lane transformed once, kept
        ComputeOptions o;
        o.chunks = {3, 4};
        expect_near(values(f.compute(o, &ctx), ctx), dft(x, rows, cols, axis, n, -1, fs), 1e-9, what + " chunked");
      }
}

TEST(Fft, FourStepLanesMatchTheDirectTransform) {
  Context ctx(2);
  for (int64_t n : {int64_t(6), int64_t(64), int64_t(91), int64_t(97), int64_t(120)}) {
    const std::vector<cd> x = random_values(static_cast<size_t>(3 * n), static_cast<unsigned>(n));
    const Array a = complex_array(x, {3, n});
    const std::vector<cd> want = values(fft(a), ctx);
    const std::vector<cd> back = values(ifft(a, {}, -1, FftNorm::Ortho), ctx);
    LaneLength lanes(4);  // (97 is prime: transformed whole)
    expect_near(values(fft(a), ctx), want, 1e-9, "fft n " + std::to_string(n));
    expect_near(values(ifft(a, {}, -1, FftNorm::Ortho), ctx), back, 1e-9, "ifft n " + std::to_string(n));
    // along axis 0 too
    const Array t = permute_dims(a, {1, 0});
    expect_near(values(permute_dims(fft(t, {}, 0), {1, 0}), ctx), want, 1e-9, "axis 0 n " + std::to_string(n));
  }
}

TEST(Fft, RealTransformsRoundTrip) {
  Context ctx(2);
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g;
  for (int64_t n : {int64_t(1), int64_t(2), int64_t(9), int64_t(16), int64_t(33)}) {
    auto data = std::make_shared<std::vector<double>>(static_cast<size_t>(4 * n));
    for (auto& v : *data) v = g(rng);
    const Array a = from_buffer(data->data(), DType::F64, {4, n}, {}, std::shared_ptr<const void>(data, data->data()));
    for (int64_t lanes : {int64_t(1) << 22, int64_t(3)}) {
      LaneLength l(lanes);
      const Array r = rfft(a);
      ASSERT_EQ(r.shape(), (Shape{4, n / 2 + 1}));
      const Array back = irfft(r, n);
      ASSERT_EQ(back.dtype(), DType::F64);
      const std::vector<double> got = back.to_vector(&ctx);
      for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], (*data)[i], 1e-12) << n << " " << i;
    }
  }
}

TEST(Fft, BadArgumentsNameTheProblem) {
  const Array a = complex_array(random_values(6, 2), {2, 3});
  EXPECT_THROW(fft(a, 0), ValueError);
  EXPECT_THROW(rfft(a), TypeError);
  EXPECT_THROW(fft(a, {}, 2), AxisError);
  EXPECT_THROW(fftfreq(0), ValueError);
  EXPECT_THROW(fft_norm("both", "fft"), ValueError);
}
