// Walks the syntax tree of an expression and builds the lazy Array with the C++ API.
#include <algorithm>
#include <climits>
#include <cmath>
#include <set>
#include <type_traits>

#include "b2lazy/expr.hpp"
#include "expr/ast.hpp"
#include "expr/value.hpp"

namespace b2lazy {

namespace expr {
namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// "; did you mean 'x', 'y'?" for the candidates close to `name`, or "".
std::string close_matches(const std::string& name, const std::vector<std::string>& candidates) {
  std::vector<std::pair<size_t, std::string>> scored;
  const size_t limit = std::max<size_t>(1, name.size() / 3 + 1);
  for (const auto& c : candidates) {
    const size_t d = edit_distance(name, c);
    const bool prefix = name.size() >= 3 && c.compare(0, name.size(), name) == 0;
    if (d <= limit || prefix) scored.push_back({prefix ? std::min<size_t>(d, 1) : d, c});
  }
  std::sort(scored.begin(), scored.end());
  std::string out;
  for (size_t i = 0; i < scored.size() && i < 4; ++i) out += (i ? ", '" : "; did you mean '") + scored[i].second + "'";
  return out.empty() ? out : out + "?";
}

class Evaluator {
 public:
  Evaluator(const std::string& text, const std::map<std::string, Operand>& operands, Context* ctx)
      : text_(text), operands_(operands), ctx_(ctx) {}

  Value eval(const Node& n) { return eval_node(n); }

  // The array an expression's value stands for (a number, a literal list), else TypeError.
  Array result(const Value& v) {
    if (v.kind == Value::Kind::Array) return v.array;
    if (v.kind == Value::Kind::Scalar) return v.scalar.above_int64 ? scalar(v.scalar, DType::U64) : scalar(v.scalar);
    if (v.kind == Value::Kind::List) return guard(v.column, [&] { return literal_array(v, "the expression"); });
    fail<TypeError>("the expression gives a " + describe(v) + ", not an array", std::max<size_t>(v.column, 1));
  }

 private:
  // Errors of a node: the library's message plus where it happened.
  template <class E> [[noreturn]] void fail(const std::string& message, size_t column) const {
    if constexpr (std::is_same_v<E, SyntaxError>) throw E(with_caret(message, text_, column), column);
    else throw E(with_caret(message, text_, column));
  }

  Value eval_node(const Node& n) {
    switch (n.kind) {
      case Node::Kind::Int:
        return Value::of(n.above_int64 ? Scalar::uint64(static_cast<uint64_t>(n.i)) : Scalar(n.i), n.column);
      case Node::Kind::Float: return Value::of(Scalar(n.f), n.column);
      case Node::Kind::Imaginary: return Value::of(Scalar::complex(0.0, n.f), n.column);
      case Node::Kind::Bool: return Value::of(Scalar(n.b), n.column);
      case Node::Kind::None: return Value::of_kind(Value::Kind::None, n.column);
      case Node::Kind::String: {
        Value v = Value::of_kind(Value::Kind::String, n.column);
        v.str = n.text;
        return v;
      }
      case Node::Kind::Ellipsis: return Value::of_kind(Value::Kind::Ellipsis, n.column);
      case Node::Kind::Name: return name(n);
      case Node::Kind::Tuple:
      case Node::Kind::List: {
        Value v = Value::of_kind(n.kind == Node::Kind::Tuple ? Value::Kind::Tuple : Value::Kind::List, n.column);
        for (const auto& e : n.items) v.items.push_back(eval_node(*e));
        return v;
      }
      case Node::Kind::Unary: return unary(n);
      case Node::Kind::Binary: return binary(n);
      case Node::Kind::Compare: return compare(n);
      case Node::Kind::Call: return call(n);
      case Node::Kind::Attribute: return attribute(n);
      case Node::Kind::Subscript: return subscript(n);
      case Node::Kind::Slice: fail<SyntaxError>("a slice is only valid inside [ ]", n.column);
    }
    fail<SyntaxError>("cannot evaluate this", n.column);
  }

