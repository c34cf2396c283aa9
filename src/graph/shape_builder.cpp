// Shape functions built from slices, permutations and broadcasts (NumPy / Array API).
#include <algorithm>

#include "b2lazy/array.hpp"
#include "b2lazy/error.hpp"
#include "graph/axes.hpp"
#include "ops/shape/broadcast_node.hpp"
#include "ops/shape/concat_node.hpp"
#include "ops/shape/reshape_node.hpp"

namespace b2lazy {

Array expand_dims(const Array& x, int axis) {
  const int d = normalize_axis(axis, x.ndim() + 1, "expand_dims", x.shape());
  std::vector<Index> ix(static_cast<size_t>(d), Index::slice());
  ix.push_back(Index::newaxis());
  return x[ix];
}

Array squeeze(const Array& x, const std::optional<std::vector<int>>& axes) {
  std::vector<bool> drop(x.ndim(), false);
  if (!axes) {
    for (size_t d = 0; d < x.ndim(); ++d) drop[d] = x.shape()[d] == 1;
  } else {
    for (int d : normalize_axis_list(*axes, x.ndim(), "squeeze", x.shape())) {
      if (x.shape()[static_cast<size_t>(d)] != 1)
        throw ValueError("squeeze: cannot select axis " + std::to_string(d) + " of shape " + shape_str(x.shape()) +
                         ": its length is not 1");
      drop[static_cast<size_t>(d)] = true;
    }
  }
  std::vector<Index> ix;
  for (size_t d = 0; d < x.ndim(); ++d) ix.push_back(drop[d] ? Index::at(0) : Index::slice());
  return x[ix];
}

Array flip(const Array& x, const std::optional<std::vector<int>>& axes) {
  std::vector<bool> rev(x.ndim(), !axes.has_value());
  if (axes)
    for (int d : normalize_axis_list(*axes, x.ndim(), "flip", x.shape())) rev[static_cast<size_t>(d)] = true;
  std::vector<Index> ix;
  for (size_t d = 0; d < x.ndim(); ++d) ix.push_back(rev[d] ? Index::slice({}, {}, -1) : Index::slice());
  return x[ix];
}

Array moveaxis(const Array& x, const std::vector<int>& source, const std::vector<int>& destination) {
  if (source.size() != destination.size())
    throw ValueError("moveaxis: source and destination must have the same number of axes");
  std::vector<int> src = normalize_axis_list(source, x.ndim(), "moveaxis", x.shape());
  std::vector<int> dst = normalize_axis_list(destination, x.ndim(), "moveaxis", x.shape());
  std::vector<int> rest;
  for (int d = 0; d < static_cast<int>(x.ndim()); ++d)
    if (std::find(src.begin(), src.end(), d) == src.end()) rest.push_back(d);
  std::vector<int> perm(x.ndim(), -1);
  for (size_t i = 0; i < src.size(); ++i) perm[static_cast<size_t>(dst[i])] = src[i];
  size_t r = 0;
  for (auto& p : perm)
    if (p < 0) p = rest[r++];
  return permute_dims(x, perm);
}

Array broadcast_to(const Array& x, const Shape& shape) {
  Shape b;
  try {
    b = broadcast_shapes(x.shape(), shape);
  } catch (const ValueError&) {
    b.clear();
  }
  if (b != shape || x.ndim() > shape.size())
    throw ValueError("broadcast_to: an array of shape " + shape_str(x.shape()) + " cannot be broadcast to " +
                     shape_str(shape));
  if (x.shape() == shape) return x;
  return Array(std::make_shared<BroadcastNode>(x.node(), shape));
}

Array reshape(const Array& x, const std::vector<int64_t>& shape) {
  Shape out(shape.begin(), shape.end());
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == -1) {
      if (infer) throw ValueError("reshape: can only specify one unknown dimension (-1), got " + shape_str(out));
      infer = d;
    } else if (out[d] < 0) {
      throw ValueError("reshape: negative dimension " + std::to_string(out[d]) + " at position " + std::to_string(d) +
                       " of " + shape_str(out));
    } else if (__builtin_mul_overflow(known, out[d], &known)) {
      throw ValueError("reshape: cannot reshape array of size " + std::to_string(x.size()) + " into shape " +
                       shape_str(out) + " (more elements than fit in int64)");
    }
  }
  if (infer) {
    if (known == 0 || x.size() % known != 0)
      throw ValueError("reshape: cannot reshape array of size " + std::to_string(x.size()) + " into shape " +
                       shape_str(out));
    out[*infer] = x.size() / known;
  }
  if (prod(out) != x.size())
    throw ValueError("reshape: cannot reshape array of size " + std::to_string(x.size()) + " into shape " +
                     shape_str(out));
  if (out == x.shape()) return x;
  return Array(std::make_shared<ReshapeNode>(x.node(), std::move(out)));
}

