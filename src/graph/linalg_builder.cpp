// Builds contractions and axis permutations: NumPy's shape rules, 1-d promotion,
// batch broadcasting, result dtypes and argument checks.
#include <algorithm>
#include <set>

#include "b2lazy/array.hpp"
#include "b2lazy/error.hpp"
#include "graph/axes.hpp"
#include "graph/contract.hpp"
#include "ops/linalg/gram_node.hpp"
#include "ops/linalg/matmul_node.hpp"
#include "ops/shape/permute_node.hpp"
#include "ops/shape/reshape_node.hpp"

namespace b2lazy {

namespace {

std::string ints_str(const std::vector<int>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

// x with `n` new leading axes.
Array with_leading_axes(const Array& x, size_t n) {
  if (!n) return x;
  std::vector<Index> ix(n, Index::newaxis());
  ix.push_back(Index::ellipsis());
  return x[ix];
}

}  // namespace

Array contract(const Array& a, const Array& b, size_t nbatch, size_t nm, size_t nk, size_t nn, Shape out_shape) {
  const DType t = promote(a.dtype(), b.dtype());
  if (t == DType::F16)  // NumPy's float16 products accumulate in float32 and round once
    return contract(a.astype(DType::F32), b.astype(DType::F32), nbatch, nm, nk, nn, std::move(out_shape))
        .astype(DType::F16);
  Array ca = a.dtype() == t ? a : a.astype(t);
  Array cb = b.dtype() == t ? b : b.astype(t);
  return Array(std::make_shared<MatmulNode>(ca.node(), cb.node(), nbatch, nm, nk, nn, std::move(out_shape)));
}

Array permute_dims(const Array& x, const std::vector<int>& axes) {
  const size_t n = x.ndim();
  std::vector<int> perm;
  std::set<int> seen;
  bool valid = axes.size() == n;
  for (int a : axes) {
    const int d = normalize_axis(a, n, "permute_dims", x.shape());
    if (!seen.insert(d).second) valid = false;
    perm.push_back(d);
  }
  if (!valid)
    throw ValueError("permute_dims: axes " + ints_str(axes) +
                     " are not a permutation of the axes of an array of shape " + shape_str(x.shape()));
  bool identity = true;
  for (size_t o = 0; o < n; ++o) identity = identity && perm[o] == static_cast<int>(o);
  if (identity) return x;
  return Array(std::make_shared<PermuteNode>(x.node(), std::move(perm)));
}

Array matrix_transpose(const Array& x) {
  if (x.ndim() < 2)
    throw ValueError("matrix_transpose: the array of shape " + shape_str(x.shape()) + " has fewer than 2 dimensions");
  std::vector<int> perm;
  for (size_t d = 0; d < x.ndim(); ++d) perm.push_back(static_cast<int>(d));
  std::swap(perm[x.ndim() - 2], perm[x.ndim() - 1]);
  return permute_dims(x, perm);
}

Array matmul(const Array& a_in, const Array& b_in) {
  if (a_in.ndim() == 0 || b_in.ndim() == 0)
    throw ValueError("matmul: operands must have at least 1 dimension, got shapes " + shape_str(a_in.shape()) +
                     " and " + shape_str(b_in.shape()) + " (use * for scalars)");
  const bool a_vec = a_in.ndim() == 1, b_vec = b_in.ndim() == 1;
  Array a = a_vec ? a_in[{Index::newaxis(), Index::slice()}] : a_in;
  Array b = b_vec ? b_in[{Index::slice(), Index::newaxis()}] : b_in;
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  if (as.back() != bs[bs.size() - 2])
    throw ValueError("matmul: the contracted dimensions differ: a has shape " + shape_str(a_in.shape()) +
                     " and b has shape " + shape_str(b_in.shape()) + " (" + std::to_string(as.back()) +
                     " != " + std::to_string(bs[bs.size() - 2]) + ")");
  Shape ba(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2), batch;
  try {
    batch = broadcast_shapes(ba, bb);
  } catch (const ValueError&) {
    throw ValueError("matmul: the batch dimensions of a " + shape_str(a_in.shape()) + " and b " +
                     shape_str(b_in.shape()) + " do not broadcast (" + shape_str(ba) + " vs " + shape_str(bb) + ")");
  }
  a = with_leading_axes(a, batch.size() - ba.size());
  b = with_leading_axes(b, batch.size() - bb.size());
  Shape out = batch;
  out.push_back(as[as.size() - 2]);
  out.push_back(bs.back());
  // One operand the other's matrix transpose (x.T @ x, x @ x.T): a symmetric product.
  Array r = a.dtype() == b.dtype() && a.dtype() != DType::F16
                ? Array(make_matmul_node(a.node(), b.node(), batch.size(), out))
                : contract(a, b, batch.size(), 1, 1, 1, out);
  if (a_vec || b_vec) {  // drop the axes the 1-d promotion added
    std::vector<Index> ix{Index::ellipsis()};
    ix.push_back(a_vec ? Index::at(0) : Index::slice());
    ix.push_back(b_vec ? Index::at(0) : Index::slice());
    r = r[ix];
  }
  return r;
}

Array tensordot(const Array& a, const Array& b, const std::vector<int>& axes_a, const std::vector<int>& axes_b) {
  if (axes_a.size() != axes_b.size())
    throw ValueError("tensordot: axes " + ints_str(axes_a) + " of a " + shape_str(a.shape()) + " and " +
                     ints_str(axes_b) + " of b " + shape_str(b.shape()) + " must have the same length");
  std::vector<int> ca, cb;
  std::vector<bool> used_a(a.ndim()), used_b(b.ndim());
  for (size_t i = 0; i < axes_a.size(); ++i) {
    const std::string where = "tensordot (a of shape " + shape_str(a.shape()) + ", b of shape " + shape_str(b.shape());
    int da = normalize_axis(axes_a[i], a.ndim(), where + "), axes[0]", a.shape());
    int db = normalize_axis(axes_b[i], b.ndim(), where + "), axes[1]", b.shape());
    if (used_a[static_cast<size_t>(da)] || used_b[static_cast<size_t>(db)])
      throw ValueError("tensordot: repeated axis in axes " + ints_str(axes_a) + " of a " + shape_str(a.shape()) + ", " +
                       ints_str(axes_b) + " of b " + shape_str(b.shape()));
    used_a[static_cast<size_t>(da)] = used_b[static_cast<size_t>(db)] = true;
    if (a.shape()[static_cast<size_t>(da)] != b.shape()[static_cast<size_t>(db)])
      throw ValueError("tensordot: shape mismatch for sum: axis " + std::to_string(axes_a[i]) + " of a " +
                       shape_str(a.shape()) + " has length " + std::to_string(a.shape()[static_cast<size_t>(da)]) +
                       ", axis " + std::to_string(axes_b[i]) + " of b " + shape_str(b.shape()) + " has length " +
                       std::to_string(b.shape()[static_cast<size_t>(db)]));
    ca.push_back(da);
    cb.push_back(db);
  }
  std::vector<int> pa, pb;
  Shape out;
  for (size_t d = 0; d < a.ndim(); ++d)
    if (!used_a[d]) pa.push_back(static_cast<int>(d)), out.push_back(a.shape()[d]);
  const size_t nm = pa.size();
  pa.insert(pa.end(), ca.begin(), ca.end());
  pb = cb;
  for (size_t d = 0; d < b.ndim(); ++d)
    if (!used_b[d]) pb.push_back(static_cast<int>(d)), out.push_back(b.shape()[d]);
  const size_t nn = b.ndim() - cb.size();
  return contract(permute_dims(a, pa), permute_dims(b, pb), 0, nm, ca.size(), nn, out);
}

Array tensordot(const Array& a, const Array& b, int axes) {
  if (axes < 0 || static_cast<size_t>(axes) > a.ndim() || static_cast<size_t>(axes) > b.ndim())
    throw AxisError("tensordot: axes=" + std::to_string(axes) +
                    " is out of bounds: it must be between 0 and the dimensions of a " + shape_str(a.shape()) +
                    " and b " + shape_str(b.shape()));
  std::vector<int> xa, xb;
  for (int i = 0; i < axes; ++i) {
    xa.push_back(static_cast<int>(a.ndim()) - axes + i);
    xb.push_back(i);
  }
  return tensordot(a, b, xa, xb);
}

Array vecdot(const Array& a, const Array& b, int axis) {
  const std::string shapes = "a " + shape_str(a.shape()) + " and b " + shape_str(b.shape());
  if (a.ndim() == 0 || b.ndim() == 0)
    throw ValueError("vecdot: operands must have at least 1 dimension, got " + shapes);
  // NumPy's gufunc semantics: `axis` counts on each operand separately; the contracted
  // axes are moved last and the remaining axes broadcast.
  const int n = static_cast<int>(std::max(a.ndim(), b.ndim()));
  if (axis < -static_cast<int>(std::min(a.ndim(), b.ndim())) || axis >= static_cast<int>(std::min(a.ndim(), b.ndim())))
    throw AxisError("vecdot: axis " + std::to_string(axis) + " is out of bounds for " + shapes);
  const int da = axis < 0 ? axis + static_cast<int>(a.ndim()) : axis;
  const int db = axis < 0 ? axis + static_cast<int>(b.ndim()) : axis;
  if (a.shape()[static_cast<size_t>(da)] != b.shape()[static_cast<size_t>(db)])
    throw ValueError("vecdot: the contracted axis " + std::to_string(axis) + " differs: a has shape " +
                     shape_str(a.shape()) + " and b has shape " + shape_str(b.shape()));
  auto move_last = [](const Array& x, int d) {
    std::vector<int> p;
    for (int i = 0; i < static_cast<int>(x.ndim()); ++i)
      if (i != d) p.push_back(i);
    p.push_back(d);
    return permute_dims(x, p);
  };
  // Same position from the end in both (always so for a negative axis): no permutation,
  // broadcast as they are and sum over that axis.
  const bool aligned = da - static_cast<int>(a.ndim()) == db - static_cast<int>(b.ndim());
  Array pa = aligned ? a : move_last(a, da);
  const Array pb = aligned ? b : move_last(b, db);
  Shape shape;
  try {
    shape = broadcast_shapes(pa.shape(), pb.shape());
  } catch (const ValueError&) {
    throw ValueError("vecdot: shapes " + shape_str(a.shape()) + " and " + shape_str(b.shape()) +
                     " do not broadcast (axis " + std::to_string(axis) + ")");
  }
  // Elementwise product and a sum: fused and streamed; no BLAS needed for a dot per row.
  // Complex: the first operand conjugated, as the standard and np.vecdot define it.
  if (is_complex(pa.dtype())) pa = elementwise(Op::Conj, {pa});
  ReduceOptions o;
  o.axis = std::vector<int>{aligned ? n + da - static_cast<int>(a.ndim()) : n - 1};
  o.dtype = promote(a.dtype(), b.dtype());
  if (o.dtype == DType::F16)  // products in float32, one rounding at the end (as matmul)
    return sum(pa.astype(DType::F32) * pb.astype(DType::F32), o);
  return sum(pa * pb, o);
}

Array outer(const Array& a, const Array& b) {
  Array fa = a.ndim() == 1 ? a : flatten(a);
  Array fb = b.ndim() == 1 ? b : flatten(b);
  return fa[{Index::slice(), Index::newaxis()}] * fb[{Index::newaxis(), Index::slice()}];
}

}  // namespace b2lazy