  Value name(const Node& n) {
    auto it = operands_.find(n.text);
    if (it != operands_.end()) {  // a number operand stays a (weak) Python number
      if (const Scalar* s = std::get_if<Scalar>(&it->second)) return Value::of(*s, n.column);
      return Value::of(std::get<Array>(it->second), n.column);
    }
    try {  // dtype names stand for themselves: astype(a, float32)
      dtype_from_name(n.text);
      Value v = Value::of_kind(Value::Kind::String, n.column);
      v.str = n.text;
      return v;
    } catch (const Error&) {}
    std::vector<std::string> candidates;
    for (auto& [k, _] : operands_) candidates.push_back(k);
    const bool is_function = find_function(n.text) != nullptr;
    if (is_function) fail<NameError>("'" + n.text + "' is a function: call it, e.g. " + n.text + "(a)", n.column);
    std::string known;
    for (auto& c : candidates) known += (known.empty() ? "" : ", ") + c;
    fail<NameError>("unknown name '" + n.text + "'" + close_matches(n.text, candidates) +
                        (known.empty() ? " (no operands were given)" : " (operands: " + known + ")"),
                    n.column);
  }

  Operand operand(const Value& v, const std::string& what) {
    if (v.kind == Value::Kind::Scalar) return v.scalar;
    if (v.kind == Value::Kind::Array) return v.array;
    if (v.is_sequence()) return guard(v.column, [&] { return literal_array(v, what); });  // the caret at the list
    fail<TypeError>(what + " must be an array or a number, got " + describe(v), v.column);
  }

  // Operators on two Python numbers give a Python number, as in Python (so it stays weak
  // for NumPy 2's promotion: f32 + 2/1 is float32): bools count as ints in arithmetic,
  // ints are exact (a result outside int64 / uint64 raises), floats are C doubles with
  // Python's floor division and modulo. Division by zero, 0 ** -1 and a complex power raise
  // ValueError as Python raises. nullopt: not foldable (float bitwise ops: the elementwise
  // builder names the TypeError).
  static std::optional<Scalar> fold(const std::string& op, const Scalar& a, const Scalar& b, size_t column,
                                    const Evaluator& ev) {
    // Complex numbers: the elementwise builder's 0-d arithmetic (complex128, as Python's).
    if (a.kind == ScalarKind::Complex || b.kind == ScalarKind::Complex) return std::nullopt;
    const bool ints = a.kind != ScalarKind::Float && b.kind != ScalarKind::Float;
    const bool bools = a.kind == ScalarKind::Bool && b.kind == ScalarKind::Bool;
    const __int128 x = wide(a), y = wide(b);
    const double fx = as_double(a), fy = as_double(b);
    auto zero_division = [&]() -> std::optional<Scalar> {
      ev.fail<ValueError>("division by zero (" + op + " of two numbers)", column);
    };
    if (op == "&" || op == "|" || op == "^") {
      if (!ints) return std::nullopt;
      const __int128 r = op == "&" ? (x & y) : op == "|" ? (x | y) : (x ^ y);
      if (bools) return Scalar(r != 0);
      return narrow(r, op, column, ev);
    }
    if (op == "<<" || op == ">>") {
      if (!ints) return std::nullopt;
      if (y < 0) ev.fail<ValueError>("negative shift count", column);
      if (op == ">>") return narrow(y >= 127 ? (x < 0 ? -1 : 0) : (x >> static_cast<int>(y)), op, column, ev);
      if (x == 0) return Scalar(int64_t(0));
      if (y >= 64) ev.fail<ValueError>("integer result out of range of int64 and uint64 (<<)", column);
      return narrow(x * (static_cast<__int128>(1) << static_cast<int>(y)), op, column, ev);
    }
    if (ints && op != "/" && !(op == "**" && y < 0)) {
      if (op == "+") return narrow(x + y, op, column, ev);
      if (op == "-") return narrow(x - y, op, column, ev);
      if (op == "*") return narrow(x * y, op, column, ev);  // |x|, |y| < 2**64: no overflow of __int128
      if (op == "//" || op == "%") {
        if (y == 0) return zero_division();
        __int128 q = x / y, r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) --q, r += y;
        return narrow(op == "//" ? q : r, op, column, ev);
      }
      if (op == "**") {
        __int128 r = 1, base = x;
        for (__int128 e = y; e > 0; e >>= 1) {
          if (e & 1) r = checked_mul(r, base, column, ev);
          if (e > 1) base = checked_mul(base, base, column, ev);
        }
        return narrow(r, op, column, ev);
      }
      return std::nullopt;
    }
    double r = 0;
    if (op == "+") r = fx + fy;
    else if (op == "-") r = fx - fy;
    else if (op == "*") r = fx * fy;
    else if (op == "/") {
      if (fy == 0) return zero_division();
      r = fx / fy;
    } else if (op == "//" || op == "%") {  // CPython's float_divmod
      if (fy == 0) return zero_division();
      double mod = std::fmod(fx, fy), div = (fx - mod) / fy;
      if (mod != 0) {
        if ((fy < 0) != (mod < 0)) mod += fy, div -= 1.0;
      } else {
        mod = std::copysign(0.0, fy);
      }
      double floordiv;
      if (div != 0) {
        floordiv = std::floor(div);
        if (div - floordiv > 0.5) floordiv += 1.0;
      } else {
        floordiv = std::copysign(0.0, fx / fy);
      }
      r = op == "//" ? floordiv : mod;
    } else if (op == "**") {
      if (fx == 0 && fy < 0) return zero_division();
      if (fx < 0 && std::isfinite(fy) && fy != std::floor(fy))
        ev.fail<ValueError>("a negative number to a fractional power is complex (**)", column);
      r = std::pow(fx, fy);
      if (std::isinf(r) && std::isfinite(fx) && std::isfinite(fy))
        ev.fail<ValueError>("float result out of range (**)", column);
    } else {
      return std::nullopt;
    }
    return Scalar(r);
  }

