// The argument conversions of convert.hpp, and Stats as a dict and back (bindings.hpp).
#include "convert.hpp"

#include <memory>
#include <string>

#include <nanobind/stl/string.h>

#include "bindings.hpp"

namespace b2lazy_py {

using namespace b2lazy;

std::string py_repr(const nb::handle& h) { return nb::cast<std::string>(nb::repr(h)); }

bool is_integer(const nb::handle& h) { return PyIndex_Check(h.ptr()); }

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

int64_t to_int64(const nb::handle& h, const std::string& what) {
  int overflow = 0;
  int64_t v = to_int64(h, what, overflow);
  if (overflow) throw ValueError(what + " " + py_repr(h) + " is outside the range of int64");
  return v;
}

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

std::optional<size_t> to_max_memory(const nb::handle& h) {
  if (h.is_none()) return std::nullopt;
  int overflow = 0;
  const int64_t v = to_int64(h, "max_memory", overflow);
  if (overflow || v < 1) throw ValueError("max_memory must be a number of bytes from 1 to 2**63-1, got " + py_repr(h));
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

std::optional<Scalar> as_scalar(const nb::handle& h) {
  if (nb::isinstance<nb::bool_>(h)) return Scalar(nb::cast<bool>(h));
  if (nb::isinstance<nb::int_>(h)) {
    try {
      return Scalar(nb::cast<int64_t>(h));
    } catch (const nb::cast_error&) {}
    try {
      return Scalar::uint64(nb::cast<uint64_t>(h));
    } catch (const nb::cast_error&) {
      throw ValueError("Python integer " + nb::cast<std::string>(nb::str(h)) + " does not fit in int64 or uint64");
    }
  }
  if (nb::isinstance<nb::float_>(h)) return Scalar(nb::cast<double>(h));
  if (PyComplex_Check(h.ptr()))
    return Scalar::complex(PyComplex_RealAsDouble(h.ptr()), PyComplex_ImagAsDouble(h.ptr()));
  return std::nullopt;
}

Operand as_operand(const nb::handle& h, const char* fn, size_t pos) {
  if (nb::isinstance<Array>(h)) return nb::cast<Array>(h);
  if (auto s = as_scalar(h)) return *s;
  throw TypeError(std::string(fn) + "(): argument " + std::to_string(pos) +
                  " must be a b2lazy Array or a Python scalar, got " + nb::cast<std::string>(nb::str(h.type())));
}

Array from_numpy(nb::ndarray<nb::ro, nb::device::cpu> a, nb::handle owner, const std::string& name) {
  DType t;
  auto dt = a.dtype();
  using C = nb::dlpack::dtype_code;
  if (dt.code == static_cast<uint8_t>(C::Bool)) t = DType::Bool;
  else if (dt.code == static_cast<uint8_t>(C::Int))
    t = dt.bits == 8 ? DType::I8 : dt.bits == 16 ? DType::I16 : dt.bits == 32 ? DType::I32 : DType::I64;
  else if (dt.code == static_cast<uint8_t>(C::UInt))
    t = dt.bits == 8 ? DType::U8 : dt.bits == 16 ? DType::U16 : dt.bits == 32 ? DType::U32 : DType::U64;
  else if (dt.code == static_cast<uint8_t>(C::Float) && (dt.bits == 16 || dt.bits == 32 || dt.bits == 64))
    t = dt.bits == 16 ? DType::F16 : dt.bits == 32 ? DType::F32 : DType::F64;
  else if (dt.code == static_cast<uint8_t>(C::Complex) && (dt.bits == 64 || dt.bits == 128))
    t = dt.bits == 64 ? DType::C64 : DType::C128;
  else
    throw TypeError(name +
                    ": unsupported dtype (supported: bool, int8..int64, uint8..uint64, float16, float32, float64, "
                    "complex64, complex128)");
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

std::vector<Index> parse_index(const nb::handle& key, size_t first) {
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
                      "arrays are valid indices, got " +
                      what);
    }
  };
  if (nb::isinstance<nb::tuple>(key)) {
    for (auto k : key) one(k);
  } else {
    one(key);
  }
  return idx;
}

IndexArray int64_values(const Int64Array& a) {
  IndexArray r;
  for (size_t d = 0; d < a.ndim(); ++d) r.shape.push_back(static_cast<int64_t>(a.shape(d)));
  r.values.assign(a.data(), a.data() + a.size());
  return r;
}

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
      if (is_uint && u > static_cast<uint64_t>(INT64_MAX))
        throw IndexError("index " + std::to_string(u) + " is out of bounds");
      v = static_cast<int64_t>(u);
    }
    r.values[static_cast<size_t>(i)] = is_bool ? (v != 0) : v;
    for (size_t d = a.ndim(); d-- > 0;)
      if (++pos[d] < static_cast<int64_t>(a.shape(d))) break;
      else pos[d] = 0;
  }
  return r;
}

bool integer_scalar(const nb::handle& k) {
  if (!nb::hasattr(k, "__index__")) return false;
  if (!nb::hasattr(k, "shape")) return true;
  if (nb::len(nb::object(k.attr("shape"))) != 0) return false;
  if (!nb::hasattr(k, "dtype")) return true;
  const std::string kind = nb::cast<std::string>(k.attr("dtype").attr("kind"));
  return kind == "i" || kind == "u";
}

bool non_bool_numpy_scalar(const nb::handle& k) {
  return nb::hasattr(k, "dtype") && nb::hasattr(k, "__array_interface__") && !nb::hasattr(k, "__len__") &&
         nb::cast<std::string>(k.attr("dtype").attr("kind")) != "b";
}

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
