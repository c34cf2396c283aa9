// segment_reduce in expression strings, with the Python package's parameters:
// segment_reduce(x, [0, 0, 1, -1, 1], 'mean', axis=0, ngroups=3).
#include "b2lazy/error.hpp"
#include "b2lazy/groupby.hpp"
#include "expr/registry/rows.hpp"
#include "expr/value.hpp"

namespace b2lazy::expr {

namespace {
Value segment_reduce_call(Args& x) {
  x.bind();
  Array a = x.array("x");
  const IndexArray codes = index_array(x.get("codes"), x.ctx(), "segment_reduce(): argument 'codes'");
  if (codes.boolean || !codes.invalid_dtype.empty() || codes.shape.size() != 1)
    x.bad("codes", "a 1-d array of integer group codes (-1: dropped)");
  const Value& func = x.get("func");
  if (func.kind != Value::Kind::String) x.bad("func", "a reduction's name such as 'mean'");
  SegmentOptions o;
  o.axis = x.axis("axis");
  o.ngroups = x.opt_integer("ngroups");
  o.ddof = x.number("ddof");
  return Value::of(segment_reduce(a, codes.values, func.str, o), x.column());
}
}  // namespace

void groupby_rows(Rows& r) {
  row(r, "segment_reduce", F::Holistic, "x, codes, /, func, *, ngroups=None, axis=-1, ddof=0",
      "func's reduction's (NumPy's); min, max, first, last with an empty group: floating", segment_reduce_call);
}

}  // namespace b2lazy::expr