Array flatten(const Array& x) { return reshape(x, {-1}); }

Array concat(const std::vector<Array>& xs, std::optional<int> axis) {
  if (xs.empty()) throw ValueError("concat: need at least one array to concatenate");
  std::vector<Array> in = xs;
  if (!axis) {  // flattened, as NumPy's axis=None
    for (auto& x : in) x = flatten(x);
  }
  const size_t nd = in[0].ndim();
  if (nd == 0) throw ValueError("concat: zero-dimensional arrays cannot be concatenated");
  const int a = axis ? normalize_axis(*axis, nd, "concat", in[0].shape()) : 0;
  DType t = in[0].dtype();
  for (size_t k = 0; k < in.size(); ++k) {
    if (in[k].ndim() != nd)
      throw ValueError("concat: all arrays must have the same number of dimensions; array 0 has shape " +
                       shape_str(in[0].shape()) + ", array " + std::to_string(k) + " has shape " +
                       shape_str(in[k].shape()));
    for (size_t d = 0; d < nd; ++d)
      if (static_cast<int>(d) != a && in[k].shape()[d] != in[0].shape()[d])
        throw ValueError("concat: array " + std::to_string(k) + " of shape " + shape_str(in[k].shape()) +
                         " does not match array 0 of shape " + shape_str(in[0].shape()) + " along axis " +
                         std::to_string(d));
    t = promote(t, in[k].dtype());
  }
  std::vector<NodePtr> nodes;
  for (auto& x : in) nodes.push_back((x.dtype() == t ? x : x.astype(t)).node());
  if (nodes.size() == 1) return Array(nodes[0]);
  return Array(std::make_shared<ConcatNode>(std::move(nodes), static_cast<size_t>(a)));
}

Array stack(const std::vector<Array>& xs, int axis) {
  if (xs.empty()) throw ValueError("stack: need at least one array to stack");
  std::vector<Array> in;
  for (size_t k = 0; k < xs.size(); ++k) {
    if (xs[k].shape() != xs[0].shape())
      throw ValueError("stack: all arrays must have the same shape; array 0 has shape " + shape_str(xs[0].shape()) +
                       ", array " + std::to_string(k) + " has shape " + shape_str(xs[k].shape()));
    in.push_back(expand_dims(xs[k], axis));
  }
  const int a = normalize_axis(axis, xs[0].ndim() + 1, "stack", xs[0].shape());
  return concat(in, a);
}

Array roll(const Array& x, const std::vector<int64_t>& shifts, const std::optional<std::vector<int>>& axes) {
  if (!axes) {
    if (shifts.size() != 1) throw ValueError("roll: with axis=None, shift must be a single integer");
    if (x.ndim() == 1) return roll(x, shifts, std::vector<int>{0});
    return reshape(roll(flatten(x), shifts, std::vector<int>{0}), {x.shape().begin(), x.shape().end()});
  }
  std::vector<int64_t> sh = shifts;
  if (sh.size() == 1 && axes->size() > 1) sh.assign(axes->size(), shifts[0]);
  if (sh.size() != axes->size()) throw ValueError("roll: shift and axis must have the same length");
  Array r = x;
  for (size_t i = 0; i < axes->size(); ++i) {
    const int d = normalize_axis((*axes)[i], x.ndim(), "roll", x.shape());
    const int64_t n = x.shape()[static_cast<size_t>(d)];
    if (n == 0) continue;
    const int64_t s = ((sh[i] % n) + n) % n;
    if (s == 0) continue;
    std::vector<Index> head(static_cast<size_t>(d), Index::slice()), tail = head;
    head.push_back(Index::slice(n - s, {}));
    tail.push_back(Index::slice({}, n - s));
    r = concat({r[head], r[tail]}, d);
  }
  return r;
}

}  // namespace b2lazy
