// einsum, pad and rechunk in expression strings, with the Python package's parameters:
// einsum('ij,jk->ik', a, b, optimize='optimal'), pad(x, ((1, 2), (0, 3)), 'reflect'),
// rechunk(x, (100, -1)).
#include "b2lazy/einsum.hpp"
#include "b2lazy/error.hpp"
#include "b2lazy/pad.hpp"
#include "expr/registry/rows.hpp"
#include "expr/value.hpp"

namespace b2lazy::expr {

namespace {
Value arr(Array a, const Args& x) { return Value::of(std::move(a), x.column()); }

bool is_int(const Value& v) { return v.kind == Value::Kind::Scalar && v.scalar.kind == ScalarKind::Int; }

// optimize=: True / 'greedy', 'optimal', False, or a path of pairs (NumPy's einsum_path
// form, its leading 'einsum_path' optional).
Value einsum_call(Args& x) {
  x.bind();
  const Value& sub = x.get("subscripts");
  if (sub.kind != Value::Kind::String) x.bad("subscripts", "a string such as 'ij,jk->ik'");
  const std::vector<Array> ops = x.arrays("operands");
  const Value& opt = x.get("optimize");
  if (opt.kind == Value::Kind::Scalar && opt.scalar.kind == ScalarKind::Bool)
    return arr(einsum(sub.str, ops, opt.scalar.i ? EinsumOptimize::Greedy : EinsumOptimize::LeftToRight), x);
  if (opt.kind == Value::Kind::String && (opt.str == "greedy" || opt.str == "optimal"))
    return arr(einsum(sub.str, ops, opt.str == "greedy" ? EinsumOptimize::Greedy : EinsumOptimize::Optimal), x);
  const char* wanted = "True, False, 'greedy', 'optimal' or a path of pairs such as [(0, 1), (0, 1)]";
  if (!opt.is_sequence()) x.bad("optimize", wanted);
  std::vector<EinsumStep> path;
  for (size_t i = 0; i < opt.items.size(); ++i) {
    const Value& step = opt.items[i];
    if (i == 0 && step.kind == Value::Kind::String && step.str == "einsum_path") continue;
    if (!step.is_sequence() || step.items.size() != 2 || !is_int(step.items[0]) || !is_int(step.items[1]) ||
        step.items[0].scalar.i < 0 || step.items[1].scalar.i < 0)
      x.bad("optimize", wanted);
    size_t a = static_cast<size_t>(step.items[0].scalar.i), b = static_cast<size_t>(step.items[1].scalar.i);
    path.push_back({std::min(a, b), std::max(a, b)});
  }
  return arr(einsum(sub.str, ops, path), x);
}

Value pad_call(Args& x) {
  x.bind();
  Array a = x.array("x");
  const Value& pw = x.get("pad_width");
  IndexArray w;
  if (is_int(pw)) w.values = {x.integer("pad_width")};  // one width for every side
  else w = index_array(pw, x.ctx(), x.fn() + "(): argument 'pad_width'");
  if (w.boolean || !w.invalid_dtype.empty()) x.bad("pad_width", "integers");
  const Value& mode = x.get("mode");
  if (mode.kind != Value::Kind::String) x.bad("mode", "a string such as 'constant' or 'reflect'");
  const Value& rt = x.get("reflect_type");
  if (rt.kind != Value::Kind::String || rt.str != "even")
    throw ValueError("pad(): reflect_type='even' is the only one supported (NumPy's default)");
  std::optional<Array> values;
  if (x.has("constant_values")) values = x.array("constant_values");
  return arr(pad(a, pad_widths(w.values, w.shape, a.ndim()), pad_mode(mode.str), values), x);
}

// One axis of a chunk spec: an int (-1: whole axis), None, 'auto', or regular block lengths.
ChunkSpec axis_spec(const Value& v, const Args& x, int64_t axis_len, size_t axis) {
  if (v.kind == Value::Kind::None) return {ChunkSpec::Kind::Keep, 0};
  if (v.kind == Value::Kind::String && v.str == "auto") return {ChunkSpec::Kind::Auto, 0};
  if (is_int(v)) return ChunkSpec::of(v.scalar.i);
  if (v.is_sequence()) {
    std::vector<int64_t> blocks;
    for (const Value& e : v.items) {
      if (!is_int(e)) x.bad("chunks", "ints, -1, None, 'auto' or block lengths per axis");
      blocks.push_back(e.scalar.i);
    }
    return chunk_spec_of_blocks(blocks, axis_len, axis);
  }
  x.bad("chunks", "ints, -1, None, 'auto' or block lengths per axis");
}

Value rechunk_call(Args& x) {
  x.bind();
  Array a = x.array("x");
  const Value& c = x.get("chunks");
  std::vector<ChunkSpec> spec;
  if (c.is_sequence()) {
    if (c.items.size() != a.ndim())
      throw ValueError("rechunk(): chunks name " + std::to_string(c.items.size()) + " axes; the array has " +
                       std::to_string(a.ndim()) + " (shape " + shape_str(a.shape()) + ")");
    for (size_t d = 0; d < c.items.size(); ++d) spec.push_back(axis_spec(c.items[d], x, a.shape()[d], d));
  } else {
    spec.push_back(axis_spec(c, x, 0, 0));
  }
  return arr(rechunk(a, spec), x);
}
}  // namespace

void einsum_pad_rows(Rows& r) {
  row(r, "einsum", F::Linalg, "subscripts, /, *operands, optimize=True",
      "the operands' promoted dtype (NumPy's result_type)", einsum_call);
  row(r, "pad", F::Shape, "x, /, pad_width, mode='constant', *, constant_values=0, reflect_type='even'", "x's dtype",
      pad_call);
  row(r, "rechunk", F::Shape, "x, /, chunks='auto'", "x's dtype", rechunk_call, {}, true);
  row(r, "sliding_window_view", F::Shape, "x, window_shape, axis=None, *, subok=False, writeable=False", "x's dtype",
      [](Args& x) {
        x.bind();
        if (x.boolean("writeable"))
          throw ValueError("sliding_window_view(): b2lazy arrays are read-only; writeable must be False");
        (void)x.boolean("subok");
        return arr(sliding_window_view(x.array("x"), x.integers("window_shape"), x.opt_axes("axis")), x);
      });
}

}  // namespace b2lazy::expr
