// The Python binding: a thin layer over the public C++ API (include/b2lazy).
#include <atomic>
#include <chrono>
#include <exception>
#include <optional>
#include <thread>

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

namespace nb = nanobind;
using namespace b2lazy;

namespace {

std::string py_repr(const nb::handle& h) { return nb::cast<std::string>(nb::repr(h)); }

bool is_integer(const nb::handle& h) { return PyIndex_Check(h.ptr()); }  // int, np.integer, 0-d int arrays

// An integer argument (anything with __index__) as int64, with `overflow` set to +1 / -1
// (and the value clamped) when it is beyond int64; TypeError naming `what` otherwise.
int64_t to_int64(const nb::handle& h, const std::string& what, int& overflow) {
  if (!is_integer(h))
    throw TypeError(what + " must be an integer, got " + py_repr(h) + " of type " +
                    nb::cast<std::string>(nb::str(nb::handle(h.type()).attr("__name__"))));
  nb::object i = nb::steal(PyNumber_Index(h.ptr()));
  if (!i.is_valid()) throw nb::python_error();
  long long overflow_ll = 0;
  int ovf = 0;
  overflow_ll = PyLong_AsLongLongAndOverflow(i.ptr(), &ovf);
  if (overflow_ll == -1 && PyErr_Occurred()) throw nb::python_error();
  overflow = ovf;
  if (ovf) return ovf > 0 ? INT64_MAX : INT64_MIN;
  return overflow_ll;
}

// As above; beyond int64 is a ValueError naming `what` (NumPy: "Maximum allowed dimension exceeded").
int64_t to_int64(const nb::handle& h, const std::string& what) {
  int overflow = 0;
  int64_t v = to_int64(h, what, overflow);
  if (overflow) throw ValueError(what + " " + py_repr(h) + " is outside the range of int64");
  return v;
}

// A shape-like argument (shape, chunks, blocks, shifts): None (empty), an integer or a
// sequence of integers, each within int64; TypeError / ValueError naming `what`.
Shape to_shape(const nb::handle& obj, const std::string& what) {
  Shape s;
  if (obj.is_none()) return s;
  if (is_integer(obj)) return {to_int64(obj, what)};
  if (!PySequence_Check(obj.ptr()) || nb::isinstance<nb::str>(obj) || nb::isinstance<nb::bytes>(obj))
    throw TypeError(what + " must be an integer or a sequence of integers, got " + py_repr(obj));
  size_t k = 0;
  for (auto h : obj) {
    if (!is_integer(h))
      throw TypeError(what + " must be a sequence of integers, got " + py_repr(h) + " at position " +
                      std::to_string(k) + " of " + py_repr(obj));
    s.push_back(to_int64(h, what + " entry"));
    ++k;
  }
  return s;
}

// max_memory: None (the default) or a positive number of bytes within int64.
std::optional<size_t> to_max_memory(const nb::handle& h) {
  if (h.is_none()) return std::nullopt;
  int overflow = 0;
  const int64_t v = to_int64(h, "max_memory", overflow);
  if (overflow || v < 1)
    throw ValueError("max_memory must be a number of bytes from 1 to 2**63-1, got " + py_repr(h));
  return static_cast<size_t>(v);
}

nb::tuple shape_tuple(const Shape& s) {
  nb::list l;
  for (auto v : s) l.append(v);
  return nb::tuple(l);
}

DType dtype_of(const nb::handle& dt) {
  // Accept anything NumPy accepts as a dtype by asking NumPy for its name.
  nb::object np = nb::module_::import_("numpy");
  nb::object d = np.attr("dtype")(dt);
  if (nb::cast<std::string>(d.attr("byteorder")) == ">")
    throw TypeError("big-endian dtype " + nb::cast<std::string>(nb::str(d)) + " is not supported");
  return dtype_from_name(nb::cast<std::string>(d.attr("name")));
}

std::optional<DType> opt_dtype(const nb::handle& dt) {
  if (dt.is_none()) return std::nullopt;
  return dtype_of(dt);
}

// Python bool/int/float/complex -> Scalar; nullopt for anything else.
std::optional<Scalar> as_scalar(const nb::handle& h) {
  if (nb::isinstance<nb::bool_>(h)) return Scalar(nb::cast<bool>(h));
  if (nb::isinstance<nb::int_>(h)) {
    try {
      return Scalar(nb::cast<int64_t>(h));
    } catch (const nb::cast_error&) {
    }
    try {
      return Scalar::uint64(nb::cast<uint64_t>(h));
    } catch (const nb::cast_error&) {
      throw ValueError("Python integer " + nb::cast<std::string>(nb::str(h)) + " does not fit in int64 or uint64");
    }
  }
  if (nb::isinstance<nb::float_>(h)) return Scalar(nb::cast<double>(h));
  if (PyComplex_Check(h.ptr())) return Scalar::complex(PyComplex_RealAsDouble(h.ptr()), PyComplex_ImagAsDouble(h.ptr()));
  return std::nullopt;
}

Operand as_operand(const nb::handle& h, const char* fn, size_t pos) {
  if (nb::isinstance<Array>(h)) return nb::cast<Array>(h);
  if (auto s = as_scalar(h)) return *s;
  throw TypeError(std::string(fn) + "(): argument " + std::to_string(pos) + " must be a b2lazy Array or a Python scalar, got " +
                  nb::cast<std::string>(nb::str(h.type())));
}

// Zero-copy wrap of a NumPy array; the array stays alive as long as the node.
Array from_numpy(nb::ndarray<nb::ro, nb::device::cpu> a, nb::handle owner, const std::string& name) {
  DType t;
  auto dt = a.dtype();
  using C = nb::dlpack::dtype_code;
  if (dt.code == static_cast<uint8_t>(C::Bool)) t = DType::Bool;
  else if (dt.code == static_cast<uint8_t>(C::Int)) t = dt.bits == 8 ? DType::I8 : dt.bits == 16 ? DType::I16 : dt.bits == 32 ? DType::I32 : DType::I64;
  else if (dt.code == static_cast<uint8_t>(C::UInt)) t = dt.bits == 8 ? DType::U8 : dt.bits == 16 ? DType::U16 : dt.bits == 32 ? DType::U32 : DType::U64;
  else if (dt.code == static_cast<uint8_t>(C::Float) && (dt.bits == 16 || dt.bits == 32 || dt.bits == 64))
    t = dt.bits == 16 ? DType::F16 : dt.bits == 32 ? DType::F32 : DType::F64;
  else if (dt.code == static_cast<uint8_t>(C::Complex) && (dt.bits == 64 || dt.bits == 128)) t = dt.bits == 64 ? DType::C64 : DType::C128;
  else throw TypeError(name + ": unsupported dtype (supported: bool, int8..int64, uint8..uint64, float16, float32, float64, complex64, complex128)");
  Shape shape, strides;
  for (size_t d = 0; d < a.ndim(); ++d) {
    shape.push_back(static_cast<int64_t>(a.shape(d)));
    strides.push_back(static_cast<int64_t>(a.stride(d)) * static_cast<int64_t>(itemsize(t)));
  }
  nb::object keep = nb::borrow(owner);
  auto* holder = new nb::object(keep);
  std::shared_ptr<const void> own(holder, [](const void* p) {
    nb::gil_scoped_acquire g;
    delete static_cast<const nb::object*>(p);
  });
  return from_buffer(a.data(), t, shape, strides, std::move(own), name);
}

// The basic entries of `key`; `first` is the position of its first entry in the whole key.
std::vector<Index> parse_index(const nb::handle& key, size_t first = 0) {
  std::vector<Index> idx;
  auto one = [&](const nb::handle& k) {
    if (k.is_none()) {
      idx.push_back(Index::newaxis());
    } else if (k.is(nb::handle(Py_Ellipsis))) {
      idx.push_back(Index::ellipsis());
    } else if (nb::isinstance<nb::slice>(k)) {
      auto get = [&](const char* f) -> std::optional<int64_t> {
        nb::object v = k.attr(f);
        if (v.is_none()) return std::nullopt;
        if (!is_integer(v))
          throw TypeError("slice indices must be integers or None, got " + nb::cast<std::string>(nb::str(v)));
        int overflow = 0;
        return to_int64(v, "slice index", overflow);  // beyond int64: clamped, as Python's slice.indices()
      };
      idx.push_back(Index::slice(get("start"), get("stop"), get("step")));
    } else if (nb::hasattr(k, "__index__") &&
               (!nb::hasattr(k, "shape") || nb::len(nb::object(k.attr("shape"))) == 0)) {  // int, np.int64, 0-d int
      int overflow = 0;
      const int64_t i = to_int64(k, "index", overflow);
      if (overflow) throw IndexError("index " + nb::cast<std::string>(nb::str(k)) + " is out of bounds");
      idx.push_back(Index::at(i));
    } else {
      const std::string what = nb::isinstance<nb::float_>(k) ? "float " + nb::cast<std::string>(nb::str(k))
                                                              : nb::cast<std::string>(nb::str(k.type()));
      throw TypeError("index entry " + std::to_string(first + idx.size()) +
                      ": only integers, slices (`:`), ellipsis (`...`), None, booleans and integer or boolean "
                      "arrays are valid indices, got " + what);
    }
  };
  if (nb::isinstance<nb::tuple>(key)) {
    for (auto k : key) one(k);
  } else {
    one(key);
  }
  return idx;
}

using Int64Array = nb::ndarray<const int64_t, nb::c_contig, nb::device::cpu>;

// Indices the package has already made int64 and C-contiguous.
IndexArray int64_values(const Int64Array& a) {
  IndexArray r;
  for (size_t d = 0; d < a.ndim(); ++d) r.shape.push_back(static_cast<int64_t>(a.shape(d)));
  r.values.assign(a.data(), a.data() + a.size());
  return r;
}

// An index entry that is a NumPy array (the package turns lists and lazy arrays into
// NumPy first): its values as int64, or as 0/1 for booleans, any strides.
IndexArray index_array(nb::ndarray<nb::ro, nb::device::cpu> a, const nb::handle& obj) {
  IndexArray r;
  for (size_t d = 0; d < a.ndim(); ++d) r.shape.push_back(static_cast<int64_t>(a.shape(d)));
  const nb::dlpack::dtype t = a.dtype();
  const bool is_bool = t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Bool);
  const bool is_int = t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Int);
  const bool is_uint = t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::UInt);
  if (!is_bool && !is_int && !is_uint) {
    r.invalid_dtype = nb::str(nb::object(obj.attr("dtype"))).c_str();
    return r;
  }
  r.boolean = is_bool;
  const int64_t n = prod(r.shape);
  r.values.resize(static_cast<size_t>(n));
  const char* base = static_cast<const char*>(a.data());
  const size_t bytes = t.bits / 8;
  Shape pos(a.ndim(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < a.ndim(); ++d) off += pos[d] * a.stride(d);
    const char* p = base + off * static_cast<int64_t>(bytes);
    int64_t v = 0;
    // Each branch read as int64 on its own: `c ? int32 : uint32` has type uint32 (-1 read as 2**32 - 1).
    auto read = [&](auto signed_v, auto unsigned_v) -> int64_t {
      using S = decltype(signed_v);
      using U = decltype(unsigned_v);
      return is_int ? static_cast<int64_t>(*reinterpret_cast<const S*>(p))
                    : static_cast<int64_t>(*reinterpret_cast<const U*>(p));
    };
    if (is_bool || bytes == 1) v = read(int8_t{}, uint8_t{});
    else if (bytes == 2) v = read(int16_t{}, uint16_t{});
    else if (bytes == 4) v = read(int32_t{}, uint32_t{});
    else {
      const uint64_t u = *reinterpret_cast<const uint64_t*>(p);
      if (is_uint && u > static_cast<uint64_t>(INT64_MAX)) throw IndexError("index " + std::to_string(u) + " is out of bounds");
      v = static_cast<int64_t>(u);
    }
    r.values[static_cast<size_t>(i)] = is_bool ? (v != 0) : v;
    for (size_t d = a.ndim(); d-- > 0;)
      if (++pos[d] < static_cast<int64_t>(a.shape(d))) break;
      else pos[d] = 0;
  }
  return r;
}

