// Counting and binning (NumPy's isin, digitize, bincount, histogram, histogram2d): the
// data is streamed chunk by chunk, never held whole. What a result's shape or its lookup
// table depends on (bincount's max(x), histogram's min/max with range=None, the set of
// isin's test_elements, digitize's bins) is evaluated now, with `ctx`.
#pragma once
#include <optional>
#include <utility>
#include <vector>

#include "b2lazy/array.hpp"

namespace b2lazy {

// The most values isin's test_elements and digitize's bins may hold (they are evaluated
// into a sorted table in memory): 2**24.
constexpr int64_t kMaxLookupTable = int64_t(1) << 24;

// Is each element of `element` among `test_elements` (compared in their promoted dtype;
// NaN is never found)? Lazy over `element`; bool of its shape.
Array isin(const Array& element, const Array& test_elements, bool assume_unique = false, bool invert = false,
           Context* ctx = nullptr);
// The index of the bin of each x (NumPy's digitize): `bins` 1-d, increasing or decreasing
// (else ValueError); lazy over x; int64.
Array digitize(const Array& x, const Array& bins, bool right = false, Context* ctx = nullptr);
// Occurrences of each value 0..max(x) of a 1-d non-negative integer x (max(x) found now,
// one pass), at least `minlength` long; with weights, their sums (float64).
Array bincount(const Array& x, const std::optional<Array>& weights = {}, int64_t minlength = 0, Context* ctx = nullptr);

// One axis of a histogram: `bins` equal bins over `range` (nullopt: x's min and max,
// found now), or the bin edges themselves (increasing).
struct HistogramBins {
  int64_t count = 10;
  std::optional<std::vector<double>> edges;
  std::optional<std::pair<double, double>> range;
};
struct Histogram {
  Array hist;                              // lazy: one pass over the data when evaluated
  std::vector<std::vector<double>> edges;  // one per axis, values of edge_dtype
  DType edge_dtype = DType::F64;           // NumPy's: float32 for float32 data, else float64
};
// np.histogram of x flattened: values in [edges[i], edges[i + 1]) in bin i, the last bin
// closed; values outside the edges (and NaN) not counted.
Histogram histogram(const Array& x, const HistogramBins& bins = {}, const std::optional<Array>& weights = {},
                    bool density = false, Context* ctx = nullptr);
// np.histogram2d of the points (x[i], y[i]), 1-d of one length.
Histogram histogram2d(const Array& x, const Array& y, const HistogramBins& xbins = {}, const HistogramBins& ybins = {},
                      const std::optional<Array>& weights = {}, bool density = false, Context* ctx = nullptr);

}  // namespace b2lazy