  static std::optional<bool> fold_compare(const std::string& op, const Scalar& a, const Scalar& b) {
    if (a.kind == ScalarKind::Complex || b.kind == ScalarKind::Complex) return std::nullopt;
    if (a.kind != ScalarKind::Float && b.kind != ScalarKind::Float) {
      const __int128 x = wide(a), y = wide(b);
      return op == "<"    ? x < y
             : op == "<=" ? x <= y
             : op == ">"  ? x > y
             : op == ">=" ? x >= y
             : op == "==" ? x == y
                          : x != y;
    }
    const double x = as_double(a), y = as_double(b);
    return op == "<"    ? x < y
           : op == "<=" ? x <= y
           : op == ">"  ? x > y
           : op == ">=" ? x >= y
           : op == "==" ? x == y
                        : x != y;
  }

  static __int128 wide(const Scalar& s) {
    return s.above_int64 ? static_cast<__int128>(static_cast<uint64_t>(s.i)) : static_cast<__int128>(s.i);
  }
  static double as_double(const Scalar& s) {
    return s.kind == ScalarKind::Float ? s.f
           : s.above_int64             ? static_cast<double>(static_cast<uint64_t>(s.i))
                                       : static_cast<double>(s.i);
  }
  // An exact integer result as a Python int scalar (int64, or uint64 above INT64_MAX).
  static Scalar narrow(__int128 r, const std::string& op, size_t column, const Evaluator& ev) {
    if (r >= INT64_MIN && r <= INT64_MAX) return Scalar(static_cast<int64_t>(r));
    if (r > 0 && r <= static_cast<__int128>(UINT64_MAX)) return Scalar::uint64(static_cast<uint64_t>(r));
    ev.fail<ValueError>("integer result out of range of int64 and uint64 (" + op + ")", column);
  }
  static __int128 checked_mul(__int128 a, __int128 b, size_t column, const Evaluator& ev) {
    __int128 r;
    if (__builtin_mul_overflow(a, b, &r) || r > static_cast<__int128>(UINT64_MAX) || r < INT64_MIN)
      ev.fail<ValueError>("integer result out of range of int64 and uint64 (**)", column);
    return r;
  }

  Value unary(const Node& n) {
    Value v = eval_node(*n.items[0]);
    if (v.kind == Value::Kind::Scalar &&
        v.scalar.kind != ScalarKind::Complex) {  // -1, +2.5, ~0: stay Python numbers (bools count as ints)
      const Scalar& s = v.scalar;
      if (s.kind == ScalarKind::Float) {
        if (n.text == "-") return Value::of(Scalar(-s.f), n.column);
        if (n.text == "+") return Value::of(s, n.column);
        // ~2.5: the elementwise builder raises the TypeError
      } else {
        const __int128 x = wide(s);
        return Value::of(narrow(n.text == "-" ? -x : n.text == "+" ? x : -x - 1, n.text, n.column, *this), n.column);
      }
    }
    const Op op = n.text == "-" ? Op::Negative : n.text == "+" ? Op::Positive : Op::BitwiseInvert;
    return Value::of(guard(n.column, [&] { return elementwise(op, {operand(v, "the operand of " + n.text)}); }),
                     n.column);
  }