// An int, a NumPy integer or a 0-d integer array (not a 0-d boolean one).
bool integer_scalar(const nb::handle& k) {
  if (!nb::hasattr(k, "__index__")) return false;
  if (!nb::hasattr(k, "shape")) return true;
  if (nb::len(nb::object(k.attr("shape"))) != 0) return false;
  if (!nb::hasattr(k, "dtype")) return true;
  const std::string kind = nb::cast<std::string>(k.attr("dtype").attr("kind"));
  return kind == "i" || kind == "u";
}

// np.float64(2.0) and the like (np.bool_ is a 0-d boolean index; arrays have a length).
bool non_bool_numpy_scalar(const nb::handle& k) {
  return nb::hasattr(k, "dtype") && nb::hasattr(k, "__array_interface__") && !nb::hasattr(k, "__len__") &&
         nb::cast<std::string>(k.attr("dtype").attr("kind")) != "b";
}

// A whole key: basic entries as parse_index reads them, NumPy arrays as index arrays,
// a Python bool as a 0-d boolean array (NumPy: a new axis of length 1 or 0).
std::vector<IndexItem> parse_key(const nb::handle& key) {
  std::vector<IndexItem> items;
  auto one = [&](const nb::handle& k) {
    nb::ndarray<nb::ro, nb::device::cpu> a;
    if (nb::isinstance<nb::bool_>(k)) {
      items.push_back(IndexArray{{nb::cast<bool>(k) ? 1 : 0}, {}, true, {}});
    } else if (integer_scalar(k) || non_bool_numpy_scalar(k)) {  // np.int32(1), a 0-d integer array: an integer
      for (Index& i : parse_index(k, items.size())) items.push_back(i);
    } else if (nb::hasattr(k, "__array_interface__") && nb::try_cast(k, a)) {
      items.push_back(index_array(a, k));
    } else {
      for (Index& i : parse_index(k, items.size())) items.push_back(i);
    }
  };
  if (nb::isinstance<nb::tuple>(key)) {
    for (auto k : key) one(k);
  } else {
    one(key);
  }
  return items;
}

