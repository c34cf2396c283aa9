// The overflow-checked size arithmetic (include/b2lazy/checked.hpp) and the rule it
// serves: a shape whose element count or byte size does not fit int64 is an error when
// the array is built, never a wrapped size.
#include <gtest/gtest.h>

#include <climits>
#include <string>

#include "b2lazy/b2lazy.hpp"

using namespace b2lazy;

namespace {
// The ValueError message of `f`, or "" when it does not throw one.
template <class F> std::string value_error(F f) {
  try {
    f();
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Checked, ArithmeticAtTheLimits) {
  EXPECT_EQ(checked_mul(INT64_MAX, 1, "x"), INT64_MAX);
  EXPECT_EQ(checked_mul(-1, INT64_MAX, "x"), -INT64_MAX);
  EXPECT_EQ(checked_mul(int64_t(1) << 31, int64_t(1) << 31, "x"), int64_t(1) << 62);
  EXPECT_EQ(checked_add(INT64_MAX - 1, 1, "x"), INT64_MAX);
  EXPECT_EQ(checked_sub(INT64_MIN + 1, 1, "x"), INT64_MIN);
  EXPECT_EQ(value_error([] { checked_mul(int64_t(1) << 32, int64_t(1) << 31, "the product"); }),
            "the product does not fit in int64");
  EXPECT_NE(value_error([] { checked_mul(INT64_MIN, -1, "x"); }), "");
  EXPECT_NE(value_error([] { checked_add(INT64_MAX, 1, "x"); }), "");
  EXPECT_NE(value_error([] { checked_sub(INT64_MIN, 1, "x"); }), "");
}

TEST(Checked, ProductsOfShapes) {
  EXPECT_EQ(checked_prod({}), 1);
  EXPECT_EQ(checked_prod({3, 0, 5}), 0);
  EXPECT_EQ(checked_prod({int64_t(1) << 40, 300}), (int64_t(1) << 40) * 300);
  EXPECT_EQ(checked_prod({INT64_MAX, 1}), INT64_MAX);
  EXPECT_EQ(value_error([] {
              checked_prod({int64_t(1) << 32, int64_t(1) << 32});
            }),
            "shape (4294967296, 4294967296) has more elements than fit in int64");
  EXPECT_EQ(value_error([] {
              checked_prod({int64_t(1) << 32, int64_t(1) << 32}, "chunks");
            }),
            "chunks (4294967296, 4294967296) has more elements than fit in int64");
  // As NumPy: a zero extent does not excuse the others (their strides must fit).
  EXPECT_NE(value_error([] { checked_prod({0, int64_t(1) << 40, int64_t(1) << 40}); }), "");
  EXPECT_EQ(checked_nbytes({int64_t(1) << 40, 300}, 8), (int64_t(1) << 40) * 2400);
  EXPECT_EQ(value_error([] {
              checked_nbytes({int64_t(1) << 31, int64_t(1) << 31}, 8, "chunks");
            }),
            "chunks (2147483648, 2147483648) of 8-byte items has more bytes than fit in int64");
  EXPECT_NE(value_error([] { prod({int64_t(1) << 62, 2}); }), "");  // prod() is the checked product
  EXPECT_EQ(c_strides({int64_t(1) << 31, int64_t(1) << 31, 2}), (Shape{int64_t(1) << 32, 2, 1}));
  EXPECT_NE(value_error([] { c_strides({2, int64_t(1) << 62, 4}); }), "");
}

TEST(Checked, ArraysTooBigAreRefusedWhenBuilt) {
  // ones((2**32, 2**32)) had size 0 (sum 0.0, mean nan): now an error naming the shape.
  EXPECT_EQ(value_error([] {
              ones({int64_t(1) << 32, int64_t(1) << 32});
            }),
            "shape (4294967296, 4294967296) has more elements than fit in int64");
  EXPECT_EQ(value_error([] {
              zeros({int64_t(1) << 60, 4}, DType::F64);
            }),
            "an array of shape (1152921504606846976, 4) and dtype float64 has more bytes than fit in int64");
  EXPECT_EQ(zeros({int64_t(1) << 60, 4}, DType::I8).size(), int64_t(1) << 62);
  // sum(zeros((2**40, 300))) is valid: 2**40 * 300 elements fit int64.
  EXPECT_EQ(sum(zeros({int64_t(1) << 40, 300})).shape(), Shape{});
  Array small = zeros({2, 3});
  EXPECT_NE(value_error([&] { broadcast_to(small, {int64_t(1) << 62, 2, 3}); }), "");
  EXPECT_NE(value_error([&] { outer(arange(0, double(int64_t(1) << 40)), arange(0, double(int64_t(1) << 40))); }), "");
  Array big = broadcast_to(zeros({1}, DType::I8), {int64_t(1) << 62});
  EXPECT_EQ(value_error([&] { concat({big, big, big}); }), "concat: the length along axis 0 does not fit in int64");
}

TEST(Checked, HugeChunksAreAnErrorNotACrash) {
  // compute(chunks=(2**32, 2**32)) died with SIGFPE: the chunk size wrapped to 0.
  ComputeOptions o;
  o.chunks = {int64_t(1) << 32, int64_t(1) << 32};
  EXPECT_EQ(value_error([&] {
              zeros({4, 4}).compute(o);
            }),
            "compute: chunks (4294967296, 4294967296) has more elements than fit in int64");
  o.chunks = {int64_t(1) << 31, int64_t(1) << 31};  // fits int64, not Blosc2's 2 GiB chunks
  EXPECT_NE(value_error([&] { zeros({4, 4}).compute(o); }), "");
  o.chunks = {INT64_MAX, 2};
  EXPECT_NE(value_error([&] { zeros({4, 4}).compute(o); }), "");
}

TEST(Checked, SlicesWithStepsAndBoundsAtTheLimits) {
  Array a = arange(0, 10);
  auto values = [](const Array& x) { return x.to_vector(); };
  // a[::-2**63] (CPython clamps the step to -(2**63 - 1)), a[::2**63 - 1]
  EXPECT_EQ(values(a[{Index::slice({}, {}, INT64_MIN)}]), (std::vector<double>{9}));
  EXPECT_EQ(values(a[{Index::slice({}, {}, INT64_MAX)}]), (std::vector<double>{0}));
  EXPECT_EQ(values(a[{Index::slice(INT64_MAX, INT64_MIN, INT64_MIN)}]), (std::vector<double>{9}));
  EXPECT_EQ(values(a[{Index::slice(INT64_MIN, INT64_MAX)}]).size(), 10u);
  EXPECT_EQ(values(a[{Index::slice(INT64_MAX, INT64_MIN, -1)}]).size(), 10u);
  EXPECT_EQ(values(a[{Index::slice(-3, INT64_MAX, int64_t(1) << 62)}]), (std::vector<double>{7}));
  // A slice of a one-element slice with a huge step: the moot steps must not multiply.
  Array one = a[{Index::slice({}, {}, int64_t(1) << 62)}];
  EXPECT_EQ(values(one[{Index::slice({}, {}, 4)}]), (std::vector<double>{0}));
  EXPECT_EQ(values(one[{Index::slice({}, {}, INT64_MIN)}]), (std::vector<double>{0}));
  EXPECT_THROW(a[{Index::at(INT64_MIN)}], IndexError);
  EXPECT_THROW(a[{Index::at(INT64_MAX)}], IndexError);
}

TEST(Checked, BigLazyArraysEvaluateSmallParts) {
  // Arrays near the int64 limits are fine as long as their sizes fit: a small part of
  // them evaluates, with flat positions, strides and offsets near 2**62.
  const int64_t big = int64_t(1) << 62;
  auto values = [](const Array& x) { return x.to_vector(); };
  Array r = arange_int(-big, big - 1 + big, big / 2);  // -2**62 .. 2**63 - 1
  EXPECT_EQ(values(r), (std::vector<double>{-0x1p62, -0x1p61, 0, 0x1p61, 0x1p62, 0x1.8p62}));
  Array z = zeros({big}, DType::I8);
  EXPECT_EQ(values(z[{Index::slice(big - 3, {})}]), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(values(take(z, {big - 1, 0, -1}, {3})), (std::vector<double>{0, 0, 0}));
  Array sq = reshape(zeros({int64_t(1) << 31, int64_t(1) << 31}, DType::I8), {big});
  EXPECT_EQ(values(sq[{Index::slice(-2, {})}]), (std::vector<double>{0, 0}));
  Array b = broadcast_to(arange(0, 3), {int64_t(1) << 58, 3});
  EXPECT_EQ(values(b[{Index::at(-1)}]), (std::vector<double>{0, 1, 2}));
  Array c = concat({z, z[{Index::slice({}, 5)}]});
  EXPECT_EQ(values(c[{Index::slice(big - 1, big + 2)}]), (std::vector<double>{0, 0, 0}));
  Array ramp = arange_int(0, big, 1, DType::I8);  // int8 values wrap, as NumPy's astype
  EXPECT_EQ(values(ramp[{Index::slice(big - 2, {})}]), (std::vector<double>{-2, -1}));
  // Integer sums and cumulative sums wrap modulo 2**64 (signed overflow was undefined).
  Array m = full({3}, Scalar(INT64_MAX), DType::I64);
  EXPECT_EQ(sum(m).to_vector(), (std::vector<double>{static_cast<double>(INT64_MAX - 2)}));
  EXPECT_EQ(reduce(Reduction::Prod, full({2}, Scalar(int64_t(1) << 40), DType::I64)).to_vector(),
            (std::vector<double>{0}));
  const std::vector<double> cs = cumsum(m).to_vector();
  EXPECT_EQ(cs[1], -2.0);
}
