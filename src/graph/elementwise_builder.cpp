// Builds elementwise nodes: NumPy type resolution, weak scalars, broadcasting, casts.
#include <cmath>
#include <cstring>
#include <limits>

#include "b2lazy/array.hpp"
#include "b2lazy/error.hpp"
#include "core/dispatch.hpp"
#include "core/scalar_value.hpp"
#include "ops/elementwise/elementwise_node.hpp"
#include "storage/buffer_source.hpp"

namespace b2lazy {

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape r(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1)
      throw ValueError("operands could not be broadcast together with shapes " + shape_str(a) + " and " + shape_str(b));
    r[i] = x == 1 ? y : x;
  }
  return r;
}

namespace {

// A scalar converted to dtype `t`; Python ints that do not fit raise like NumPy 2.
NodePtr constant_of(const Scalar& s, DType t, const char* fn) {
  alignas(16) unsigned char buf[kMaxItemsize] = {0};
  if (s.kind == ScalarKind::Complex && !is_complex(t))
    throw TypeError(std::string(fn) + ": a complex scalar cannot take part as " + dtype_name(t));
  dispatch(t, [&]<class T>(T*) {
    T v;
    if constexpr (is_complex_v<T>) {
      v = s.above_int64 ? T(static_cast<typename T::value_type>(static_cast<uint64_t>(s.i))) : scalar_value<T>(s);
    } else if (s.above_int64) {
      if (t != DType::U64 && !is_float(t))
        throw ValueError(std::string(fn) + ": Python integer " + std::to_string(static_cast<uint64_t>(s.i)) +
                         " out of bounds for " + dtype_name(t));
      v = static_cast<T>(static_cast<uint64_t>(s.i));
    } else if (s.kind == ScalarKind::Float) {
      v = t == DType::Bool ? static_cast<T>(s.f != 0) : static_cast<T>(s.f);  // NaN is true
    } else {
      if (is_integral(t)) {
        bool fits = t == DType::U64 ? s.i >= 0
                                    : (s.i >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                                       s.i <= static_cast<int64_t>(std::numeric_limits<T>::max()));
        if (!fits && s.kind == ScalarKind::Int)
          throw ValueError(std::string(fn) + ": Python integer " + std::to_string(s.i) + " out of bounds for " +
                           dtype_name(t));
      }
      v = t == DType::Bool ? static_cast<T>(s.i != 0) : static_cast<T>(s.i);
    }
    std::memcpy(buf, &v, sizeof(T));
  });
  return std::make_shared<ConstantNode>(t, buf);
}

DType default_dtype(const Scalar& s) {
  switch (s.kind) {
    case ScalarKind::Bool: return DType::Bool;
    case ScalarKind::Int: return DType::I64;
    case ScalarKind::Complex: return DType::C128;
    default: return DType::F64;
  }
}

// The common dtype of the operands: arrays promote strongly, scalars weakly.
DType result_dtype(const std::vector<Operand>& args) {
  bool have_array = false;
  DType t = DType::Bool;
  for (auto& a : args)
    if (auto* arr = std::get_if<Array>(&a)) {
      t = have_array ? promote(t, arr->dtype()) : arr->dtype();
      have_array = true;
    }
  for (auto& a : args)
    if (auto* s = std::get_if<Scalar>(&a)) {
      if (have_array) {
        t = promote_with_scalar(t, s->kind);
      } else {
        t = default_dtype(*s);
        have_array = true;
      }
    }
  return t;
}

// Promotion of the array operands alone (scalars ignored).
DType array_dtype(const std::vector<Operand>& args) {
  std::optional<DType> t;
  for (auto& a : args)
    if (auto* arr = std::get_if<Array>(&a)) t = t ? promote(*t, arr->dtype()) : arr->dtype();
  return t.value_or(DType::F64);
}

// NumPy picks the smallest float loop every array operand casts to safely: that is
// the promotion of each operand's own float type (int8 with uint16 -> float32), except
// true division of integers only, which is float64.
DType float_result(Op op, const std::vector<Operand>& args) {
  std::optional<DType> t;
  bool any_float = false;
  for (auto& a : args)
    if (auto* arr = std::get_if<Array>(&a)) {
      DType f = float_for(arr->dtype());
      any_float |= is_inexact(arr->dtype());
      t = t ? promote(*t, f) : f;
    }
  if (!t || (op == Op::Divide && !any_float)) return DType::F64;
  // A weak scalar can still change the kind: a bool array with a Python int is int64,
  // an int array with a Python float is float64.
  DType base = result_dtype(args);
  if (kind(base) != kind(array_dtype(args))) return float_for(base);
  return *t;
}

// NumPy 2 compares an integer array with a Python int its dtype cannot hold by value:
// every element is then below (or above) it, and the result is the same everywhere.
std::optional<Array> out_of_range_comparison(Op op, const std::vector<Operand>& args) {
  if (op_family(op) != OpFamily::Cmp || args.size() != 2) return std::nullopt;
  const bool scalar_first = std::holds_alternative<Scalar>(args[0]);
  const Array* arr = std::get_if<Array>(&args[scalar_first ? 1 : 0]);
  const Scalar* s = std::get_if<Scalar>(&args[scalar_first ? 0 : 1]);
  if (!arr || !s || s->kind != ScalarKind::Int || !is_integral(arr->dtype())) return std::nullopt;
  int side = 0;  // -1: the scalar is below every value of the dtype, +1: above
  dispatch_real(arr->dtype(), "comparison", [&]<class T>(T*) {
    if (s->above_int64) side = arr->dtype() == DType::U64 ? 0 : 1;
    else if (arr->dtype() == DType::U64) side = s->i < 0 ? -1 : 0;
    else if (s->i < static_cast<int64_t>(std::numeric_limits<T>::min())) side = -1;
    else if (s->i > static_cast<int64_t>(std::numeric_limits<T>::max())) side = 1;
  });
  if (side == 0) return std::nullopt;
  if (scalar_first) side = -side;  // s < x is x > s
  bool v = false;
  switch (op) {
    case Op::Less:
    case Op::LessEqual: v = side > 0; break;
    case Op::Greater:
    case Op::GreaterEqual: v = side < 0; break;
    case Op::NotEqual: v = true; break;
    default: v = false;
  }
  return full(arr->shape(), Scalar(v), DType::Bool);
}

bool bool_arith_ok(Op op) {
  switch (op) {
    case Op::Add:
    case Op::Multiply:
    case Op::Maximum:
    case Op::Minimum:
    case Op::Abs:
    case Op::Floor:
    case Op::Ceil:
    case Op::Trunc:
    case Op::Round:
    case Op::Real:
    case Op::Imag:
    case Op::Conj: return true;
    default: return false;
  }
}

NodePtr cast_node(const NodePtr& n, DType t) {
  if (n->dtype() == t) return n;
  return std::make_shared<ElementwiseNode>(Op::Cast, t, t, n->shape(), std::vector<NodePtr>{n});
}

NodePtr as_node(const Operand& o, DType t, const char* fn) {
  if (auto* a = std::get_if<Array>(&o)) return cast_node(a->node(), t);
  return constant_of(std::get<Scalar>(o), t, fn);
}

bool is_scalar_value(const Operand& o, double v) {
  auto* s = std::get_if<Scalar>(&o);
  if (!s) return false;
  return s->kind == ScalarKind::Float ? s->f == v : static_cast<double>(s->i) == v;
}

}  // namespace

