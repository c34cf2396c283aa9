// lazyudf (b2lazy/udf.hpp) with a Python function: each block is a call under the GIL
// with NumPy views of the pulled inputs and of the output block. A function that lets go
// of the GIL inside (numba's nogil=True) runs on the workers at once.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>

#include <b2lazy/b2lazy.hpp>
#include <b2lazy/udf_grid.hpp>

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
    case DType::C64:
    case DType::C128:
      return {static_cast<uint8_t>(nb::dlpack::dtype_code::Complex), static_cast<uint8_t>(8 * itemsize(t)), 1};
  }
  return nb::dtype<double>();
}

// Blocks handed to a Python function live in buffers that Python owns: a view the function
// keeps after its call (in a list, a closure, a global) must never see memory that later
// evaluations reuse — writing through it would change unrelated results. Inputs are pulled
// straight into such buffers (UdfAllocator); the output block is one too, copied into the
// engine's after the call. Each view's base is a capsule holding its buffer; a buffer goes
// back to a small free list when nothing holds it any more, so a function that keeps
// nothing reuses the same few buffers.
struct alignas(64) BlockBuffer {  // (the bytes after it start 64-byte aligned)
  size_t capacity;
  void* bytes() { return this + 1; }
};
static_assert(sizeof(BlockBuffer) == 64);

std::mutex g_free_mu;
std::vector<BlockBuffer*> g_free;  // at most kFreeBuffers
constexpr size_t kFreeBuffers = 16;

void give_back(BlockBuffer* b) noexcept {
  {
    std::lock_guard<std::mutex> lock(g_free_mu);
    if (g_free.size() < kFreeBuffers) {
      g_free.push_back(b);
      return;
    }
  }
  std::free(b);
}

// A buffer of `nbytes`, returned to the free list when the last holder lets go.
std::shared_ptr<void> block_buffer(size_t nbytes) {
  BlockBuffer* b = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_free_mu);
    for (size_t i = 0; i < g_free.size(); ++i)
      if (g_free[i]->capacity >= nbytes) {
        b = g_free[i];
        g_free.erase(g_free.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
  }
  if (!b) {
    void* p =
        std::aligned_alloc(alignof(BlockBuffer), sizeof(BlockBuffer) + (std::max<size_t>(nbytes, 1) + 63) / 64 * 64);
    if (!p) throw std::bad_alloc();
    b = new (p) BlockBuffer{nbytes};
  }
  return std::shared_ptr<void>(b->bytes(), [b](void*) { give_back(b); });
}

// A NumPy array over `data`, whose capsule keeps `owner` (the buffer) alive.
nb::object owned_view(const void* data, const std::shared_ptr<void>& owner, DType t, const Shape& shape,
                      bool writable) {
  std::vector<size_t> sh(shape.begin(), shape.end());
  nb::capsule keep(new std::shared_ptr<void>(owner),
                   [](void* p) noexcept { delete static_cast<std::shared_ptr<void>*>(p); });
  nb::ndarray<nb::numpy> a(const_cast<void*>(data), sh.size(), sh.data(), keep, nullptr, dl_dtype(t));
  nb::object o = nb::cast(a);
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

// A Python function (func(inputs, output, offset)) as the engine calls it, on any thread.
UdfFunction python_udf(nb::object fn, const std::string& name) {
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
      for (const UdfInput& in : ins) views.append(owned_view(in.data, in.owner, in.dtype, in.shape, false));
      size_t n = itemsize(t);
      for (int64_t s : out_shape) n *= static_cast<size_t>(s);
      const std::shared_ptr<void> block = block_buffer(n);
      nb::object out_view = owned_view(block.get(), block, t, out_shape, true);
      f->fn(nb::tuple(views), out_view, as_tuple(offset));
      if (n) std::memcpy(out, block.get(), n);
    } catch (nb::python_error& e) {
      // Ctrl-C and sys.exit() in the function are the user's, not the function's failure.
      if (e.matches(PyExc_KeyboardInterrupt) || e.matches(PyExc_SystemExit)) throw;
      // Otherwise its type and message (the traceback is the workers').
      const std::string what = nb::cast<std::string>(nb::handle(e.type()).attr("__name__")) + ": " +
                               nb::cast<std::string>(nb::str(e.value()));
      throw ValueError("lazyudf '" + f->name + "' failed on the block at " + shape_str(offset) + " of shape " +
                       shape_str(out_shape) + ": " + what);
    }
  };
  return call;
}
}  // namespace

void bind_udf(nb::module_& m) {
  nb::module_::import_("atexit").attr("register")(nb::cpp_function([] { release_all(); }));
  m.def(
      "lazyudf",
      [](nb::object fn, const std::vector<Array>& inputs, const std::string& dtype, const Shape& shape,
         const Shape& depth, const std::string& name, const Shape& chunks) {
        return b2lazy::lazyudf(python_udf(std::move(fn), name), inputs, dtype_from_name(dtype), shape, depth, name,
                               block_buffer, chunks);
      },
      nb::arg("fn"), nb::arg("inputs"), nb::arg("dtype"), nb::arg("shape"), nb::arg("depth"), nb::arg("name"),
      nb::arg("chunks") = Shape{});
  // map_blocks (b2lazy/_blocks.py): calls see whole blocks of a grid (b2lazy/udf_grid.hpp).
  m.def(
      "lazyudf_on_grid",
      [](nb::object fn, const std::vector<Array>& inputs, const std::string& dtype, const Shape& shape,
         const std::vector<GridAxis>& grid, const std::string& name) {
        return b2lazy::lazyudf_on_grid(python_udf(std::move(fn), name), inputs, dtype_from_name(dtype), shape, grid,
                                       name, block_buffer);
      },
      nb::arg("fn"), nb::arg("inputs"), nb::arg("dtype"), nb::arg("shape"), nb::arg("grid"), nb::arg("name"));
}

}  // namespace b2lazy_py
