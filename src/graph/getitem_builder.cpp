// NumPy indexing with index arrays among basic indices (Array API "advanced indexing"),
// and zarr's orthogonal indexing, built from basic indexing, take and take_points.
#include <algorithm>

#include "b2lazy/array.hpp"
#include "b2lazy/error.hpp"
#include "ops/shape/slice_node.hpp"

namespace b2lazy {

namespace {
const IndexArray* array_of(const IndexItem& k) { return std::get_if<IndexArray>(&k); }
bool is_int(const IndexItem& k) {
  const Index* i = std::get_if<Index>(&k);
  return i && i->kind == Index::Kind::Int;
}
bool is_kind(const IndexItem& k, Index::Kind kind) {
  const Index* i = std::get_if<Index>(&k);
  return i && i->kind == kind;
}

// Axes of the array an entry consumes: an n-d boolean array n, None and ... none.
size_t consumed(const IndexItem& k) {
  if (const IndexArray* a = array_of(k)) return a->boolean ? a->shape.size() : 1;
  return is_kind(k, Index::Kind::Ellipsis) || is_kind(k, Index::Kind::NewAxis) ? 0 : 1;
}

std::vector<IndexItem> expand_ellipsis(const std::vector<IndexItem>& key, size_t ndim) {
  size_t n = 0;
  for (const auto& k : key) n += consumed(k);
  if (n > ndim)
    throw IndexError("too many indices for array: array is " + std::to_string(ndim) + "-dimensional, but " +
                     std::to_string(n) + " were indexed");
  std::vector<IndexItem> out;
  bool seen = false;
  for (const auto& k : key) {
    if (is_kind(k, Index::Kind::Ellipsis)) {
      if (seen) throw IndexError("an index can only have a single ellipsis ('...')");
      seen = true;
      out.insert(out.end(), ndim - n, Index::slice());
    } else {
      out.push_back(k);
    }
  }
  if (!seen) out.insert(out.end(), ndim - n, Index::slice());
  return out;
}

void check_dtype(const IndexArray& a, size_t axis) {
  if (!a.invalid_dtype.empty())
    throw IndexError("arrays used as indices must be of integer (or boolean) type, got " + a.invalid_dtype +
                     " for axis " + std::to_string(axis));
}

// A mask axis fits an array axis of the same length; one of length 0 fits any (it selects
// nothing), as NumPy and the Array API test suite have it.
bool mask_axis_matches(int64_t mask_len, int64_t len) { return mask_len == len || mask_len == 0; }

// n-d boolean arrays replaced by the n integer arrays of their True positions (NumPy:
// x[mask] is x[mask.nonzero()]).
std::vector<IndexItem> masks_to_arrays(const Shape& shape, const std::vector<IndexItem>& items) {
  std::vector<IndexItem> out;
  size_t axis = 0;
  for (const auto& k : items) {
    const size_t n = consumed(k);
    const IndexArray* a = array_of(k);
    if (a && a->boolean && n != 1) {
      Shape want(shape.begin() + static_cast<std::ptrdiff_t>(axis),
                 shape.begin() + static_cast<std::ptrdiff_t>(axis + n));
      bool match = a->shape.size() == want.size();
      for (size_t d = 0; match && d < n; ++d) match = mask_axis_matches(a->shape[d], want[d]);
      if (!match)
        throw IndexError("boolean index did not match indexed array along axes " + std::to_string(axis) + ".." +
                         std::to_string(axis + n - 1) + "; array shape is " + shape_str(want) + " but the mask's is " +
                         shape_str(a->shape));
      std::vector<IndexArray> coords(n);
      const Shape st = c_strides(a->shape);
      for (size_t i = 0; i < a->values.size(); ++i) {
        if (!a->values[i]) continue;
        for (size_t d = 0; d < n; ++d) coords[d].values.push_back(static_cast<int64_t>(i) / st[d] % a->shape[d]);
      }
      for (auto& c : coords) {
        c.shape = {static_cast<int64_t>(c.values.size())};
        out.push_back(std::move(c));
      }
    } else {
      out.push_back(k);
    }
    axis += n;
  }
  return out;
}

// An index array for one axis: integers checked against `length` (a 1-d boolean array
// becomes the positions of its True values).
IndexArray index_values(const IndexArray& a, size_t axis, int64_t length) {
  check_dtype(a, axis);
  if (a.boolean) {
    if (a.shape.size() != 1)
      throw IndexError("a boolean index array for one axis must be 1-d, got " + std::to_string(a.shape.size()) +
                       " dimensions for axis " + std::to_string(axis));
    if (!mask_axis_matches(a.shape[0], length))
      throw IndexError("boolean index did not match indexed array along axis " + std::to_string(axis) +
                       "; size of axis is " + std::to_string(length) + " but size of corresponding boolean axis is " +
                       std::to_string(a.shape[0]));
    IndexArray r;
    for (size_t i = 0; i < a.values.size(); ++i)
      if (a.values[i]) r.values.push_back(static_cast<int64_t>(i));
    r.shape = {static_cast<int64_t>(r.values.size())};
    return r;
  }
  for (int64_t v : a.values)
    if (v < -length || v >= length)
      throw IndexError("index " + std::to_string(v) + " is out of bounds for axis " + std::to_string(axis) +
                       " with size " + std::to_string(length));
  return a;
}

// The basic part of a key: arrays (and, with `ints_too`, integers) at `replaced` become `:`.
std::vector<Index> basic_part(const std::vector<IndexItem>& items, const std::vector<size_t>& replaced) {
  std::vector<Index> b;
  for (size_t i = 0; i < items.size(); ++i) {
    if (std::find(replaced.begin(), replaced.end(), i) != replaced.end()) b.push_back(Index::slice());
    else b.push_back(std::get<Index>(items[i]));
  }
  return b;
}

// `a` repeated to `shape` (NumPy broadcasting; a's shape already checked to broadcast).
std::vector<int64_t> broadcast_values(const IndexArray& a, const Shape& shape) {
  const size_t nd = shape.size(), off = nd - a.shape.size();
  const int64_t n = prod(shape);
  std::vector<int64_t> out(static_cast<size_t>(n));
  const Shape ast = c_strides(a.shape);
  Shape pos(nd, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = 0;
    for (size_t d = off; d < nd; ++d) src += (a.shape[d - off] == 1 ? 0 : pos[d]) * ast[d - off];
    out[static_cast<size_t>(i)] = a.values[static_cast<size_t>(src)];
    for (size_t d = nd; d-- > 0;)
      if (++pos[d] < shape[d]) break;
      else pos[d] = 0;
  }
  return out;
}
}  // namespace

namespace {
bool zero_d_bool(const IndexItem& k) {
  const IndexArray* a = array_of(k);
  return a && a->boolean && a->shape.empty();
}
}  // namespace

Array getitem(const Array& x, const std::vector<IndexItem>& key_in, Context* ctx) {
  // A 0-d boolean index is an index array on a new axis of length 1: [0] for True, []
  // for False (NumPy). Alone among basic indices that is None and, for False, an empty
  // slice of that axis; with integers, arrays or other 0-d booleans, which all broadcast
  // together, it is the new axes first, then the key with those arrays on them.
  if (std::any_of(key_in.begin(), key_in.end(), zero_d_bool)) {
    const std::vector<IndexItem> items = expand_ellipsis(key_in, x.ndim());
    const auto advanced =
        std::count_if(items.begin(), items.end(), [](const IndexItem& k) { return array_of(k) || is_int(k); });
    std::vector<Index> with_axes;  // x with a new axis for each 0-d boolean and each None
    std::vector<IndexItem> key;    // the key on those axes
    std::vector<Index> cut;        // alone: [0:0] on the axis of a False, applied to the result
    for (const auto& k : items) {
      if (zero_d_bool(k)) {
        const bool v = array_of(k)->values.at(0) != 0;
        with_axes.push_back(Index::newaxis());
        key.push_back(IndexArray{v ? std::vector<int64_t>{0} : std::vector<int64_t>{}, {v ? 1 : 0}, false, {}});
        cut.push_back(v ? Index::slice() : Index::slice(0, 0));
      } else if (is_kind(k, Index::Kind::NewAxis)) {
        with_axes.push_back(Index::newaxis());
        key.push_back(Index::slice());
        cut.push_back(Index::slice());
      } else {
        with_axes.insert(with_axes.end(), consumed(k), Index::slice());
        key.push_back(k);
        if (!is_int(k)) cut.push_back(Index::slice());
      }
    }
    if (advanced == 1) {
      std::vector<IndexItem> basic;
      for (const auto& k : items) basic.push_back(zero_d_bool(k) ? IndexItem(Index::newaxis()) : k);
      return getitem(x, basic, ctx)[cut];
    }
    return getitem(x[with_axes], key, ctx);
  }
  const std::vector<IndexItem>& key = key_in;
  std::vector<size_t> arrays;
  for (size_t i = 0; i < key.size(); ++i)
    if (array_of(key[i])) arrays.push_back(i);
  if (arrays.empty()) return x[basic_part(key, {})];
  const IndexArray* first = array_of(key[0]);
  if (key.size() == 1 && first->boolean && first->shape == x.shape() && x.ndim() > 0) {
    // A mask of the array's whole shape: counted in one pass, values pulled lazily.
    std::vector<uint8_t> m(first->values.begin(), first->values.end());
    auto owner = std::make_shared<std::vector<uint8_t>>(std::move(m));
    Array mask = from_buffer(owner->data(), DType::Bool, x.shape(), {}, owner, "mask");
    return mask_select(x, mask, ctx);
  }
  const std::vector<IndexItem> items = masks_to_arrays(x.shape(), expand_ellipsis(key, x.ndim()));
  std::vector<size_t> axis_of(items.size(), 0), advanced;
  arrays.clear();
  for (size_t i = 0, d = 0; i < items.size(); ++i) {
    if (!is_kind(items[i], Index::Kind::NewAxis)) axis_of[i] = d++;
    if (array_of(items[i])) arrays.push_back(i);
    if (array_of(items[i]) || is_int(items[i])) advanced.push_back(i);
  }
  const bool adjacent = advanced.back() - advanced.front() + 1 == advanced.size();
  if (arrays.size() == 1) {  // the basic part, then a take along the array's axis
    const size_t where = arrays[0];
    const IndexArray idx = index_values(*array_of(items[where]), axis_of[where], x.shape()[axis_of[where]]);
    Array y = x[basic_part(items, {where})];
    int p = 0;  // the array's axis in y: one per slice or None before it
    for (size_t i = 0; i < where; ++i) p += is_int(items[i]) ? 0 : 1;
    Array r = take(y, idx.values, idx.shape, p);
    if (!adjacent && p != 0 && !idx.shape.empty()) {  // NumPy puts the array's axes first
      std::vector<int> order;
      const int ni = static_cast<int>(idx.shape.size());
      for (int a = p; a < p + ni; ++a) order.push_back(a);
      for (int a = 0; a < static_cast<int>(r.ndim()); ++a)
        if (a < p || a >= p + ni) order.push_back(a);
      r = permute_dims(r, order);
    }
    return r;
  }
  // Several arrays (with the integers among them): broadcast together, points selected.
  std::vector<IndexArray> idxs;
  for (size_t i : advanced) {
    const size_t ax = axis_of[i];
    if (const IndexArray* a = array_of(items[i])) {
      idxs.push_back(index_values(*a, ax, x.shape()[ax]));
    } else {
      IndexArray s{{std::get<Index>(items[i]).i}, {}, false, {}};
      idxs.push_back(index_values(s, ax, x.shape()[ax]));
    }
  }
  Shape shape;
  try {
    for (const auto& a : idxs) shape = broadcast_shapes(shape, a.shape);
  } catch (const ValueError&) {
    std::string shapes;
    for (const auto& a : idxs) shapes += " " + shape_str(a.shape);
    throw IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes" + shapes);
  }
  std::vector<std::vector<int64_t>> values;
  for (const auto& a : idxs) values.push_back(broadcast_values(a, shape));
  // Every entry of y's key keeps an axis, so entry i is axis i of y.
  Array y = x[basic_part(items, advanced)];
  if (adjacent) return take_points(y, advanced[0], values, shape);
  std::vector<int> order(advanced.begin(), advanced.end());
  for (int a = 0; a < static_cast<int>(y.ndim()); ++a)
    if (std::find(advanced.begin(), advanced.end(), static_cast<size_t>(a)) == advanced.end()) order.push_back(a);
  return take_points(permute_dims(y, order), 0, values, shape);
}

Array oindex(const Array& x, const std::vector<IndexItem>& key) {
  const std::vector<IndexItem> items = expand_ellipsis(key, x.ndim());
  std::vector<size_t> arrays;
  for (size_t i = 0; i < items.size(); ++i) {
    if (is_kind(items[i], Index::Kind::NewAxis)) throw IndexError("oindex does not take None (new axes)");
    if (array_of(items[i])) arrays.push_back(i);
  }
  std::vector<IndexArray> idxs;
  for (size_t i : arrays) {
    idxs.push_back(index_values(*array_of(items[i]), i, x.shape()[i]));
    if (idxs.back().shape.size() != 1)
      throw IndexError("oindex takes 1-d index arrays, got " + std::to_string(idxs.back().shape.size()) +
                       " dimensions for axis " + std::to_string(i));
  }
  Array y = x[basic_part(items, arrays)];
  for (size_t j = 0; j < arrays.size(); ++j) {
    int pos = 0;  // the axis in y: one per non-integer entry before it
    for (size_t i = 0; i < arrays[j]; ++i) pos += is_int(items[i]) ? 0 : 1;
    y = take(y, idxs[j].values, idxs[j].shape, pos);
  }
  return y;
}

Array Array::operator[](const std::vector<Index>& index) const {
  BasicKey k = normalize_basic_key(shape(), index);
  if (k.identity) return *this;
  return Array(std::make_shared<SliceNode>(node_, std::move(k.axes), std::move(k.out_to_in), std::move(k.out_shape)));
}

}  // namespace b2lazy
