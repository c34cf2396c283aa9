// The Array API functions of issue #15 in expression strings, with the Python package's
// names and parameters (device= is accepted as "cpu" or None, as there).
#include "b2lazy/error.hpp"
#include "expr/value.hpp"

namespace b2lazy::expr {

namespace {
Value arr(Array a, const Args& x) { return Value::of(std::move(a), x.column()); }

Value tuple(const std::vector<Array>& arrays, const Args& x) {
  Value t = Value::of_kind(Value::Kind::Tuple, x.column());
  for (const Array& a : arrays) t.items.push_back(arr(a, x));
  return t;
}

void check_device(const Args& x) {
  if (!x.has("device")) return;
  const Value& v = x.get("device");
  if (v.kind != Value::Kind::String || v.str != "cpu") x.bad("device", "'cpu' or None (b2lazy has one device)");
}

// empty_like / zeros_like / ones_like / full_like: x's shape, x's dtype unless given.
Value like(Args& x, Scalar value) {
  check_device(x);
  Array a = x.array("x");
  return arr(full(a.shape(), value, x.opt_dtype("dtype").value_or(a.dtype())), x);
}
}  // namespace

void namespace_functions(std::map<std::string, Function>& m) {
  m["empty"] = [](Args& x) {
    x.signature({"shape", "dtype", "device"}, 1);
    check_device(x);
    return arr(zeros(x.integers("shape"), x.opt_dtype("dtype").value_or(DType::F64)), x);
  };
  m["empty_like"] = m["zeros_like"] = [](Args& x) {
    x.signature({"x", "dtype", "device"}, 1);
    return like(x, Scalar(0));
  };
  m["ones_like"] = [](Args& x) {
    x.signature({"x", "dtype", "device"}, 1);
    return like(x, Scalar(1));
  };
  m["full_like"] = [](Args& x) {
    x.signature({"x", "fill_value", "dtype", "device"}, 2);
    const Value& v = x.get("fill_value");
    if (v.kind != Value::Kind::Scalar) x.bad("fill_value", "a number");
    return like(x, v.scalar);
  };
  m["eye"] = [](Args& x) {
    x.signature({"n_rows", "n_cols", "k", "dtype", "device"}, 1);
    check_device(x);
    const int64_t rows = x.integer("n_rows");
    return arr(eye(rows, x.has("n_cols") ? x.integer("n_cols") : rows, x.has("k") ? x.integer("k") : 0,
                   x.opt_dtype("dtype").value_or(DType::F64)),
               x);
  };
  m["tril"] = [](Args& x) {
    x.signature({"x", "k"}, 1);
    return arr(tril(x.array("x"), x.has("k") ? x.integer("k") : 0), x);
  };
  m["triu"] = [](Args& x) {
    x.signature({"x", "k"}, 1);
    return arr(triu(x.array("x"), x.has("k") ? x.integer("k") : 0), x);
  };
  // diagonal and trace of the last two axes (the Array API's linalg ones); the Python
  // package also takes axis1 / axis2.
  m["diagonal"] = [](Args& x) {
    x.signature({"x", "offset"}, 1);
    return arr(diagonal(x.array("x"), x.has("offset") ? x.integer("offset") : 0), x);
  };
  m["trace"] = [](Args& x) {
    x.signature({"x", "offset", "dtype"}, 1);
    return arr(trace(x.array("x"), x.has("offset") ? x.integer("offset") : 0, x.opt_dtype("dtype")), x);
  };
  m["tile"] = [](Args& x) {
    x.signature({"x", "repetitions"}, 2);
    return arr(tile(x.array("x"), x.integers("repetitions")), x);
  };
  m["repeat"] = [](Args& x) {
    x.signature({"x", "repeats", "axis"}, 2);
    const Value& r = x.get("repeats");
    if (r.kind == Value::Kind::Scalar) return arr(repeat(x.array("x"), x.integer("repeats"), x.opt_axis("axis")), x);
    const IndexArray counts = index_array(r, x.ctx(), x.fn() + "(): argument 'repeats'");
    if (counts.boolean || !counts.invalid_dtype.empty()) x.bad("repeats", "an integer or integers");
    return arr(repeat(x.array("x"), counts.values, x.opt_axis("axis")), x);
  };
  m["diff"] = [](Args& x) {
    x.signature({"x", "axis", "n", "prepend", "append"}, 1);
    std::optional<Array> pre, app;
    if (x.has("prepend")) pre = x.array("prepend");
    if (x.has("append")) app = x.array("append");
    return arr(diff(x.array("x"), x.opt_axis("axis").value_or(-1), x.has("n") ? x.integer("n") : 1, pre, app), x);
  };
  m["meshgrid"] = [](Args& x) {
    x.star_signature("arrays", {"indexing"});
    bool xy = true;
    if (x.has("indexing")) {
      const Value& v = x.get("indexing");
      if (v.kind != Value::Kind::String || (v.str != "xy" && v.str != "ij")) x.bad("indexing", "'xy' or 'ij'");
      xy = v.str == "xy";
    }
    return tuple(meshgrid(x.arrays("arrays"), xy), x);
  };
  m["broadcast_arrays"] = [](Args& x) {
    x.star_signature("arrays", {});
    return tuple(broadcast_arrays(x.arrays("arrays")), x);
  };
  m["unstack"] = [](Args& x) {
    x.signature({"x", "axis"}, 1);
    return tuple(unstack(x.array("x"), x.opt_axis("axis").value_or(0)), x);
  };
}

}  // namespace b2lazy::expr
