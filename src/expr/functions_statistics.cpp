// Issue #37's statistics in expression strings, with the Python package's names and
// parameters: nanmedian / nanquantile / nanpercentile, isin, digitize, bincount, histogram,
// histogram2d (a tuple: hist, then the edges), and the counter-based random_* sources.
#include "b2lazy/error.hpp"
#include "b2lazy/histogram.hpp"
#include "b2lazy/random.hpp"
#include "expr/registry/rows.hpp"
#include "expr/value.hpp"

namespace b2lazy::expr {

namespace {
Value arr(Array a, const Args& x) { return Value::of(std::move(a), x.column()); }

// A histogram's result: hist, then each axis's edges (in their dtype).
Value histogram_tuple(const Histogram& h, const Args& x) {
  Value t = Value::of_kind(Value::Kind::Tuple, x.column());
  t.items.push_back(arr(h.hist, x));
  for (const std::vector<double>& e : h.edges) {
    auto data = std::make_shared<std::vector<double>>(e);
    Array a = from_buffer(data->data(), DType::F64, {static_cast<int64_t>(data->size())}, {},
                          std::shared_ptr<const void>(data, data->data()), "edges");
    t.items.push_back(arr(a.astype(h.edge_dtype), x));
  }
  return t;
}

// bins= as NumPy takes it for one axis: a count, or the edges (a 1-d sequence or array).
HistogramBins axis_bins(const Value& v, const Args& x, const std::string& name) {
  HistogramBins b;
  if (v.kind == Value::Kind::Scalar && v.scalar.kind == ScalarKind::Int) {
    b.count = v.scalar.i;
    return b;
  }
  if (v.kind == Value::Kind::String)
    throw ValueError(x.fn() + "(): bins='" + v.str +
                     "' (a binning rule by name) is not supported; give a count or the edges");
  Array a = v.kind == Value::Kind::Array ? v.array : literal_array(v, x.fn() + "(): " + name);
  if (a.ndim() != 1) x.bad(name, "an int or a 1-d sequence of bin edges");
  b.edges = a.to_vector(x.ctx());
  return b;
}

std::optional<std::pair<double, double>> pair_of(const Value& v, const Args& x, const std::string& name) {
  if (v.kind == Value::Kind::None) return std::nullopt;
  Array a = v.kind == Value::Kind::Array ? v.array : literal_array(v, x.fn() + "(): " + name);
  if (a.size() != 2 || a.ndim() != 1) x.bad(name, "None or a (min, max) pair");
  std::vector<double> p = a.to_vector(x.ctx());
  return std::make_pair(p[0], p[1]);
}

bool density_of(const Args& x) { return x.has("density") && x.boolean("density"); }

std::optional<Array> opt_array(const Args& x, const char* name) {
  if (!x.has(name)) return std::nullopt;
  return x.array(name);
}

// A non-negative int up to 2**64 - 1 (a seed).
uint64_t u64(const Args& x, const char* name) {
  const Value& v = x.get(name);
  if (v.kind != Value::Kind::Scalar || v.scalar.kind != ScalarKind::Int || (!v.scalar.above_int64 && v.scalar.i < 0))
    x.bad(name, "an int in [0, 2**64)");
  return static_cast<uint64_t>(v.scalar.i);
}

RandomKey key_of(const Args& x) {
  RandomKey k;
  k.seed = u64(x, "seed");
  const int64_t s = x.integer("stream");
  if (s < 0 || s > int64_t(UINT32_MAX)) x.bad("stream", "an int in [0, 2**32)");
  k.stream = static_cast<uint32_t>(s);
  return k;
}
Shape chunks_of(const Args& x) { return x.has("chunks") ? x.integers("chunks") : Shape{}; }
}  // namespace

void statistics_rows(Rows& r) {
  for (const char* name : {"nanmedian", "nanquantile", "nanpercentile"}) {
    const std::string fn = name;
    const char* sig = fn == "nanmedian" ? "x, /, axis=None, *, keepdims=False"
                                        : "x, /, q, axis=None, *, method='linear', keepdims=False";
    row(r, name, F::Holistic, sig, "float64 (x's float type for float32)", [fn](Args& x) {
      x.bind();
      QuantileOptions o;
      o.axis = x.opt_axes("axis");
      o.keepdims = x.boolean("keepdims");
      if (fn == "nanmedian") return arr(nanmedian(x.array("x"), o), x);
      const Value& v = x.get("method");
      if (v.kind != Value::Kind::String)
        x.bad("method", "a string ('linear', 'lower', 'higher', 'nearest', 'midpoint')");
      o.method = quantile_method(v.str);
      const double q = x.number("q");
      return arr(fn == "nanquantile" ? nanquantile(x.array("x"), q, o) : nanpercentile(x.array("x"), q, o), x);
    });
  }
  row(r, "isin", F::Index, "element, test_elements, *, assume_unique=False, invert=False", "bool", [](Args& x) {
    x.bind();
    return arr(
        isin(x.array("element"), x.array("test_elements"), x.boolean("assume_unique"), x.boolean("invert"), x.ctx()),
        x);
  });
  row(r, "digitize", F::Index, "x, bins, right=False", "int64", [](Args& x) {
    x.bind();
    return arr(digitize(x.array("x"), x.array("bins"), x.boolean("right"), x.ctx()), x);
  });
  row(r, "bincount", F::Holistic, "x, /, weights=None, minlength=0", "int64 (float64 with weights)", [](Args& x) {
    x.bind();
    return arr(bincount(x.array("x"), opt_array(x, "weights"), x.integer("minlength"), x.ctx()), x);
  });
  row(r, "histogram", F::Holistic, "a, bins=10, range=None, weights=None, density=None",
      "(hist, bin_edges): hist int64 (weights' type; float64 with density), edges float64 (float32 for float32 a)",
      [](Args& x) {
        x.bind();
        HistogramBins b = axis_bins(x.get("bins"), x, "bins");
        b.range = pair_of(x.get("range"), x, "range");
        return histogram_tuple(histogram(x.array("a"), b, opt_array(x, "weights"), density_of(x), x.ctx()), x);
      });
  row(r, "histogram2d", F::Holistic, "x, y, bins=10, range=None, weights=None, density=None",
      "(hist, xedges, yedges): hist float64, edges float64 (float32 for float32 x and y)", [](Args& x) {
        x.bind();
        // NumPy: bins an int, [int, int], one array of edges for both, or [edges, edges].
        const Value& v = x.get("bins");
        HistogramBins bx, by;
        if (v.is_sequence() && v.items.size() == 2) {
          bx = axis_bins(v.items[0], x, "bins[0]");
          by = axis_bins(v.items[1], x, "bins[1]");
        } else {
          bx = by = axis_bins(v, x, "bins");
        }
        const Value& r = x.get("range");
        if (r.kind != Value::Kind::None) {
          if (!r.is_sequence() || r.items.size() != 2) x.bad("range", "None or [[xmin, xmax], [ymin, ymax]]");
          bx.range = pair_of(r.items[0], x, "range[0]");
          by.range = pair_of(r.items[1], x, "range[1]");
        }
        return histogram_tuple(
            histogram2d(x.array("x"), x.array("y"), bx, by, opt_array(x, "weights"), density_of(x), x.ctx()), x);
      });
  row(r, "random_uniform", F::Creation, "shape, /, low=0.0, high=1.0, *, seed=0, stream=0, dtype=None, chunks=None",
      "dtype if given (float32 or float64), else float64", [](Args& x) {
        x.bind();
        return arr(random_uniform(x.integers("shape"), x.number("low"), x.number("high"), key_of(x),
                                  x.opt_dtype("dtype").value_or(DType::F64), chunks_of(x)),
                   x);
      });
  row(r, "random_normal", F::Creation, "shape, /, loc=0.0, scale=1.0, *, seed=0, stream=0, dtype=None, chunks=None",
      "dtype if given (float32 or float64), else float64", [](Args& x) {
        x.bind();
        return arr(random_normal(x.integers("shape"), x.number("loc"), x.number("scale"), key_of(x),
                                 x.opt_dtype("dtype").value_or(DType::F64), chunks_of(x)),
                   x);
      });
  row(r, "random_integers", F::Creation, "shape, /, low, high=None, *, seed=0, stream=0, dtype=None, chunks=None",
      "dtype if given (an integer dtype), else int64", [](Args& x) {
        x.bind();
        // NumPy's integers(low, high): [low, high); high None: [0, low).
        int64_t low = x.integer("low"), high = 0;
        if (x.has("high")) high = x.integer("high");
        else std::swap(low, high);
        if (high <= low)
          throw ValueError(x.fn() + "(): low >= high (low=" + std::to_string(low) + ", high=" + std::to_string(high) +
                           ")");
        const uint64_t span = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
        return arr(random_integers(x.integers("shape"), low, span, key_of(x), x.opt_dtype("dtype").value_or(DType::I64),
                                   chunks_of(x)),
                   x);
      });
}

}  // namespace b2lazy::expr
