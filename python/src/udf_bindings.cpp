// lazyudf (b2lazy/udf.hpp) with a Python function: each block is a call under the GIL
// with NumPy views of the pulled inputs and of the output block. A function that lets go
// of the GIL inside (numba's nogil=True) runs on the workers at once.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <mutex>

#include <b2lazy/b2lazy.hpp>

#include "bindings.hpp"

namespace b2lazy_py {

using namespace b2lazy;

namespace {

nb::dlpack::dtype dl_dtype(DType t) {
  switch (t) {
    case DType::Bool: return nb::dtype<bool>();
    case DType::I8: return nb::dtype<int8_t>();
    case DType::I16: return nb::dtype<int16_t>();
    case DType::I32: return nb::dtype<int32_t>();
    case DType::I64: return nb::dtype<int64_t>();
    case DType::U8: return nb::dtype<uint8_t>();
    case DType::U16: return nb::dtype<uint16_t>();
    case DType::U32: return nb::dtype<uint32_t>();
    case DType::U64: return nb::dtype<uint64_t>();
    case DType::F32: return nb::dtype<float>();
    case DType::F64: return nb::dtype<double>();
    case DType::F16: return {static_cast<uint8_t>(nb::dlpack::dtype_code::Float), 16, 1};
    case DType::C64: case DType::C128:
      return {static_cast<uint8_t>(nb::dlpack::dtype_code::Complex), static_cast<uint8_t>(8 * itemsize(t)), 1};
  }
  return nb::dtype<double>();
}

// A NumPy array over `data` (not owned: valid during the call only).
nb::object view(const void* data, DType t, const Shape& shape, bool writable) {
  std::vector<size_t> sh(shape.begin(), shape.end());
  nb::ndarray<nb::numpy> a(const_cast<void*>(data), sh.size(), sh.data(), nb::handle(), nullptr, dl_dtype(t));
  nb::object o = nb::cast(a, nb::rv_policy::reference);  // a view: no copy of the buffer
  if (!writable) o.attr("flags").attr("writeable") = false;
  return o;
}

nb::tuple as_tuple(const Shape& s) {
  nb::list l;
  for (int64_t v : s) l.append(v);
  return nb::tuple(l);
}

// The Python function, released with the GIL held (a node may be dropped on any thread).
struct PyFunction {
  nb::object fn;
  std::string name;
  ~PyFunction() {
    if (!Py_IsInitialized()) {
      (void)fn.release();  // the interpreter is gone: nothing to decrement
      return;
    }
    nb::gil_scoped_acquire g;
    fn.reset();
  }
};

// Every live function, released at interpreter exit: a function whose globals hold the
// array made from it (`u = lazyudf(f, ...)` at module level) is a cycle through C++ that
// Python's collector cannot see.
std::mutex g_live_mu;
std::vector<std::weak_ptr<PyFunction>> g_live;

void track(const std::shared_ptr<PyFunction>& f) {
  std::lock_guard<std::mutex> lock(g_live_mu);
  std::erase_if(g_live, [](const std::weak_ptr<PyFunction>& w) { return w.expired(); });
  g_live.push_back(f);
}

void release_all() {  // (atexit: the GIL is held)
  std::vector<std::shared_ptr<PyFunction>> live;
  {
    std::lock_guard<std::mutex> lock(g_live_mu);
    for (auto& w : g_live)
      if (auto f = w.lock()) live.push_back(std::move(f));
    g_live.clear();
  }
  for (auto& f : live) f->fn.reset();
}

}  // namespace

void bind_udf(nb::module_& m) {
  nb::module_::import_("atexit").attr("register")(nb::cpp_function([] { release_all(); }));
  m.def("lazyudf", [](nb::object fn, const std::vector<Array>& inputs, const std::string& dtype, const Shape& shape,
                      const Shape& depth, const std::string& name) {
    auto f = std::make_shared<PyFunction>();
    f->fn = std::move(fn);
    f->name = name;
    track(f);
    UdfFunction call = [f](const std::vector<UdfInput>& ins, void* out, DType t, const Shape& out_shape,
                           const Shape& offset) {
      nb::gil_scoped_acquire g;
      if (!f->fn.is_valid()) throw ValueError("lazyudf '" + f->name + "': the interpreter is exiting");
      try {
        nb::list views;
        for (const UdfInput& in : ins) views.append(view(in.data, in.dtype, in.shape, false));
        f->fn(nb::tuple(views), view(out, t, out_shape, true), as_tuple(offset));
      } catch (nb::python_error& e) {  // its type and message (the traceback is the workers')
        const std::string what = nb::cast<std::string>(nb::handle(e.type()).attr("__name__")) + ": " +
                                 nb::cast<std::string>(nb::str(e.value()));
        throw ValueError("lazyudf '" + f->name + "' failed on the block at " + shape_str(offset) + " of shape " +
                         shape_str(out_shape) + ": " + what);
      }
    };
    return b2lazy::lazyudf(std::move(call), inputs, dtype_from_name(dtype), shape, depth, name);
  }, nb::arg("fn"), nb::arg("inputs"), nb::arg("dtype"), nb::arg("shape"), nb::arg("depth"), nb::arg("name"));
}

}  // namespace b2lazy_py