Array elementwise(Op op, const std::vector<Operand>& args) {
  const char* fn = op_name(op);
  if (static_cast<int>(args.size()) != op_arity(op))
    throw ValueError(std::string(fn) + "() takes " + std::to_string(op_arity(op)) + " arguments, got " +
                     std::to_string(args.size()));
  if (op == Op::Where) return where(args[0], args[1], args[2]);
  if (auto r = out_of_range_comparison(op, args)) return *r;
  if (op == Op::Cast || op == Op::Copy)
    throw ValueError(std::string(fn) + "() is not a user-level function; use astype");
  // x ** 2 and x ** 0.5 as NumPy's operator does: square and sqrt.
  // Only when the result keeps x's dtype (int8 ** 2.0 is float64 in NumPy).
  if (op == Op::Pow && std::holds_alternative<Array>(args[0])) {
    DType base = result_dtype(args), xt = std::get<Array>(args[0]).dtype();
    if (base == xt && base != DType::Bool) {
      if (is_scalar_value(args[1], 2.0)) return elementwise(Op::Square, {args[0]});
      if (is_scalar_value(args[1], 1.0)) return elementwise(Op::Positive, {args[0]});
      if (is_scalar_value(args[1], 0.5) && is_float(base)) return elementwise(Op::Sqrt, {args[0]});
    }
  }

  DType base = result_dtype(args);
  DType t = base;
  switch (op_family(op)) {
    case OpFamily::Arith:
      if (base == DType::Bool && op == Op::Round) {
        t = DType::F16;  // as NumPy
      } else if (base == DType::Bool && !bool_arith_ok(op)) {
        if (op == Op::Subtract || op == Op::Negative || op == Op::Sign || op == Op::Positive)
          throw TypeError(std::string(fn) + " is not supported for bool operands; use logical_xor / logical_not");
        t = DType::I8;  // NumPy's loops for bool here are the int8 ones
      }
      break;
    case OpFamily::Float: t = float_result(op, args); break;
    case OpFamily::Int:
      if (is_inexact(base))
        throw TypeError(std::string(fn) + " is not supported for " + dtype_name(base) +
                        " operands (integers and bool only)");
      if (base == DType::Bool && (op == Op::LeftShift || op == Op::RightShift)) t = DType::I8;
      break;
    case OpFamily::Logic: t = DType::Bool; break;
    default: break;
  }
  // Refused here, with the operand's dtype, rather than when a kernel is first run.
  if (op_family(op) != OpFamily::Logic && !kernels::lookup(op, t))
    throw TypeError(std::string(fn) + " is not supported for " + dtype_name(t) +
                    (is_complex(t) ? " (real dtypes only)" : ""));
  DType out = op_out_dtype(op, t);

  Shape shape;
  std::vector<NodePtr> inputs;
  for (auto& a : args) {
    NodePtr n = as_node(a, t, fn);
    shape = inputs.empty() ? n->shape() : broadcast_shapes(shape, n->shape());
    inputs.push_back(std::move(n));
  }
  return Array(std::make_shared<ElementwiseNode>(op, t, out, shape, std::move(inputs)));
}

