// complex64 / complex128 from C++: fused arithmetic with real operands and Python-like
// scalars, the parts, a product through zgemm and a chunked sum, against std::complex.
#include <gtest/gtest.h>

#include <complex>
#include <vector>

#include "b2lazy/b2lazy.hpp"

using namespace b2lazy;
using C = std::complex<double>;

namespace {
Array complex_array(const std::vector<C>& v, const Shape& shape, const Shape& chunks) {
  return from_buffer_compressed(v.data(), DType::C128, shape, chunks, chunks);
}

std::vector<C> values(const Array& a) {
  std::vector<C> out(static_cast<size_t>(a.size()));
  a.to_buffer(out.data());
  return out;
}
}  // namespace

TEST(Complex, FusedArithmeticPartsAndScalars) {
  std::vector<C> z;
  for (int i = 0; i < 60; ++i) z.emplace_back(0.25 * i - 3, 1.5 - 0.1 * i);
  Array a = complex_array(z, {6, 10}, {4, 3});
  Array r = elementwise(Op::Abs, {a * Scalar::complex(0, 2) + Scalar(1.0)});
  EXPECT_EQ(r.dtype(), DType::F64);
  const std::vector<double> got = r.to_vector();
  for (size_t i = 0; i < z.size(); ++i) EXPECT_DOUBLE_EQ(got[i], std::abs(z[i] * C(0, 2) + 1.0)) << i;
  const std::vector<C> conj = values(elementwise(Op::Conj, {a}));
  for (size_t i = 0; i < z.size(); ++i) EXPECT_EQ(conj[i], std::conj(z[i]));
  EXPECT_EQ(elementwise(Op::Imag, {a}).to_vector()[7], z[7].imag());
  EXPECT_THROW(elementwise(Op::Less, {a, a}), TypeError);
}

TEST(Complex, ProductAndSumMatchStdComplex) {
  std::vector<C> x, y;
  for (int i = 0; i < 35; ++i) x.emplace_back(i % 7 - 3, i % 5);
  for (int i = 0; i < 28; ++i) y.emplace_back(1 - i % 3, 0.5 * (i % 4));
  Array a = complex_array(x, {5, 7}, {2, 3}), b = complex_array(y, {7, 4}, {3, 2});
  const std::vector<C> p = values(matmul(a, b));
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j) {
      C want = 0;
      for (int k = 0; k < 7; ++k) want += x[i * 7 + k] * y[k * 4 + j];
      EXPECT_NEAR(std::abs(p[i * 4 + j] - want), 0.0, 1e-12) << i << "," << j;
    }
  ReduceOptions o;
  const std::vector<C> s = values(sum(a, o));
  C want = 0;
  for (const C& v : x) want += v;
  EXPECT_NEAR(std::abs(s[0] - want), 0.0, 1e-12);
}
