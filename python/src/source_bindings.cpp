// Sources: open, NumPy arrays (wrapped or compressed), cframes, full, arange, linspace.
#include <cstdint>
#include <string>
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

void bind_sources(nb::module_& m) {
  m.def(
      "open",
      [](const std::string& path, nb::handle storage_options) {
        StoreOptions so = b2lazy_py::store_options(storage_options);
        nb::gil_scoped_release nogil;  // a store calling into Python (fsspec) takes it on any thread
        return open(path, so);
      },
      nb::arg("path"), nb::arg("storage_options").none() = nb::none());
  m.def("from_numpy", [](nb::handle obj, const std::string& name) {
    auto a = nb::cast<nb::ndarray<nb::ro, nb::device::cpu>>(obj);
    return from_numpy(a, obj, name);
  });
  m.def(
      "from_numpy_compressed",
      [](nb::handle obj, nb::handle chunks, nb::handle blocks, const std::string& codec, int clevel,
         const std::string& filter) {
        Array src = from_numpy(nb::cast<nb::ndarray<nb::ro, nb::device::cpu>>(obj), obj, "numpy");
        ComputeOptions o;
        o.chunks = to_shape(chunks, "chunks");
        o.blocks = to_shape(blocks, "blocks");
        o.cparams = CParams{codec, clevel, filter};
        return interruptible([&] { return Array(src.compute(o).node()); });
      },
      nb::arg("obj"), nb::arg("chunks").none(), nb::arg("blocks").none(), nb::arg("codec"), nb::arg("clevel"),
      nb::arg("filter"));
  m.def("from_cframe", [](nb::bytes b) { return from_cframe(b.c_str(), static_cast<int64_t>(b.size())); });
  m.def("to_cframe", [](const Array& a, Context* ctx) {
    std::vector<uint8_t> frame = interruptible([&] { return to_cframe(a, ctx); });
    return nb::bytes(reinterpret_cast<const char*>(frame.data()), frame.size());
  });
  m.def(
      "full",
      [](nb::handle shape, nb::handle value, nb::handle dtype, nb::handle chunks) {
        auto s = as_scalar(value);
        if (!s) throw TypeError("full(): fill_value must be a Python bool, int or float");
        return full(to_shape(shape, "shape"), *s, opt_dtype(dtype), to_shape(chunks, "chunks"));
      },
      nb::arg("shape"), nb::arg("value"), nb::arg("dtype").none(), nb::arg("chunks").none());
  m.def(
      "arange",
      [](double start, double stop, double step, nb::handle dtype, nb::handle shape, nb::handle chunks) {
        return arange(start, stop, step, opt_dtype(dtype), to_shape(shape, "shape"), to_shape(chunks, "chunks"));
      },
      nb::arg("start"), nb::arg("stop"), nb::arg("step"), nb::arg("dtype").none(), nb::arg("shape").none(),
      nb::arg("chunks").none());
  m.def(
      "arange_int",
      [](int64_t start, int64_t stop, int64_t step, nb::handle dtype, nb::handle shape, nb::handle chunks) {
        return arange_int(start, stop, step, opt_dtype(dtype), to_shape(shape, "shape"), to_shape(chunks, "chunks"));
      },
      nb::arg("start"), nb::arg("stop"), nb::arg("step"), nb::arg("dtype").none(), nb::arg("shape").none(),
      nb::arg("chunks").none());
  m.def(
      "linspace",
      [](double start, double stop, nb::handle num, bool endpoint, nb::handle dtype, nb::handle shape,
         nb::handle chunks) {
        return linspace(start, stop, to_int64(num, "linspace: num"), endpoint, opt_dtype(dtype),
                        to_shape(shape, "shape"), to_shape(chunks, "chunks"));
      },
      nb::arg("start"), nb::arg("stop"), nb::arg("num"), nb::arg("endpoint"), nb::arg("dtype").none(),
      nb::arg("shape").none(), nb::arg("chunks").none());
}

}  // namespace b2lazy_py
