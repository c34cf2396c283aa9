// Issue #37's statistics (b2lazy/histogram.hpp, b2lazy/random.hpp, the nan* quantiles):
// what python/b2lazy/_statistics.py and random.py call. Builders that evaluate now (the
// lookup tables, bincount's max, a histogram's range) run without the GIL, interruptibly.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <b2lazy/b2lazy.hpp>

#include "bindings.hpp"

namespace b2lazy_py {

using namespace b2lazy;

namespace {
HistogramBins axis_bins(int64_t count, std::optional<std::vector<double>> edges,
                        std::optional<std::pair<double, double>> range) {
  HistogramBins b;
  b.count = count;
  b.edges = std::move(edges);
  b.range = range;
  return b;
}

nb::tuple histogram_result(const Histogram& h) {
  nb::list edges;
  for (const auto& e : h.edges) edges.append(nb::cast(e));
  return nb::make_tuple(h.hist, edges, std::string(dtype_name(h.edge_dtype)));
}
}  // namespace

void bind_statistics(nb::module_& m) {
  m.def(
      "random_source",
      [](const std::string& dist, const std::vector<int64_t>& shape, double a, double b, int64_t low, uint64_t span,
         uint64_t seed, uint32_t stream, const std::string& dtype, const std::vector<int64_t>& chunks) {
        const RandomKey key{seed, stream};
        const DType t = dtype_from_name(dtype);
        if (dist == "uniform") return random_uniform(shape, a, b, key, t, chunks);
        if (dist == "normal") return random_normal(shape, a, b, key, t, chunks);
        return random_integers(shape, low, span, key, t, chunks);
      },
      nb::arg("dist"), nb::arg("shape"), nb::arg("a"), nb::arg("b"), nb::arg("low"), nb::arg("span"), nb::arg("seed"),
      nb::arg("stream"), nb::arg("dtype"), nb::arg("chunks"));
  m.def(
      "isin",
      [](const Array& element, const Array& test, bool assume_unique, bool invert, Context* ctx) {
        Array r;
        run_interruptible([&] { r = isin(element, test, assume_unique, invert, ctx); });
        return r;
      },
      nb::arg("element"), nb::arg("test_elements"), nb::arg("assume_unique"), nb::arg("invert"), nb::arg("ctx").none());
  m.def(
      "digitize",
      [](const Array& x, const Array& bins, bool right, Context* ctx) {
        Array r;
        run_interruptible([&] { r = digitize(x, bins, right, ctx); });
        return r;
      },
      nb::arg("x"), nb::arg("bins"), nb::arg("right"), nb::arg("ctx").none());
  m.def(
      "bincount",
      [](const Array& x, std::optional<Array> weights, int64_t minlength, Context* ctx) {
        Array r;
        run_interruptible([&] { r = bincount(x, weights, minlength, ctx); });
        return r;
      },
      nb::arg("x"), nb::arg("weights").none(), nb::arg("minlength"), nb::arg("ctx").none());
  m.def(
      "histogram",
      [](const Array& a, int64_t count, std::optional<std::vector<double>> edges,
         std::optional<std::pair<double, double>> range, std::optional<Array> weights, bool density, Context* ctx) {
        Histogram h;
        run_interruptible([&] { h = histogram(a, axis_bins(count, edges, range), weights, density, ctx); });
        return histogram_result(h);
      },
      nb::arg("a"), nb::arg("count"), nb::arg("edges").none(), nb::arg("range").none(), nb::arg("weights").none(),
      nb::arg("density"), nb::arg("ctx").none());
  m.def(
      "histogram2d",
      [](const Array& x, const Array& y, int64_t xcount, std::optional<std::vector<double>> xedges,
         std::optional<std::pair<double, double>> xrange, int64_t ycount, std::optional<std::vector<double>> yedges,
         std::optional<std::pair<double, double>> yrange, std::optional<Array> weights, bool density, Context* ctx) {
        Histogram h;
        run_interruptible([&] {
          h = histogram2d(x, y, axis_bins(xcount, xedges, xrange), axis_bins(ycount, yedges, yrange), weights, density,
                          ctx);
        });
        return histogram_result(h);
      },
      nb::arg("x"), nb::arg("y"), nb::arg("xcount"), nb::arg("xedges").none(), nb::arg("xrange").none(),
      nb::arg("ycount"), nb::arg("yedges").none(), nb::arg("yrange").none(), nb::arg("weights").none(),
      nb::arg("density"), nb::arg("ctx").none());
  m.def(
      "nanquantile",
      [](const std::string& name, const Array& x, double q, std::optional<std::vector<int>> axis, bool keepdims,
         const std::string& method) {
        QuantileOptions o;
        o.axis = axis;
        o.keepdims = keepdims;
        o.method = quantile_method(method);
        if (name == "nanmedian") return nanmedian(x, o);
        return name == "nanpercentile" ? nanpercentile(x, q, o) : nanquantile(x, q, o);
      },
      nb::arg("name"), nb::arg("x"), nb::arg("q"), nb::arg("axis").none(), nb::arg("keepdims"), nb::arg("method"));
}

}  // namespace b2lazy_py
