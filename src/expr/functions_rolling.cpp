// moving_reduce in expression strings, with the Python package's parameters:
// moving_reduce(t, 8, 'mean', axis=0, center=True, min_periods=3).
#include "b2lazy/error.hpp"
#include "b2lazy/rolling.hpp"
#include "expr/registry/rows.hpp"
#include "expr/value.hpp"

namespace b2lazy::expr {

void rolling_rows(Rows& r) {
  row(r, "moving_reduce", F::Scan,
      "x, /, window, func='mean', *, axis=-1, center=False, min_periods=None, ddof=0, skipna=True",
      "float64 for integer input and for count, else x's floating dtype", [](Args& x) {
        x.bind();
        const Value& func = x.get("func");
        if (func.kind != Value::Kind::String) x.bad("func", "a string: sum, mean, min, max, var, std or count");
        MovingOptions o;
        o.axis = x.axis("axis");
        o.center = x.boolean("center");
        o.min_periods = x.opt_integer("min_periods");
        o.ddof = x.number("ddof");
        o.skipna = x.boolean("skipna");
        return Value::of(moving_reduce(x.array("x"), x.integer("window"), moving_op(func.str), o), x.column());
      });
}

}  // namespace b2lazy::expr
