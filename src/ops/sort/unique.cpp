// unique_values / unique_counts / unique_inverse / unique_all (the Array API), sort-based
// and out of core: x flattened and sorted (runs and a merge when it is long) into a
// temporary file, group starts flagged where a value differs from the one before (NaNs
// differ from everything, -0.0 equals 0.0), counted per strip now (the result's length
// depends on the values), then selected lazily.
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
      u.inverse = reshape(sort(packed) & Scalar((int64_t(1) << 32) - 1), std::vector<int64_t>(x.shape().begin(), x.shape().end()));
    }
  }
  return u;
}

}  // namespace b2lazy
