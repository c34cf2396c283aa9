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
  Evaluator(const std::string& text, const std::map<std::string, Array>& operands, Context* ctx)
      : text_(text), operands_(operands), ctx_(ctx) {}

  Value eval(const Node& n) { return eval_node(n); }

 private:
  // Errors of a node: the library's message plus where it happened.
  template <class E>
  [[noreturn]] void fail(const std::string& message, size_t column) const {
    if constexpr (std::is_same_v<E, SyntaxError>) throw E(with_caret(message, text_, column), column);
    else throw E(with_caret(message, text_, column));
  }

  Value eval_node(const Node& n) {
    switch (n.kind) {
      case Node::Kind::Int: return Value::of(Scalar(n.i), n.column);
      case Node::Kind::Float: return Value::of(Scalar(n.f), n.column);
      case Node::Kind::Bool: return Value::of(Scalar(n.b), n.column);
      case Node::Kind::None: {
        Value v;
        v.column = n.column;
        return v;
      }
      case Node::Kind::String: {
        Value v;
        v.kind = Value::Kind::String;
        v.str = n.text;
        v.column = n.column;
        return v;
      }
      case Node::Kind::Ellipsis: {
        Value v;
        v.kind = Value::Kind::Ellipsis;
        v.column = n.column;
        return v;
      }
      case Node::Kind::Name: return name(n);
      case Node::Kind::Tuple:
      case Node::Kind::List: {
        Value v;
        v.kind = n.kind == Node::Kind::Tuple ? Value::Kind::Tuple : Value::Kind::List;
        v.column = n.column;
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
    if (it != operands_.end()) return Value::of(it->second, n.column);
    try {  // dtype names stand for themselves: astype(a, float32)
      dtype_from_name(n.text);
      Value v;
      v.kind = Value::Kind::String;
      v.str = n.text;
      v.column = n.column;
      return v;
    } catch (const Error&) {
    }
    std::vector<std::string> candidates;
    for (auto& [k, _] : operands_) candidates.push_back(k);
    const bool is_function = functions().count(n.text) > 0;
    if (is_function)
      fail<NameError>("'" + n.text + "' is a function: call it, e.g. " + n.text + "(a)", n.column);
    std::string known;
    for (auto& c : candidates) known += (known.empty() ? "" : ", ") + c;
    fail<NameError>("unknown name '" + n.text + "'" + close_matches(n.text, candidates) +
                        (known.empty() ? " (no operands were given)" : " (operands: " + known + ")"),
                    n.column);
  }

  Operand operand(const Value& v, const std::string& what) {
    if (v.kind == Value::Kind::Scalar) return v.scalar;
    if (v.kind == Value::Kind::Array) return v.array;
    if (v.is_sequence()) return literal_array(v, what);
    fail<TypeError>(what + " must be an array or a number, got " + describe(v), v.column);
  }

  // Integer arithmetic of two Python ints stays exact (axis=-1, shapes like 2*3).
  static std::optional<Scalar> fold(const std::string& op, const Scalar& a, const Scalar& b) {
    if (a.kind != ScalarKind::Int || b.kind != ScalarKind::Int) return std::nullopt;
    int64_t r = 0;  // on overflow, left to int64 arrays (which wrap, as NumPy's)
    if (op == "+" && !__builtin_add_overflow(a.i, b.i, &r)) return Scalar(r);
    if (op == "-" && !__builtin_sub_overflow(a.i, b.i, &r)) return Scalar(r);
    if (op == "*" && !__builtin_mul_overflow(a.i, b.i, &r)) return Scalar(r);
    if (op == "//" && b.i != 0 && !(a.i == INT64_MIN && b.i == -1))
      return Scalar(a.i / b.i - ((a.i % b.i != 0) && ((a.i < 0) != (b.i < 0))));
    return std::nullopt;
  }

  Value unary(const Node& n) {
    Value v = eval_node(*n.items[0]);
    if (v.kind == Value::Kind::Scalar && n.text != "~") {  // -1, +2.5: stay Python numbers
      Scalar s = v.scalar;
      if (n.text == "-") {
        if (s.kind == ScalarKind::Float) s.f = -s.f;
        else s = Scalar(static_cast<int64_t>(0ULL - static_cast<uint64_t>(s.i)));  // wraps, no UB
      }
      return Value::of(s, n.column);
    }
    const Op op = n.text == "-" ? Op::Negative : n.text == "+" ? Op::Positive : Op::BitwiseInvert;
    return Value::of(guard(n.column, [&] { return elementwise(op, {operand(v, "the operand of " + n.text)}); }), n.column);
  }

  Value binary(const Node& n) {
    Value a = eval_node(*n.items[0]), b = eval_node(*n.items[1]);
    if (a.kind == Value::Kind::Scalar && b.kind == Value::Kind::Scalar)
      if (auto s = fold(n.text, a.scalar, b.scalar)) return Value::of(*s, n.column);
    if (n.text == "@") {
      const std::string what = "an operand of @";
      return Value::of(guard(n.column, [&] {
                         return matmul(literal_array(a, what), literal_array(b, what));
                       }),
                       n.column);
    }
    static const std::map<std::string, Op> ops = {
        {"+", Op::Add},          {"-", Op::Subtract},  {"*", Op::Multiply},        {"/", Op::Divide},
        {"//", Op::FloorDivide}, {"%", Op::Remainder}, {"**", Op::Pow},            {"&", Op::BitwiseAnd},
        {"|", Op::BitwiseOr},    {"^", Op::BitwiseXor}, {"<<", Op::LeftShift},     {">>", Op::RightShift}};
    const Op op = ops.at(n.text);
    const std::string what = "an operand of " + n.text;
    return Value::of(guard(n.column, [&] { return elementwise(op, {operand(a, what), operand(b, what)}); }), n.column);
  }

  Value compare(const Node& n) {
    static const std::map<std::string, Op> ops = {{"<", Op::Less},     {"<=", Op::LessEqual}, {">", Op::Greater},
                                                  {">=", Op::GreaterEqual}, {"==", Op::Equal}, {"!=", Op::NotEqual}};
    // a < b < c is (a < b) & (b < c), as in Python.
    std::vector<Value> v;
    for (const auto& e : n.items) v.push_back(eval_node(*e));
    std::optional<Array> result;
    for (size_t k = 0; k < n.ops.size(); ++k) {
      const std::string what = "an operand of " + n.ops[k];
      Array c = guard(n.column, [&] {
        return elementwise(ops.at(n.ops[k]), {operand(v[k], what), operand(v[k + 1], what)});
      });
      result = result ? (*result & c) : c;
    }
    return Value::of(*result, n.column);
  }

  // Runs a builder; its error gets the expression and a caret at the node.
  template <class F>
  auto guard(size_t column, F f) -> decltype(f()) {
    try {
      return f();
    } catch (const SyntaxError&) {
      throw;
    } catch (const NameError&) {
      throw;
    } catch (const Error& e) {
      const std::string m = e.what();
      if (m.find(" at column ") != std::string::npos) throw;  // already placed
      if (dynamic_cast<const IndexError*>(&e)) fail<IndexError>(m, column);
      if (dynamic_cast<const TypeError*>(&e)) fail<TypeError>(m, column);
      if (dynamic_cast<const IOError*>(&e)) fail<IOError>(m, column);
      fail<ValueError>(m, column);
    }
  }

  Value invoke(const std::string& fname, std::vector<Value> pos, std::map<std::string, Value> kw, size_t column) {
    auto it = functions().find(fname);
    if (it == functions().end()) {
      std::vector<std::string> names;
      for (auto& [k, _] : functions()) names.push_back(k);
      fail<NameError>("unknown function '" + fname + "'" + close_matches(fname, names), column);
    }
    return guard(column, [&] {
      Args args(fname, std::move(pos), std::move(kw), column, ctx_);
      return it->second(args);
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
      arguments(n, pos, kw);
      return invoke(callee.text, std::move(pos), std::move(kw), callee.column);
    }
    if (callee.kind == Node::Kind::Attribute) {  // a method: the function with self first
      const std::string& m = callee.text;
      Value self = eval_node(*callee.items[0]);
      if (self.kind != Value::Kind::Array) fail<TypeError>(describe(self) + " has no method '" + m + "'", callee.column);
      if (!is_method(m)) {
        std::vector<std::string> names;
        for (auto& [k, _] : functions())
          if (is_method(k)) names.push_back(k);
        fail<NameError>("arrays have no method '" + m + "'" + close_matches(m, names), callee.column);
      }
      pos.push_back(std::move(self));
      arguments(n, pos, kw);
      // a.reshape(2, 3) and a.transpose(1, 0) take the shape / axes unpacked, as NumPy.
      if ((m == "reshape" || m == "transpose") && pos.size() > 2) {
        Value t;
        t.kind = Value::Kind::Tuple;
        t.column = pos[1].column;
        t.items.assign(pos.begin() + 1, pos.end());
        pos.resize(1);
        pos.push_back(std::move(t));
      }
      return invoke(m, std::move(pos), std::move(kw), callee.column);
    }
    fail<TypeError>("only functions and methods can be called", n.column);
  }

  Value attribute(const Node& n) {
    Value self = eval_node(*n.items[0]);
    if (self.kind != Value::Kind::Array) fail<TypeError>(describe(self) + " has no attribute '" + n.text + "'", n.column);
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
    if (target.kind != Value::Kind::Array) fail<TypeError>(describe(target) + " cannot be indexed", n.column);
    std::vector<IndexItem> key;
    std::optional<Array> lazy_mask;
    for (size_t k = 1; k < n.items.size(); ++k) {
      const Node& e = *n.items[k];
      const std::string where = "index entry " + std::to_string(k - 1);
      if (e.kind == Node::Kind::Slice) {
        std::optional<int64_t> part[3];
        for (int p = 0; p < 3; ++p) {
          if (!e.items[static_cast<size_t>(p)]) continue;
          Value v = eval_node(*e.items[static_cast<size_t>(p)]);
          if (v.kind == Value::Kind::None) continue;
          if (v.kind != Value::Kind::Scalar || v.scalar.kind != ScalarKind::Int)
            fail<TypeError>(where + ": slice indices must be integers or None, got " + describe(v), v.column);
          part[p] = v.scalar.i;
        }
        key.push_back(Index::slice(part[0], part[1], part[2]));
        continue;
      }
      Value v = eval_node(e);
      switch (v.kind) {
        case Value::Kind::None: key.push_back(Index::newaxis()); break;
        case Value::Kind::Ellipsis: key.push_back(Index::ellipsis()); break;
        case Value::Kind::Scalar:
          if (v.scalar.kind != ScalarKind::Int)
            fail<TypeError>(where + ": only integers, slices (:), ..., None and integer or boolean arrays are "
                                "valid indices, got " + describe(v),
                            v.column);
          key.push_back(Index::at(v.scalar.i));
          break;
        case Value::Kind::Array:
          if (n.items.size() == 2 && v.array.dtype() == DType::Bool && v.array.shape() == target.array.shape() &&
              target.array.ndim() > 0) {
            lazy_mask = v.array;  // a[a > 0]: counted, then pulled lazily
            break;
          }
          [[fallthrough]];
        case Value::Kind::List:
        case Value::Kind::Tuple:
          key.push_back(guard(v.column, [&] { return IndexItem(index_array(v, ctx_, where)); }));
          break;
        default:
          fail<TypeError>(where + ": not a valid index: " + describe(v), v.column);
      }
    }
    if (lazy_mask) return Value::of(guard(n.column, [&] { return mask_select(target.array, *lazy_mask, ctx_); }), n.column);
    return Value::of(guard(n.column, [&] { return getitem(target.array, key, ctx_); }), n.column);
  }

  const std::string& text_;
  const std::map<std::string, Array>& operands_;
  Context* ctx_;
};

void collect_names(const Node& n, std::vector<std::string>& out, bool callee) {
  if (n.kind == Node::Kind::Name && !callee) {
    bool dtype = false;
    try {
      dtype_from_name(n.text);
      dtype = true;
    } catch (const Error&) {
    }
    if (!dtype && std::find(out.begin(), out.end(), n.text) == out.end()) out.push_back(n.text);
  }
  for (size_t k = 0; k < n.items.size(); ++k)
    if (n.items[k]) collect_names(*n.items[k], out, n.kind == Node::Kind::Call && k == 0 && n.items[k]->kind == Node::Kind::Name);
  for (const Arg& a : n.args) collect_names(*a.value, out, false);
}

}  // namespace
}  // namespace expr

Array evaluate(const std::string& expression, const std::map<std::string, Array>& operands, Context* ctx) {
  expr::NodeP tree = expr::parse(expression);
  expr::Evaluator ev(expression, operands, ctx);
  expr::Value v = ev.eval(*tree);
  if (v.kind == expr::Value::Kind::Array) return v.array;
  if (v.kind == expr::Value::Kind::Scalar) return scalar(v.scalar);
  if (v.is_sequence() && v.kind == expr::Value::Kind::List) return expr::literal_array(v, "the expression");
  throw TypeError(expr::with_caret("the expression gives a " + expr::describe(v) + ", not an array", expression, 1));
}

std::vector<std::string> expression_names(const std::string& expression) {
  expr::NodeP tree = expr::parse(expression);
  std::vector<std::string> out;
  expr::collect_names(*tree, out, false);
  return out;
}

std::vector<std::string> expression_functions() {
  std::vector<std::string> out;
  for (auto& [k, _] : expr::functions()) out.push_back(k);
  return out;
}

}  // namespace b2lazy
