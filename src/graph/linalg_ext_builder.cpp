// b2lazy.linalg's factorisations and solvers (b2lazy/linalg.hpp): checks, the computing
// dtype, and a FactorNode (ops/linalg/factor_node.hpp) whose outputs are views of its rows.
#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "b2lazy/error.hpp"
#include "b2lazy/linalg.hpp"
#include "graph/linalg_build.hpp"
#include "ops/linalg/factor_node.hpp"
#include "ops/linalg/tiled_cholesky.hpp"

namespace b2lazy {

namespace {

Array matrices(const Array& x, const char* fn, bool square) {
  if (x.ndim() < 2)
    throw ValueError(std::string(fn) + ": x must have at least 2 dimensions (a stack of matrices), got shape " +
                     shape_str(x.shape()));
  const int64_t m = x.shape()[x.ndim() - 2], n = x.shape().back();
  if (square && m != n)
    throw ValueError(std::string(fn) + ": the matrices must be square, got shape " + shape_str(x.shape()));
  const DType t = linalg_computing(x.dtype());
  return t == x.dtype() ? x : x.astype(t);
}

std::vector<Array> unpacked(const std::shared_ptr<FactorNode>& f) {
  std::vector<Array> out;
  for (const FactorPart& p : f->parts()) out.emplace_back(std::make_shared<UnpackNode>(f, p));
  return out;
}

std::vector<Array> factor(FactorKind kind, const Array& x, FactorOptions o, const char* fn, bool square) {
  return unpacked(std::make_shared<FactorNode>(kind, std::vector<NodePtr>{matrices(x, fn, square).node()}, o, fn));
}

// --- TSQR: tall-and-skinny matrices in row panels (a reduction tree of small QRs).

std::atomic<int64_t> g_panel_bytes{int64_t(4) << 20};

// A 2-d matrix at least twice as tall as wide and larger than one panel: factored by
// panels of this many rows (at least 2n, about g_panel_bytes), else 0.
int64_t panel_rows(const Array& a) {
  if (a.ndim() != 2) return 0;
  const int64_t m = a.shape()[0], n = a.shape()[1], isz = static_cast<int64_t>(itemsize(a.dtype()));
  const int64_t panel = g_panel_bytes.load();
  if (n == 0 || m < 2 * n || m * n * isz <= panel) return 0;
  const int64_t p = std::max<int64_t>(2 * n, panel / (n * isz));
  return p < m ? p : 0;
}

Array rows(const Array& a, int64_t lo, int64_t hi) { return a[{Index::slice(lo, hi)}]; }

std::vector<Array> qr_of(const Array& a, int mode, const char* fn) {
  FactorOptions o;
  o.qr_mode = mode;
  return unpacked(std::make_shared<FactorNode>(FactorKind::QR, std::vector<NodePtr>{a.node()}, o, fn));
}

// The panels of `a` (k of p rows) as a batch (k, p, n), and the rows left (r < p).
struct Panels {
  Array batch, rest;
  int64_t k = 0, p = 0, r = 0;
};
Panels panels(const Array& a, int64_t p) {
  Panels s;
  const int64_t m = a.shape()[0], n = a.shape()[1];
  s.p = p, s.k = m / p, s.r = m - s.k * p;
  s.batch = reshape(s.k * p == m ? a : rows(a, 0, s.k * p), {s.k, p, n});
  if (s.r) s.rest = rows(a, s.k * p, m);
  return s;
}

// The panels' R factors (the batch's, the rest's if any) stacked: (k n + min(r, n), n),
// whose R is a's.
Array stack_rs(const Panels& s, int64_t n, const Array& batch_r, const Array& rest_r) {
  Array st = reshape(batch_r, {s.k * n, n});
  if (s.r) st = concat({st, rest_r}, 0);
  return st;
}

Array stacked_r(const Panels& s, int64_t n, const char* fn) {
  return stack_rs(s, n, qr_of(s.batch, 2, fn)[0], s.r ? qr_of(s.rest, 2, fn)[0] : Array());
}

// R of tall-and-skinny `a` by TSQR: one pass over `a` (each panel's R), then the R of the
// stacked R factors, by TSQR again when that is still tall. Its rows' signs may differ
// from a direct QR's (both are QR factorisations).
Array tsqr_r(const Array& a, const char* fn) {
  const int64_t p = panel_rows(a);
  if (!p) return qr_of(a, 2, fn)[0];
  return tsqr_r(stacked_r(panels(a, p), a.shape()[1], fn), fn);
}

// (Q, R) of tall-and-skinny `a` by TSQR: R as tsqr_r; Q = each panel's Q times its block of
// the stacked factors' Q, pulled by row panels (each panel of `a` factored again there: the
// Qs of all its panels are never held at once). Above the first level (`a` is the small
// stack of the panels' Rs) one factorisation serves both: its R goes up the tree and its Q
// down, so the stage the Q pass keeps of it also feeds the level above (with an R-only
// factorisation beside it, that level read `a` once more to compute the same Rs).
std::pair<Array, Array> tsqr(const Array& a, const char* fn, bool first_level = true) {
  const int64_t p = panel_rows(a);
  if (!p) {
    std::vector<Array> qr = qr_of(a, 0, fn);
    return {qr[0], qr[1]};
  }
  const int64_t n = a.shape()[1];
  const Panels s = panels(a, p);
  const std::vector<Array> fb = qr_of(s.batch, 0, fn);
  std::vector<Array> fr;
  if (s.r) fr = qr_of(s.rest, 0, fn);
  const Array stacked = first_level ? stacked_r(s, n, fn) : stack_rs(s, n, fb[1], s.r ? fr[1] : Array());
  auto [q2, r] = tsqr(stacked, fn, false);
  Array q = reshape(matmul(fb[0], reshape(rows(q2, 0, s.k * n), {s.k, n, n})), {s.k * p, n});
  if (s.r) q = concat({q, matmul(fr[0], rows(q2, s.k * n, q2.shape()[0]))}, 0);
  return {q, r};
}

}  // namespace

int64_t linalg_panel_bytes() { return g_panel_bytes.load(); }

void set_linalg_panel_bytes(int64_t bytes) {
  if (bytes < 1)
    throw ValueError("set_linalg_panel_bytes: a panel needs at least one byte, got " + std::to_string(bytes));
  g_panel_bytes.store(bytes);
}

int64_t linalg_tile_bytes() { return tiled_cholesky_tile_bytes(); }

void set_linalg_tile_bytes(int64_t bytes) {
  if (bytes < 0) throw ValueError("set_linalg_tile_bytes: bytes must be 0 or more, got " + std::to_string(bytes));
  set_tiled_cholesky_tile_bytes(bytes);
}

int64_t linalg_tiled_factorisations() { return tiled_cholesky_runs(); }

// A 2-d matrix: by tiles spilled when over max_memory (ops/linalg/tiled_cholesky.hpp).
Array linalg_cholesky(const Array& x, bool upper) {
  if (x.ndim() == 2) {
    const Array a = matrices(x, "cholesky", true);
    return Array(
        std::make_shared<TiledCholeskyNode>(SpdKind::Cholesky, std::vector<NodePtr>{a.node()}, upper, "cholesky"));
  }
  FactorOptions o;
  o.upper = upper;
  return factor(FactorKind::Cholesky, x, o, "cholesky", true)[0];
}

std::vector<Array> linalg_qr(const Array& x, const std::string& mode) {
  FactorOptions o;
  if (mode == "reduced") o.qr_mode = 0;
  else if (mode == "complete") o.qr_mode = 1;
  else if (mode == "r") o.qr_mode = 2;
  else throw ValueError("qr: mode must be 'reduced', 'complete' or 'r', got '" + mode + "'");
  if (o.qr_mode != 1) {
    const Array a = matrices(x, "qr", false);
    if (panel_rows(a)) {
      if (o.qr_mode == 2) return {tsqr_r(a, "qr")};
      auto [q, r] = tsqr(a, "qr");
      return {q, r};
    }
  }
  return factor(FactorKind::QR, x, o, "qr", false);
}

std::vector<Array> linalg_eigh(const Array& x) { return factor(FactorKind::Eigh, x, {}, "eigh", true); }

Array linalg_eigvalsh(const Array& x) {
  FactorOptions o;
  o.vectors = false;
  return factor(FactorKind::Eigh, x, o, "eigvalsh", true)[0];
}

std::vector<Array> linalg_svd(const Array& x, bool full_matrices) {
  FactorOptions o;
  o.full_matrices = full_matrices;
  const Array a = matrices(x, "svd", false);
  if (!full_matrices && a.ndim() == 2) {
    // tall and skinny: A = Q R, R = Ur S Vh, so U = Q Ur; short and wide: the SVD of A^H
    if (panel_rows(a)) {
      auto [q, r] = tsqr(a, "svd");
      std::vector<Array> usv = factor(FactorKind::SVD, r, o, "svd", false);
      return {matmul(q, usv[0]), usv[1], usv[2]};
    }
    const Array t = hermitian(a);
    if (panel_rows(t)) {
      std::vector<Array> usv = linalg_svd(t, false);  // A^H = U S Vh: A = Vh^H S U^H
      return {hermitian(usv[2]), usv[1], hermitian(usv[0])};
    }
  }
  return factor(FactorKind::SVD, x, o, "svd", false);
}

Array linalg_svdvals(const Array& x) {
  FactorOptions o;
  o.vectors = false;
  const Array a = matrices(x, "svdvals", false);
  if (a.ndim() == 2) {  // tall and skinny (or its transpose): the singular values of R
    if (panel_rows(a)) return factor(FactorKind::SVD, tsqr_r(a, "svdvals"), o, "svdvals", false)[0];
    const Array t = matrix_transpose(a);
    if (panel_rows(t)) return factor(FactorKind::SVD, tsqr_r(t, "svdvals"), o, "svdvals", false)[0];
  }
  return factor(FactorKind::SVD, a, o, "svdvals", false)[0];
}

std::vector<Array> linalg_slogdet(const Array& x) {
  std::vector<Array> r = factor(FactorKind::LU, x, {}, "slogdet", true);
  r.pop_back();  // det
  return r;
}

Array linalg_det(const Array& x) { return factor(FactorKind::LU, x, {}, "det", true)[2]; }

Array linalg_inv(const Array& x) {
  if (x.ndim() == 2) {  // LU within max_memory, the tiled Cholesky over it
    const Array a = matrices(x, "inv", true);
    return Array(std::make_shared<TiledCholeskyNode>(SpdKind::Inv, std::vector<NodePtr>{a.node()}, false, "inv"));
  }
  return factor(FactorKind::Inv, x, {}, "inv", true)[0];
}

std::vector<Array> linalg_eig(const Array& x) { return factor(FactorKind::Eig, x, {}, "eig", true); }

Array linalg_eigvals(const Array& x) {
  FactorOptions o;
  o.vectors = false;
  return factor(FactorKind::Eig, x, o, "eigvals", true)[0];
}

Array linalg_solve(const Array& a, const Array& b) {
  if (a.ndim() < 2) throw ValueError("solve: x1 must have at least 2 dimensions, got shape " + shape_str(a.shape()));
  const int64_t n = a.shape().back();
  if (a.shape()[a.ndim() - 2] != n)
    throw ValueError("solve: x1's matrices must be square, got shape " + shape_str(a.shape()));
  const bool vector = b.ndim() == 1;
  if (b.ndim() == 0) throw ValueError("solve: x2 must have at least 1 dimension");
  const int64_t rows = vector ? b.shape()[0] : b.shape()[b.ndim() - 2];
  if (rows != n)
    throw ValueError("solve: x1 " + shape_str(a.shape()) + " and x2 " + shape_str(b.shape()) +
                     " do not match (x2 must have " + std::to_string(n) + " rows" +
                     (vector ? ")" : " in its last-but-one axis)"));
  const DType t = linalg_computing(promote(a.dtype(), b.dtype()));
  Array bm = vector ? expand_dims(b, 1) : b;
  // broadcast the batch axes
  Shape ab(a.shape().begin(), a.shape().end() - 2), bb(bm.shape().begin(), bm.shape().end() - 2);
  const size_t nd = std::max(ab.size(), bb.size());
  Shape batch(nd, 1);
  for (size_t i = 0; i < nd; ++i) {
    const int64_t x = i < nd - ab.size() ? 1 : ab[i - (nd - ab.size())];
    const int64_t y = i < nd - bb.size() ? 1 : bb[i - (nd - bb.size())];
    if (x != y && x != 1 && y != 1)
      throw ValueError("solve: the batch shapes of x1 " + shape_str(a.shape()) + " and x2 " + shape_str(b.shape()) +
                       " do not broadcast");
    batch[i] = x == 1 ? y : x;
  }
  Shape as = batch, bs = batch;
  as.insert(as.end(), {n, n});
  bs.insert(bs.end(), {n, bm.shape().back()});
  Array ac = a.dtype() == t ? a : a.astype(t), bc = bm.dtype() == t ? bm : bm.astype(t);
  if (ac.shape() != as) ac = broadcast_to(ac, as);
  if (bc.shape() != bs) bc = broadcast_to(bc, bs);
  Array x;
  if (nd == 0) {  // one matrix: LU within max_memory, the tiled Cholesky over it
    x = Array(std::make_shared<TiledCholeskyNode>(SpdKind::Solve, std::vector<NodePtr>{ac.node(), bc.node()}, false,
                                                  "solve"));
  } else {
    auto f = std::make_shared<FactorNode>(FactorKind::Solve, std::vector<NodePtr>{ac.node(), bc.node()},
                                          FactorOptions{}, "solve");
    x = unpacked(f)[0];
  }
  if (vector) x = squeeze(x, std::vector<int>{static_cast<int>(x.ndim()) - 1});
  return x;
}

}  // namespace b2lazy