  Value binary(const Node& n) {
    Value a = eval_node(*n.items[0]), b = eval_node(*n.items[1]);
    if (a.kind == Value::Kind::Scalar && b.kind == Value::Kind::Scalar)
      if (auto s = fold(n.text, a.scalar, b.scalar, n.column, *this)) return Value::of(*s, n.column);
    if (n.text == "@") {
      const std::string what = "an operand of @";
      return Value::of(guard(n.column,
                             [&] {
                               return matmul(guard(a.column, [&] { return literal_array(a, what); }),
                                             guard(b.column, [&] { return literal_array(b, what); }));
                             }),
                       n.column);
    }
    static const std::map<std::string, Op> ops = {
        {"+", Op::Add},          {"-", Op::Subtract},   {"*", Op::Multiply},   {"/", Op::Divide},
        {"//", Op::FloorDivide}, {"%", Op::Remainder},  {"**", Op::Pow},       {"&", Op::BitwiseAnd},
        {"|", Op::BitwiseOr},    {"^", Op::BitwiseXor}, {"<<", Op::LeftShift}, {">>", Op::RightShift}};
    const Op op = ops.at(n.text);
    const std::string what = "an operand of " + n.text;
    return Value::of(guard(n.column, [&] { return elementwise(op, {operand(a, what), operand(b, what)}); }), n.column);
  }

  Value compare(const Node& n) {
    static const std::map<std::string, Op> ops = {{"<", Op::Less},    {"<=", Op::LessEqual},
                                                  {">", Op::Greater}, {">=", Op::GreaterEqual},
                                                  {"==", Op::Equal},  {"!=", Op::NotEqual}};
    // a < b < c is (a < b) & (b < c), as in Python.
    std::vector<Value> v;
    for (const auto& e : n.items) v.push_back(eval_node(*e));
    // Two Python numbers compare to a Python bool (weak, as in Python).
    std::optional<Array> result;
    bool scalars = true;
    for (size_t k = 0; k < n.ops.size(); ++k) {
      if (v[k].kind == Value::Kind::Scalar && v[k + 1].kind == Value::Kind::Scalar) {
        if (auto r = fold_compare(n.ops[k], v[k].scalar, v[k + 1].scalar)) {  // (complex: not folded)
          scalars = scalars && *r;
          continue;
        }
      }
      const std::string what = "an operand of " + n.ops[k];
      Array c = guard(n.column, [&] {
        return elementwise(ops.at(n.ops[k]), {operand(v[k], what), operand(v[k + 1], what)});
      });
      result = result ? (*result & c) : c;
    }
    if (!result) return Value::of(Scalar(scalars), n.column);
    if (!scalars)
      return Value::of(guard(n.column,
                             [&] {
                               return elementwise(Op::BitwiseAnd, {*result, Scalar(false)});
                             }),
                       n.column);
    return Value::of(*result, n.column);
  }

  // Runs a builder; its error gets the expression and a caret at the node.
  template <class F> auto guard(size_t column, F f) -> decltype(f()) {
    try {
      return f();
    } catch (const SyntaxError&) {
      throw;
    } catch (const NameError&) {
      throw;
    } catch (const Cancelled&) {  // a mask's counting pass was stopped: not the expression's fault
      throw;
    } catch (const Error& e) {
      const std::string m = e.what();
      if (m.find(" at column ") != std::string::npos) throw;  // already placed
      if (dynamic_cast<const IndexError*>(&e)) fail<IndexError>(m, column);
      if (dynamic_cast<const AxisError*>(&e)) fail<AxisError>(m, column);
      if (dynamic_cast<const TypeError*>(&e)) fail<TypeError>(m, column);
      if (dynamic_cast<const IOError*>(&e)) fail<IOError>(m, column);
      fail<ValueError>(m, column);
    }
  }

  Value invoke(const std::string& fname, std::vector<Value> pos, std::map<std::string, Value> kw, size_t column) {
    const FunctionInfo* f = find_function(fname);
    if (f == nullptr)
      fail<NameError>("unknown function '" + fname + "'" + close_matches(fname, function_names()), column);
    return guard(column, [&] {
      Args args(fname, std::move(pos), std::move(kw), column, ctx_);
      return f->call(args);
    });
  }

  void arguments(const Node& n, std::vector<Value>& pos, std::map<std::string, Value>& kw) {
    for (const Arg& a : n.args) {
      if (a.keyword.empty()) pos.push_back(eval_node(*a.value));
      else kw[a.keyword] = eval_node(*a.value);
    }
  }

