#include "graph/assign_builder.hpp"

#include <string>
#include <utility>

#include "b2lazy/error.hpp"
#include "ops/shape/slice_node.hpp"

namespace b2lazy {

PreparedAssign prepare_assign(const Array& x, const std::vector<Index>& key, const Array& value) {
  const BasicKey k = normalize_basic_key(x.shape(), key);
  // value as NumPy takes it: cast to x's dtype, broadcast to x[key]'s shape, ...
  Array v = value.dtype() == x.dtype() ? value : value.astype(x.dtype());
  bool fits = v.ndim() <= k.out_shape.size();
  for (size_t d = 0; fits && d < v.ndim(); ++d) {
    const int64_t vs = v.shape()[v.ndim() - 1 - d], ks = k.out_shape[k.out_shape.size() - 1 - d];
    fits = vs == ks || vs == 1;
  }
  if (!fits)
    throw ValueError("x[key] = value: could not broadcast the value of shape " + shape_str(v.shape()) +
                     " into the indexed shape " + shape_str(k.out_shape) + " (x of shape " + shape_str(x.shape()) +
                     ")");
  if (v.shape() != k.out_shape) v = broadcast_to(v, k.out_shape);
  // ... then one axis per axis of x (an integer index's axis of length 1, None's dropped),
  // a slice of negative step walked forwards (the value flipped along it).
  PreparedAssign p;
  std::vector<int64_t> per_axis;
  std::vector<Index> flips;
  bool flipped = false;
  for (const SliceNode::Axis& a : k.axes) {
    per_axis.push_back(a.count);
    const bool back = a.step < 0;
    p.axes.push_back(back ? KeyAxis{a.start + (a.count - 1) * a.step, -a.step, a.count}
                          : KeyAxis{a.start, a.step, a.count});
    flips.push_back(back ? Index::slice({}, {}, -1) : Index::slice());
    flipped = flipped || back;
  }
  if (Shape(per_axis.begin(), per_axis.end()) != v.shape()) v = reshape(v, per_axis);
  if (flipped) v = v[flips];
  p.value = std::move(v);
  return p;
}

Array assign(const Array& x, const std::vector<Index>& key, const Array& value) {
  PreparedAssign p = prepare_assign(x, key, value);
  return Array(std::make_shared<AssignNode>(x.node(), p.value.node(), std::move(p.axes)));
}

}  // namespace b2lazy
