// Moving (rolling) reductions (b2lazy/rolling.hpp). The Python package normalises the
// arguments (python/b2lazy/_rolling.py); checks of values stay in C++.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <b2lazy/b2lazy.hpp>
#include <b2lazy/rolling.hpp>

#include "bindings.hpp"

namespace b2lazy_py {

using namespace b2lazy;

void bind_rolling(nb::module_& m) {
  m.def(
      "moving_reduce",
      [](const Array& x, int64_t window, const std::string& func, int axis, bool center,
         std::optional<int64_t> min_periods, double ddof, bool skipna) {
        MovingOptions o;
        o.axis = axis;
        o.center = center;
        o.min_periods = min_periods;
        o.ddof = ddof;
        o.skipna = skipna;
        return moving_reduce(x, window, moving_op(func), o);
      },
      nb::arg("x"), nb::arg("window"), nb::arg("func"), nb::arg("axis"), nb::arg("center"),
      nb::arg("min_periods").none(), nb::arg("ddof"), nb::arg("skipna"));
}

}  // namespace b2lazy_py
