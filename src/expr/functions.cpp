// The functions an expression string can call: the same names and parameters as the
// Python package (NumPy / Array API spellings), each built with the C++ API.
#include <stdexcept>

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
  for (const FunctionInfo& f : function_registry()) {
    if (!f.op || op_family(*f.op) == OpFamily::Special) continue;
    const Op op = *f.op;
    m[f.name] = [op](Args& x) {
      x.bind();
      std::vector<Operand> ops;
      if (op_arity(op) == 1) ops.push_back(x.operand("x"));
      else ops = {x.operand("x1"), x.operand("x2")};
      return arr(elementwise(op, ops), x);
    };
  }
  m["where"] = [](Args& x) {
    x.bind();
    if (!x.has("x") && !x.has("y")) {
      return nonzero_tuple(x.array("condition"), x);
    }
    if (!x.has("x") || !x.has("y")) throw ValueError("where(): give both x and y, or neither");
    return arr(where(x.operand("condition"), x.operand("x"), x.operand("y")), x);
  };
  m["clip"] = [](Args& x) {
    x.bind();
    std::optional<Operand> lo, hi;
    if (x.has("min")) lo = x.operand("min");
    if (x.has("max")) hi = x.operand("max");
    return arr(clip(x.operand("x"), lo, hi), x);
  };
  m["astype"] = [](Args& x) {
    x.bind();
    check_device(x);
    (void)x.boolean("copy");  // either way: the result is a lazy cast, never a view
    const std::optional<DType> dtype = x.opt_dtype("dtype");
    if (!dtype) x.bad("dtype", "a dtype name such as 'float32'");
    return arr(x.array("x").astype(*dtype), x);
  };
}

