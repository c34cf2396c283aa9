// The functions an expression string can call: the same names and parameters as the
// Python package (NumPy / Array API spellings), each built with the C++ API.
#include <set>

#include "b2lazy/error.hpp"
#include "expr/value.hpp"

namespace b2lazy::expr {

namespace {
using Map = std::map<std::string, Function>;

Value arr(Array a, const Args& x) { return Value::of(std::move(a), x.column()); }

// nonzero(c) and where(c): a tuple of the coordinate arrays.
Value nonzero_tuple(const Array& c, const Args& x) {
  Value t = Value::of_kind(Value::Kind::Tuple, x.column());
  for (Array& a : nonzero(c, x.ctx())) t.items.push_back(arr(a, x));
  return t;
}

void elementwise_functions(Map& m) {
  for (int i = 0; i < static_cast<int>(Op::Count_); ++i) {
    const Op op = static_cast<Op>(i);
    if (op == Op::Cast || op == Op::Copy || op == Op::Where) continue;
    const int arity = op_arity(op);
    m[op_name(op)] = [op, arity](Args& x) {
      static const std::vector<std::string> names = {"x1", "x2"};
      x.signature(arity == 1 ? std::vector<std::string>{"x"} : names, static_cast<size_t>(arity));
      std::vector<Operand> ops;
      if (arity == 1) ops.push_back(x.operand("x"));
      else ops = {x.operand("x1"), x.operand("x2")};
      return arr(elementwise(op, ops), x);
    };
  }
  for (const auto& [alias, name] : op_aliases()) m[alias] = m.at(name);
  m["where"] = [](Args& x) {
    x.signature({"condition", "x", "y"}, 1);
    if (!x.has("x") && !x.has("y")) {
      return nonzero_tuple(x.array("condition"), x);
    }
    if (!x.has("x") || !x.has("y")) throw ValueError("where(): give both x and y, or neither");
    return arr(where(x.operand("condition"), x.operand("x"), x.operand("y")), x);
  };
  m["clip"] = [](Args& x) {
    x.signature({"x", "min", "max"}, 1);
    std::optional<Operand> lo, hi;
    if (x.has("min")) lo = x.operand("min");
    if (x.has("max")) hi = x.operand("max");
    return arr(clip(x.operand("x"), lo, hi), x);
  };
  // No complex dtypes: real / conj are the array, imag its zeros (as the Python package's).
  m["real"] = m["conj"] = m["conjugate"] = [](Args& x) {
    x.signature({"x"}, 1);
    return arr(x.array("x"), x);
  };
  m["imag"] = [](Args& x) {
    x.signature({"x"}, 1);
    Array a = x.array("x");
    return arr(zeros(a.shape(), a.dtype()), x);
  };
  m["astype"] = [](Args& x) {
    x.signature({"x", "dtype"}, 2);
    return arr(x.array("x").astype(*x.opt_dtype("dtype")), x);
  };
}

void reduction_functions(Map& m) {
  // The registry's reductions, and NumPy's aliases amin / amax.
  std::vector<std::pair<std::string, const ReductionInfo*>> reds;
  for (const ReductionInfo& info : reductions()) reds.emplace_back(info.name, &info);
  reds.emplace_back("amin", &reduction_info(Reduction::Min));
  reds.emplace_back("amax", &reduction_info(Reduction::Max));
  for (const auto& entry : reds) {
    const ReductionInfo* info = entry.second;  // (clang 14 cannot capture a structured binding)
    m[entry.first] = [info](Args& x) {
      const Reduction r = info->r;
      const bool typed = info->takes_dtype, spread = info->takes_correction;
      std::vector<std::string> names = {"x", "axis", "keepdims"};
      if (typed) names.push_back("dtype");
      if (spread) names.insert(names.end(), {"correction", "ddof"});
      x.signature(names, 1);
      ReduceOptions o;
      o.axis = x.opt_axes("axis");
      o.keepdims = x.boolean("keepdims", false);
      if (typed) o.dtype = x.opt_dtype("dtype");
      if (spread && x.has("correction") && x.has("ddof"))
        throw ValueError(x.fn() + "(): give correction or ddof, not both");
      if (spread) o.correction = x.has("correction") ? x.number("correction") : x.has("ddof") ? x.number("ddof") : 0;
      return arr(reduce(r, x.array("x"), o), x);
    };
  }
  // Holistic reductions: median(x, axis, keepdims), quantile(x, q, axis, method, keepdims),
  // percentile likewise (NumPy's argument order).
  for (const char* name : {"median", "quantile", "percentile"}) {
    const std::string fn = name;
    m[name] = [fn](Args& x) {
      const bool median = fn == "median";
      if (median) x.signature({"x", "axis", "keepdims"}, 1);
      else x.signature({"x", "q", "axis", "method", "keepdims"}, 2);
      QuantileOptions o;
      o.axis = x.opt_axes("axis");
      o.keepdims = x.boolean("keepdims", false);
      if (!median && x.has("method")) {
        const Value& v = x.get("method");
        if (v.kind != Value::Kind::String) x.bad("method", "a string ('linear', 'lower', 'higher', 'nearest', 'midpoint')");
        o.method = quantile_method(v.str);
      }
      Array a = x.array("x");
      if (median) return arr(b2lazy::median(a, o), x);
      return arr(fn == "quantile" ? quantile(a, x.number("q"), o) : percentile(a, x.number("q"), o), x);
    };
  }
  for (const char* name : {"cumsum", "cumprod"}) {
    const bool sum = std::string(name) == "cumsum";
    m[name] = [sum](Args& x) {
      x.signature({"x", "axis", "dtype"}, 1);
      std::optional<int> axis = x.opt_axis("axis");
      return arr(sum ? cumsum(x.array("x"), axis, x.opt_dtype("dtype")) : cumprod(x.array("x"), axis, x.opt_dtype("dtype")), x);
    };
  }
  for (const char* name : {"cumulative_sum", "cumulative_prod"}) {
    const bool sum = std::string(name) == "cumulative_sum";
    m[name] = [sum](Args& x) {
      x.signature({"x", "axis", "dtype", "include_initial"}, 1);
      ScanOptions o;
      o.axis = x.opt_axis("axis");
      o.dtype = x.opt_dtype("dtype");
      o.include_initial = x.boolean("include_initial", false);
      return arr(sum ? cumulative_sum(x.array("x"), o) : cumulative_prod(x.array("x"), o), x);
    };
  }
}

void linalg_functions(Map& m) {
  m["matmul"] = [](Args& x) {
    x.signature({"x1", "x2"}, 2);
    return arr(matmul(x.array("x1"), x.array("x2")), x);
  };
  m["tensordot"] = [](Args& x) {
    x.signature({"x1", "x2", "axes"}, 2);
    if (!x.has("axes")) return arr(tensordot(x.array("x1"), x.array("x2")), x);
    const Value& v = x.get("axes");
    if (v.kind == Value::Kind::Scalar && v.scalar.kind == ScalarKind::Int)
      return arr(tensordot(x.array("x1"), x.array("x2"), x.axis("axes")), x);
    if (!v.is_sequence() || v.items.size() != 2) x.bad("axes", "an int or a pair of axis lists");
    auto axes_of = [&](const Value& e) {
      Args one(x.fn(), {e}, {}, x.column(), x.ctx());
      one.signature({"axes"}, 1);
      return one.axis_list("axes");
    };
    return arr(tensordot(x.array("x1"), x.array("x2"), axes_of(v.items[0]), axes_of(v.items[1])), x);
  };
  m["vecdot"] = [](Args& x) {
    x.signature({"x1", "x2", "axis"}, 2);
    return arr(vecdot(x.array("x1"), x.array("x2"), x.opt_axis("axis").value_or(-1)), x);
  };
  m["outer"] = [](Args& x) {
    x.signature({"x1", "x2"}, 2);
    return arr(outer(x.array("x1"), x.array("x2")), x);
  };
  m["permute_dims"] = [](Args& x) {
    x.signature({"x", "axes"}, 2);
    return arr(permute_dims(x.array("x"), x.axis_list("axes")), x);
  };
  m["transpose"] = [](Args& x) {
    x.signature({"x", "axes"}, 1);
    Array a = x.array("x");
    std::vector<int> axes;
    if (x.has("axes")) axes = x.axis_list("axes");
    else
      for (int d = static_cast<int>(a.ndim()); d-- > 0;) axes.push_back(d);
    return arr(permute_dims(a, axes), x);
  };
  m["matrix_transpose"] = [](Args& x) {
    x.signature({"x"}, 1);
    return arr(matrix_transpose(x.array("x")), x);
  };
}

// An argument of integer indices (a literal list or an evaluated array).
IndexArray int_indices(const Args& x, const std::string& name) {
  IndexArray idx = index_array(x.get(name), x.ctx(), x.fn() + "(): argument '" + name + "'");
  if (idx.boolean || !idx.invalid_dtype.empty()) x.bad(name, "integers");
  return idx;
}

void shape_functions(Map& m) {
  m["take"] = [](Args& x) {
    x.signature({"x", "indices", "axis"}, 2);
    const IndexArray idx = int_indices(x, "indices");
    return arr(take(x.array("x"), idx.values, idx.shape, x.opt_axis("axis")), x);
  };
  m["take_along_axis"] = [](Args& x) {
    x.signature({"x", "indices", "axis"}, 2);
    const IndexArray idx = int_indices(x, "indices");
    return arr(take_along_axis(x.array("x"), idx.values, idx.shape, x.axis_or("axis", -1)), x);
  };
  m["nonzero"] = [](Args& x) {
    x.signature({"x"}, 1);
    return nonzero_tuple(x.array("x"), x);
  };
  m["expand_dims"] = [](Args& x) {
    x.signature({"x", "axis"}, 1);
    return arr(expand_dims(x.array("x"), x.opt_axis("axis").value_or(0)), x);
  };
  m["squeeze"] = [](Args& x) {
    x.signature({"x", "axis"}, 1);
    return arr(squeeze(x.array("x"), x.opt_axes("axis")), x);
  };
  m["flip"] = [](Args& x) {
    x.signature({"x", "axis"}, 1);
    return arr(flip(x.array("x"), x.opt_axes("axis")), x);
  };
  m["moveaxis"] = [](Args& x) {
    x.signature({"x", "source", "destination"}, 3);
    return arr(moveaxis(x.array("x"), x.axis_list("source"), x.axis_list("destination")), x);
  };
  m["broadcast_to"] = [](Args& x) {
    x.signature({"x", "shape"}, 2);
    return arr(broadcast_to(x.array("x"), x.integers("shape")), x);
  };
  m["reshape"] = [](Args& x) {
    x.signature({"x", "shape"}, 2);
    return arr(reshape(x.array("x"), x.integers("shape")), x);
  };
  m["flatten"] = m["ravel"] = [](Args& x) {
    x.signature({"x"}, 1);
    return arr(flatten(x.array("x")), x);
  };
  m["concat"] = m["concatenate"] = [](Args& x) {
    x.signature({"arrays", "axis"}, 1);
    return arr(concat(x.arrays("arrays"), x.axis_or("axis", 0)), x);
  };
  m["stack"] = [](Args& x) {
    x.signature({"arrays", "axis"}, 1);
    return arr(stack(x.arrays("arrays"), x.opt_axis("axis").value_or(0)), x);
  };
  m["roll"] = [](Args& x) {
    x.signature({"x", "shift", "axis"}, 2);
    return arr(roll(x.array("x"), x.integers("shift"), x.opt_axes("axis")), x);
  };
}

void constructor_functions(Map& m) {
  auto shape_of = [](const Args& x) { return x.integers("shape"); };
  m["zeros"] = [shape_of](Args& x) {
    x.signature({"shape", "dtype"}, 1);
    return arr(zeros(shape_of(x), x.opt_dtype("dtype").value_or(DType::F64)), x);
  };
  m["ones"] = [shape_of](Args& x) {
    x.signature({"shape", "dtype"}, 1);
    return arr(ones(shape_of(x), x.opt_dtype("dtype").value_or(DType::F64)), x);
  };
  m["full"] = [shape_of](Args& x) {
    x.signature({"shape", "fill_value", "dtype"}, 2);
    const Value& v = x.get("fill_value");
    if (v.kind != Value::Kind::Scalar) x.bad("fill_value", "a number");
    std::optional<DType> dt = x.opt_dtype("dtype");
    if (!dt && v.scalar.above_int64) dt = DType::U64;  // full(3, 2**63): uint64, as NumPy's
    return arr(full(shape_of(x), v.scalar, dt), x);
  };
  m["arange"] = [](Args& x) {
    x.signature({"start", "stop", "step", "dtype"}, 1);
    double start = 0, stop = x.number("start");
    if (x.has("stop")) start = stop, stop = x.number("stop");
    std::optional<DType> dt = x.opt_dtype("dtype");
    bool all_int = true, exact = true, above = false;
    for (const char* n : {"start", "stop", "step"}) {
      if (!x.has(n)) continue;
      (void)x.number(n);  // a number, else TypeError naming the argument
      const Scalar& v = x.get(n).scalar;
      all_int = all_int && v.kind != ScalarKind::Float;
      above = above || v.above_int64;
      exact = exact && v.kind == ScalarKind::Int && !v.above_int64;
    }
    if (exact) {  // ints, exactly (doubles round values and lengths beyond 2**53)
      int64_t istart = 0, istop = x.integer("start");
      if (x.has("stop")) istart = istop, istop = x.integer("stop");
      return arr(arange_int(istart, istop, x.has("step") ? x.integer("step") : 1, dt), x);
    }
    if (!dt) dt = all_int && !above ? DType::I64 : DType::F64;  // beyond int64: float64, as NumPy
    return arr(arange(start, stop, x.has("step") ? x.number("step") : 1, dt), x);
  };
  m["linspace"] = [](Args& x) {
    x.signature({"start", "stop", "num", "endpoint", "dtype"}, 3);
    return arr(linspace(x.number("start"), x.number("stop"), x.integer("num"), x.boolean("endpoint", true),
                        x.opt_dtype("dtype")),
               x);
  };
}

Map build() {
  Map m;
  elementwise_functions(m);
  reduction_functions(m);
  linalg_functions(m);
  shape_functions(m);
  constructor_functions(m);
  namespace_functions(m);
  return m;
}
}  // namespace

const std::map<std::string, Function>& functions() {
  static const Map m = build();
  return m;
}

bool is_method(const std::string& name) {
  static const std::set<std::string> methods = {
      "sum",     "prod",   "min",     "max",    "mean",     "var",  "std",   "any",   "all",    "argmin",
      "argmax",  "cumsum", "cumprod", "astype", "reshape",  "flatten", "ravel", "nonzero", "transpose", "take",
      "squeeze", "clip",   "round"};
  return methods.count(name) > 0;
}

}  // namespace b2lazy::expr