// Set by cancel_at_exit() on the thread that runs the atexit hooks: the interpreter is
// finalizing, so another thread that ends an evaluation then must not take the GIL again
// (Python 3.11 ends such a thread with pthread_exit, which cannot unwind through C++
// frames); it waits for the process to end instead, as Python's own daemon threads do.
std::atomic<bool> g_exiting{false};
std::thread::id g_exiting_thread;  // written before g_exiting is set
std::atomic<int> g_in_flight{0};   // interruptible() calls under way (or parked)

void park_if_exiting() {
  if (!g_exiting || std::this_thread::get_id() == g_exiting_thread) return;
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

// A Python progress callback for ComputeOptions::progress. An Exception it raises is
// reported as unraisable (a broken callback must not stop the evaluation); a
// KeyboardInterrupt or SystemExit (Python runs signal handlers inside the callback when it
// runs on the main thread) stops the evaluation and is raised once it has unwound.
struct Progress {
  nb::object callback;
  std::atomic<bool> stop{false};
  std::optional<nb::python_error> raised;  // touched with the GIL held only

  std::function<void(int64_t, int64_t)> function() {
    if (callback.is_none()) return {};
    return [this](int64_t done, int64_t total) {
      nb::gil_scoped_acquire g;
      try {
        callback(done, total);
      } catch (nb::python_error& e) {
        if (e.matches(PyExc_Exception)) {
          e.discard_as_unraisable("b2lazy progress callback");
        } else if (!raised) {
          raised.emplace(std::move(e));
          stop = true;
        }
      }
    };
  }
};

// Runs `fn` (an evaluation) without the GIL inside an InterruptScope: SIGINT and SIGTERM
// stop it on any thread, and Python's own handlers still see them (chained). After a stop,
// Python decides what is raised: PyErr_CheckSignals() runs its handlers on the main
// thread (KeyboardInterrupt by default, or the exception of the user's handler); if none
// raises (another thread, or a handler that returns), KeyboardInterrupt. The scope ends
// after `fn`'s partial output is gone; a SIGTERM with the default disposition then ends
// the process.
template <class F>
auto interruptible(F&& fn, Progress* progress = nullptr) -> decltype(fn()) {
  std::optional<decltype(fn())> result;
  bool cancelled = false;
  std::exception_ptr error;
  {
    ++g_in_flight;
    nb::gil_scoped_release release;
    park_if_exiting();
    try {
      InterruptScope scope;
      result.emplace(fn());
    } catch (const Cancelled&) {
      cancelled = true;
    } catch (...) {
      error = std::current_exception();
    }
    park_if_exiting();
    --g_in_flight;
  }
  if (progress && progress->raised) {  // the user's interrupt comes first
    nb::python_error e = std::move(*progress->raised);
    progress->raised.reset();
    throw e;
  }
  if (error) std::rethrow_exception(error);
  if (cancelled) {
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw nb::python_error();
  }
  return std::move(*result);
}

}  // namespace

