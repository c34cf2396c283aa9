// One binding for every function of the registry: _core.call(name, args, kwargs) turns the
// Python arguments into call values (b2lazy/call.hpp), runs the function's row — the same
// call expression strings make — and turns the result back. The package's wrappers made
// from the rows (b2lazy/_registry.py) go through it, so a function added to the registry
// needs no binding of its own.
#include <map>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <b2lazy/b2lazy.hpp>
#include <b2lazy/call.hpp>

#include "bindings.hpp"
#include "convert.hpp"

namespace b2lazy_py {

using namespace b2lazy;
using expr::Value;

namespace {

Value of_kind(Value::Kind k) { return Value::of_kind(k, 0); }

// A NumPy dtype or a type NumPy takes as one (np.float32, float): its name.
bool is_dtype_like(nb::handle h) {
  static nb::handle np_dtype = nb::object(nb::module_::import_("numpy").attr("dtype")).release();  // kept to exit
  return PyType_Check(h.ptr()) || nb::isinstance(h, np_dtype);
}

// np.int8(3), np.float32(2.5), np.bool_(True): the Python scalar each stands for.
std::optional<Scalar> numpy_scalar(nb::handle h) {
  static nb::handle generic = nb::object(nb::module_::import_("numpy").attr("generic")).release();  // kept to exit
  if (!nb::isinstance(h, generic)) return std::nullopt;
  const char kind = nb::cast<std::string>(h.attr("dtype").attr("kind"))[0];
  if (kind == 'b') return Scalar(nb::cast<bool>(nb::bool_(h)));
  if (kind == 'i' || kind == 'u') return as_scalar(nb::int_(h));
  if (kind == 'f') return Scalar(nb::cast<double>(nb::float_(h)));
  if (kind == 'c') return as_scalar(nb::steal(PyComplex_FromCComplex(PyComplex_AsCComplex(h.ptr()))));
  return std::nullopt;
}

std::optional<int64_t> slice_part(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return to_int64(h, "a slice bound");
}

Value to_value(nb::handle h, int depth = 0) {
  if (nb::isinstance<Array>(h)) return Value::of(nb::cast<Array>(h), 0);
  if (nb::hasattr(h, "_a") && nb::isinstance<Array>(h.attr("_a"))) return Value::of(nb::cast<Array>(h.attr("_a")), 0);
  if (h.is_none()) return of_kind(Value::Kind::None);
  if (nb::isinstance<nb::int_>(h) && !nb::isinstance<nb::bool_>(h)) {
    // Beyond int64 and uint64: the nearest end (an offset of -2**70 is below every
    // diagonal; a size or an axis there is out of range either way).
    int overflow = 0;
    const int64_t v = to_int64(h, "an int", overflow);
    if (overflow < 0) return Value::of(Scalar(v), 0);
    static nb::handle most = PyLong_FromUnsignedLongLong(UINT64_MAX);  // kept to exit
    if (overflow > 0 && PyObject_RichCompareBool(h.ptr(), most.ptr(), Py_GT) == 1)
      return Value::of(Scalar::uint64(UINT64_MAX), 0);
  }
  if (auto s = as_scalar(h)) return Value::of(*s, 0);
  if (auto s = numpy_scalar(h)) return Value::of(*s, 0);
  if (nb::isinstance<nb::str>(h)) {
    Value v = of_kind(Value::Kind::String);
    v.str = nb::cast<std::string>(h);
    return v;
  }
  if (nb::isinstance<nb::tuple>(h) || nb::isinstance<nb::list>(h)) {
    Value v = of_kind(nb::isinstance<nb::tuple>(h) ? Value::Kind::Tuple : Value::Kind::List);
    if (depth >= 64) throw ValueError("an argument nests lists or tuples more than 64 deep");
    for (nb::handle item : h) v.items.push_back(to_value(item, depth + 1));
    return v;
  }
  if (PySlice_Check(h.ptr())) {
    Value v = of_kind(Value::Kind::Slice);
    v.start = slice_part(h.attr("start"));
    v.stop = slice_part(h.attr("stop"));
    v.step = slice_part(h.attr("step"));
    return v;
  }
  if (h.ptr() == Py_Ellipsis) return of_kind(Value::Kind::Ellipsis);
  if (is_dtype_like(h)) {
    Value v = of_kind(Value::Kind::String);
    v.str = dtype_name(dtype_of(h));
    return v;
  }
  // NumPy arrays and scalars, and every array object the package wraps (b2lazy.asarray).
  nb::object a = nb::module_::import_("b2lazy").attr("asarray")(h);
  return Value::of(nb::cast<Array>(a.attr("_a")), 0);
}

nb::object from_value(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Array: return nb::cast(v.array);
    case Value::Kind::None: return nb::none();
    case Value::Kind::String: return nb::cast(v.str);
    case Value::Kind::Scalar:
      switch (v.scalar.kind) {
        case ScalarKind::Bool: return nb::bool_(v.scalar.i != 0);
        case ScalarKind::Int:
          return v.scalar.above_int64 ? nb::cast(static_cast<uint64_t>(v.scalar.i)) : nb::cast(v.scalar.i);
        case ScalarKind::Float: return nb::float_(v.scalar.f);
        case ScalarKind::Complex: return nb::steal(PyComplex_FromDoubles(v.scalar.f, v.scalar.im));
      }
      break;
    case Value::Kind::Tuple:
    case Value::Kind::List: {
      nb::list l;
      for (const Value& item : v.items) l.append(from_value(item));
      if (v.kind == Value::Kind::List) return l;
      return nb::tuple(l);
    }
    case Value::Kind::Slice:
    case Value::Kind::Ellipsis: break;
  }
  throw TypeError("a function returned a value Python does not take");
}

}  // namespace

void bind_call(nb::module_& m) {
  m.def(
      "call",
      [](const std::string& name, nb::tuple args, nb::dict kwargs, Context* ctx) {
        std::vector<Value> positional;
        for (nb::handle h : args) positional.push_back(to_value(h));
        std::map<std::string, Value> keywords;
        for (auto [k, v] : kwargs) keywords[nb::cast<std::string>(k)] = to_value(v);
        return from_value(call_function(name, std::move(positional), std::move(keywords), ctx));
      },
      nb::arg("name"), nb::arg("args"), nb::arg("kwargs"), nb::arg("ctx").none() = nb::none(),
      "Calls the registry's function `name` with Python's arguments (b2lazy/call.hpp).");
}

}  // namespace b2lazy_py
