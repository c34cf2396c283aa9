// b2lazy.linalg's factorisations and solvers by LAPACK (b2lazy/linalg.hpp). The Python
// package (python/b2lazy/linalg.py) names the results and composes the rest of the
// extension (norms, pinv, matrix_rank, ...) from these and the namespace's functions.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <b2lazy/b2lazy.hpp>
#include <b2lazy/linalg.hpp>

#include "bindings.hpp"

namespace b2lazy_py {

using namespace b2lazy;

void bind_linalg(nb::module_& m) {
  m.def("linalg_cholesky", &linalg_cholesky, nb::arg("x"), nb::arg("upper"));
  m.def("linalg_qr", &linalg_qr, nb::arg("x"), nb::arg("mode"));
  m.def("linalg_eigh", &linalg_eigh, nb::arg("x"));
  m.def("linalg_eigvalsh", &linalg_eigvalsh, nb::arg("x"));
  m.def("linalg_svd", &linalg_svd, nb::arg("x"), nb::arg("full_matrices"));
  m.def("linalg_svdvals", &linalg_svdvals, nb::arg("x"));
  m.def("linalg_slogdet", &linalg_slogdet, nb::arg("x"));
  m.def("linalg_det", &linalg_det, nb::arg("x"));
  m.def("linalg_inv", &linalg_inv, nb::arg("x"));
  m.def("linalg_solve", &linalg_solve, nb::arg("x1"), nb::arg("x2"));
  m.def("linalg_eig", &linalg_eig, nb::arg("x"));
  m.def("linalg_eigvals", &linalg_eigvals, nb::arg("x"));
  // (tests: TSQR on small matrices)
  m.def("linalg_panel_bytes", &linalg_panel_bytes);
  m.def("set_linalg_panel_bytes", &set_linalg_panel_bytes, nb::arg("bytes"));
  // (tests: the tiled Cholesky on small matrices, and that it ran)
  m.def("linalg_tile_bytes", &linalg_tile_bytes);
  m.def("set_linalg_tile_bytes", &set_linalg_tile_bytes, nb::arg("bytes"));
  m.def("linalg_tiled_factorisations", &linalg_tiled_factorisations);
}

}  // namespace b2lazy_py
