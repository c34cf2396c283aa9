// The values a registry function is called with and returns, and the typed reads its call
// makes of its arguments (each error names the function and the argument). Expression
// strings, the Python package (_core.call) and the command all call functions this way:
// call_function(name, positional, keywords) binds the arguments to the function's
// signature in the registry (b2lazy/functions.hpp), by Python's rules, and runs its row's
// call.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "b2lazy/array.hpp"
#include "b2lazy/functions.hpp"

namespace b2lazy::expr {

struct Value {
  enum class Kind { None, Array, Scalar, String, Tuple, List, Slice, Ellipsis };
  Kind kind = Kind::None;
  Array array;
  Scalar scalar{0};
  std::string str;
  std::vector<Value> items;                  // tuple / list elements
  std::optional<int64_t> start, stop, step;  // slice
  size_t column = 0;

  static Value of_kind(Kind k, size_t column) {
    Value v;
    v.kind = k;
    v.column = column;
    return v;
  }
  static Value of(Array a, size_t column) {
    Value v;
    v.kind = Kind::Array;
    v.array = std::move(a);
    v.column = column;
    return v;
  }
  static Value of(Scalar s, size_t column) {
    Value v;
    v.kind = Kind::Scalar;
    v.scalar = s;
    v.column = column;
    return v;
  }
  bool is_array_like() const { return kind == Kind::Array || kind == Kind::Scalar || is_sequence(); }
  bool is_sequence() const { return kind == Kind::Tuple || kind == Kind::List; }
};

// The arguments of one call, read by name or position with checks.
class Args {
 public:
  Args(std::string fn, std::vector<Value> positional, std::map<std::string, Value> keywords, size_t column,
       Context* ctx)
      : fn_(std::move(fn)), pos_(std::move(positional)), kw_(std::move(keywords)), column_(column), ctx_(ctx) {}

  // Binds the arguments to the function's parameters in the registry (b2lazy/functions.hpp),
  // by Python's rules, defaults filled in; throws TypeError as Python would.
  void bind();
  void bind(const std::vector<Param>& params);

  bool has(const std::string& name) const;  // bound (given or by default), and not None
  const Value& get(const std::string& name) const;
  Array array(const std::string& name) const;  // arrays, scalars and literal lists
  Operand operand(const std::string& name) const;
  std::vector<Array> arrays(const std::string& name) const;  // a list or tuple of arrays
  int64_t integer(const std::string& name) const;
  // An int, one beyond int64 clamped to its range (a diagonal offset: NumPy takes any).
  int64_t clamped_integer(const std::string& name) const;
  std::optional<int64_t> opt_integer(const std::string& name) const;
  std::vector<int64_t> integers(const std::string& name) const;  // an int or a sequence of ints
  std::optional<std::vector<int>> opt_axes(const std::string& name) const;
  // Axes as int, checked: axis=2**32 is out of bounds, not axis 0.
  int axis(const std::string& name) const;
  std::optional<int> opt_axis(const std::string& name) const;
  std::vector<int> axis_list(const std::string& name) const;  // an int or a sequence of ints
  int to_axis(int64_t v, const std::string& name) const;
  bool boolean(const std::string& name) const;  // True or False (not None)
  double number(const std::string& name) const;
  std::optional<DType> opt_dtype(const std::string& name) const;
  Context* ctx() const { return ctx_; }
  const std::string& fn() const { return fn_; }
  size_t column() const { return column_; }
  [[noreturn]] void bad(const std::string& name, const std::string& wanted) const;
  // ValueError: an int argument above int64 (shapes, axes, counts).
  [[noreturn]] void beyond_int64(const std::string& name, const Scalar& s) const;

 private:
  std::string fn_;
  std::vector<Value> pos_;
  std::map<std::string, Value> kw_;
  std::map<std::string, Value> bound_;
  size_t column_;
  Context* ctx_;
};

}  // namespace b2lazy::expr

namespace b2lazy {

// Calls function `name` (or an alias) of the registry: TypeError when the arguments do not
// bind to its signature, ValueError naming close names when there is no such function.
expr::Value call_function(std::string_view name, std::vector<expr::Value> positional,
                          std::map<std::string, expr::Value> keywords, Context* ctx = nullptr);

}  // namespace b2lazy
