// Builds integer-array indexing nodes: axis normalisation and bounds checks.
#include "b2lazy/array.hpp"
#include "b2lazy/error.hpp"
#include "graph/axes.hpp"
#include "ops/index/mask_node.hpp"
#include "ops/index/take_node.hpp"
#include "ops/shape/reshape_node.hpp"
#include "plan/chunking.hpp"

namespace b2lazy {

Array take(const Array& x_in, const std::vector<int64_t>& indices, const Shape& index_shape, std::optional<int> axis) {
  if (prod(index_shape) != static_cast<int64_t>(indices.size()))
    throw ValueError("take: " + std::to_string(indices.size()) + " indices do not fill the index shape " +
                     shape_str(index_shape));
  Array x = x_in;
  int a = 0;
  if (!axis) {
    x = flatten(x);
  } else {
    a = normalize_axis(*axis, x.ndim(), "take", x.shape());
  }
  const int64_t len = x.shape()[static_cast<size_t>(a)];
  auto norm = std::make_shared<std::vector<int64_t>>(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) {
    const int64_t v = indices[i];
    if (v < -len || v >= len)
      throw IndexError("take: index " + std::to_string(v) + " is out of bounds for axis " + std::to_string(a) +
                       " with size " + std::to_string(len));
    (*norm)[i] = v < 0 ? v + len : v;
  }
  return Array(std::make_shared<TakeNode>(x.node(), static_cast<size_t>(a),
                                          std::vector<std::shared_ptr<const std::vector<int64_t>>>{std::move(norm)},
                                          index_shape));
}

Array take_points(const Array& x, size_t axis, const std::vector<std::vector<int64_t>>& indices,
                  const Shape& index_shape) {
  if (indices.empty() || axis + indices.size() > x.ndim())
    throw IndexError("take_points: " + std::to_string(indices.size()) + " index arrays from axis " +
                     std::to_string(axis) + " do not fit an array of shape " + shape_str(x.shape()));
  std::vector<std::shared_ptr<const std::vector<int64_t>>> norm;
  for (size_t t = 0; t < indices.size(); ++t) {
    if (prod(index_shape) != static_cast<int64_t>(indices[t].size()))
      throw ValueError("take_points: index array " + std::to_string(t) + " does not fill the index shape " +
                       shape_str(index_shape));
    const int64_t len = x.shape()[axis + t];
    auto v = std::make_shared<std::vector<int64_t>>(indices[t].size());
    for (size_t i = 0; i < v->size(); ++i) {
      const int64_t w = indices[t][i];
      if (w < -len || w >= len)
        throw IndexError("index " + std::to_string(w) + " is out of bounds for axis " + std::to_string(axis + t) +
                         " with size " + std::to_string(len));
      (*v)[i] = w < 0 ? w + len : w;
    }
    norm.push_back(std::move(v));
  }
  return Array(std::make_shared<TakeNode>(x.node(), axis, std::move(norm), index_shape));
}

// The first of the two counted passes: True values per row strip of `mask` (strips of
// ~4 MiB of values of `value_itemsize`, contiguous in C order, so strip order is NumPy's).
MaskCounts count_mask(const Array& mask, size_t value_itemsize, Context* ctx) {
  if (mask.dtype() != DType::Bool)
    throw IndexError("a mask must be boolean, got " + std::string(dtype_name(mask.dtype())));
  MaskCounts m;
  m.strip = contiguous_chunks(mask.shape(), value_itemsize, size_t(4) << 20);
  // Strips of whole rows in step with the mask's storage (what it decompresses at least):
  // whole units deep, or a divisor of a unit's depth, so no unit is cut by two strips
  // more than it must (MaskCountsNode counts a unit's strips together).
  const Node* src = aligned_storage_source(mask.node());
  const Shape unit = src ? read_unit(*src) : Shape{};
  bool rows = unit.size() == m.strip.size() && !unit.empty() && unit[0] > 0;
  for (size_t d = 1; rows && d < unit.size(); ++d) rows = m.strip[d] == mask.shape()[d];
  if (rows && m.strip[0] >= unit[0]) {
    m.strip[0] = m.strip[0] / unit[0] * unit[0];
  } else if (rows && unit[0] % m.strip[0] != 0) {
    int64_t d = m.strip[0];
    while (unit[0] % d != 0) --d;
    if (2 * d >= m.strip[0]) m.strip[0] = d;
  }
  std::vector<double> c =
      Array(std::make_shared<MaskCountsNode>(mask.node(), m.strip, rows ? unit : Shape{})).to_vector(ctx);
  m.counts.assign(c.begin(), c.end());
  return m;
}

namespace {
// A mask fits x: boolean, of x's shape.
void check_mask(const Array& x, const Array& mask) {
  if (mask.dtype() != DType::Bool)
    throw IndexError("a mask must be boolean, got " + std::string(dtype_name(mask.dtype())));
  if (mask.shape() != x.shape())
    throw IndexError("boolean index did not match indexed array: array shape is " + shape_str(x.shape()) +
                     " but the mask's is " + shape_str(mask.shape()));
}
}  // namespace

Array mask_select(const Array& x, const Array& mask, Context* ctx) {
  check_mask(x, mask);
  MaskCounts m = count_mask(mask, itemsize(x.dtype()), ctx);
  return Array(std::make_shared<MaskSelectNode>(x.node(), mask.node(), m.strip, std::move(m.counts)));
}

Array mask_select(const Array& x, const Array& mask, const MaskCounts& counted) {
  check_mask(x, mask);
  const Shape& sh = mask.shape();
  const Shape& st = counted.strip;
  const std::string where = "mask counts: strips " + shape_str(st) + " of a mask of shape " + shape_str(sh);
  bool ok = st.size() == sh.size();
  size_t k = 0;  // C-contiguous strips: ones, then one axis cut, then whole axes
  while (ok && k < st.size() && st[k] == 1) ++k;
  for (size_t d = 0; ok && x.size() && d < st.size(); ++d)
    ok = st[d] >= 1 && (d <= k || st[d] == std::max<int64_t>(1, sh[d]));
  if (!ok) throw ValueError(where + ": not strips contiguous in C order");
  const ChunkGrid g(sh, st);
  const int64_t n = x.size() == 0 ? 0 : g.nchunks();
  if (static_cast<int64_t>(counted.counts.size()) != n)
    throw ValueError(where + ": " + std::to_string(counted.counts.size()) + " counts for " + std::to_string(n) +
                     " strips");
  for (int64_t s = 0; s < n; ++s) {
    const int64_t c = counted.counts[static_cast<size_t>(s)];
    if (c < 0 || c > g.chunk_box(s).size())
      throw ValueError(where + ": strip " + std::to_string(s) + " cannot hold " + std::to_string(c) + " True values");
  }
  return Array(std::make_shared<MaskSelectNode>(x.node(), mask.node(), st, counted.counts));
}

std::vector<Array> nonzero(const Array& x, Context* ctx) {
  if (x.ndim() == 0)
    throw ValueError("nonzero: not defined for zero-dimensional arrays (use atleast_1d or expand_dims first)");
  const Array mask = x.dtype() == DType::Bool ? x : elementwise(Op::NotEqual, {x, Scalar(0)});
  MaskCounts m = count_mask(mask, sizeof(int64_t), ctx);  // counted once for all axes
  std::vector<Array> out;
  for (size_t d = 0; d < x.ndim(); ++d) {
    // The coordinate along axis d of every element: a lazy broadcast of arange(n_d).
    std::vector<int64_t> col(x.ndim(), 1);
    col[d] = x.shape()[d];
    const Array coord =
        broadcast_to(reshape(arange(0, static_cast<double>(x.shape()[d]), 1, DType::I64), col), x.shape());
    out.push_back(Array(std::make_shared<MaskSelectNode>(coord.node(), mask.node(), m.strip, m.counts)));
  }
  return out;
}

Array take_along_axis(const Array& x_in, const std::vector<int64_t>& indices, const Shape& index_shape,
                      std::optional<int> axis) {
  Array x = axis ? x_in : flatten(x_in);
  if (!axis && index_shape.size() != 1)
    throw ValueError("take_along_axis: with axis=None the indices must be 1-d, got shape " + shape_str(index_shape));
  const size_t a = static_cast<size_t>(axis ? normalize_axis(*axis, x.ndim(), "take_along_axis", x.shape()) : 0);
  if (index_shape.size() != x.ndim())
    throw ValueError("take_along_axis: the indices (shape " + shape_str(index_shape) +
                     ") must have as many dimensions as the array (shape " + shape_str(x.shape()) + ")");
  if (prod(index_shape) != static_cast<int64_t>(indices.size()))
    throw ValueError("take_along_axis: " + std::to_string(indices.size()) + " indices do not fill the index shape " +
                     shape_str(index_shape));
  // NumPy: the indices broadcast against x's shape with 1 along `axis`; every other axis
  // is indexed by its own position.
  Shape other = x.shape();
  other[a] = 1;
  Shape out;
  try {
    out = broadcast_shapes(index_shape, other);
  } catch (const ValueError&) {
    throw ValueError("take_along_axis: indices of shape " + shape_str(index_shape) +
                     " do not broadcast against the array of shape " + shape_str(x.shape()) + " along axis " +
                     std::to_string(a));
  }
  const size_t nd = x.ndim();
  const int64_t n = prod(out);
  std::vector<std::vector<int64_t>> idx(nd, std::vector<int64_t>(static_cast<size_t>(n)));
  std::vector<int64_t> pos(nd, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = 0;  // flat position in the (broadcast) index array
    for (size_t d = 0; d < nd; ++d) src = src * index_shape[d] + (index_shape[d] == 1 ? 0 : pos[d]);
    for (size_t d = 0; d < nd; ++d)
      idx[d][static_cast<size_t>(i)] = d == a ? indices[static_cast<size_t>(src)] : pos[d];
    for (size_t d = nd; d-- > 0;)
      if (++pos[d] < out[d]) break;
      else pos[d] = 0;
  }
  return take_points(x, 0, idx, out);
}

}  // namespace b2lazy
