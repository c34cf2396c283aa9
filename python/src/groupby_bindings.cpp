// segment_reduce (b2lazy/groupby.hpp). The Python package normalises codes to int64
// (python/b2lazy/_groupby.py); checks of values stay in C++.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <b2lazy/b2lazy.hpp>
#include <b2lazy/groupby.hpp>

#include "bindings.hpp"

namespace b2lazy_py {

using namespace b2lazy;

void bind_groupby(nb::module_& m) {
  m.def(
      "segment_reduce",
      [](const Array& x, const std::vector<int64_t>& codes, const std::string& func, std::optional<int64_t> ngroups,
         int axis, double ddof) {
        SegmentOptions o;
        o.axis = axis;
        o.ngroups = ngroups;
        o.ddof = ddof;
        return segment_reduce(x, codes, func, o);
      },
      nb::arg("x"), nb::arg("codes"), nb::arg("func"), nb::arg("ngroups").none(), nb::arg("axis"), nb::arg("ddof"));
  m.def("segment_functions", [] { return segment_functions(); });
}

}  // namespace b2lazy_py
