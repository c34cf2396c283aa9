// x[key] = value (lazy or written through to a stored array) and boolean masks: mask_select
// and its counting pass.
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
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

void bind_assign(nb::module_& m) {
  // x[key] = value: lazily (a new array), or written through to a stored b2nd array.
  auto basic_key = [](nb::handle key) {
    std::vector<Index> k;
    for (IndexItem& item : parse_key(key)) {
      if (Index* i = std::get_if<Index>(&item)) k.push_back(*i);
      else
        throw IndexError(
            "x[key] = value: this key holds index arrays; only integers, slices, ... and None are taken here");
    }
    return k;
  };
  m.def(
      "assign",
      [basic_key](const Array& x, nb::handle key, const Array& value) { return assign(x, basic_key(key), value); },
      nb::arg("x"), nb::arg("key").none(), nb::arg("value"));
  m.def(
      "assign_stored",
      [basic_key](const std::string& urlpath, nb::handle key, const Array& value, Context* ctx, nb::handle max_memory) {
        const std::vector<Index> k = basic_key(key);
        const size_t mm = to_max_memory(max_memory).value_or(size_t(1) << 30);
        return interruptible([&] { return assign_stored(urlpath, k, value, ctx, mm); });
      },
      nb::arg("urlpath"), nb::arg("key").none(), nb::arg("value"), nb::arg("ctx").none(), nb::arg("max_memory").none());
  m.def(
      "assign_stored_where",
      [](const std::string& urlpath, const Array& mask, const Array& value, Context* ctx, nb::handle max_memory) {
        const size_t mm = to_max_memory(max_memory).value_or(size_t(1) << 30);
        return interruptible([&] { return assign_stored_where(urlpath, mask, value, ctx, mm); });
      },
      nb::arg("urlpath"), nb::arg("mask"), nb::arg("value"), nb::arg("ctx").none(), nb::arg("max_memory").none());
  m.def(
      "mask_select",
      [](const Array& x, const Array& mask, Context* ctx) {
        return interruptible([&] { return mask_select(x, mask, ctx); });
      },
      nb::arg("x"), nb::arg("mask"), nb::arg("ctx").none());
  // The counting pass alone, and x[mask] from its counts (a saved expression keeps them).
  m.def(
      "count_mask",
      [](const Array& mask, size_t value_itemsize, Context* ctx) {
        MaskCounts c = interruptible([&] { return count_mask(mask, value_itemsize, ctx); });
        return std::make_pair(c.strip, c.counts);
      },
      nb::arg("mask"), nb::arg("value_itemsize"), nb::arg("ctx").none());
  m.def("mask_select_counted",
        [](const Array& x, const Array& mask, const Shape& strip, const std::vector<int64_t>& counts) {
          return mask_select(x, mask, MaskCounts{strip, counts});
        });
}

}  // namespace b2lazy_py