namespace b2lazy_py {

nb::dict stats_dict(const Stats& s) {
  nb::dict d, per;
  for (auto& [name, n] : s.chunks_decompressed) per[name.c_str()] = n;
  per["total"] = s.chunks_decompressed_total;
  d["chunks_decompressed"] = per;
  nb::dict distinct, most;
  for (auto& [name, n] : s.distinct_chunks_decompressed) distinct[name.c_str()] = n;
  for (auto& [name, n] : s.max_decompressions_per_chunk) most[name.c_str()] = n;
  d["distinct_chunks_decompressed"] = distinct;
  d["max_decompressions_per_chunk"] = most;
  nb::dict bytes;
  for (auto& [name, n] : s.bytes_decompressed) bytes[name.c_str()] = n;
  d["bytes_decompressed"] = bytes;
  d["output_chunks"] = s.output_chunks;
  d["cache_hits"] = s.cache_hits;
  d["cache_misses"] = s.cache_misses;
  d["sources_kept"] = s.sources_kept;
  d["stages_reused"] = s.stages_reused;
  d["window_hits"] = s.window_hits;
  d["store_requests"] = s.store_requests;
  d["store_bytes"] = s.store_bytes;
  d["store_retries"] = s.store_retries;
  d["prefetch_hits"] = s.prefetch_hits;
  d["prefetch_misses"] = s.prefetch_misses;
  d["prefetch_reads"] = s.prefetch_reads;
  d["store_wait_seconds"] = s.store_wait_seconds;
  d["prefetch_wait_seconds"] = s.prefetch_wait_seconds;
  d["plan_visits"] = s.plan_visits;
  d["peak_scratch_bytes"] = s.peak_scratch_bytes;
  d["projected_peak_bytes"] = s.projected_peak_bytes;
  d["bytes_written"] = s.bytes_written;
  d["block_major_path"] = s.block_major_path;
  d["seconds"] = s.seconds;
  return d;
}

Stats stats_from_dict(nb::handle h) {
  nb::dict d = nb::cast<nb::dict>(h);
  Stats s;
  auto per = [&](const char* key, std::map<std::string, int64_t>& into) {
    if (!d.contains(key)) return;
    for (auto [k, v] : nb::cast<nb::dict>(d[key])) into[nb::cast<std::string>(k)] = nb::cast<int64_t>(v);
  };
  per("chunks_decompressed", s.chunks_decompressed);
  if (auto it = s.chunks_decompressed.find("total"); it != s.chunks_decompressed.end()) {
    s.chunks_decompressed_total = it->second;
    s.chunks_decompressed.erase(it);
  }
  per("distinct_chunks_decompressed", s.distinct_chunks_decompressed);
  per("max_decompressions_per_chunk", s.max_decompressions_per_chunk);
  per("bytes_decompressed", s.bytes_decompressed);
  auto num = [&](const char* key, int64_t& into) {
    if (d.contains(key)) into = nb::cast<int64_t>(d[key]);
  };
  num("output_chunks", s.output_chunks);
  num("cache_hits", s.cache_hits);
  num("cache_misses", s.cache_misses);
  num("sources_kept", s.sources_kept);
  num("stages_reused", s.stages_reused);
  num("window_hits", s.window_hits);
  num("store_requests", s.store_requests);
  num("store_bytes", s.store_bytes);
  num("store_retries", s.store_retries);
  num("prefetch_hits", s.prefetch_hits);
  num("prefetch_misses", s.prefetch_misses);
  num("prefetch_reads", s.prefetch_reads);
  if (d.contains("store_wait_seconds")) s.store_wait_seconds = nb::cast<double>(d["store_wait_seconds"]);
  if (d.contains("prefetch_wait_seconds")) s.prefetch_wait_seconds = nb::cast<double>(d["prefetch_wait_seconds"]);
  num("plan_visits", s.plan_visits);
  num("peak_scratch_bytes", s.peak_scratch_bytes);
  num("projected_peak_bytes", s.projected_peak_bytes);
  num("bytes_written", s.bytes_written);
  if (d.contains("block_major_path")) s.block_major_path = nb::cast<bool>(d["block_major_path"]);
  if (d.contains("seconds")) s.seconds = nb::cast<double>(d["seconds"]);
  return s;
}

}  // namespace b2lazy_py

namespace {
using b2lazy_py::stats_dict;

// compute()'s and plan()'s keyword arguments as ComputeOptions (errors name the argument).
ComputeOptions compute_options(const std::optional<std::string>& urlpath, nb::handle chunks, nb::handle blocks,
                               const std::string& codec, int clevel, const std::string& filter, nb::handle max_memory,
                               std::optional<bool> contiguous, nb::handle shards, const std::string& compressor) {
  ComputeOptions o;
  o.urlpath = urlpath.value_or("");
  o.chunks = to_shape(chunks, "chunks");
  o.blocks = to_shape(blocks, "blocks");
  o.shards = to_shape(shards, "shards");
  o.cparams = CParams{codec, clevel, filter, compressor};
  o.contiguous = contiguous;
  if (auto mm = to_max_memory(max_memory)) o.max_memory = *mm;
  return o;
}

}  // namespace

