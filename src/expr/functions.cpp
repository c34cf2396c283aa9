// The functions an expression string can call: the same names and parameters as the
// Python package (NumPy / Array API spellings), each built with the C++ API.
#include <stdexcept>

#include "b2lazy/error.hpp"
#include "expr/registry/rows.hpp"
#include "expr/value.hpp"

namespace b2lazy::expr {

namespace {
using F = FunctionFamily;

Value arr(Array a, const Args& x) { return Value::of(std::move(a), x.column()); }

// nonzero(c) and where(c): a tuple of the coordinate arrays.
Value nonzero_tuple(const Array& c, const Args& x) {
  Value t = Value::of_kind(Value::Kind::Tuple, x.column());
  for (Array& a : nonzero(c, x.ctx())) t.items.push_back(arr(a, x));
  return t;
}

const char* op_dtype_rule(OpFamily family) {
  switch (family) {
    case OpFamily::Arith:
      return "the inputs' promoted dtype (NumPy's rules; abs, real, imag of complex: its part type)";
    case OpFamily::Float:
      return "the inputs' promoted dtype made floating (bool and 1-2 byte integers: float32, others float64)";
    case OpFamily::Int: return "the inputs' promoted dtype; integers and bool only";
    case OpFamily::Cmp:
    case OpFamily::Pred: return "bool";
    case OpFamily::Logic: return "bool (inputs taken as truth values)";
    case OpFamily::Special: break;
  }
  return "";
}

// One row per op of the elementwise table (b2lazy/ops.hpp), its aliases from op_aliases():
// adding an op there adds the function everywhere.
void elementwise_rows(Rows& r) {
  std::map<std::string, std::vector<std::string>> aliases;
  for (const auto& [alias, name] : op_aliases()) aliases[name].push_back(alias);
  for (int i = 0; i < static_cast<int>(Op::Count_); ++i) {
    const Op op = static_cast<Op>(i);
    if (op_family(op) == OpFamily::Special) continue;  // where, astype, copy: below
    auto call = [op](Args& x) {
      x.bind();
      std::vector<Operand> ops;
      if (op_arity(op) == 1) ops.push_back(x.operand("x"));
      else ops = {x.operand("x1"), x.operand("x2")};
      return arr(elementwise(op, ops), x);
    };
    row(r, op_name(op), F::Elementwise, op_arity(op) == 1 ? "x, /" : "x1, x2, /", op_dtype_rule(op_family(op)), call,
        aliases[op_name(op)], op == Op::Round)
        .op = op;
  }
  row(r, "where", F::Elementwise, "condition, x=None, y=None",
      "x and y promoted; with condition alone, nonzero(condition)",
      [](Args& x) {
        x.bind();
        if (!x.has("x") && !x.has("y")) {
          return nonzero_tuple(x.array("condition"), x);
        }
        if (!x.has("x") || !x.has("y")) throw ValueError("where(): give both x and y, or neither");
        return arr(where(x.operand("condition"), x.operand("x"), x.operand("y")), x);
      })
      .op = Op::Where;
  row(
      r, "clip", F::Elementwise, "x, /, min=None, max=None", "x's dtype",
      [](Args& x) {
        x.bind();
        std::optional<Operand> lo, hi;
        if (x.has("min")) lo = x.operand("min");
        if (x.has("max")) hi = x.operand("max");
        return arr(clip(x.operand("x"), lo, hi), x);
      },
      {}, true);
  row(
      r, "astype", F::Elementwise, "x, dtype, /, *, copy=True, device=None", "dtype",
      [](Args& x) {
        x.bind();
        check_device(x);
        (void)x.boolean("copy");  // either way: the result is a lazy cast, never a view
        const std::optional<DType> dtype = x.opt_dtype("dtype");
        if (!dtype) x.bad("dtype", "a dtype name such as 'float32'");
        return arr(x.array("x").astype(*dtype), x);
      },
      {}, true)
      .op = Op::Cast;
}

// One row per registered reduction kernel (b2lazy/vocabulary.hpp, reductions()): its
// signature from whether it takes dtype= and correction=.
void reduction_rows(Rows& r) {
  for (const ReductionInfo& info : reductions()) {
    std::string sig = "x, /, axis=None, *, keepdims=False";
    if (info.takes_dtype) sig += ", dtype=None";
    if (info.takes_correction) sig += ", correction=None, ddof=None";
    auto call = [info = &info](Args& x) {
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
    row(r, info.name, F::Reduction, sig, reduction_dtype_rule(info), call, info.aliases, info.method).reduction =
        info.r;
  }
  // Holistic reductions: median(x, axis, keepdims), quantile(x, q, axis, method, keepdims),
  // percentile likewise (NumPy's argument order).
  const char* q_rule = "float64 (x's float type for float32)";
  for (const char* name : {"median", "quantile", "percentile"}) {
    const std::string fn = name;
    const char* sig = fn == "median" ? "x, /, axis=None, *, keepdims=False"
                                     : "x, /, q, axis=None, *, method='linear', keepdims=False";
    row(r, name, F::Holistic, sig, q_rule, [fn](Args& x) {
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
    });
  }
  const char* scan_rule = "dtype if given, else sum's / prod's rule";
  for (const char* name : {"cumsum", "cumprod"}) {
    const bool sum = std::string(name) == "cumsum";
    row(
        r, name, F::Scan, "x, axis=None, dtype=None", scan_rule,
        [sum](Args& x) {
          x.bind();
          std::optional<int> axis = x.opt_axis("axis");
          return arr(sum ? cumsum(x.array("x"), axis, x.opt_dtype("dtype"))
                         : cumprod(x.array("x"), axis, x.opt_dtype("dtype")),
                     x);
        },
        {}, true);
  }
  for (const char* name : {"cumulative_sum", "cumulative_prod"}) {
    const bool sum = std::string(name) == "cumulative_sum";
    row(r, name, F::Scan, "x, /, *, axis=None, dtype=None, include_initial=False", scan_rule, [sum](Args& x) {
      x.bind();
      ScanOptions o;
      o.axis = x.opt_axis("axis");
      o.dtype = x.opt_dtype("dtype");
      o.include_initial = x.boolean("include_initial");
      return arr(sum ? cumulative_sum(x.array("x"), o) : cumulative_prod(x.array("x"), o), x);
    });
  }
}

void linalg_rows(Rows& r) {
  row(r, "matmul", F::Linalg, "x1, x2, /", "the inputs' promoted dtype", [](Args& x) {
    x.bind();
    return arr(matmul(x.array("x1"), x.array("x2")), x);
  });
  row(r, "tensordot", F::Linalg, "x1, x2, /, axes=2", "the inputs' promoted dtype", [](Args& x) {
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
  });
  row(r, "vecdot", F::Linalg, "x1, x2, /, *, axis=-1", "the inputs' promoted dtype", [](Args& x) {
    x.bind();
    return arr(vecdot(x.array("x1"), x.array("x2"), x.axis("axis")), x);
  });
  row(r, "outer", F::Linalg, "x1, x2, /", "the inputs' promoted dtype", [](Args& x) {
    x.bind();
    return arr(outer(x.array("x1"), x.array("x2")), x);
  });
  row(r, "permute_dims", F::Shape, "x, /, axes", "x's dtype", [](Args& x) {
    x.bind();
    return arr(permute_dims(x.array("x"), x.axis_list("axes")), x);
  });
  row(
      r, "transpose", F::Shape, "x, axes=None", "x's dtype",
      [](Args& x) {
        x.bind();
        Array a = x.array("x");
        std::vector<int> axes;
        if (x.has("axes")) axes = x.axis_list("axes");
        else
          for (int d = static_cast<int>(a.ndim()); d-- > 0;) axes.push_back(d);
        return arr(permute_dims(a, axes), x);
      },
      {}, true);
  row(r, "matrix_transpose", F::Shape, "x, /", "x's dtype", [](Args& x) {
    x.bind();
    return arr(matrix_transpose(x.array("x")), x);
  });
}

// An argument of integer indices (a literal list or an evaluated array).
IndexArray int_indices(const Args& x, const std::string& name) {
  IndexArray idx = index_array(x.get(name), x.ctx(), x.fn() + "(): argument '" + name + "'");
  if (idx.boolean || !idx.invalid_dtype.empty()) x.bad(name, "integers");
  return idx;
}

void shape_rows(Rows& r) {
  row(
      r, "take", F::Index, "x, indices, /, axis=None", "x's dtype",
      [](Args& x) {
        x.bind();
        const IndexArray idx = int_indices(x, "indices");
        return arr(take(x.array("x"), idx.values, idx.shape, x.opt_axis("axis")), x);
      },
      {}, true);
  row(r, "take_along_axis", F::Index, "x, indices, /, axis=-1", "x's dtype", [](Args& x) {
    x.bind();
    const IndexArray idx = int_indices(x, "indices");
    return arr(take_along_axis(x.array("x"), idx.values, idx.shape, x.opt_axis("axis")), x);
  });
  row(
      r, "nonzero", F::Index, "x, /", "a tuple of int64 arrays",
      [](Args& x) {
        x.bind();
        return nonzero_tuple(x.array("x"), x);
      },
      {}, true);
  row(r, "expand_dims", F::Shape, "x, /, axis=0", "x's dtype", [](Args& x) {
    x.bind();
    return arr(expand_dims(x.array("x"), x.axis("axis")), x);
  });
  row(
      r, "squeeze", F::Shape, "x, /, axis=None", "x's dtype",
      [](Args& x) {
        x.bind();
        return arr(squeeze(x.array("x"), x.opt_axes("axis")), x);
      },
      {}, true);
  row(r, "flip", F::Shape, "x, /, *, axis=None", "x's dtype", [](Args& x) {
    x.bind();
    return arr(flip(x.array("x"), x.opt_axes("axis")), x);
  });
  row(r, "moveaxis", F::Shape, "x, source, destination, /", "x's dtype", [](Args& x) {
    x.bind();
    return arr(moveaxis(x.array("x"), x.axis_list("source"), x.axis_list("destination")), x);
  });
  row(r, "broadcast_to", F::Shape, "x, /, shape", "x's dtype", [](Args& x) {
    x.bind();
    return arr(broadcast_to(x.array("x"), x.integers("shape")), x);
  });
  row(
      r, "reshape", F::Shape, "x, /, shape, *, copy=None", "x's dtype",
      [](Args& x) {
        x.bind();
        return arr(reshape(x.array("x"), x.integers("shape")), x);
      },
      {}, true);
  row(
      r, "flatten", F::Shape, "x, /", "x's dtype",
      [](Args& x) {
        x.bind();
        return arr(flatten(x.array("x")), x);
      },
      {"ravel"}, true);
  row(r, "concat", F::Shape, "arrays, /, *, axis=0", "the arrays' promoted dtype",
      [](Args& x) {
        x.bind();
        return arr(concat(x.arrays("arrays"), x.opt_axis("axis")), x);
      },
      {"concatenate"});
  row(r, "stack", F::Shape, "arrays, /, *, axis=0", "the arrays' promoted dtype", [](Args& x) {
    x.bind();
    return arr(stack(x.arrays("arrays"), x.axis("axis")), x);
  });
  row(r, "roll", F::Shape, "x, /, shift, *, axis=None", "x's dtype", [](Args& x) {
    x.bind();
    return arr(roll(x.array("x"), x.integers("shift"), x.opt_axes("axis")), x);
  });
}

// chunks= of the creation functions: a shape, or None for the engine's choice.
Shape chunks_arg(const Args& x) { return x.has("chunks") ? x.integers("chunks") : Shape{}; }
Shape shape_arg(const Args& x) { return x.has("shape") ? x.integers("shape") : Shape{}; }

void constructor_rows(Rows& r) {
  for (const char* name : {"zeros", "ones", "empty"}) {
    const int value = std::string(name) == "ones" ? 1 : 0;  // empty: zeros, never stored
    row(r, name, F::Creation, "shape, dtype=None, *, device=None, chunks=None", "dtype if given, else float64",
        [value](Args& x) {
          x.bind();
          check_device(x);
          return arr(full(x.integers("shape"), Scalar(value), x.opt_dtype("dtype").value_or(DType::F64), chunks_arg(x)),
                     x);
        });
  }
  row(r, "full", F::Creation, "shape, fill_value, dtype=None, *, device=None, chunks=None",
      "dtype if given, else fill_value's (bool, int64, uint64 beyond int64, float64)", [](Args& x) {
        x.bind();
        check_device(x);
        const Value& v = x.get("fill_value");
        if (v.kind != Value::Kind::Scalar) x.bad("fill_value", "a number");
        std::optional<DType> dt = x.opt_dtype("dtype");
        if (!dt && v.scalar.above_int64) dt = DType::U64;  // full(3, 2**63): uint64, as NumPy's
        return arr(full(x.integers("shape"), v.scalar, dt, chunks_arg(x)), x);
      });
  row(r, "arange", F::Creation, "start, /, stop=None, step=1, dtype=None, *, device=None, shape=None, chunks=None",
      "dtype if given, else int64 for int arguments, float64 otherwise", [](Args& x) {
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
      });
  row(r, "linspace", F::Creation,
      "start, stop, /, num=50, endpoint=True, dtype=None, *, device=None, shape=None, chunks=None",
      "dtype if given, else float64", [](Args& x) {
        x.bind();
        check_device(x);
        return arr(linspace(x.number("start"), x.number("stop"), x.integer("num"), x.boolean("endpoint"),
                            x.opt_dtype("dtype"), shape_arg(x), chunks_arg(x)),
                   x);
      });
}

}  // namespace

void core_rows(Rows& r) {
  elementwise_rows(r);
  reduction_rows(r);
  linalg_rows(r);
  shape_rows(r);
  constructor_rows(r);
}

bool is_method(const std::string& name) {
  const FunctionInfo* f = find_function(name);
  return f != nullptr && f->method;
}

}  // namespace b2lazy::expr
