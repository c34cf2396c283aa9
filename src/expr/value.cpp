#include "expr/value.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <complex>
#include <sstream>

#include "b2lazy/error.hpp"
#include "b2lazy/functions.hpp"
#include "core/scalar_value.hpp"

namespace b2lazy::expr {

std::string describe(const Value& v) {
  switch (v.kind) {
    case Value::Kind::None: return "None";
    case Value::Kind::Array:
      return "array of shape " + shape_str(v.array.shape()) + " and dtype " + dtype_name(v.array.dtype());
    case Value::Kind::Scalar:
      if (v.scalar.kind == ScalarKind::Bool) return v.scalar.i ? "True" : "False";
      if (v.scalar.kind == ScalarKind::Int)
        return "int " +
               (v.scalar.above_int64 ? std::to_string(static_cast<uint64_t>(v.scalar.i)) : std::to_string(v.scalar.i));
      {
        std::ostringstream os;
        os << v.scalar.f;
        return "float " + os.str();
      }
    case Value::Kind::String: return "string '" + v.str + "'";
    case Value::Kind::Tuple: return "tuple of " + std::to_string(v.items.size());
    case Value::Kind::List: return "list of " + std::to_string(v.items.size());
    case Value::Kind::Slice: return "slice";
    case Value::Kind::Ellipsis: return "...";
  }
  return "?";
}

namespace {
// Shape and flat scalars of a nested literal list; throws for ragged or non-numbers.
void flatten_literal(const Value& v, size_t depth, Shape& shape, std::vector<Scalar>& out, const std::string& where) {
  if (v.is_sequence()) {
    if (depth == shape.size()) shape.push_back(static_cast<int64_t>(v.items.size()));
    else if (shape[depth] != static_cast<int64_t>(v.items.size()))
      throw ValueError(where + ": a ragged literal list (rows of different lengths)");
    for (const Value& e : v.items) flatten_literal(e, depth + 1, shape, out, where);
    return;
  }
  if (v.kind != Value::Kind::Scalar || depth != shape.size())
    throw TypeError(where + ": a literal list holds numbers (or lists of numbers of one length), got " + describe(v));
  out.push_back(v.scalar);
}
}  // namespace

Array literal_array(const Value& v, const std::string& where) {
  if (v.kind == Value::Kind::Array) return v.array;
  if (v.kind == Value::Kind::Scalar) return scalar(v.scalar);
  if (!v.is_sequence()) throw TypeError(where + " must be an array, a number or a list of numbers, got " + describe(v));
  Shape shape;
  std::vector<Scalar> flat;
  flatten_literal(v, 0, shape, flat, where);
  ScalarKind k = ScalarKind::Bool;
  bool big = false, negative = false;  // ints above INT64_MAX make a uint64 list, as NumPy's
  for (const Scalar& s : flat) {
    if (s.kind == ScalarKind::Complex || (s.kind == ScalarKind::Float && k != ScalarKind::Complex) ||
        (s.kind == ScalarKind::Int && k == ScalarKind::Bool))
      k = s.kind;
    big = big || s.above_int64;
    negative = negative || (s.kind == ScalarKind::Int && !s.above_int64 && s.i < 0);
  }
  if (big && negative && k == ScalarKind::Int)
    throw ValueError(where + ": a literal list mixes negative ints with ints above int64 (no common integer dtype)");
  const DType t = flat.empty()               ? DType::F64
                  : k == ScalarKind::Bool    ? DType::Bool
                  : k == ScalarKind::Int     ? (big ? DType::U64 : DType::I64)
                  : k == ScalarKind::Complex ? DType::C128
                                             : DType::F64;
  auto buf = std::make_shared<std::vector<unsigned char>>(flat.size() * itemsize(t));
  for (size_t i = 0; i < flat.size(); ++i) {
    const Scalar& s = flat[i];
    if (t == DType::Bool) (*buf)[i] = static_cast<unsigned char>(s.i != 0);
    else if (t == DType::I64 || t == DType::U64) reinterpret_cast<int64_t*>(buf->data())[i] = s.i;  // same bits
    else if (t == DType::C128)
      reinterpret_cast<std::complex<double>*>(buf->data())[i] = scalar_value<std::complex<double>>(s);
    else
      reinterpret_cast<double*>(buf->data())[i] = s.kind == ScalarKind::Float ? s.f
                                                  : s.above_int64 ? static_cast<double>(static_cast<uint64_t>(s.i))
                                                                  : static_cast<double>(s.i);
  }
  return from_buffer(buf->data(), t, shape, {}, buf, "literal");
}

IndexArray index_array(const Value& v, Context* ctx, const std::string& where) {
  IndexArray r;
  if (v.is_sequence()) {
    std::vector<Scalar> flat;
    flatten_literal(v, 0, r.shape, flat, where);
    bool all_bool = !flat.empty();
    for (const Scalar& s : flat) {
      if (s.kind == ScalarKind::Float) r.invalid_dtype = "float64";
      if (s.kind == ScalarKind::Complex) r.invalid_dtype = "complex128";
      if (s.above_int64)
        throw IndexError(where + ": index " + std::to_string(static_cast<uint64_t>(s.i)) + " is out of bounds");
      all_bool = all_bool && s.kind == ScalarKind::Bool;
      r.values.push_back(s.i);
    }
    r.boolean = all_bool;
    return r;
  }
  if (v.kind != Value::Kind::Array) throw TypeError(where + ": not an index array: " + describe(v));
  const Array& a = v.array;
  r.shape = a.shape();
  if (a.dtype() == DType::Bool) r.boolean = true;
  else if (!is_integral(a.dtype())) r.invalid_dtype = dtype_name(a.dtype());
  if (r.invalid_dtype.empty()) {
    // Index values decide what is read: evaluated now, exactly (not through double).
    r.values.resize(static_cast<size_t>(a.size()));
    if (a.dtype() == DType::U64) {
      std::vector<uint64_t> u(r.values.size());
      a.to_buffer(u.data(), ctx);
      for (size_t i = 0; i < u.size(); ++i) {
        if (u[i] > static_cast<uint64_t>(INT64_MAX))
          throw IndexError(where + ": index " + std::to_string(u[i]) + " is out of bounds");
        r.values[i] = static_cast<int64_t>(u[i]);
      }
    } else {
      (a.dtype() == DType::I64 ? a : a.astype(DType::I64)).to_buffer(r.values.data(), ctx);
    }
  }
  return r;
}

// --- Args -----------------------------------------------------------------------------

namespace {
// A registry default (a Python literal: None, True, False, an int, a float, 'text').
Value default_value(const std::string& literal, size_t column) {
  if (literal == "None") return Value::of_kind(Value::Kind::None, column);
  if (literal == "True" || literal == "False") return Value::of(Scalar(literal == "True"), column);
  if (literal.size() >= 2 && literal.front() == '\'' && literal.back() == '\'') {
    Value v = Value::of_kind(Value::Kind::String, column);
    v.str = literal.substr(1, literal.size() - 2);
    return v;
  }
  if (literal.find_first_of(".eE") == std::string::npos) return Value::of(Scalar(int64_t{std::stoll(literal)}), column);
  return Value::of(Scalar(std::stod(literal)), column);
}
}  // namespace

void Args::bind() {
  const FunctionInfo* f = find_function(fn_);
  if (f == nullptr) throw ValueError(fn_ + "(): not in the function registry");  // a function without an entry
  bind(f->params);
}

// Python's rules for binding a call to a signature, with Python's messages.
void Args::bind(const std::vector<Param>& params) {
  std::vector<const Param*> positional;
  const Param* star = nullptr;
  for (const Param& p : params) {
    if (p.kind == ParamKind::PositionalOnly || p.kind == ParamKind::PositionalOrKeyword) positional.push_back(&p);
    if (p.kind == ParamKind::VarPositional) star = &p;
  }
  Value rest = Value::of_kind(Value::Kind::Tuple, column_);
  for (size_t i = 0; i < pos_.size(); ++i) {
    if (i < positional.size()) bound_[positional[i]->name] = pos_[i];
    else if (star != nullptr) rest.items.push_back(pos_[i]);
    else
      throw TypeError(fn_ + "() takes at most " + std::to_string(positional.size()) + " positional argument" +
                      (positional.size() == 1 ? "" : "s") + ", got " + std::to_string(pos_.size()));
  }
  if (star != nullptr) bound_[star->name] = std::move(rest);
  for (const auto& kv : kw_) {
    const std::string& k = kv.first;  // (not a structured binding: clang 14 cannot capture one)
    auto it = std::find_if(params.begin(), params.end(), [&](const Param& p) { return p.name == k; });
    if (it != params.end() && it->kind == ParamKind::PositionalOnly)
      throw TypeError(fn_ + "() got a positional-only argument passed by keyword: '" + k + "'");
    if (it == params.end() || it->kind == ParamKind::VarPositional) {
      std::string list;
      for (const Param& p : params)
        if (p.kind != ParamKind::VarPositional && p.kind != ParamKind::PositionalOnly)
          list += (list.empty() ? "" : ", ") + p.name;
      throw TypeError(fn_ + "() got an unexpected keyword argument '" + k + "'" +
                      (list.empty() ? " (it takes none)" : " (it takes " + list + ")"));
    }
    if (bound_.count(k)) throw TypeError(fn_ + "() got multiple values for argument '" + k + "'");
    bound_[k] = kv.second;
  }
  for (const Param& p : params) {
    if (bound_.count(p.name)) continue;
    if (!p.default_value) throw TypeError(fn_ + "() missing required argument '" + p.name + "'");
    bound_[p.name] = default_value(*p.default_value, column_);
  }
}

void check_device(const Args& x) {
  if (!x.has("device")) return;
  const Value& v = x.get("device");
  if (v.kind != Value::Kind::String || v.str != "cpu") x.bad("device", "'cpu' or None (b2lazy has one device)");
}

bool Args::has(const std::string& name) const {
  auto it = bound_.find(name);
  return it != bound_.end() && it->second.kind != Value::Kind::None;
}

const Value& Args::get(const std::string& name) const {
  static const Value absent;  // kind None, column 0
  auto it = bound_.find(name);
  return it == bound_.end() ? absent : it->second;
}

void Args::bad(const std::string& name, const std::string& wanted) const {
  throw TypeError(fn_ + "(): argument '" + name + "' must be " + wanted + ", got " + describe(get(name)));
}

void Args::beyond_int64(const std::string& name, const Scalar& s) const {  // NumPy: ValueError too
  throw ValueError(fn_ + "(): argument '" + name + "': " + std::to_string(static_cast<uint64_t>(s.i)) +
                   " is outside the range of int64");
}

Array Args::array(const std::string& name) const {
  const Value& v = get(name);
  if (!v.is_array_like()) bad(name, "an array, a number or a list of numbers");
  return literal_array(v, fn_ + "(): argument '" + name + "'");
}

Operand Args::operand(const std::string& name) const {
  const Value& v = get(name);
  if (v.kind == Value::Kind::Scalar) return v.scalar;
  return array(name);
}

std::vector<Array> Args::arrays(const std::string& name) const {
  const Value& v = get(name);
  if (!v.is_sequence()) bad(name, "a list or tuple of arrays");
  std::vector<Array> out;
  for (const Value& e : v.items) {
    if (!e.is_array_like()) bad(name, "a list or tuple of arrays");
    out.push_back(literal_array(e, fn_ + "(): argument '" + name + "'"));
  }
  return out;
}

int64_t Args::integer(const std::string& name) const {
  const Value& v = get(name);
  if (v.kind != Value::Kind::Scalar || v.scalar.kind != ScalarKind::Int) bad(name, "an int");
  if (v.scalar.above_int64) beyond_int64(name, v.scalar);
  return v.scalar.i;
}

int64_t Args::clamped_integer(const std::string& name) const {
  const Value& v = get(name);
  if (v.kind != Value::Kind::Scalar || v.scalar.kind != ScalarKind::Int) bad(name, "an int");
  return v.scalar.above_int64 ? INT64_MAX : v.scalar.i;
}

std::optional<int64_t> Args::opt_integer(const std::string& name) const {
  if (!has(name)) return std::nullopt;
  return integer(name);
}

std::vector<int64_t> Args::integers(const std::string& name) const {
  const Value& v = get(name);
  if (v.kind == Value::Kind::Scalar && v.scalar.kind == ScalarKind::Int) {
    if (v.scalar.above_int64) beyond_int64(name, v.scalar);
    return {v.scalar.i};
  }
  if (v.kind == Value::Kind::Array && v.array.ndim() <= 1 &&
      (kind(v.array.dtype()) == DKind::Signed || kind(v.array.dtype()) == DKind::Unsigned)) {
    // A NumPy array of ints (xarray passes axes so): its values, read now.
    const Array a = v.array.astype(DType::I64);
    std::vector<int64_t> out(static_cast<size_t>(a.size()));
    if (!out.empty()) a.to_buffer(out.data(), ctx_);
    return out;
  }
  if (!v.is_sequence()) bad(name, "an int or a tuple of ints");
  std::vector<int64_t> out;
  for (const Value& e : v.items) {
    if (e.kind != Value::Kind::Scalar || e.scalar.kind != ScalarKind::Int) bad(name, "an int or a tuple of ints");
    if (e.scalar.above_int64) beyond_int64(name, e.scalar);
    out.push_back(e.scalar.i);
  }
  return out;
}

std::optional<std::vector<int>> Args::opt_axes(const std::string& name) const {
  if (!has(name)) return std::nullopt;
  return axis_list(name);
}

int Args::to_axis(int64_t v, const std::string& name) const {
  if (v < INT_MIN || v > INT_MAX)
    throw AxisError(fn_ + "(): argument '" + name + "': axis " + std::to_string(v) + " is out of bounds");
  return static_cast<int>(v);
}

int Args::axis(const std::string& name) const { return to_axis(integer(name), name); }

std::optional<int> Args::opt_axis(const std::string& name) const {
  if (!has(name)) return std::nullopt;
  return axis(name);
}

std::vector<int> Args::axis_list(const std::string& name) const {
  std::vector<int> out;
  for (int64_t a : integers(name)) out.push_back(to_axis(a, name));
  return out;
}

bool Args::boolean(const std::string& name) const {
  const Value& v = get(name);
  if (v.kind != Value::Kind::Scalar || v.scalar.kind == ScalarKind::Float) bad(name, "True or False");
  return v.scalar.i != 0;
}

double Args::number(const std::string& name) const {
  const Value& v = get(name);
  if (v.kind != Value::Kind::Scalar) bad(name, "a number");
  if (v.scalar.above_int64) return static_cast<double>(static_cast<uint64_t>(v.scalar.i));
  return v.scalar.kind == ScalarKind::Float ? v.scalar.f : static_cast<double>(v.scalar.i);
}

std::optional<DType> Args::opt_dtype(const std::string& name) const {
  if (!has(name)) return std::nullopt;
  const Value& v = get(name);
  if (v.kind != Value::Kind::String) bad(name, "a dtype name such as 'float32'");
  try {
    return dtype_from_name(v.str);
  } catch (const Error&) {
    bad(name, "a dtype name such as 'float32'");
  }
}

}  // namespace b2lazy::expr