  Value call(const Node& n) {
    const Node& callee = *n.items[0];
    std::vector<Value> pos;
    std::map<std::string, Value> kw;
    if (callee.kind == Node::Kind::Name) {
      if (operands_.count(callee.text))
        fail<TypeError>("'" + callee.text + "' is an operand (an array), not a function", callee.column);
      arguments(n, pos, kw);
      return invoke(callee.text, std::move(pos), std::move(kw), callee.column);
    }
    if (callee.kind == Node::Kind::Attribute) {  // a method: the function with self first
      const std::string& m = callee.text;
      Value self = eval_node(*callee.items[0]);
      if (self.kind != Value::Kind::Array)
        fail<TypeError>(describe(self) + " has no method '" + m + "'", callee.column);
      if (!is_method(m)) {
        std::vector<std::string> names;
        for (const std::string& k : function_names())
          if (is_method(k)) names.push_back(k);
        fail<NameError>("arrays have no method '" + m + "'" + close_matches(m, names), callee.column);
      }
      pos.push_back(std::move(self));
      arguments(n, pos, kw);
      // a.reshape(2, 3) and a.transpose(1, 0) take the shape / axes unpacked, as NumPy.
      if ((m == "reshape" || m == "transpose") && pos.size() > 2) {
        Value t = Value::of_kind(Value::Kind::Tuple, pos[1].column);
        t.items.assign(pos.begin() + 1, pos.end());
        pos.resize(1);
        pos.push_back(std::move(t));
      }
      return invoke(m, std::move(pos), std::move(kw), callee.column);
    }
    fail<TypeError>("only functions and methods can be called, not " + describe(eval_node(callee)),
                    static_cast<size_t>(n.i));
  }

  Value attribute(const Node& n) {
    Value self = eval_node(*n.items[0]);
    if (self.kind != Value::Kind::Array)
      fail<TypeError>(describe(self) + " has no attribute '" + n.text + "'", n.column);
    if (n.text == "T") {
      std::vector<int> axes;
      for (int d = static_cast<int>(self.array.ndim()); d-- > 0;) axes.push_back(d);
      return Value::of(guard(n.column, [&] { return permute_dims(self.array, axes); }), n.column);
    }
    if (n.text == "mT") return Value::of(guard(n.column, [&] { return matrix_transpose(self.array); }), n.column);
    if (is_method(n.text)) fail<TypeError>("'" + n.text + "' is a method: call it, e.g. a." + n.text + "()", n.column);
    fail<NameError>("arrays have no attribute '" + n.text + "'" + close_matches(n.text, {"T", "mT"}), n.column);
  }

