// The Array API functions of issue #15 in expression strings, with the Python package's
// names and parameters (device= is accepted as "cpu" or None, as there).
#include "b2lazy/error.hpp"
#include "expr/registry/rows.hpp"
#include "expr/value.hpp"

namespace b2lazy::expr {

namespace {
Value arr(Array a, const Args& x) { return Value::of(std::move(a), x.column()); }

Value tuple(const std::vector<Array>& arrays, const Args& x) {
  Value t = Value::of_kind(Value::Kind::Tuple, x.column());
  for (const Array& a : arrays) t.items.push_back(arr(a, x));
  return t;
}

// empty_like / zeros_like / ones_like / full_like: x's shape, x's dtype unless given.
Value like(Args& x, Scalar value) {
  check_device(x);
  Array a = x.array("x");
  return arr(full(a.shape(), value, x.opt_dtype("dtype").value_or(a.dtype())), x);
}

// x with its axes axis1, axis2 moved last (lazily), for diagonal and trace.
Array matrix_axes_last(const Args& x) {
  Array a = x.array("x");
  const int nd = static_cast<int>(a.ndim());
  if (nd < 2)
    throw ValueError(x.fn() + "(): the array must have at least two dimensions, got shape " + shape_str(a.shape()));
  int axes[2] = {x.axis("axis1"), x.axis("axis2")};
  for (int& ax : axes) {
    if (ax < -nd || ax >= nd)
      throw AxisError(x.fn() + "(): axis " + std::to_string(ax) + " is out of bounds for an array of dimension " +
                      std::to_string(nd));
    if (ax < 0) ax += nd;
  }
  if (axes[0] == axes[1])
    throw ValueError(x.fn() + "(): axis1 and axis2 cannot be the same axis (" + std::to_string(axes[0]) + ")");
  if (axes[0] == nd - 2 && axes[1] == nd - 1) return a;
  return moveaxis(a, {axes[0], axes[1]}, {-2, -1});
}
}  // namespace

void namespace_rows(Rows& r) {
  const char* like_rule = "dtype if given, else x's";
  for (const char* name : {"zeros_like", "empty_like"}) {  // empty_like: zeros, never stored
    row(r, name, F::Creation, "x, /, *, dtype=None, device=None", like_rule, [](Args& x) {
      x.bind();
      return like(x, Scalar(0));
    });
  }
  row(r, "ones_like", F::Creation, "x, /, *, dtype=None, device=None", like_rule, [](Args& x) {
    x.bind();
    return like(x, Scalar(1));
  });
  row(r, "full_like", F::Creation, "x, /, fill_value, *, dtype=None, device=None", "dtype if given, else x's",
      [](Args& x) {
        x.bind();
        const Value& v = x.get("fill_value");
        if (v.kind != Value::Kind::Scalar) x.bad("fill_value", "a number");
        return like(x, v.scalar);
      });
  row(r, "eye", F::Creation, "n_rows, n_cols=None, /, *, k=0, dtype=None, device=None", "dtype if given, else float64",
      [](Args& x) {
        x.bind();
        check_device(x);
        const int64_t rows = x.integer("n_rows");
        return arr(eye(rows, x.has("n_cols") ? x.integer("n_cols") : rows, x.integer("k"),
                       x.opt_dtype("dtype").value_or(DType::F64)),
                   x);
      });
  row(r, "tril", F::Shape, "x, /, *, k=0", "x's dtype", [](Args& x) {
    x.bind();
    return arr(tril(x.array("x"), x.clamped_integer("k")), x);
  });
  row(r, "triu", F::Shape, "x, /, *, k=0", "x's dtype", [](Args& x) {
    x.bind();
    return arr(triu(x.array("x"), x.clamped_integer("k")), x);
  });
  // diagonal and trace of the matrices on axes axis1, axis2 (by default the last two, as
  // the Array API's linalg ones).
  row(r, "diagonal", F::Shape, "x, /, *, offset=0, axis1=-2, axis2=-1", "x's dtype", [](Args& x) {
    x.bind();
    return arr(diagonal(matrix_axes_last(x), x.clamped_integer("offset")), x);
  });
  row(r, "trace", F::Linalg, "x, /, *, offset=0, dtype=None, axis1=-2, axis2=-1", "sum's rule", [](Args& x) {
    x.bind();
    return arr(trace(matrix_axes_last(x), x.clamped_integer("offset"), x.opt_dtype("dtype")), x);
  });
  row(r, "tile", F::Shape, "x, repetitions, /", "x's dtype", [](Args& x) {
    x.bind();
    return arr(tile(x.array("x"), x.integers("repetitions")), x);
  });
  row(r, "repeat", F::Shape, "x, repeats, /, *, axis=None", "x's dtype", [](Args& x) {
    x.bind();
    const Value& r = x.get("repeats");
    if (r.kind == Value::Kind::Scalar) return arr(repeat(x.array("x"), x.integer("repeats"), x.opt_axis("axis")), x);
    const IndexArray counts = index_array(r, x.ctx(), x.fn() + "(): argument 'repeats'");
    if (counts.boolean || !counts.invalid_dtype.empty()) x.bad("repeats", "an integer or integers");
    return arr(repeat(x.array("x"), counts.values, x.opt_axis("axis")), x);
  });
  for (const char* name : {"sort", "argsort"}) {
    const std::string fn = name;
    row(r, name, F::Holistic, "x, /, *, axis=-1, descending=False, stable=True", fn == "sort" ? "x's dtype" : "int64",
        [fn](Args& x) {
          x.bind();
          const Array a = x.array("x");
          const int axis = x.axis("axis");
          for (const char* flag : {"descending", "stable"})  // True or False, not 0 or 1 (NumPy's)
            if (x.get(flag).kind != Value::Kind::Scalar || x.get(flag).scalar.kind != ScalarKind::Bool)
              x.bad(flag, "True or False");
          const bool descending = x.boolean("descending"), stable = x.boolean("stable");
          return arr(fn == "sort" ? sort(a, axis, descending, stable) : argsort(a, axis, descending, stable), x);
        });
  }
  row(r, "searchsorted", F::Holistic, "x1, x2, /, *, side='left', sorter=None", "int64", [](Args& x) {
    x.bind();
    const Value& side = x.get("side");
    if (side.kind != Value::Kind::String || (side.str != "left" && side.str != "right"))
      x.bad("side", "'left' or 'right'");
    std::optional<Array> sorter;
    if (x.has("sorter")) sorter = x.array("sorter");
    return arr(searchsorted(x.array("x1"), x.array("x2"), side.str == "right", sorter), x);
  });
  row(r, "diff", F::Shape, "x, /, *, axis=-1, n=1, prepend=None, append=None",
      "x's promoted with prepend's and append's (bool: not_equal)", [](Args& x) {
        x.bind();
        std::optional<Array> pre, app;
        if (x.has("prepend")) pre = x.array("prepend");
        if (x.has("append")) app = x.array("append");
        return arr(diff(x.array("x"), x.axis("axis"), x.integer("n"), pre, app), x);
      });
  row(r, "meshgrid", F::Creation, "*arrays, indexing='xy'", "the arrays' promoted dtype", [](Args& x) {
    x.bind();
    bool xy = true;
    if (x.has("indexing")) {
      const Value& v = x.get("indexing");
      if (v.kind != Value::Kind::String || (v.str != "xy" && v.str != "ij")) x.bad("indexing", "'xy' or 'ij'");
      xy = v.str == "xy";
    }
    return tuple(meshgrid(x.arrays("arrays"), xy), x);
  });
  row(r, "broadcast_arrays", F::Shape, "*arrays", "each array's dtype", [](Args& x) {
    x.bind();
    return tuple(broadcast_arrays(x.arrays("arrays")), x);
  });
  row(r, "unstack", F::Shape, "x, /, *, axis=0", "x's dtype", [](Args& x) {
    x.bind();
    return tuple(unstack(x.array("x"), x.axis("axis")), x);
  });
}

}  // namespace b2lazy::expr