void b2lazy_py::run_interruptible(const std::function<void()>& fn) {
  interruptible([&] {
    fn();
    return 0;
  });
}

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
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const IOError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    }
  });

  nb::class_<Context>(m, "Context")
      .def(nb::init<int>(), nb::arg("nthreads") = 0)
      .def_prop_ro("nthreads", &Context::nthreads);

  nb::class_<Array>(m, "Array")
      .def_prop_ro("shape", [](const Array& a) { return shape_tuple(a.shape()); })
      .def_prop_ro("dtype", [](const Array& a) { return std::string(dtype_name(a.dtype())); })
      .def_prop_ro("ndim", [](const Array& a) { return a.ndim(); })
      .def_prop_ro("size", [](const Array& a) { return a.size(); })
      .def_prop_ro("kind", [](const Array& a) { return a.node()->kind(); })
      .def("explain", [](const Array& a, Context* ctx) { return a.explain(ctx); }, nb::arg("ctx").none() = nb::none())
      .def("getitem", [](const Array& a, nb::handle key) { return getitem(a, parse_key(key)); }, nb::arg("key").none())
      .def("getitem_arrays", [](const Array& a, nb::handle key, Context* ctx) {
             auto k = parse_key(key);
             return interruptible([&] { return getitem(a, k, ctx); });  // a mask is counted now
           },
           nb::arg("key").none(), nb::arg("ctx").none())
      .def("oindex", [](const Array& a, nb::handle key) { return oindex(a, parse_key(key)); }, nb::arg("key").none())
      .def("astype", [](const Array& a, nb::handle dt) { return a.astype(dtype_of(dt)); })
      .def("urlpath", [](const Array& a) -> std::optional<std::string> {
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

  // The function registry (b2lazy/functions.hpp): the package gives each function its
  // signature, defaults and aliases from it (b2lazy/_registry.py).
  m.def("functions", [] {
    nb::list l;
    for (const FunctionInfo& f : function_registry()) {
      static const char* const kinds[] = {"positional_only", "positional_or_keyword", "var_positional", "keyword_only"};
      nb::list params;
      for (const Param& p : f.params)
        params.append(nb::make_tuple(p.name, kinds[static_cast<int>(p.kind)],
                                     p.default_value ? nb::cast(*p.default_value) : nb::none()));
      nb::dict d;
      d["name"] = f.name;
      d["aliases"] = f.aliases;
      d["family"] = family_name(f.family);
      d["params"] = params;
      d["signature"] = f.signature();
      d["dtype_rule"] = f.dtype_rule;
      d["method"] = f.method;
      // The kernel a family-made function runs: an elementwise op or a reduction.
      if (f.op && op_family(*f.op) != OpFamily::Special) d["kernel"] = op_name(*f.op);
      else if (f.reduction) d["kernel"] = reduction_name(*f.reduction);
      else d["kernel"] = nb::none();
      d["single_axis"] = f.reduction && reduction_info(*f.reduction).single_axis;
      l.append(d);
    }
    return l;
  });

  m.def("elementwise", [](const std::string& name, nb::args args) {
    Op op = op_from_name(name);
    std::vector<Operand> ops;
    for (size_t i = 0; i < args.size(); ++i) ops.push_back(as_operand(args[i], name.c_str(), i));
    return elementwise(op, ops);
  });
  m.def("where", [](nb::handle c, nb::handle x, nb::handle y) {
    return where(as_operand(c, "where", 0), as_operand(x, "where", 1), as_operand(y, "where", 2));
  });
  m.def("clip", [](nb::handle x, nb::handle lo, nb::handle hi) {
    std::optional<Operand> l, h;
    if (!lo.is_none()) l = as_operand(lo, "clip", 1);
    if (!hi.is_none()) h = as_operand(hi, "clip", 2);
    return clip(as_operand(x, "clip", 0), l, h);
  }, nb::arg("x"), nb::arg("lo").none(), nb::arg("hi").none());

  m.def("reduce", [](const std::string& name, const Array& x, nb::handle axis, bool keepdims, nb::handle dtype,
                     double correction) {
    const ReductionInfo* info = find_reduction(name);
    if (!info) throw ValueError("unknown reduction '" + name + "'");
    const Reduction r = info->r;
    ReduceOptions o;
    if (!axis.is_none()) {
      std::vector<int> ax;
      if (nb::isinstance<nb::int_>(axis)) ax.push_back(nb::cast<int>(axis));
      else
        for (auto h : axis) {
          if (!nb::isinstance<nb::int_>(h)) throw TypeError(name + "(): axis must be an int or a tuple of ints");
          ax.push_back(nb::cast<int>(h));
        }
      o.axis = ax;
    }
    o.keepdims = keepdims;
    o.dtype = opt_dtype(dtype);
    o.correction = correction;
    return reduce(r, x, o);
  }, nb::arg("name"), nb::arg("x"), nb::arg("axis").none(), nb::arg("keepdims"), nb::arg("dtype").none(),
     nb::arg("correction"));

  m.def("quantile", [](const std::string& name, const Array& x, double q, nb::handle axis, bool keepdims,
                       const std::string& method) {
    QuantileOptions o;
    if (!axis.is_none()) {
      std::vector<int> ax;
      if (nb::isinstance<nb::int_>(axis)) ax.push_back(nb::cast<int>(axis));
      else
        for (auto h : axis) ax.push_back(nb::cast<int>(h));
      o.axis = ax;
    }
    o.keepdims = keepdims;
    o.method = quantile_method(method);
    if (name == "median") return median(x, o);
    return name == "percentile" ? percentile(x, q, o) : quantile(x, q, o);
  }, nb::arg("name"), nb::arg("x"), nb::arg("q"), nb::arg("axis").none(), nb::arg("keepdims"), nb::arg("method"));

  m.def("scan", [](const std::string& name, const Array& x, std::optional<int> axis, nb::handle dtype,
                   bool include_initial, bool numpy_style) {
    bool prod = name == "prod";
    if (name == "push") {  // (xarray's ffill: b2lazy/_xarray_fill.py)
      if (!axis) throw ValueError("forward_fill: axis must be given");
      return forward_fill(x, *axis);
    }
    if (!prod && name != "sum") throw ValueError("unknown scan '" + name + "'");
    if (numpy_style) return prod ? cumprod(x, axis, opt_dtype(dtype)) : cumsum(x, axis, opt_dtype(dtype));
    ScanOptions o{axis, opt_dtype(dtype), include_initial};
    return prod ? cumulative_prod(x, o) : cumulative_sum(x, o);
  }, nb::arg("name"), nb::arg("x"), nb::arg("axis").none(), nb::arg("dtype").none(), nb::arg("include_initial"),
     nb::arg("numpy_style"));

  m.def("matmul", [](const Array& a, const Array& b) { return matmul(a, b); });
  m.def("tensordot", [](const Array& a, const Array& b, int axes) { return tensordot(a, b, axes); });
  m.def("tensordot_axes", [](const Array& a, const Array& b, const std::vector<int>& xa, const std::vector<int>& xb) {
    return tensordot(a, b, xa, xb);
  });
  m.def("vecdot", [](const Array& a, const Array& b, int axis) { return vecdot(a, b, axis); });
  m.def("outer", [](const Array& a, const Array& b) { return outer(a, b); });
  m.def("permute_dims", [](const Array& x, const std::vector<int>& axes) { return permute_dims(x, axes); });
  m.def("take", [](const Array& x, Int64Array idx, std::optional<int> axis) {
    IndexArray v = int64_values(idx);
    return take(x, v.values, v.shape, axis);
  }, nb::arg("x"), nb::arg("indices"), nb::arg("axis").none());
  m.def("take_points", [](const Array& x, size_t axis, nb::list arrays) {
    std::vector<std::vector<int64_t>> idx;
    Shape shape;
    for (nb::handle h : arrays) {
      IndexArray v = int64_values(nb::cast<Int64Array>(h));
      shape = v.shape;
      idx.push_back(std::move(v.values));
    }
    return take_points(x, axis, idx, shape);
  }, nb::arg("x"), nb::arg("axis"), nb::arg("arrays"));
  m.def("take_along_axis", [](const Array& x, Int64Array idx, std::optional<int> axis) {
    IndexArray v = int64_values(idx);
    return take_along_axis(x, v.values, v.shape, axis);
  }, nb::arg("x"), nb::arg("indices"), nb::arg("axis").none());
  m.def("nonzero", [](const Array& x, Context* ctx) { return interruptible([&] { return nonzero(x, ctx); }); },
        nb::arg("x"), nb::arg("ctx").none());
  m.def("reshape", [](const Array& x, nb::handle shape) { return reshape(x, to_shape(shape, "reshape: shape")); });
  m.def("expand_dims", [](const Array& x, int axis) { return expand_dims(x, axis); });
  m.def("squeeze", [](const Array& x, std::optional<std::vector<int>> axes) { return squeeze(x, axes); },
        nb::arg("x"), nb::arg("axes").none());
  m.def("flip", [](const Array& x, std::optional<std::vector<int>> axes) { return flip(x, axes); },
        nb::arg("x"), nb::arg("axes").none());
  m.def("moveaxis", [](const Array& x, const std::vector<int>& s, const std::vector<int>& d) { return moveaxis(x, s, d); });
  m.def("broadcast_to", [](const Array& x, nb::handle shape) {
    return broadcast_to(x, to_shape(shape, "broadcast_to: shape"));
  });
  m.def("concat", [](const std::vector<Array>& xs, std::optional<int> axis) { return concat(xs, axis); },
        nb::arg("xs"), nb::arg("axis").none());
  m.def("stack", [](const std::vector<Array>& xs, int axis) { return stack(xs, axis); });
  m.def("roll", [](const Array& x, nb::handle shifts, std::optional<std::vector<int>> axes) {
    return roll(x, to_shape(shifts, "roll: shift"), axes);
  }, nb::arg("x"), nb::arg("shifts"), nb::arg("axes").none());
  // x[key] = value: lazily (a new array), or written through to a stored b2nd array.
  auto basic_key = [](nb::handle key) {
    std::vector<Index> k;
    for (IndexItem& item : parse_key(key)) {
      if (Index* i = std::get_if<Index>(&item)) k.push_back(*i);
      else throw IndexError("x[key] = value: this key holds index arrays; only integers, slices, ... and None are taken here");
    }
    return k;
  };
  m.def("assign", [basic_key](const Array& x, nb::handle key, const Array& value) {
    return assign(x, basic_key(key), value);
  }, nb::arg("x"), nb::arg("key").none(), nb::arg("value"));
  m.def("assign_stored", [basic_key](const std::string& urlpath, nb::handle key, const Array& value, Context* ctx,
                                     nb::handle max_memory) {
    const std::vector<Index> k = basic_key(key);
    const size_t mm = to_max_memory(max_memory).value_or(size_t(1) << 30);
    return interruptible([&] { return assign_stored(urlpath, k, value, ctx, mm); });
  }, nb::arg("urlpath"), nb::arg("key").none(), nb::arg("value"), nb::arg("ctx").none(), nb::arg("max_memory").none());
  m.def("assign_stored_where", [](const std::string& urlpath, const Array& mask, const Array& value, Context* ctx,
                                  nb::handle max_memory) {
    const size_t mm = to_max_memory(max_memory).value_or(size_t(1) << 30);
    return interruptible([&] { return assign_stored_where(urlpath, mask, value, ctx, mm); });
  }, nb::arg("urlpath"), nb::arg("mask"), nb::arg("value"), nb::arg("ctx").none(), nb::arg("max_memory").none());
  m.def("mask_select", [](const Array& x, const Array& mask, Context* ctx) {
          return interruptible([&] { return mask_select(x, mask, ctx); });
        },
        nb::arg("x"), nb::arg("mask"), nb::arg("ctx").none());
  // The counting pass alone, and x[mask] from its counts (a saved expression keeps them).
  m.def("count_mask", [](const Array& mask, size_t value_itemsize, Context* ctx) {
          MaskCounts c = interruptible([&] { return count_mask(mask, value_itemsize, ctx); });
          return std::make_pair(c.strip, c.counts);
        },
        nb::arg("mask"), nb::arg("value_itemsize"), nb::arg("ctx").none());
  m.def("mask_select_counted", [](const Array& x, const Array& mask, const Shape& strip,
                                  const std::vector<int64_t>& counts) {
    return mask_select(x, mask, MaskCounts{strip, counts});
  });
  m.def("matrix_transpose", [](const Array& x) { return matrix_transpose(x); });
  // Array API functions on their own lazy nodes (issue #15).
  m.def("eye", [](nb::handle n_rows, nb::handle n_cols, nb::handle k, nb::handle dtype) {
    return eye(to_int64(n_rows, "eye: n_rows"), to_int64(n_cols, "eye: n_cols"), to_int64(k, "eye: k"),
               dtype_of(dtype));
  });
  m.def("tril", [](const Array& x, nb::handle k) { return tril(x, to_int64(k, "tril: k")); });
  m.def("triu", [](const Array& x, nb::handle k) { return triu(x, to_int64(k, "triu: k")); });
  m.def("diagonal", [](const Array& x, nb::handle offset) { return diagonal(x, to_int64(offset, "diagonal: offset")); });
  m.def("tile", [](const Array& x, nb::handle reps) { return tile(x, to_shape(reps, "tile: repetitions")); });
  m.def("repeat", [](const Array& x, nb::handle repeats, std::optional<int> axis) {
    if (!nb::hasattr(repeats, "__array_interface__"))  // an int (the package passes an int64 array otherwise)
      return repeat(x, to_int64(repeats, "repeat: repeats"), axis);
    return repeat(x, int64_values(nb::cast<Int64Array>(repeats)).values, axis);
  }, nb::arg("x"), nb::arg("repeats"), nb::arg("axis").none());
  m.def("trace", [](const Array& x, nb::handle offset, nb::handle dtype) {
    return trace(x, to_int64(offset, "trace: offset"), opt_dtype(dtype));
  }, nb::arg("x"), nb::arg("offset"), nb::arg("dtype").none());
  m.def("diff", [](const Array& x, int axis, nb::handle n, std::optional<Array> prepend, std::optional<Array> append) {
    return diff(x, axis, to_int64(n, "diff: n"), prepend, append);
  }, nb::arg("x"), nb::arg("axis"), nb::arg("n"), nb::arg("prepend").none(), nb::arg("append").none());
  m.def("sort", [](const Array& x, int axis, bool descending, bool stable, bool indices) {
    return indices ? argsort(x, axis, descending, stable) : sort(x, axis, descending, stable);
  }, nb::arg("x"), nb::arg("axis"), nb::arg("descending"), nb::arg("stable"), nb::arg("indices"));
  m.def("unique", [](const Array& x, bool indices, bool inverse, bool counts, Context* ctx, std::optional<size_t> mm) {
    return interruptible([&] {  // sorts x now
      Unique u = unique(x, indices, inverse, counts, ctx, mm.value_or(0));
      return std::make_tuple(u.values, u.indices, u.inverse, u.counts);
    });
  }, nb::arg("x"), nb::arg("indices"), nb::arg("inverse"), nb::arg("counts"), nb::arg("ctx").none(),
        nb::arg("max_memory").none());
  m.def("sort_run_length", [] { return sort_run_length(); });
  m.def("set_sort_run_length", [](int64_t n) { set_sort_run_length(n); });
  m.def("searchsorted", [](const Array& x1, const Array& x2, bool right, std::optional<Array> sorter) {
    return interruptible([&] { return searchsorted(x1, x2, right, sorter); });  // a sorter is read now
  }, nb::arg("x1"), nb::arg("x2"), nb::arg("right"), nb::arg("sorter").none());
  m.def("meshgrid", [](const std::vector<Array>& xs, bool xy) { return meshgrid(xs, xy); });
  m.def("broadcast_arrays", [](const std::vector<Array>& xs) { return broadcast_arrays(xs); });
  m.def("unstack", [](const Array& x, int axis) { return unstack(x, axis); });

  m.def("evaluate", [](const std::string& expression, nb::dict operands, Context* ctx) {
    std::map<std::string, Operand> ops;
    for (auto [k, v] : operands) {
      const std::string name = nb::cast<std::string>(k);
      if (nb::isinstance<Array>(v)) ops.emplace(name, nb::cast<Array>(v));
      else if (auto s = as_scalar(v)) ops.emplace(name, *s);
      else throw TypeError("evaluate: operand '" + name + "' is not an array or a number");
    }
    return interruptible([&] { return evaluate(expression, ops, ctx); });  // masks and index arrays are read now
  }, nb::arg("expression"), nb::arg("operands"), nb::arg("ctx").none());
  m.def("expression_names", [](const std::string& expression) { return expression_names(expression); });
  m.def("expression_functions", [] { return expression_functions(); });

  m.def("open", [](const std::string& path, nb::handle storage_options) {
    StoreOptions so = b2lazy_py::store_options(storage_options);
    nb::gil_scoped_release nogil;  // a store calling into Python (fsspec) takes it on any thread
    return open(path, so);
  }, nb::arg("path"), nb::arg("storage_options").none() = nb::none());
  m.def("from_numpy", [](nb::handle obj, const std::string& name) {
    auto a = nb::cast<nb::ndarray<nb::ro, nb::device::cpu>>(obj);
    return from_numpy(a, obj, name);
  });
  m.def("from_numpy_compressed", [](nb::handle obj, nb::handle chunks, nb::handle blocks, const std::string& codec,
                                    int clevel, const std::string& filter) {
    Array src = from_numpy(nb::cast<nb::ndarray<nb::ro, nb::device::cpu>>(obj), obj, "numpy");
    ComputeOptions o;
    o.chunks = to_shape(chunks, "chunks");
    o.blocks = to_shape(blocks, "blocks");
    o.cparams = CParams{codec, clevel, filter};
    return interruptible([&] { return Array(src.compute(o).node()); });
  }, nb::arg("obj"), nb::arg("chunks").none(), nb::arg("blocks").none(), nb::arg("codec"), nb::arg("clevel"),
     nb::arg("filter"));
  m.def("from_cframe", [](nb::bytes b) { return from_cframe(b.c_str(), static_cast<int64_t>(b.size())); });
  m.def("to_cframe", [](const Array& a, Context* ctx) {
    std::vector<uint8_t> frame = interruptible([&] { return to_cframe(a, ctx); });
    return nb::bytes(reinterpret_cast<const char*>(frame.data()), frame.size());
  });
  m.def("full", [](nb::handle shape, nb::handle value, nb::handle dtype, nb::handle chunks) {
    auto s = as_scalar(value);
    if (!s) throw TypeError("full(): fill_value must be a Python bool, int or float");
    return full(to_shape(shape, "shape"), *s, opt_dtype(dtype), to_shape(chunks, "chunks"));
  }, nb::arg("shape"), nb::arg("value"), nb::arg("dtype").none(), nb::arg("chunks").none());
  m.def("arange", [](double start, double stop, double step, nb::handle dtype, nb::handle shape, nb::handle chunks) {
    return arange(start, stop, step, opt_dtype(dtype), to_shape(shape, "shape"), to_shape(chunks, "chunks"));
  }, nb::arg("start"), nb::arg("stop"), nb::arg("step"), nb::arg("dtype").none(), nb::arg("shape").none(),
     nb::arg("chunks").none());
  m.def("arange_int", [](int64_t start, int64_t stop, int64_t step, nb::handle dtype, nb::handle shape, nb::handle chunks) {
    return arange_int(start, stop, step, opt_dtype(dtype), to_shape(shape, "shape"), to_shape(chunks, "chunks"));
  }, nb::arg("start"), nb::arg("stop"), nb::arg("step"), nb::arg("dtype").none(), nb::arg("shape").none(),
     nb::arg("chunks").none());
  m.def("linspace", [](double start, double stop, nb::handle num, bool endpoint, nb::handle dtype, nb::handle shape,
                       nb::handle chunks) {
    return linspace(start, stop, to_int64(num, "linspace: num"), endpoint, opt_dtype(dtype), to_shape(shape, "shape"),
                    to_shape(chunks, "chunks"));
  }, nb::arg("start"), nb::arg("stop"), nb::arg("num"), nb::arg("endpoint"), nb::arg("dtype").none(),
     nb::arg("shape").none(), nb::arg("chunks").none());

  m.def("compute", [](const Array& a, std::optional<std::string> urlpath, nb::handle chunks, nb::handle blocks,
                      const std::string& codec, int clevel, const std::string& filter, Context* ctx,
                      nb::handle max_memory, std::optional<bool> contiguous, nb::object progress, nb::handle shards,
                      const std::string& compressor, nb::handle storage_options) {
    ComputeOptions o =
        compute_options(urlpath, chunks, blocks, codec, clevel, filter, max_memory, contiguous, shards, compressor);
    o.storage = b2lazy_py::store_options(storage_options);
    Progress p{progress};
    o.progress = p.function();
    o.cancel = &p.stop;
    return interruptible([&] { return a.compute(o, ctx); }, &p);
  }, nb::arg("a"), nb::arg("urlpath").none(), nb::arg("chunks").none(), nb::arg("blocks").none(),
     nb::arg("codec"), nb::arg("clevel"), nb::arg("filter"), nb::arg("ctx"), nb::arg("max_memory").none(),
     nb::arg("contiguous").none(), nb::arg("progress").none(), nb::arg("shards").none() = nb::none(),
     nb::arg("compressor") = "blosc", nb::arg("storage_options").none() = nb::none());
  m.def("to_numpy", [](const Array& a, Context* ctx, nb::handle max_memory, nb::object progress) {
    nb::object np = nb::module_::import_("numpy");
    nb::object out = np.attr("empty")(shape_tuple(a.shape()), dtype_name(a.dtype()));
    auto buf = nb::cast<nb::ndarray<nb::device::cpu>>(out);
    void* data = buf.data();
    EvalOptions o;
    if (auto mm = to_max_memory(max_memory)) o.max_memory = *mm;
    Progress p{progress};
    o.progress = p.function();
    o.cancel = &p.stop;
    Stats s = interruptible([&] { return a.to_buffer(data, o, ctx); }, &p);
    return nb::make_tuple(out, stats_dict(s));
  }, nb::arg("a"), nb::arg("ctx"), nb::arg("max_memory").none(), nb::arg("progress").none());
  // Plans (b2lazy/plan.hpp): what compute() would run, printable, executable by task ranges.
  nb::class_<Plan>(m, "Plan")
      .def("__str__", [](const Plan& p) { return p.to_string(); })
      .def_prop_ro("shape", [](const Plan& p) { return shape_tuple(p.root->shape()); })
      .def_prop_ro("dtype", [](const Plan& p) { return std::string(dtype_name(p.root->dtype())); })
      .def_prop_ro("chunks", [](const Plan& p) { return shape_tuple(p.chunks); })
      .def_prop_ro("blocks", [](const Plan& p) { return shape_tuple(p.blocks); })
      .def_prop_ro("nchunks", [](const Plan& p) { return p.nchunks; })
      .def_prop_ro("ntasks", [](const Plan& p) { return p.tasks.size(); })
      .def_prop_ro("nworkers", [](const Plan& p) { return p.nworkers; })
      .def_prop_ro("max_memory", [](const Plan& p) { return p.options.max_memory; })
      .def_prop_ro("projected_peak", [](const Plan& p) { return p.projected_peak; })
      .def_prop_ro("kept_bytes", [](const Plan& p) { return p.kept_bytes; })
      .def_prop_ro("kept_read_bytes", [](const Plan& p) { return p.kept_read_bytes; })
      .def_prop_ro("block_major", [](const Plan& p) { return p.block_major; })
      .def_prop_ro("passes", [](const Plan& p) { return p.passes; })
      .def_prop_ro("source_bytes", [](const Plan& p) {
        nb::dict d;
        for (auto& [name, b] : p.source_bytes) d[name.c_str()] = b;
        return d;
      })
      .def_prop_ro("stages", [](const Plan& p) {
        nb::list l;
        for (auto& s : p.stages) {
          nb::dict d;
          d["node"] = s.node->describe();
          d["kind"] = s.node->kind();
          d["source"] = s.source;
          d["name"] = s.node->source_name();
          d["box"] = nb::make_tuple(shape_tuple(s.box.start), shape_tuple(s.box.stop));
          d["where"] = s.where == KeptIn::Dense ? "dense" : s.where == KeptIn::Compressed ? "compressed" : "spilled";
          d["chunks"] = shape_tuple(s.chunks);
          d["bytes"] = s.bytes;
          d["pulled_bytes"] = s.pulled_bytes;
          d["once_bytes"] = s.once_bytes;
          d["projected_bytes"] = s.memory.per_task;
          d["threads"] = s.memory.threads;
          d["carried_by"] = s.carried_by ? nb::object(nb::str(s.carried_by->kind().c_str())) : nb::none();
          l.append(d);
        }
        return l;
      })
      .def_prop_ro("windows", [](const Plan& p) {
        nb::list l;
        for (auto& w : p.windows) {
          nb::dict d;
          d["node"] = w.node->describe();
          d["name"] = w.node->source_name();
          d["blocks"] = w.blocks;
          d["bytes"] = w.bytes;
          d["pulled_bytes"] = w.pulled_bytes;
          d["read_bytes"] = w.read_bytes;
          l.append(d);
        }
        return l;
      })
      .def_prop_ro("tasks", [](const Plan& p) {
        nb::list l;
        for (auto& t : p.tasks) {
          nb::dict d;
          d["chunks"] = nb::make_tuple(t.first_chunk, t.last_chunk);
          d["projected_bytes"] = t.projected_bytes;
          d["source_bytes"] = t.source_bytes;
          l.append(d);
        }
        return l;
      });
  m.def("plan", [](const Array& a, std::optional<std::string> urlpath, nb::handle chunks, nb::handle blocks,
                   const std::string& codec, int clevel, const std::string& filter, Context* ctx,
                   nb::handle max_memory, std::optional<bool> contiguous, nb::handle shards, const std::string& compressor,
                   nb::handle storage_options) {
    ComputeOptions o =
        compute_options(urlpath, chunks, blocks, codec, clevel, filter, max_memory, contiguous, shards, compressor);
    o.storage = b2lazy_py::store_options(storage_options);
    return interruptible([&] { return a.plan(o, ctx); });
  }, nb::arg("a"), nb::arg("urlpath").none(), nb::arg("chunks").none(), nb::arg("blocks").none(),
     nb::arg("codec"), nb::arg("clevel"), nb::arg("filter"), nb::arg("ctx"), nb::arg("max_memory").none(),
     nb::arg("contiguous").none(), nb::arg("shards").none() = nb::none(), nb::arg("compressor") = "blosc",
     nb::arg("storage_options").none() = nb::none());
  m.def("execute_plan", [](const Plan& plan, nb::handle out, int64_t first, int64_t last, Context* ctx,
                           nb::object progress) {
    auto buf = nb::cast<nb::ndarray<nb::device::cpu, nb::c_contig>>(out);
    void* data = buf.data();
    EvalOptions o;
    Progress p{progress};
    o.progress = p.function();
    o.cancel = &p.stop;
    return stats_dict(interruptible([&] { return execute(plan, data, first, last, o, ctx); }, &p));
  }, nb::arg("plan"), nb::arg("out"), nb::arg("first"), nb::arg("last"), nb::arg("ctx"), nb::arg("progress").none());
  m.def("compute_plan", [](const Plan& plan, Context* ctx, nb::object progress) {
    EvalOptions o;
    Progress p{progress};
    o.progress = p.function();
    o.cancel = &p.stop;
    return interruptible([&] { return compute(plan, o, ctx); }, &p);
  }, nb::arg("plan"), nb::arg("ctx"), nb::arg("progress").none());
  // At interpreter exit (the package's atexit hook): stop the evaluations still running on
  // daemon threads and wait for their partial outputs to be removed.
  b2lazy_py::bind_distribute(m);
  b2lazy_py::bind_udf(m);
  b2lazy_py::bind_statistics(m);
  b2lazy_py::bind_einsum_pad(m);
  b2lazy_py::bind_rolling(m);
  b2lazy_py::bind_xarray_open(m);
  b2lazy_py::bind_groupby(m);
  b2lazy_py::bind_logging_store(m);
  b2lazy_py::bind_store(m);
  b2lazy_py::bind_python_store(m);
  m.def("cancel_at_exit", [](double timeout_seconds) {
    g_exiting_thread = std::this_thread::get_id();
    g_exiting = true;
    bool ended;
    {
      nb::gil_scoped_release release;
      ended = cancel_evaluations(std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000)));
    }
    // A parked thread keeps its arrays: not leaks of the binding, so not reported as such.
    if (g_in_flight > 0) nb::set_leak_warnings(false);
    return ended;
  });
}
