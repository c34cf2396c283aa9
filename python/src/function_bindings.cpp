// The function registry and the functions on arrays: elementwise, where, clip, reductions,
// quantiles, scans, linear algebra, indexing and shapes, and the Array API functions on
// their own lazy nodes (eye ... unstack, sorting and searching).
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <b2lazy/b2lazy.hpp>

#include "bindings.hpp"
#include "convert.hpp"
#include "interruptible.hpp"

namespace b2lazy_py {

using namespace b2lazy;

void bind_functions(nb::module_& m) {
  // The function registry (b2lazy/functions.hpp): the package gives each function its
  // signature, defaults and aliases from it (b2lazy/_registry.py).
  m.def("functions", [] {
    nb::list l;
    for (const FunctionInfo& f : function_registry()) {
      static const char* const kinds[] = {"positional_only", "positional_or_keyword", "var_positional", "keyword_only"};
      nb::list params;
      for (const Param& p : f.params)
        params.append(nb::make_tuple(p.name, kinds[static_cast<int>(p.kind)],
                                     p.default_value ? nb::cast(*p.default_value) : nb::none()));
      nb::dict d;
      d["name"] = f.name;
      d["aliases"] = f.aliases;
      d["family"] = family_name(f.family);
      d["params"] = params;
      d["signature"] = f.signature();
      d["dtype_rule"] = f.dtype_rule;
      d["method"] = f.method;
      // The kernel a family-made function runs: an elementwise op or a reduction.
      if (f.op && op_family(*f.op) != OpFamily::Special) d["kernel"] = op_name(*f.op);
      else if (f.reduction) d["kernel"] = reduction_name(*f.reduction);
      else d["kernel"] = nb::none();
      d["single_axis"] = f.reduction && reduction_info(*f.reduction).single_axis;
      l.append(d);
    }
    return l;
  });

  m.def("elementwise", [](const std::string& name, nb::args args) {
    Op op = op_from_name(name);
    std::vector<Operand> ops;
    for (size_t i = 0; i < args.size(); ++i) ops.push_back(as_operand(args[i], name.c_str(), i));
    return elementwise(op, ops);
  });
  m.def("where", [](nb::handle c, nb::handle x, nb::handle y) {
    return where(as_operand(c, "where", 0), as_operand(x, "where", 1), as_operand(y, "where", 2));
  });
  m.def(
      "clip",
      [](nb::handle x, nb::handle lo, nb::handle hi) {
        std::optional<Operand> l, h;
        if (!lo.is_none()) l = as_operand(lo, "clip", 1);
        if (!hi.is_none()) h = as_operand(hi, "clip", 2);
        return clip(as_operand(x, "clip", 0), l, h);
      },
      nb::arg("x"), nb::arg("lo").none(), nb::arg("hi").none());

  m.def(
      "reduce",
      [](const std::string& name, const Array& x, nb::handle axis, bool keepdims, nb::handle dtype, double correction) {
        const ReductionInfo* info = find_reduction(name);
        if (!info) throw ValueError("unknown reduction '" + name + "'");
        const Reduction r = info->r;
        ReduceOptions o;
        if (!axis.is_none()) {
          std::vector<int> ax;
          if (nb::isinstance<nb::int_>(axis)) ax.push_back(nb::cast<int>(axis));
          else
            for (auto h : axis) {
              if (!nb::isinstance<nb::int_>(h)) throw TypeError(name + "(): axis must be an int or a tuple of ints");
              ax.push_back(nb::cast<int>(h));
            }
          o.axis = ax;
        }
        o.keepdims = keepdims;
        o.dtype = opt_dtype(dtype);
        o.correction = correction;
        return reduce(r, x, o);
      },
      nb::arg("name"), nb::arg("x"), nb::arg("axis").none(), nb::arg("keepdims"), nb::arg("dtype").none(),
      nb::arg("correction"));

  m.def(
      "quantile",
      [](const std::string& name, const Array& x, double q, nb::handle axis, bool keepdims, const std::string& method) {
        QuantileOptions o;
        if (!axis.is_none()) {
          std::vector<int> ax;
          if (nb::isinstance<nb::int_>(axis)) ax.push_back(nb::cast<int>(axis));
          else
            for (auto h : axis) ax.push_back(nb::cast<int>(h));
          o.axis = ax;
        }
        o.keepdims = keepdims;
        o.method = quantile_method(method);
        if (name == "median") return median(x, o);
        return name == "percentile" ? percentile(x, q, o) : quantile(x, q, o);
      },
      nb::arg("name"), nb::arg("x"), nb::arg("q"), nb::arg("axis").none(), nb::arg("keepdims"), nb::arg("method"));

  m.def(
      "scan",
      [](const std::string& name, const Array& x, std::optional<int> axis, nb::handle dtype, bool include_initial,
         bool numpy_style) {
        bool prod = name == "prod";
        if (name == "push") {  // (xarray's ffill: b2lazy/_xarray_fill.py)
          if (!axis) throw ValueError("forward_fill: axis must be given");
          return forward_fill(x, *axis);
        }
        if (!prod && name != "sum") throw ValueError("unknown scan '" + name + "'");
        if (numpy_style) return prod ? cumprod(x, axis, opt_dtype(dtype)) : cumsum(x, axis, opt_dtype(dtype));
        ScanOptions o{axis, opt_dtype(dtype), include_initial};
        return prod ? cumulative_prod(x, o) : cumulative_sum(x, o);
      },
      nb::arg("name"), nb::arg("x"), nb::arg("axis").none(), nb::arg("dtype").none(), nb::arg("include_initial"),
      nb::arg("numpy_style"));

  m.def("tensordot", [](const Array& a, const Array& b, int axes) { return tensordot(a, b, axes); });
  m.def("tensordot_axes", [](const Array& a, const Array& b, const std::vector<int>& xa, const std::vector<int>& xb) {
    return tensordot(a, b, xa, xb);
  });
  m.def("vecdot", [](const Array& a, const Array& b, int axis) { return vecdot(a, b, axis); });
  m.def(
      "take",
      [](const Array& x, Int64Array idx, std::optional<int> axis) {
        IndexArray v = int64_values(idx);
        return take(x, v.values, v.shape, axis);
      },
      nb::arg("x"), nb::arg("indices"), nb::arg("axis").none());
  m.def(
      "take_points",
      [](const Array& x, size_t axis, nb::list arrays) {
        std::vector<std::vector<int64_t>> idx;
        Shape shape;
        for (nb::handle h : arrays) {
          IndexArray v = int64_values(nb::cast<Int64Array>(h));
          shape = v.shape;
          idx.push_back(std::move(v.values));
        }
        return take_points(x, axis, idx, shape);
      },
      nb::arg("x"), nb::arg("axis"), nb::arg("arrays"));
  m.def(
      "take_along_axis",
      [](const Array& x, Int64Array idx, std::optional<int> axis) {
        IndexArray v = int64_values(idx);
        return take_along_axis(x, v.values, v.shape, axis);
      },
      nb::arg("x"), nb::arg("indices"), nb::arg("axis").none());
  m.def(
      "nonzero", [](const Array& x, Context* ctx) { return interruptible([&] { return nonzero(x, ctx); }); },
      nb::arg("x"), nb::arg("ctx").none());
  m.def("reshape", [](const Array& x, nb::handle shape) { return reshape(x, to_shape(shape, "reshape: shape")); });
  m.def("broadcast_to",
        [](const Array& x, nb::handle shape) { return broadcast_to(x, to_shape(shape, "broadcast_to: shape")); });
  m.def(
      "concat", [](const std::vector<Array>& xs, std::optional<int> axis) { return concat(xs, axis); }, nb::arg("xs"),
      nb::arg("axis").none());
  m.def("stack", [](const std::vector<Array>& xs, int axis) { return stack(xs, axis); });
  m.def(
      "roll",
      [](const Array& x, nb::handle shifts, std::optional<std::vector<int>> axes) {
        return roll(x, to_shape(shifts, "roll: shift"), axes);
      },
      nb::arg("x"), nb::arg("shifts"), nb::arg("axes").none());
}

void bind_array_api(nb::module_& m) {
  // Array API functions on their own lazy nodes (issue #15).
  m.def("eye", [](nb::handle n_rows, nb::handle n_cols, nb::handle k, nb::handle dtype) {
    return eye(to_int64(n_rows, "eye: n_rows"), to_int64(n_cols, "eye: n_cols"), to_int64(k, "eye: k"),
               dtype_of(dtype));
  });
  m.def("diagonal",
        [](const Array& x, nb::handle offset) { return diagonal(x, to_int64(offset, "diagonal: offset")); });
  m.def("tile", [](const Array& x, nb::handle reps) { return tile(x, to_shape(reps, "tile: repetitions")); });
  m.def(
      "repeat",
      [](const Array& x, nb::handle repeats, std::optional<int> axis) {
        if (!nb::hasattr(repeats, "__array_interface__"))  // an int (the package passes an int64 array otherwise)
          return repeat(x, to_int64(repeats, "repeat: repeats"), axis);
        return repeat(x, int64_values(nb::cast<Int64Array>(repeats)).values, axis);
      },
      nb::arg("x"), nb::arg("repeats"), nb::arg("axis").none());
  m.def(
      "trace",
      [](const Array& x, nb::handle offset, nb::handle dtype) {
        return trace(x, to_int64(offset, "trace: offset"), opt_dtype(dtype));
      },
      nb::arg("x"), nb::arg("offset"), nb::arg("dtype").none());
  m.def(
      "diff",
      [](const Array& x, int axis, nb::handle n, std::optional<Array> prepend, std::optional<Array> append) {
        return diff(x, axis, to_int64(n, "diff: n"), prepend, append);
      },
      nb::arg("x"), nb::arg("axis"), nb::arg("n"), nb::arg("prepend").none(), nb::arg("append").none());
  m.def(
      "unique",
      [](const Array& x, bool indices, bool inverse, bool counts, Context* ctx, std::optional<size_t> mm) {
        return interruptible([&] {  // sorts x now
          Unique u = unique(x, indices, inverse, counts, ctx, mm.value_or(0));
          return std::make_tuple(u.values, u.indices, u.inverse, u.counts);
        });
      },
      nb::arg("x"), nb::arg("indices"), nb::arg("inverse"), nb::arg("counts"), nb::arg("ctx").none(),
      nb::arg("max_memory").none());
  m.def("sort_run_length", [] { return sort_run_length(); });
  m.def("set_sort_run_length", [](int64_t n) { set_sort_run_length(n); });
  m.def(
      "searchsorted",
      [](const Array& x1, const Array& x2, bool right, std::optional<Array> sorter) {
        return interruptible([&] { return searchsorted(x1, x2, right, sorter); });  // a sorter is read now
      },
      nb::arg("x1"), nb::arg("x2"), nb::arg("right"), nb::arg("sorter").none());
  m.def("meshgrid", [](const std::vector<Array>& xs, bool xy) { return meshgrid(xs, xy); });
  m.def("broadcast_arrays", [](const std::vector<Array>& xs) { return broadcast_arrays(xs); });
}

}  // namespace b2lazy_py
