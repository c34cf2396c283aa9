// The Context and Array classes: an array's properties, indexing, astype, explain, stats.
#include <optional>
#include <string>

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

void bind_array(nb::module_& m) {
  nb::class_<Context>(m, "Context")
      .def(nb::init<int>(), nb::arg("nthreads") = 0)
      .def_prop_ro("nthreads", &Context::nthreads);

  nb::class_<Array>(m, "Array")
      .def_prop_ro("shape", [](const Array& a) { return shape_tuple(a.shape()); })
      .def_prop_ro("dtype", [](const Array& a) { return std::string(dtype_name(a.dtype())); })
      .def_prop_ro("ndim", [](const Array& a) { return a.ndim(); })
      .def_prop_ro("size", [](const Array& a) { return a.size(); })
      .def_prop_ro("kind", [](const Array& a) { return a.node()->kind(); })
      .def(
          "explain", [](const Array& a, Context* ctx) { return a.explain(ctx); }, nb::arg("ctx").none() = nb::none())
      .def(
          "getitem", [](const Array& a, nb::handle key) { return getitem(a, parse_key(key)); }, nb::arg("key").none())
      .def(
          "getitem_arrays",
          [](const Array& a, nb::handle key, Context* ctx) {
            auto k = parse_key(key);
            return interruptible([&] { return getitem(a, k, ctx); });  // a mask is counted now
          },
          nb::arg("key").none(), nb::arg("ctx").none())
      .def(
          "oindex", [](const Array& a, nb::handle key) { return oindex(a, parse_key(key)); }, nb::arg("key").none())
      .def("astype", [](const Array& a, nb::handle dt) { return a.astype(dtype_of(dt)); })
      .def("urlpath",
           [](const Array& a) -> std::optional<std::string> {
             StorageInfo info;  // stored arrays of any format; in-memory ones are named "...#N"
             if (!a.node()->stored_info(info)) return std::nullopt;
             const size_t hash = info.urlpath.rfind('#');  // ("s.b2z#/x": a member of a .b2z)
             if (hash != std::string::npos && hash + 1 < info.urlpath.size() &&
                 info.urlpath.find_first_not_of("0123456789", hash + 1) == std::string::npos)
               return std::nullopt;
             return info.urlpath;
           })
      // The chunks the node is cheapest to evaluate on (a source's storage chunks); () if none.
      .def("preferred_chunks", [](const Array& a) { return shape_tuple(a.node()->preferred_chunks()); })
      .def("stats", [](const Array& a) -> nb::object {
        if (!a.stats()) return nb::none();
        return stats_dict(*a.stats());
      });
}

}  // namespace b2lazy_py