void reduction_functions(Map& m) {
  for (const FunctionInfo& f : function_registry()) {
    if (!f.reduction) continue;
    const ReductionInfo* info = &reduction_info(*f.reduction);
    m[f.name] = [info](Args& x) {
      x.bind();
      ReduceOptions o;
      o.axis = x.opt_axes("axis");
      o.keepdims = x.boolean("keepdims");
      if (info->takes_dtype) o.dtype = x.opt_dtype("dtype");
      if (info->takes_correction) {
        if (x.has("correction") && x.has("ddof")) throw ValueError(x.fn() + "(): give correction or ddof, not both");
        o.correction = x.has("correction") ? x.number("correction") : x.has("ddof") ? x.number("ddof") : 0;
      }
      return arr(reduce(info->r, x.array("x"), o), x);
    };
  }
  // Holistic reductions: median(x, axis, keepdims), quantile(x, q, axis, method, keepdims),
  // percentile likewise (NumPy's argument order).
  for (const char* name : {"median", "quantile", "percentile"}) {
    const std::string fn = name;
    m[name] = [fn](Args& x) {
      const bool median = fn == "median";
      x.bind();
      QuantileOptions o;
      o.axis = x.opt_axes("axis");
      o.keepdims = x.boolean("keepdims");
      if (!median) {
        const Value& v = x.get("method");
        if (v.kind != Value::Kind::String)
          x.bad("method", "a string ('linear', 'lower', 'higher', 'nearest', 'midpoint')");
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
      x.bind();
      std::optional<int> axis = x.opt_axis("axis");
      return arr(
          sum ? cumsum(x.array("x"), axis, x.opt_dtype("dtype")) : cumprod(x.array("x"), axis, x.opt_dtype("dtype")),
          x);
    };
  }
  for (const char* name : {"cumulative_sum", "cumulative_prod"}) {
    const bool sum = std::string(name) == "cumulative_sum";
    m[name] = [sum](Args& x) {
      x.bind();
      ScanOptions o;
      o.axis = x.opt_axis("axis");
      o.dtype = x.opt_dtype("dtype");
      o.include_initial = x.boolean("include_initial");
      return arr(sum ? cumulative_sum(x.array("x"), o) : cumulative_prod(x.array("x"), o), x);
    };
  }
}

void linalg_functions(Map& m) {
  m["matmul"] = [](Args& x) {
    x.bind();
    return arr(matmul(x.array("x1"), x.array("x2")), x);
  };
  m["tensordot"] = [](Args& x) {
    x.bind();
    if (!x.has("axes")) return arr(tensordot(x.array("x1"), x.array("x2")), x);
    const Value& v = x.get("axes");
    if (v.kind == Value::Kind::Scalar && v.scalar.kind == ScalarKind::Int)
      return arr(tensordot(x.array("x1"), x.array("x2"), x.axis("axes")), x);
    if (!v.is_sequence() || v.items.size() != 2) x.bad("axes", "an int or a pair of axis lists");
    auto axes_of = [&](const Value& e) {
      Args one(x.fn(), {e}, {}, x.column(), x.ctx());
      one.bind({Param{"axes", ParamKind::PositionalOnly, {}}});
      return one.axis_list("axes");
    };
    return arr(tensordot(x.array("x1"), x.array("x2"), axes_of(v.items[0]), axes_of(v.items[1])), x);
  };
  m["vecdot"] = [](Args& x) {
    x.bind();
    return arr(vecdot(x.array("x1"), x.array("x2"), x.axis("axis")), x);
  };
  m["outer"] = [](Args& x) {
    x.bind();
    return arr(outer(x.array("x1"), x.array("x2")), x);
  };
  m["permute_dims"] = [](Args& x) {
    x.bind();
    return arr(permute_dims(x.array("x"), x.axis_list("axes")), x);
  };
  m["transpose"] = [](Args& x) {
    x.bind();
    Array a = x.array("x");
    std::vector<int> axes;
    if (x.has("axes")) axes = x.axis_list("axes");
    else
      for (int d = static_cast<int>(a.ndim()); d-- > 0;) axes.push_back(d);
    return arr(permute_dims(a, axes), x);
  };
  m["matrix_transpose"] = [](Args& x) {
    x.bind();
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
    x.bind();
    const IndexArray idx = int_indices(x, "indices");
    return arr(take(x.array("x"), idx.values, idx.shape, x.opt_axis("axis")), x);
  };
  m["take_along_axis"] = [](Args& x) {
    x.bind();
    const IndexArray idx = int_indices(x, "indices");
    return arr(take_along_axis(x.array("x"), idx.values, idx.shape, x.opt_axis("axis")), x);
  };
  m["nonzero"] = [](Args& x) {
    x.bind();
    return nonzero_tuple(x.array("x"), x);
  };
  m["expand_dims"] = [](Args& x) {
    x.bind();
    return arr(expand_dims(x.array("x"), x.axis("axis")), x);
  };
  m["squeeze"] = [](Args& x) {
    x.bind();
    return arr(squeeze(x.array("x"), x.opt_axes("axis")), x);
  };
  m["flip"] = [](Args& x) {
    x.bind();
    return arr(flip(x.array("x"), x.opt_axes("axis")), x);
  };
  m["moveaxis"] = [](Args& x) {
    x.bind();
    return arr(moveaxis(x.array("x"), x.axis_list("source"), x.axis_list("destination")), x);
  };
  m["broadcast_to"] = [](Args& x) {
    x.bind();
    return arr(broadcast_to(x.array("x"), x.integers("shape")), x);
  };
  m["reshape"] = [](Args& x) {
    x.bind();
    return arr(reshape(x.array("x"), x.integers("shape")), x);
  };
  m["flatten"] = [](Args& x) {
    x.bind();
    return arr(flatten(x.array("x")), x);
  };
  m["concat"] = [](Args& x) {
    x.bind();
    return arr(concat(x.arrays("arrays"), x.opt_axis("axis")), x);
  };
  m["stack"] = [](Args& x) {
    x.bind();
    return arr(stack(x.arrays("arrays"), x.axis("axis")), x);
  };
  m["roll"] = [](Args& x) {
    x.bind();
    return arr(roll(x.array("x"), x.integers("shift"), x.opt_axes("axis")), x);
  };
}

// chunks= of the creation functions: a shape, or None for the engine's choice.
Shape chunks_arg(const Args& x) { return x.has("chunks") ? x.integers("chunks") : Shape{}; }
Shape shape_arg(const Args& x) { return x.has("shape") ? x.integers("shape") : Shape{}; }

void constructor_functions(Map& m) {
  for (const char* name : {"zeros", "ones", "empty"}) {
    const int value = std::string(name) == "ones" ? 1 : 0;  // empty: zeros, never stored
    m[name] = [value](Args& x) {
      x.bind();
      check_device(x);
      return arr(full(x.integers("shape"), Scalar(value), x.opt_dtype("dtype").value_or(DType::F64), chunks_arg(x)), x);
    };
  }
  m["full"] = [](Args& x) {
    x.bind();
    check_device(x);
    const Value& v = x.get("fill_value");
    if (v.kind != Value::Kind::Scalar) x.bad("fill_value", "a number");
    std::optional<DType> dt = x.opt_dtype("dtype");
    if (!dt && v.scalar.above_int64) dt = DType::U64;  // full(3, 2**63): uint64, as NumPy's
    return arr(full(x.integers("shape"), v.scalar, dt, chunks_arg(x)), x);
  };
  m["arange"] = [](Args& x) {
    x.bind();
    check_device(x);
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
      return arr(arange_int(istart, istop, x.integer("step"), dt, shape_arg(x), chunks_arg(x)), x);
    }
    if (!dt) dt = all_int && !above ? DType::I64 : DType::F64;  // beyond int64: float64, as NumPy
    return arr(arange(start, stop, x.number("step"), dt, shape_arg(x), chunks_arg(x)), x);
  };
  m["linspace"] = [](Args& x) {
    x.bind();
    check_device(x);
    return arr(linspace(x.number("start"), x.number("stop"), x.integer("num"), x.boolean("endpoint"),
                        x.opt_dtype("dtype"), shape_arg(x), chunks_arg(x)),
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
  statistics_functions(m);
  einsum_pad_functions(m);
  rolling_functions(m);
  groupby_functions(m);
  // One implementation per registry entry, under its name and its aliases.
  for (const FunctionInfo& f : function_registry()) {
    if (!m.count(f.name)) throw std::logic_error("expression function '" + f.name + "' is not implemented");
    for (const std::string& alias : f.aliases) m[alias] = m.at(f.name);
  }
  if (m.size() != [] {
        size_t n = 0;
        for (const FunctionInfo& f : function_registry()) n += 1 + f.aliases.size();
        return n;
      }())
    throw std::logic_error("an expression function without a registry entry");
  return m;
}
}  // namespace

const std::map<std::string, Function>& functions() {
  static const Map m = build();
  return m;
}

bool is_method(const std::string& name) {
  const FunctionInfo* f = find_function(name);
  return f != nullptr && f->method;
}

}  // namespace b2lazy::expr
