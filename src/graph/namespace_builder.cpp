// Array API functions of issue #15: eye, tril, triu, diagonal, tile and repeat on their
// own lazy nodes; trace, diff, meshgrid, broadcast_arrays and unstack composed of others.
#include <algorithm>
#include <memory>

#include "b2lazy/array.hpp"
#include "b2lazy/error.hpp"
#include "graph/axes.hpp"
#include "ops/construct/eye_node.hpp"
#include "ops/shape/axis_map_node.hpp"
#include "ops/shape/diagonal_node.hpp"
#include "ops/shape/triangle_node.hpp"

namespace b2lazy {

namespace {
void check_matrix(const Array& x, const char* fn) {
  if (x.ndim() < 2)
    throw ValueError(std::string(fn) + ": the array must have at least two dimensions, got shape " +
                     shape_str(x.shape()));
}

int64_t checked_product(int64_t a, int64_t b, const char* fn) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw ValueError(std::string(fn) + ": the result would have more than 2**63 - 1 elements along an axis");
  return r;
}
}  // namespace

Array eye(int64_t n_rows, int64_t n_cols, int64_t k, DType dtype) {
  if (n_rows < 0 || n_cols < 0)
    throw ValueError("eye: negative dimensions are not allowed, got (" + std::to_string(n_rows) + ", " +
                     std::to_string(n_cols) + ")");
  k = std::clamp(k, -n_rows, n_cols);  // beyond the matrix: no ones, the same as at its edge
  return Array(std::make_shared<EyeNode>(dtype, n_rows, n_cols, k));
}

Array tril(const Array& x, int64_t k) {
  check_matrix(x, "tril");
  return Array(std::make_shared<TriangleNode>(x.node(), k, true));
}

Array triu(const Array& x, int64_t k) {
  check_matrix(x, "triu");
  return Array(std::make_shared<TriangleNode>(x.node(), k, false));
}

Array diagonal(const Array& x, int64_t offset) {
  check_matrix(x, "diagonal");
  return Array(std::make_shared<DiagonalNode>(x.node(), offset));
}

Array tile(const Array& x, const std::vector<int64_t>& reps) {
  for (size_t i = 0; i < reps.size(); ++i)
    if (reps[i] < 0)
      throw ValueError("tile: repetitions must be non-negative, got " + std::to_string(reps[i]) + " at position " +
                       std::to_string(i));
  const size_t nd = std::max(reps.size(), x.ndim());
  Array in = x;
  if (x.ndim() < nd) {  // leading axes of length 1
    std::vector<int64_t> s(nd - x.ndim(), 1);
    s.insert(s.end(), x.shape().begin(), x.shape().end());
    in = reshape(x, s);
  }
  std::vector<int64_t> r(nd - reps.size(), 1);
  r.insert(r.end(), reps.begin(), reps.end());
  Shape out(nd);
  std::vector<AxisMapNode::AxisMap> maps(nd);
  bool identity = true;
  for (size_t d = 0; d < nd; ++d) {
    out[d] = checked_product(in.shape()[d], r[d], "tile");
    if (r[d] != 1 && in.shape()[d] > 0) maps[d].kind = AxisMapNode::AxisMap::Kind::Tile, identity = false;
  }
  if (prod(out) == 0) return zeros(out, x.dtype());  // nothing to read
  if (identity) return in;
  return Array(std::make_shared<AxisMapNode>(in.node(), std::move(out), std::move(maps)));
}

namespace {
// x (flattened when axis is nullopt) and the normalised axis repeat works along.
std::pair<Array, size_t> repeat_axis(const Array& x, std::optional<int> axis) {
  if (!axis) return {flatten(x), 0};
  if (x.ndim() == 0) throw AxisError("repeat: axis " + std::to_string(*axis) + " is out of bounds for a 0-d array");
  return {x, static_cast<size_t>(normalize_axis(*axis, x.ndim(), "repeat", x.shape()))};
}

Array repeat_with(const Array& in, size_t d, AxisMapNode::AxisMap map, int64_t length) {
  Shape out = in.shape();
  out[d] = length;
  if (prod(out) == 0) return zeros(out, in.dtype());
  std::vector<AxisMapNode::AxisMap> maps(in.ndim());
  maps[d] = std::move(map);
  return Array(std::make_shared<AxisMapNode>(in.node(), std::move(out), std::move(maps)));
}
}  // namespace

Array repeat(const Array& x, int64_t repeats, std::optional<int> axis) {
  if (repeats < 0) throw ValueError("repeat: repeats must be non-negative, got " + std::to_string(repeats));
  auto [in, d] = repeat_axis(x, axis);
  if (repeats == 1) return in;
  AxisMapNode::AxisMap m;
  m.kind = AxisMapNode::AxisMap::Kind::Repeat;
  m.each = std::max<int64_t>(repeats, 1);
  return repeat_with(in, d, std::move(m), checked_product(in.shape()[d], repeats, "repeat"));
}

