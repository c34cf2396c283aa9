// What xarray's chunk manager asks cheaply (issue #38): the chunks a rechunked array is
// evaluated in, without building a plan that lists every task.
#include <nanobind/nanobind.h>

#include <b2lazy/b2lazy.hpp>
#include <b2lazy/plan.hpp>

#include "bindings.hpp"

namespace b2lazy_py {

using namespace b2lazy;

void bind_xarray_open(nb::module_& m) {
  m.def(
      "requested_output_chunks",
      [](const Array& a) {
        nb::list out;
        for (int64_t c : requested_output_chunks(a)) out.append(c);
        return nb::tuple(out);
      },
      nb::arg("a"), "The output chunks a rechunk decides for `a`'s default plan; () when the planner chooses.");
}

}  // namespace b2lazy_py