Array where(const Operand& cond, const Operand& x, const Operand& y) {
  DType t = result_dtype({x, y});
  NodePtr c = as_node(cond, DType::Bool, "where");
  NodePtr a = as_node(x, t, "where"), b = as_node(y, t, "where");
  Shape shape = broadcast_shapes(broadcast_shapes(c->shape(), a->shape()), b->shape());
  return Array(std::make_shared<ElementwiseNode>(Op::Where, t, t, shape, std::vector<NodePtr>{c, a, b}));
}

Array clip(const Operand& x, const std::optional<Operand>& lo, const std::optional<Operand>& hi) {
  std::vector<Operand> all{x};
  if (lo) all.push_back(*lo);
  if (hi) all.push_back(*hi);
  DType t = result_dtype(all);
  Operand r = Array(as_node(x, t, "clip"));
  if (lo) r = elementwise(Op::Maximum, {r, Array(as_node(*lo, t, "clip"))});
  if (hi) r = elementwise(Op::Minimum, {r, Array(as_node(*hi, t, "clip"))});
  return std::get<Array>(r);
}

Array Array::astype(DType t) const {
  if (t == dtype()) return *this;
  return Array(cast_node(node_, t));
}

#define B2LAZY_BINOP(sym, op)                                                                \
  Array operator sym(const Array& a, const Array& b) { return elementwise(Op::op, {a, b}); } \
  Array operator sym(const Array& a, Scalar b) { return elementwise(Op::op, {a, b}); }       \
  Array operator sym(Scalar a, const Array& b) { return elementwise(Op::op, {a, b}); }
B2LAZY_BINOP(+, Add)
B2LAZY_BINOP(-, Subtract)
B2LAZY_BINOP(*, Multiply)
B2LAZY_BINOP(/, Divide)
B2LAZY_BINOP(%, Remainder)
B2LAZY_BINOP(<, Less)
B2LAZY_BINOP(<=, LessEqual)
B2LAZY_BINOP(>, Greater)
B2LAZY_BINOP(>=, GreaterEqual)
B2LAZY_BINOP(&, BitwiseAnd)
B2LAZY_BINOP(|, BitwiseOr)
B2LAZY_BINOP(^, BitwiseXor)
#undef B2LAZY_BINOP

Array operator-(const Array& a) { return elementwise(Op::Negative, {a}); }
Array operator~(const Array& a) { return elementwise(Op::BitwiseInvert, {a}); }
Array sin(const Operand& a) { return elementwise(Op::Sin, {a}); }
Array cos(const Operand& a) { return elementwise(Op::Cos, {a}); }
Array exp(const Operand& a) { return elementwise(Op::Exp, {a}); }
Array log(const Operand& a) { return elementwise(Op::Log, {a}); }
Array sqrt(const Operand& a) { return elementwise(Op::Sqrt, {a}); }
Array abs(const Operand& a) { return elementwise(Op::Abs, {a}); }
Array pow(const Operand& a, const Operand& b) { return elementwise(Op::Pow, {a, b}); }
Array maximum(const Operand& a, const Operand& b) { return elementwise(Op::Maximum, {a, b}); }
Array minimum(const Operand& a, const Operand& b) { return elementwise(Op::Minimum, {a, b}); }

}  // namespace b2lazy