  Value subscript(const Node& n) {
    Value target = eval_node(*n.items[0]);
    if (target.kind == Value::Kind::Tuple) return tuple_item(target, n);  // nonzero(m)[0]
    if (target.kind != Value::Kind::Array) fail<TypeError>(describe(target) + " cannot be indexed", n.column);
    // The entries: a slice node, or a value. A whole key that is a tuple is the entries
    // (x[(1, 2)] is x[1, 2], x[nonzero(m)] as NumPy's); a tuple among entries is a sequence.
    std::vector<std::pair<const Node*, Value>> entries;
    for (size_t k = 1; k < n.items.size(); ++k) {
      const Node& e = *n.items[k];
      if (e.kind == Node::Kind::Slice) entries.push_back({&e, Value()});
      else entries.push_back({nullptr, eval_node(e)});
    }
    if (entries.size() == 1 && !entries[0].first && entries[0].second.kind == Value::Kind::Tuple) {
      std::vector<Value> items = std::move(entries[0].second.items);
      entries.clear();
      for (Value& v : items) entries.push_back({nullptr, std::move(v)});
    }
    std::vector<IndexItem> key;
    std::optional<Array> lazy_mask;
    for (size_t k = 0; k < entries.size(); ++k) {
      const std::string where = "index entry " + std::to_string(k);
      if (const Node* e = entries[k].first) {
        std::optional<int64_t> part[3];
        for (int p = 0; p < 3; ++p) {
          if (!e->items[static_cast<size_t>(p)]) continue;
          Value v = eval_node(*e->items[static_cast<size_t>(p)]);
          if (v.kind == Value::Kind::None) continue;
          if (v.kind != Value::Kind::Scalar || v.scalar.kind != ScalarKind::Int)
            fail<TypeError>(where + ": slice indices must be integers or None, got " + describe(v), v.column);
          // above INT64_MAX: as INT64_MAX (slices clamp, as NumPy's)
          part[p] = v.scalar.above_int64 ? INT64_MAX : v.scalar.i;
        }
        key.push_back(Index::slice(part[0], part[1], part[2]));
        continue;
      }
      const Value& v = entries[k].second;
      switch (v.kind) {
        case Value::Kind::None: key.push_back(Index::newaxis()); break;
        case Value::Kind::Ellipsis: key.push_back(Index::ellipsis()); break;
        case Value::Kind::Scalar:
          if (v.scalar.kind == ScalarKind::Bool) {  // a new axis of length 1 or 0, as NumPy
            key.push_back(IndexArray{{v.scalar.i != 0 ? 1 : 0}, {}, true, {}});
            break;
          }
          if (v.scalar.kind != ScalarKind::Int)
            fail<TypeError>(where +
                                ": only integers, slices (:), ..., None, booleans and integer or boolean arrays "
                                "are valid indices, got " +
                                describe(v),
                            v.column);
          if (v.scalar.above_int64)
            fail<IndexError>(
                where + ": index " + std::to_string(static_cast<uint64_t>(v.scalar.i)) + " is out of bounds", v.column);
          key.push_back(Index::at(v.scalar.i));
          break;
        case Value::Kind::Array:
          if (entries.size() == 1 && v.array.dtype() == DType::Bool && v.array.shape() == target.array.shape() &&
              target.array.ndim() > 0) {
            lazy_mask = v.array;  // a[a > 0]: counted, then pulled lazily
            break;
          }
          [[fallthrough]];
        case Value::Kind::List:
        case Value::Kind::Tuple:
          key.push_back(guard(v.column, [&] { return IndexItem(index_array(v, ctx_, where)); }));
          break;
        default: fail<TypeError>(where + ": not a valid index: " + describe(v), v.column);
      }
    }
    if (lazy_mask)
      return Value::of(guard(n.column, [&] { return mask_select(target.array, *lazy_mask, ctx_); }), n.column);
    return Value::of(guard(n.column, [&] { return getitem(target.array, key, ctx_); }), n.column);
  }

  // t[k] of a tuple value (what nonzero / where(cond) give): one integer.
  Value tuple_item(const Value& t, const Node& n) {
    if (n.items.size() != 2 || n.items[1]->kind == Node::Kind::Slice)
      fail<TypeError>("a tuple takes one integer index, e.g. nonzero(a)[0]", n.column);
    const Value k = eval_node(*n.items[1]);
    if (k.kind != Value::Kind::Scalar || k.scalar.kind != ScalarKind::Int)
      fail<TypeError>("tuple indices must be integers, got " + describe(k), k.column);
    const int64_t size = static_cast<int64_t>(t.items.size());
    const int64_t i = k.scalar.above_int64 ? INT64_MAX : k.scalar.i < 0 ? k.scalar.i + size : k.scalar.i;
    if (i < 0 || i >= size)
      fail<IndexError>("tuple index " + describe(k).substr(4) + " out of range for a " + describe(t), k.column);
    return t.items[static_cast<size_t>(i)];
  }

  const std::string& text_;
  const std::map<std::string, Operand>& operands_;
  Context* ctx_;
};

void collect_names(const Node& n, std::vector<std::string>& out, bool callee) {
  if (n.kind == Node::Kind::Name && !callee) {
    bool dtype = false;
    try {
      dtype_from_name(n.text);
      dtype = true;
    } catch (const Error&) {}
    if (!dtype && std::find(out.begin(), out.end(), n.text) == out.end()) out.push_back(n.text);
  }
  for (size_t k = 0; k < n.items.size(); ++k)
    if (n.items[k])
      collect_names(*n.items[k], out, n.kind == Node::Kind::Call && k == 0 && n.items[k]->kind == Node::Kind::Name);
  for (const Arg& a : n.args) collect_names(*a.value, out, false);
}

}  // namespace
}  // namespace expr

Array evaluate(const std::string& expression, const std::map<std::string, Operand>& operands, Context* ctx) {
  expr::NodeP tree = expr::parse(expression);
  expr::Evaluator ev(expression, operands, ctx);
  return ev.result(ev.eval(*tree));
}

std::vector<std::string> expression_names(const std::string& expression) {
  expr::NodeP tree = expr::parse(expression);
  std::vector<std::string> out;
  expr::collect_names(*tree, out, false);
  return out;
}

std::vector<std::string> expression_functions() { return function_names(); }

}  // namespace b2lazy
