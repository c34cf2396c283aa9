// The Python binding: a thin layer over the public C++ API (include/b2lazy). The module's
// functions and classes are bound by the bind_* functions of bindings.hpp, in this order.
#include <exception>

#include <nanobind/nanobind.h>

#include <b2lazy/b2lazy.hpp>

#include "bindings.hpp"

namespace nb = nanobind;
using namespace b2lazy;

NB_MODULE(_core, m) {
  m.doc() = "b2lazy native core";
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Cancelled&) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
    } catch (const SyntaxError& e) {
      PyErr_SetString(PyExc_SyntaxError, e.what());
    } catch (const NameError& e) {
      PyErr_SetString(PyExc_NameError, e.what());
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const AxisError& e) {  // NumPy's own type: a ValueError and an IndexError
      nb::object axis_error = nb::module_::import_("numpy.exceptions").attr("AxisError");
      PyErr_SetObject(axis_error.ptr(), nb::str(e.what()).ptr());
    } catch (const LinAlgError& e) {  // NumPy's numpy.linalg.LinAlgError, a ValueError
      nb::object err = nb::module_::import_("numpy.linalg").attr("LinAlgError");
      PyErr_SetObject(err.ptr(), nb::str(e.what()).ptr());
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const IOError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    }
  });

  b2lazy_py::bind_array(m);
  b2lazy_py::bind_call(m);
  b2lazy_py::bind_functions(m);
  b2lazy_py::bind_assign(m);
  b2lazy_py::bind_array_api(m);
  b2lazy_py::bind_expressions(m);
  b2lazy_py::bind_sources(m);
  b2lazy_py::bind_evaluation(m);
  b2lazy_py::bind_distribute(m);
  b2lazy_py::bind_udf(m);
  b2lazy_py::bind_statistics(m);
  b2lazy_py::bind_einsum_pad(m);
  b2lazy_py::bind_rolling(m);
  b2lazy_py::bind_xarray_open(m);
  b2lazy_py::bind_groupby(m);
  b2lazy_py::bind_fft(m);
  b2lazy_py::bind_linalg(m);
  b2lazy_py::bind_logging_store(m);
  b2lazy_py::bind_store(m);
  b2lazy_py::bind_python_store(m);
  b2lazy_py::bind_cancel_at_exit(m);
}
