// unique_values / unique_counts / unique_inverse / unique_all (the Array API), sort-based
// and out of core: x flattened and sorted (runs and a merge when it is long) into a
// temporary file, group starts flagged where a value differs from the one before (NaNs
// differ from everything, -0.0 equals 0.0), counted per strip now (the result's length
// depends on the values), then selected lazily.
#include <algorithm>
#include <cmath>
#include <complex>
#include <filesystem>
#include <map>

#include "b2lazy/array.hpp"
#include "b2lazy/context.hpp"
#include "b2lazy/error.hpp"
#include "b2lazy/ops.hpp"
#include "exec/executor.hpp"

namespace b2lazy {

namespace {

// `a` evaluated now into a temporary b2nd file, removed at once: the result reads it
// through its open descriptor, and the file goes with the last array reading it.
Array kept(const Array& a, Context* ctx, size_t max_memory) {
  ComputeOptions o;
  if (max_memory) o.max_memory = max_memory;
  o.urlpath = temp_b2nd_path("unique");
  Array r = a.compute(o, ctx);
  std::filesystem::remove(o.urlpath);
  return r;
}

// A dense C-order array over `v`, which it keeps alive.
template <class T> Array owned(std::vector<T> v, DType t, Shape shape) {
  auto data = std::make_shared<std::vector<T>>(std::move(v));
  return from_buffer(data->data(), t, shape, {}, std::shared_ptr<const void>(data, data->data()), "unique");
}

// Complex values: ordered lexicographically (real part, then imaginary; values with a NaN
// part last, -0.0 as 0.0 — NumPy's order), in memory: the sort keys are two numbers, which the out-of-core
// sort (one 64-bit key per value) does not take. n * 40 bytes must fit the budget.
Unique unique_complex(const Array& flat, const Shape& shape, bool indices, bool inverse, bool counts, Context* ctx,
                      size_t max_memory) {
  using C = std::complex<double>;
  const int64_t n = flat.size();
  const size_t budget = max_memory ? max_memory : size_t(1) << 30;
  if (static_cast<double>(n) * 40 > static_cast<double>(budget))
    throw ValueError("unique of " + std::string(dtype_name(flat.dtype())) + " values sorts them in memory: x has " +
                     std::to_string(n) + " elements (" + std::to_string(n * 40 >> 20) +
                     " MiB with their order), above max_memory of " + std::to_string(budget >> 20) + " MiB");
  std::vector<C> v(static_cast<size_t>(n));
  flat.astype(DType::C128).to_buffer(v.data(), ctx);
  auto key = [](double p) { return p == 0 ? 0.0 : p; };  // -0.0 sorts with 0.0
  // NumPy's classes: no NaN part, then R + nan j, nan + R j, nan + nan j; within a class
  // by the parts that are numbers
  auto nan_class = [](const C& c) { return (std::isnan(c.real()) ? 2 : 0) + (std::isnan(c.imag()) ? 1 : 0); };
  auto less = [&](int64_t a, int64_t b) {
    const C x = v[static_cast<size_t>(a)], y = v[static_cast<size_t>(b)];
    const int cx = nan_class(x), cy = nan_class(y);
    if (cx != cy) return cx < cy;
    if (!(cx & 2) && key(x.real()) != key(y.real())) return key(x.real()) < key(y.real());
    return !(cx & 1) && key(x.imag()) < key(y.imag());
  };
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  std::stable_sort(order.begin(), order.end(), less);  // stable: a group's first position first
  std::vector<C> values;
  std::vector<int64_t> firsts, cnt, inv(inverse ? static_cast<size_t>(n) : 0);
  for (int64_t i = 0; i < n; ++i) {
    const C cur = v[static_cast<size_t>(order[static_cast<size_t>(i)])];
    if (i == 0 || cur != v[static_cast<size_t>(order[static_cast<size_t>(i - 1)])]) {  // NaN: a group of its own
      values.push_back(cur);
      firsts.push_back(order[static_cast<size_t>(i)]);
      cnt.push_back(0);
    }
    ++cnt.back();
    if (inverse) inv[static_cast<size_t>(order[static_cast<size_t>(i)])] = static_cast<int64_t>(values.size()) - 1;
  }
  const int64_t k = static_cast<int64_t>(values.size());
  Unique u;
  u.values = owned(std::move(values), DType::C128, {k}).astype(flat.dtype());
  if (indices) u.indices = owned(std::move(firsts), DType::I64, {k});
  if (counts) u.counts = owned(std::move(cnt), DType::I64, {k});
  if (inverse) u.inverse = owned(std::move(inv), DType::I64, shape);
  return u;
}

}  // namespace

Unique unique(const Array& x, bool indices, bool inverse, bool counts, Context* ctx, size_t max_memory) {
  const int64_t n = x.size();
  const Array flat = x.ndim() == 1 ? x : flatten(x);
  Unique u;
  if (n == 0) {
    u.values = flat;
    if (indices) u.indices = zeros({0}, DType::I64);
    if (inverse) u.inverse = zeros(x.shape(), DType::I64);
    if (counts) u.counts = zeros({0}, DType::I64);
    return u;
  }
  if (is_complex(x.dtype())) return unique_complex(flat, x.shape(), indices, inverse, counts, ctx, max_memory);
  if (inverse && n >= (int64_t(1) << 31))
    throw ValueError("unique_inverse: x has " + std::to_string(n) + " elements; at most 2**31 - 1 are supported");
  const Array sorted = kept(sort(flat), ctx, max_memory);
  // a group starts at the first element and wherever a value differs from the one before
  const Array differs = elementwise(Op::NotEqual, {sorted[{Index::slice(1)}], sorted[{Index::slice({}, -1)}]});
  const Array first = concat({full({1}, Scalar(true), DType::Bool), differs});
  std::map<size_t, MaskCounts> counted;  // per itemsize of the values selected
  auto select = [&](const Array& v) {
    const size_t isz = itemsize(v.dtype());
    auto it = counted.find(isz);
    if (it == counted.end()) it = counted.emplace(isz, count_mask(first, isz, ctx)).first;
    return mask_select(v, first, it->second);
  };
  u.values = select(sorted);
  if (counts) {
    const Array starts = select(arange_int(0, n, 1, DType::I64));
    u.counts = diff(starts, 0, 1, {}, full({1}, Scalar(n), DType::I64));
  }
  if (indices || inverse) {
    const Array order = kept(argsort(flat), ctx, max_memory);  // stable: a group's first position first
    if (indices) u.indices = select(order);
    if (inverse) {
      // element order[i] is in group cumsum(first)[i] - 1: sorting (order[i], group) pairs
      // packed in one int64 by order[i] puts each element's group at its position
      const Array group = cumsum(first, 0, DType::I64) - Scalar(int64_t(1));
      const Array packed = order * Scalar(int64_t(1) << 32) + group;
      u.inverse = reshape(sort(packed) & Scalar((int64_t(1) << 32) - 1),
                          std::vector<int64_t>(x.shape().begin(), x.shape().end()));
    }
  }
  return u;
}

}  // namespace b2lazy
