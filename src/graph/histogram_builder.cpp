// Builders of b2lazy/histogram.hpp: what the shapes and tables depend on is evaluated
// now (small: a table of at most kMaxLookupTable values, a min and a max); the data itself
// stays lazy and is streamed by LookupNode and BincountNode when the result is evaluated.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "b2lazy/error.hpp"
#include "b2lazy/histogram.hpp"
#include "core/dispatch.hpp"
#include "ops/histogram/bincount_node.hpp"
#include "ops/histogram/lookup_node.hpp"

namespace b2lazy {

namespace {

// bincount's longest result (its counts are held in memory when evaluated): 2**28 bins.
constexpr int64_t kMaxBins = int64_t(1) << 28;

void refuse_complex(const Array& a, const std::string& fn, const char* what) {
  if (is_complex(a.dtype())) throw TypeError(fn + ": " + what + " may not be complex, got " + dtype_name(a.dtype()));
}

// The dtype values are compared in: the promoted one, float16 widened to float32.
DType compare_dtype(DType a, DType b) {
  const DType t = promote(a, b);
  return t == DType::F16 ? DType::F32 : t;
}

// `a`'s values in dtype t, C order, as bytes (at most kMaxLookupTable of them).
std::vector<unsigned char> values_of(const Array& a, DType t, const std::string& fn, const char* what, Context* ctx) {
  if (a.size() > kMaxLookupTable)
    throw ValueError(fn + ": " + what + " has " + std::to_string(a.size()) + " elements, more than the " +
                     std::to_string(kMaxLookupTable) + " (2**24) it may hold in memory as a lookup table");
  std::vector<unsigned char> bytes(static_cast<size_t>(a.size()) * itemsize(t));
  if (a.size()) a.astype(t).to_buffer(bytes.data(), ctx);
  return bytes;
}

template <class T> bool nan_value(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}

Array owned_f64(std::vector<double> v) {
  auto data = std::make_shared<std::vector<double>>(std::move(v));
  const int64_t n = static_cast<int64_t>(data->size());
  return from_buffer(data->data(), DType::F64, {n}, {}, std::shared_ptr<const void>(data, data->data()), "edges");
}

// np.linspace(lo, hi, n + 1): i * step + lo, the last one hi, computed in T as NumPy's
// (float32 when lo and hi are float32 values: NEP 50), to the bit.
template <class T> std::vector<double> linspace_edges(double lo_, double hi_, int64_t n) {
  std::vector<double> e(static_cast<size_t>(n + 1));
  const T lo = static_cast<T>(lo_), hi = static_cast<T>(hi_);
  const T delta = hi - lo, div = static_cast<T>(n), step = delta / div;
  for (int64_t i = 0; i <= n; ++i) {
    const T fi = static_cast<T>(i);
    // (rounded before the add, as NumPy's: this file is built with -ffp-contract=off)
    e[static_cast<size_t>(i)] = static_cast<double>((step == 0 ? fi / div * delta : fi * step) + lo);
  }
  e[static_cast<size_t>(n)] = static_cast<double>(hi);
  return e;
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// One axis's edges (in double, of values of `edge_dtype`), NumPy's _get_outer_edges and
// linspace, or the given edges checked.
std::vector<double> axis_edges(const Array& flat, const HistogramBins& b, DType edge_dtype, const std::string& fn,
                               Context* ctx) {
  std::vector<double> e;
  if (b.edges) {
    e = *b.edges;
    if (e.size() < 2)
      throw ValueError(fn + ": bins given as edges must hold at least 2 of them, got " + std::to_string(e.size()));
    for (size_t i = 0; i + 1 < e.size(); ++i)
      if (!(e[i] <= e[i + 1])) throw ValueError(fn + ": bins must increase monotonically, when an array");
  } else {
    if (b.count < 1) throw ValueError(fn + ": bins must be positive, when an integer, got " + std::to_string(b.count));
    if (b.count > kMaxBins)
      throw ValueError(fn + ": bins=" + std::to_string(b.count) + " is more than the 2**28 bins allowed");
    double lo = 0, hi = 1;
    bool found = false;  // lo and hi are x's min and max (of its dtype)
    if (b.range) {
      std::tie(lo, hi) = *b.range;
      if (lo > hi) throw ValueError(fn + ": max must be larger than min in range parameter.");
      if (!std::isfinite(lo) || !std::isfinite(hi))
        throw ValueError(fn + ": supplied range of [" + num(lo) + ", " + num(hi) + "] is not finite");
    } else if (flat.size() > 0) {
      const std::vector<double> mm = stack({reduce(Reduction::Min, flat), reduce(Reduction::Max, flat)}).to_vector(ctx);
      lo = mm[0], hi = mm[1], found = true;
      if (!std::isfinite(lo) || !std::isfinite(hi))
        throw ValueError(fn + ": autodetected range of [" + num(lo) + ", " + num(hi) + "] is not finite");
    }
    if (lo == hi && found && edge_dtype == DType::F32) {  // NumPy: float32 min - 0.5, in float32
      const float f = static_cast<float>(lo);
      lo = static_cast<double>(f - 0.5f), hi = static_cast<double>(f + 0.5f);
    } else if (lo == hi) {
      lo -= 0.5, hi += 0.5;
    }
    e = found && edge_dtype == DType::F32 ? linspace_edges<float>(lo, hi, b.count)
                                          : linspace_edges<double>(lo, hi, b.count);
  }
  if (edge_dtype == DType::F32)
    for (double& v : e) v = static_cast<double>(static_cast<float>(v));
  return e;
}

// The bin of each value of `flat` among `edges` (nbins for outside / NaN), lazily.
Array bin_index(const Array& flat, const std::vector<double>& edges, DType edge_dtype) {
  std::vector<unsigned char> table(edges.size() * itemsize(edge_dtype));
  if (edge_dtype == DType::F32) {
    for (size_t i = 0; i < edges.size(); ++i) {
      const float f = static_cast<float>(edges[i]);
      std::memcpy(table.data() + i * sizeof f, &f, sizeof f);
    }
  } else {
    std::memcpy(table.data(), edges.data(), table.size());
  }
  return Array(
      std::make_shared<LookupNode>(flat.astype(edge_dtype).node(), std::move(table), LookupMode::HistogramBin));
}

DType edge_dtype_of(DType t) { return t == DType::F32 ? DType::F32 : DType::F64; }

Array counted(const Array& index, const std::optional<Array>& weights, int64_t nbins) {
  NodePtr w = weights ? weights->astype(DType::F64).node() : nullptr;
  Array all(std::make_shared<BincountNode>(index.node(), w, nbins + 1));  // the last: values outside
  return all[{Index::slice(0, nbins)}];
}

std::optional<Array> flat_weights(const std::optional<Array>& weights, const Shape& shape, const std::string& fn) {
  if (!weights) return weights;
  refuse_complex(*weights, fn, "weights");
  if (weights->shape() != shape)
    throw ValueError(fn + ": weights should have the same shape as a, got " + shape_str(weights->shape()) + " and " +
                     shape_str(shape));
  return reshape(*weights, {-1});
}

}  // namespace

Array isin(const Array& element, const Array& test_elements, bool /*assume_unique*/, bool invert, Context* ctx) {
  refuse_complex(element, "isin", "element");
  refuse_complex(test_elements, "isin", "test_elements");
  const DType t = compare_dtype(element.dtype(), test_elements.dtype());
  std::vector<unsigned char> table = values_of(test_elements, t, "isin", "test_elements", ctx);
  dispatch_real(t, "isin", [&]<class T>(T*) {
    T* v = reinterpret_cast<T*>(table.data());
    size_t n = table.size() / sizeof(T);
    n = static_cast<size_t>(std::remove_if(v, v + n, [](T x) { return nan_value(x); }) - v);  // NaN is never found
    std::sort(v, v + n);
    n = static_cast<size_t>(std::unique(v, v + n) - v);
    table.resize(n * sizeof(T));
  });
  return Array(std::make_shared<LookupNode>(element.astype(t).node(), std::move(table),
                                            invert ? LookupMode::IsinInvert : LookupMode::Isin));
}

Array digitize(const Array& x, const Array& bins, bool right, Context* ctx) {
  refuse_complex(x, "digitize", "x");
  refuse_complex(bins, "digitize", "bins");
  if (bins.ndim() != 1) throw ValueError("digitize: bins must be 1-dimensional, got shape " + shape_str(bins.shape()));
  const DType t = compare_dtype(x.dtype(), bins.dtype());
  std::vector<unsigned char> table = values_of(bins, t, "digitize", "bins", ctx);
  const int64_t n = bins.size();
  bool decreasing = false;
  dispatch_real(t, "digitize", [&]<class T>(T*) {
    T* v = reinterpret_cast<T*>(table.data());
    bool inc = true, dec = true;  // NumPy's _monotonicity: non-strict; a NaN makes neither
    for (int64_t i = 0; i + 1 < n; ++i) {
      inc = inc && v[i] <= v[i + 1];
      dec = dec && v[i] >= v[i + 1];
    }
    if (!inc && !dec) throw ValueError("digitize: bins must be monotonically increasing or decreasing");
    decreasing = !inc;
    if (decreasing) std::reverse(v, v + n);
  });
  // NumPy: searchsorted(bins, x, side='left' if right else 'right'), or for decreasing bins
  // len(bins) minus that in the reversed bins.
  const LookupMode mode = right ? LookupMode::CountBelow : LookupMode::CountNotAbove;
  Array found(std::make_shared<LookupNode>(x.astype(t).node(), std::move(table), mode));
  return decreasing ? Scalar(n) - found : found;
}

Array bincount(const Array& x, const std::optional<Array>& weights, int64_t minlength, Context* ctx) {
  if (x.ndim() != 1) throw ValueError("bincount: x must be 1-dimensional, got shape " + shape_str(x.shape()));
  if (!is_integral(x.dtype()) && x.dtype() != DType::Bool)
    throw TypeError(std::string("bincount: x must be of an integer dtype, got ") + dtype_name(x.dtype()));
  if (minlength < 0) throw ValueError("bincount: minlength must be non-negative, got " + std::to_string(minlength));
  if (weights) {
    refuse_complex(*weights, "bincount", "weights");
    if (weights->shape() != x.shape())
      throw ValueError("bincount: the weights and x don't have the same length: " + shape_str(weights->shape()) +
                       " and " + shape_str(x.shape()));
  }
  int64_t length = minlength;
  if (x.size() > 0) {  // the length is max(x) + 1: found now, with the minimum (one evaluation)
    const std::vector<double> mm = stack({reduce(Reduction::Min, x), reduce(Reduction::Max, x)}).to_vector(ctx);
    if (mm[0] < 0) throw ValueError("bincount: x must have no negative elements, its minimum is " + num(mm[0]));
    if (mm[1] >= static_cast<double>(kMaxBins))
      throw ValueError("bincount: max(x) + 1 = " + num(mm[1] + 1) + " counts is more than the 2**28 allowed");
    length = std::max(length, static_cast<int64_t>(mm[1]) + 1);
  }
  if (length > kMaxBins)
    throw ValueError("bincount: minlength=" + std::to_string(length) + " is more than the 2**28 counts allowed");
  // (NumPy: an empty x gives int64 zeros, weights or not)
  NodePtr w = weights && x.size() > 0 ? weights->astype(DType::F64).node() : nullptr;
  return Array(std::make_shared<BincountNode>(x.astype(DType::I64).node(), w, length));
}

Histogram histogram(const Array& x, const HistogramBins& bins, const std::optional<Array>& weights, bool density,
                    Context* ctx) {
  refuse_complex(x, "histogram", "a");
  const std::optional<Array> w = flat_weights(weights, x.shape(), "histogram");
  const Array flat = reshape(x, {-1});
  // Edges given: compared as float64 (NumPy: its searchsorted promotes); made: in x's float type.
  const DType et = bins.edges ? DType::F64 : edge_dtype_of(x.dtype());
  std::vector<double> edges = axis_edges(flat, bins, et, "histogram", ctx);
  const int64_t nbins = static_cast<int64_t>(edges.size()) - 1;
  Array hist = counted(bin_index(flat, edges, et), w, nbins);
  if (w && !is_float(w->dtype())) hist = hist.astype(promote(w->dtype(), DType::I64));  // NumPy: the weights' type
  if (density) {                                                                        // NumPy: n / db / n.sum()
    std::vector<double> db(static_cast<size_t>(nbins));
    for (int64_t i = 0; i < nbins; ++i)
      db[static_cast<size_t>(i)] = edges[static_cast<size_t>(i) + 1] - edges[static_cast<size_t>(i)];
    Array dba = owned_f64(std::move(db)).astype(et);
    hist = hist / dba / reduce(Reduction::Sum, hist);
  }
  return {hist, {std::move(edges)}, et};
}

Histogram histogram2d(const Array& x, const Array& y, const HistogramBins& xbins, const HistogramBins& ybins,
                      const std::optional<Array>& weights, bool density, Context* ctx) {
  refuse_complex(x, "histogram2d", "x");
  refuse_complex(y, "histogram2d", "y");
  if (x.ndim() != 1 || y.ndim() != 1 || x.shape() != y.shape())
    throw ValueError("histogram2d: x and y must be 1-dimensional of one length, got shapes " + shape_str(x.shape()) +
                     " and " + shape_str(y.shape()));
  const std::optional<Array> w = flat_weights(weights, x.shape(), "histogram2d");
  // NumPy's histogramdd: the points' common dtype, edges in it when floating, else float64.
  const DType et = edge_dtype_of(compare_dtype(x.dtype(), y.dtype()));
  const DType etx = xbins.edges ? DType::F64 : et, ety = ybins.edges ? DType::F64 : et;
  std::vector<double> ex = axis_edges(x, xbins, etx, "histogram2d", ctx);
  std::vector<double> ey = axis_edges(y, ybins, ety, "histogram2d", ctx);
  const int64_t nx = static_cast<int64_t>(ex.size()) - 1, ny = static_cast<int64_t>(ey.size()) - 1;
  if (nx * ny > kMaxBins)
    throw ValueError("histogram2d: " + std::to_string(nx * ny) + " bins is more than the 2**28 allowed");
  const Array ix = bin_index(x, ex, etx), iy = bin_index(y, ey, ety);
  // One index per point; nx * ny for a point outside either axis's edges.
  const Array both = where((ix < Scalar(nx)) & (iy < Scalar(ny)), ix * Scalar(ny) + iy, Scalar(nx * ny));
  Array hist = reshape(counted(both, w, nx * ny), {nx, ny}).astype(DType::F64);
  if (density) {  // NumPy: hist / dx[:, None] / dy[None, :] / hist.sum()
    std::vector<double> dx(static_cast<size_t>(nx)), dy(static_cast<size_t>(ny));
    for (int64_t i = 0; i < nx; ++i)
      dx[static_cast<size_t>(i)] = ex[static_cast<size_t>(i) + 1] - ex[static_cast<size_t>(i)];
    for (int64_t i = 0; i < ny; ++i)
      dy[static_cast<size_t>(i)] = ey[static_cast<size_t>(i) + 1] - ey[static_cast<size_t>(i)];
    const Array s = reduce(Reduction::Sum, hist);
    hist = hist / reshape(owned_f64(std::move(dx)).astype(etx), {nx, 1}) /
           reshape(owned_f64(std::move(dy)).astype(ety), {1, ny}) / s;
  }
  return {hist, {std::move(ex), std::move(ey)}, et};
}

}  // namespace b2lazy