Array repeat(const Array& x, const std::vector<int64_t>& repeats, std::optional<int> axis) {
  auto [in, d] = repeat_axis(x, axis);
  const int64_t n = in.shape()[d];
  if (repeats.size() == 1) return repeat(x, repeats[0], axis);
  if (static_cast<int64_t>(repeats.size()) != n)
    throw ValueError("repeat: " + std::to_string(repeats.size()) + " repeats for an axis of length " +
                     std::to_string(n) + " (shape " + shape_str(in.shape()) + ")");
  auto ends = std::make_shared<std::vector<int64_t>>(repeats.size());
  int64_t total = 0;
  for (size_t j = 0; j < repeats.size(); ++j) {
    if (repeats[j] < 0)
      throw ValueError("repeat: repeats must be non-negative, got " + std::to_string(repeats[j]) + " at position " +
                       std::to_string(j));
    if (__builtin_add_overflow(total, repeats[j], &total))
      throw ValueError("repeat: the repeats add up to more than 2**63 - 1");
    (*ends)[j] = total;
  }
  AxisMapNode::AxisMap m;
  m.kind = AxisMapNode::AxisMap::Kind::Repeat;
  m.ends = std::move(ends);
  return repeat_with(in, d, std::move(m), total);
}

Array trace(const Array& x, int64_t offset, std::optional<DType> dtype) {
  check_matrix(x, "trace");
  ReduceOptions o;
  o.axis = std::vector<int>{-1};
  o.dtype = dtype;
  return sum(diagonal(x, offset), o);
}

Array diff(const Array& x, int axis, int64_t n, const std::optional<Array>& prepend,
           const std::optional<Array>& append) {
  if (x.ndim() == 0) throw ValueError("diff: the array must have at least one dimension");
  const int d = normalize_axis(axis, x.ndim(), "diff", x.shape());
  if (n < 0) throw ValueError("diff: order n must be non-negative, got " + std::to_string(n));
  if (n == 0) return x;  // as NumPy: prepend and append are not joined
  std::vector<Array> parts;
  for (const std::optional<Array>* extra : {&prepend, static_cast<const std::optional<Array>*>(nullptr), &append}) {
    if (!extra) {
      parts.push_back(x);
      continue;
    }
    if (!*extra) continue;
    Array e = **extra;
    if (e.ndim() == 0) {  // a scalar: one slice along the axis
      Shape s = x.shape();
      s[static_cast<size_t>(d)] = 1;
      e = broadcast_to(e, s);
    }
    parts.push_back(e);
  }
  Array y = parts.size() > 1 ? concat(parts, d) : x;
  std::vector<Index> hi(static_cast<size_t>(d), Index::slice()), lo = hi;
  hi.push_back(Index::slice(1, {}));
  lo.push_back(Index::slice({}, -1));
  for (int64_t k = 0; k < n && y.shape()[static_cast<size_t>(d)] > 0; ++k)
    y = y.dtype() == DType::Bool ? elementwise(Op::NotEqual, {y[hi], y[lo]}) : y[hi] - y[lo];
  return y;
}

std::vector<Array> meshgrid(const std::vector<Array>& xs, bool xy) {
  Shape lengths;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i].ndim() != 1)
      throw ValueError("meshgrid: array " + std::to_string(i) + " must be one-dimensional, got shape " +
                       shape_str(xs[i].shape()));
    lengths.push_back(xs[i].shape()[0]);
  }
  std::vector<size_t> axis(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) axis[i] = i;
  if (xy && xs.size() > 1) {  // array 0 varies along output axis 1 (Cartesian indexing)
    std::swap(axis[0], axis[1]);
    std::swap(lengths[0], lengths[1]);
  }
  std::vector<Array> out;
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<int64_t> s(xs.size(), 1);
    s[axis[i]] = xs[i].shape()[0];
    out.push_back(broadcast_to(reshape(xs[i], s), lengths));
  }
  return out;
}

std::vector<Array> broadcast_arrays(const std::vector<Array>& xs) {
  Shape shape;
  for (const Array& x : xs) {
    try {
      shape = broadcast_shapes(shape, x.shape());
    } catch (const ValueError&) {
      std::string all;
      for (const Array& y : xs) all += (all.empty() ? "" : ", ") + shape_str(y.shape());
      throw ValueError("broadcast_arrays: shapes " + all + " cannot be broadcast together");
    }
  }
  std::vector<Array> out;
  for (const Array& x : xs) out.push_back(broadcast_to(x, shape));
  return out;
}

std::vector<Array> unstack(const Array& x, int axis) {
  if (x.ndim() == 0) throw ValueError("unstack: the array must have at least one dimension");
  const int d = normalize_axis(axis, x.ndim(), "unstack", x.shape());
  std::vector<Array> out;
  std::vector<Index> ix(static_cast<size_t>(d), Index::slice());
  ix.push_back(Index::at(0));
  for (int64_t i = 0; i < x.shape()[static_cast<size_t>(d)]; ++i) {
    ix.back() = Index::at(i);
    out.push_back(x[ix]);
  }
  return out;
}

}  // namespace b2lazy
