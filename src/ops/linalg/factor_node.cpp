#include "ops/linalg/factor_node.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "b2lazy/error.hpp"
#include "core/dispatch.hpp"
#include "core/saturating.hpp"
#include "ops/linalg/blas.hpp"
#include "ops/linalg/lapack.hpp"
#include "runtime/evaluation.hpp"
#include "runtime/memory_model.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {

using lapack::lint;

std::string bytes_str(int64_t b) {
  char buf[64];
  if (b >= (int64_t(1) << 30)) std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(b) / double(1 << 30));
  else if (b < (int64_t(1) << 20))
    std::snprintf(buf, sizeof buf, "%.0f KiB", std::ceil(static_cast<double>(b) / 1024.0));
  else std::snprintf(buf, sizeof buf, "%.0f MiB", std::ceil(static_cast<double>(b) / double(1 << 20)));
  return buf;
}

const char* kind_name(FactorKind k) {
  switch (k) {
    case FactorKind::Cholesky: return "cholesky";
    case FactorKind::QR: return "qr";
    case FactorKind::Eigh: return "eigh";
    case FactorKind::SVD: return "svd";
    case FactorKind::LU: return "lu";
    case FactorKind::Inv: return "inv";
    case FactorKind::Solve: return "solve";
    case FactorKind::Eig: return "eig";
  }
  return "";
}

// Row-major (rows x cols) `a` into column-major `col` (leading dimension rows).
template <class T> void to_col(const T* a, int64_t rows, int64_t cols, T* col) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) col[i + j * rows] = a[i * cols + j];
}
// Column-major `col` (leading dimension ld) into row-major (rows x cols) `out`.
template <class T, class O> void from_col(const T* col, int64_t rows, int64_t cols, int64_t ld, O* out) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) out[i * cols + j] = static_cast<O>(col[i + j * ld]);
}
template <class T> T conj_of(T v) {
  if constexpr (is_complex_v<T>) return std::conj(v);
  else return v;
}
template <class T> void identity(T* out, int64_t n) {
  std::fill(out, out + n * n, T(0));
  for (int64_t i = 0; i < n; ++i) out[i * n + i] = T(1);
}

lint as_lint(int64_t v, const std::string& fn, const Shape& shape) {
  if (v > std::numeric_limits<lint>::max())
    throw ValueError(fn + ": the matrix " + shape_str(shape) + " is too large for LAPACK's 32-bit indices");
  return static_cast<lint>(v);
}

}  // namespace

namespace {
// The outputs of one matrix's factorisation, end to end in a row of `row` elements.
std::vector<FactorPart> factor_layout(FactorKind kind, const Shape& a, int64_t nrhs, const FactorOptions& opts,
                                      bool cplx, int64_t& row) {
  const int64_t m = a[a.size() - 2], n = a.back(), k = std::min(m, n);
  std::vector<FactorPart> parts;
  row = 0;
  auto add = [&](std::string name, Shape shape, bool real = false) {
    parts.push_back({std::move(name), row, shape, real && cplx});
    row = sat_add(row, prod(shape));
  };
  switch (kind) {
    case FactorKind::Cholesky: add(opts.upper ? "U" : "L", {n, n}); break;
    case FactorKind::QR:
      if (opts.qr_mode == 1) {
        add("Q", {m, m});
        add("R", {m, n});
      } else {
        if (opts.qr_mode == 0) add("Q", {m, k});
        add("R", {k, n});
      }
      break;
    case FactorKind::Eigh:
      add("eigenvalues", {n}, true);
      if (opts.vectors) add("eigenvectors", {n, n});
      break;
    case FactorKind::SVD:
      if (opts.vectors) add("U", {m, opts.full_matrices ? m : k});
      add("S", {k}, true);
      if (opts.vectors) add("Vh", {opts.full_matrices ? n : k, n});
      break;
    case FactorKind::LU:
      add("sign", {});
      add("logabsdet", {}, true);
      add("det", {});
      break;
    case FactorKind::Inv: add("inverse", {n, n}); break;
    case FactorKind::Solve: add("x", {n, nrhs}); break;
    case FactorKind::Eig:
      add("eigenvalues", {n});
      if (opts.vectors) add("eigenvectors", {n, n});
      break;
  }
  return parts;
}

DType factor_dtype(FactorKind kind, const std::vector<NodePtr>& inputs) {
  return kind == FactorKind::Eig ? complex_of(inputs.at(0)->dtype()) : inputs.at(0)->dtype();
}

Shape factor_shape(FactorKind kind, const std::vector<NodePtr>& inputs, const FactorOptions& opts) {
  const Shape& a = inputs.at(0)->shape();
  if (a.size() < 2) throw ValueError("factor: the operand must have at least 2 dimensions");
  int64_t row = 0;
  factor_layout(kind, a, kind == FactorKind::Solve ? inputs.at(1)->shape().back() : 0, opts, false, row);
  Shape s(a.begin(), a.end() - 2);
  s.push_back(row);
  return s;
}
}  // namespace

FactorNode::FactorNode(FactorKind kind, std::vector<NodePtr> inputs, FactorOptions opts, std::string fn)
    : Node(factor_dtype(kind, inputs), factor_shape(kind, inputs, opts), inputs),
      kind_(kind),
      opts_(opts),
      fn_(std::move(fn)) {
  const Shape& s = this->inputs()[0]->shape();
  nbatch_ = s.size() - 2;
  m_ = s[nbatch_];
  n_ = s[nbatch_ + 1];
  if (kind == FactorKind::Solve) nrhs_ = this->inputs()[1]->shape().back();
  parts_ = factor_layout(kind, s, nrhs_, opts, is_complex(dtype()), row_);
}

std::string FactorNode::describe() const {
  return "factor " + std::string(kind_name(kind_)) + " of " + shape_str(inputs()[0]->shape()) + " " +
         dtype_name(inputs()[0]->dtype()) + " (" + fn_ + ")";
}

std::vector<Region> FactorNode::input_regions(const Region& region) const {
  std::vector<Region> out;
  for (const NodePtr& in : inputs()) {
    Region r;
    r.start.assign(region.start.begin(), region.start.begin() + static_cast<std::ptrdiff_t>(nbatch_));
    r.step.assign(region.step.begin(), region.step.begin() + static_cast<std::ptrdiff_t>(nbatch_));
    r.count.assign(region.count.begin(), region.count.begin() + static_cast<std::ptrdiff_t>(nbatch_));
    const bool any = region.size() > 0;
    for (size_t d = nbatch_; d < nbatch_ + 2; ++d) {
      r.start.push_back(0);
      r.step.push_back(1);
      r.count.push_back(any ? in->shape()[d] : 0);
    }
    out.push_back(std::move(r));
  }
  return out;
}

Region FactorNode::computed_region(const Region& region) const {
  Region r = region;
  r.start.back() = 0;
  r.step.back() = 1;
  r.count.back() = region.size() ? row_ : 0;
  return r;
}

int64_t FactorNode::matrix_bytes() const {
  const int64_t k = std::min(m_, n_), big = std::max(m_, n_);
  const int64_t isz = static_cast<int64_t>(itemsize(inputs()[0]->dtype()));
  int64_t items = sat_mul(2, sat_mul(m_, n_));  // the pulled matrix and its column-major copy
  if (kind_ == FactorKind::Solve) items = sat_add(items, sat_mul(2, sat_mul(n_, nrhs_)));
  int64_t work = sat_mul(64, big);  // blocked algorithms' panels
  switch (kind_) {
    case FactorKind::QR: work = sat_add(work, sat_mul(m_, opts_.qr_mode == 1 ? std::max(n_, m_) : n_)); break;
    case FactorKind::SVD:
      work = sat_add(work, sat_add(sat_mul(8, sat_mul(k, k)), sat_mul(4, big)));
      if (opts_.vectors)
        work = sat_add(work,
                       sat_add(sat_mul(m_, opts_.full_matrices ? m_ : k), sat_mul(n_, opts_.full_matrices ? n_ : k)));
      break;
    case FactorKind::Eigh: work = sat_add(work, sat_mul(3, sat_mul(n_, n_))); break;
    case FactorKind::Eig: work = sat_add(work, sat_mul(6, sat_mul(n_, n_))); break;
    default: break;
  }
  const int64_t row = sat_mul(row_, static_cast<int64_t>(itemsize(dtype())));
  return sat_add(sat_mul(sat_add(items, work), isz), row);
}

int64_t FactorNode::fill_bytes(const Region& region, const MemoryModel& m) const {
  if (region.size() == 0) return 0;
  const int64_t one = matrix_bytes();
  if (static_cast<uint64_t>(one) > m.max_memory()) {
    Shape s(inputs()[0]->shape().end() - 2, inputs()[0]->shape().end());
    throw ValueError(fn_ + ": the matrix " + shape_str(s) + " " + dtype_name(inputs()[0]->dtype()) + " is " +
                     bytes_str(sat_mul(sat_mul(m_, n_), static_cast<int64_t>(itemsize(inputs()[0]->dtype())))) + " (" +
                     bytes_str(one) + " with LAPACK's copies and workspace), over max_memory " +
                     bytes_str(static_cast<int64_t>(std::min<uint64_t>(m.max_memory(), INT64_MAX))) +
                     "; a factorisation holds one whole matrix (out of core, by TSQR: only qr, svd and svdvals of "
                     "tall-and-skinny 2-d matrices): raise max_memory");
  }
  Region sub = region;  // fill pulls the inputs of batch_run() elements at a time
  for (size_t d = 0; d < nbatch_; ++d) sub.count[d] = d == nbatch_ - 1 ? std::min(region.count[d], batch_run()) : 1;
  const std::vector<Region> ins = input_regions(sub);
  int64_t held = one;
  for (size_t i = 0; i < ins.size(); ++i)
    held = sat_add(held, sat_add(MemoryModel::region_bytes(*inputs()[i], ins[i]), m.pull_bytes(*inputs()[i], ins[i])));
  return held;
}

Shape FactorNode::preferred_chunks() const {
  Shape c(ndim(), 1);
  c.back() = std::max<int64_t>(1, row_);
  if (nbatch_ > 0) {
    const int64_t per = std::max<int64_t>(1, matrix_bytes());
    c[nbatch_ - 1] = std::clamp<int64_t>((int64_t(8) << 20) / per, 1, std::max<int64_t>(1, shape()[nbatch_ - 1]));
  }
  return c;
}

template <class T> void FactorNode::factor(const void* const* in, T* row, int64_t element) const {
  using R = lapack::real_t<T>;
  const T* a = static_cast<const T*>(in[0]);
  const int64_t m = m_, n = n_, k = std::min(m, n);
  const Shape mshape{m, n};
  auto fail = [&](const std::string& what) {
    throw LinAlgError(fn_ + ": " + what + " (the matrix at batch position " + std::to_string(element) + ")");
  };
  std::vector<T> col(static_cast<size_t>(std::max<int64_t>(1, m * n)));
  switch (kind_) {
    case FactorKind::Cholesky: {
      T* out = row;
      if (n == 0) return;
      to_col(a, n, n, col.data());
      const lint info = lapack::potrf<T>('L', as_lint(n, fn_, mshape), col.data(), static_cast<lint>(n));
      if (info > 0) fail("the matrix is not positive definite");
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
          if (opts_.upper) out[i * n + j] = j >= i ? conj_of(col[static_cast<size_t>(j + i * n)]) : T(0);
          else out[i * n + j] = i >= j ? col[static_cast<size_t>(i + j * n)] : T(0);
        }
      return;
    }
    case FactorKind::QR: {
      const bool complete = opts_.qr_mode == 1;
      const int64_t qcols = complete ? m : k, rrows = complete ? m : k;
      T* q = opts_.qr_mode == 2 ? nullptr : row;
      T* r = row + parts_.back().offset;
      std::fill(r, r + rrows * n, T(0));
      if (k == 0) {
        if (q && complete) identity(q, m);
        return;
      }
      col.resize(static_cast<size_t>(m * std::max(n, qcols)));
      to_col(a, m, n, col.data());
      std::vector<T> tau(static_cast<size_t>(k));
      const lint lm = as_lint(m, fn_, mshape), ln = as_lint(n, fn_, mshape);
      if (lapack::geqrf<T>(lm, ln, col.data(), lm, tau.data()) != 0) fail("LAPACK's geqrf failed");
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = i; j < n; ++j) r[i * n + j] = col[static_cast<size_t>(i + j * m)];
      if (!q) return;
      if (lapack::orgqr<T>(lm, static_cast<lint>(qcols), static_cast<lint>(k), col.data(), lm, tau.data()) != 0)
        fail("LAPACK's orgqr failed");
      from_col(col.data(), m, qcols, m, q);
      return;
    }
    case FactorKind::Eigh: {
      T* w = row;
      if (n == 0) return;
      to_col(a, n, n, col.data());
      std::vector<R> ev(static_cast<size_t>(n));
      const lint info = lapack::heevd<T>(opts_.vectors ? 'V' : 'N', as_lint(n, fn_, mshape), col.data(),
                                         static_cast<lint>(n), ev.data());
      if (info != 0) fail("the eigenvalue computation did not converge");
      for (int64_t i = 0; i < n; ++i) w[i] = T(ev[static_cast<size_t>(i)]);
      if (opts_.vectors) from_col(col.data(), n, n, n, row + n);
      return;
    }
    case FactorKind::SVD: {
      const bool full = opts_.full_matrices, uv = opts_.vectors;
      const int64_t ku = full ? m : k, kv = full ? n : k;
      T* u = uv ? row : nullptr;
      T* s = uv ? row + m * ku : row;
      T* vh = uv ? s + k : nullptr;
      if (k == 0) {
        if (uv && full) {
          identity(u, m);
          identity(vh, n);
        }
        return;
      }
      to_col(a, m, n, col.data());
      std::vector<R> sv(static_cast<size_t>(k));
      std::vector<T> ub(uv ? static_cast<size_t>(m * ku) : 1), vb(uv ? static_cast<size_t>(kv * n) : 1);
      const lint lm = as_lint(m, fn_, mshape), ln = as_lint(n, fn_, mshape);
      const lint info = lapack::gesdd<T>(uv ? (full ? 'A' : 'S') : 'N', lm, ln, col.data(), lm, sv.data(), ub.data(),
                                         uv ? lm : 1, vb.data(), uv ? static_cast<lint>(std::max<int64_t>(1, kv)) : 1);
      if (info != 0) fail("the SVD did not converge");
      for (int64_t i = 0; i < k; ++i) s[i] = T(sv[static_cast<size_t>(i)]);
      if (!uv) return;
      from_col(ub.data(), m, ku, m, u);
      from_col(vb.data(), kv, n, kv, vh);
      return;
    }
    case FactorKind::LU: {
      if (n == 0) {
        row[0] = T(1), row[1] = T(0), row[2] = T(1);
        return;
      }
      std::memcpy(col.data(), a, static_cast<size_t>(n * n) * sizeof(T));  // A^T, as LAPACK reads it: same det
      std::vector<lint> ipiv(static_cast<size_t>(n));
      const lint info = lapack::getrf<T>(as_lint(n, fn_, mshape), static_cast<lint>(n), col.data(),
                                         static_cast<lint>(n), ipiv.data());
      if (info > 0) {  // an exact zero on U's diagonal
        row[0] = T(0), row[1] = T(-std::numeric_limits<R>::infinity()), row[2] = T(0);
        return;
      }
      T sign(1);
      R logabs(0);
      for (int64_t i = 0; i < n; ++i) {
        const T d = col[static_cast<size_t>(i * n + i)];
        const R ad = std::abs(d);
        if (ipiv[static_cast<size_t>(i)] != static_cast<lint>(i + 1)) sign = -sign;
        sign *= d / ad;
        logabs += std::log(ad);
      }
      row[0] = sign;
      row[1] = T(logabs);
      row[2] = sign * T(std::exp(logabs));
      return;
    }
    case FactorKind::Inv: {
      if (n == 0) return;
      std::memcpy(row, a, static_cast<size_t>(n * n) * sizeof(T));  // A^T: its inverse is (A^-1)^T
      std::vector<lint> ipiv(static_cast<size_t>(n));
      const lint ln = as_lint(n, fn_, mshape);
      if (lapack::getrf<T>(ln, ln, row, ln, ipiv.data()) > 0) fail("the matrix is singular");
      if (lapack::getri<T>(ln, row, ln, ipiv.data()) != 0) fail("the matrix is singular");
      return;
    }
    case FactorKind::Solve: {
      if (n == 0 || nrhs_ == 0) return;
      const T* b = static_cast<const T*>(in[1]);
      to_col(a, n, n, col.data());
      std::vector<T> bc(static_cast<size_t>(n * nrhs_));
      to_col(b, n, nrhs_, bc.data());
      std::vector<lint> ipiv(static_cast<size_t>(n));
      const lint ln = as_lint(n, fn_, mshape);
      if (lapack::gesv<T>(ln, as_lint(nrhs_, fn_, mshape), col.data(), ln, ipiv.data(), bc.data(), ln) > 0)
        fail("the matrix is singular");
      from_col(bc.data(), n, nrhs_, n, row);
      return;
    }
    case FactorKind::Eig: break;  // (eig_factor: its row is complex for real input)
  }
}

namespace {
template <class T>
void eig_factor(const T* a, int64_t n, bool vectors, std::complex<lapack::real_t<T>>* row, const std::string& fn,
                int64_t element) {
  using C = std::complex<lapack::real_t<T>>;
  if (n == 0) return;
  std::vector<T> col(static_cast<size_t>(n * n));
  to_col(a, n, n, col.data());
  std::vector<C> vr(vectors ? static_cast<size_t>(n * n) : 1);
  const lint ln = as_lint(n, fn, Shape{n, n});
  if (lapack::geev<T>(vectors ? 'V' : 'N', ln, col.data(), ln, row, vr.data(), ln) != 0)
    throw ValueError(fn + ": the eigenvalue computation did not converge (the matrix at batch position " +
                     std::to_string(element) + ")");
  if (vectors) from_col(vr.data(), n, n, n, row + n);
}
}  // namespace

int64_t FactorNode::batch_run() const {
  if (nbatch_ == 0) return 1;
  return std::max<int64_t>(1, (int64_t(4) << 20) / std::max<int64_t>(1, matrix_bytes()));
}

std::vector<Region> FactorNode::runs(const Region& region) const {
  std::vector<Region> out;
  int64_t nb = 1;
  for (size_t d = 0; d < nbatch_; ++d) nb *= region.count[d];
  const int64_t last = nbatch_ ? region.count[nbatch_ - 1] : 1, run = batch_run();
  for (int64_t e0 = 0; e0 < nb; e0 += std::min(run, last - e0 % last)) {
    Region sub = region;
    int64_t rest = e0;
    for (size_t d = nbatch_; d-- > 0;) {
      const int64_t i = rest % region.count[d];
      rest /= region.count[d];
      sub.start[d] = region.start[d] + i * region.step[d];
      sub.count[d] = d == nbatch_ - 1 ? std::min(run, last - e0 % last) : 1;
    }
    out.push_back(std::move(sub));
  }
  return out;
}

int64_t FactorNode::first_element(const Region& region, const Region& run) const {
  int64_t e = 0;
  for (size_t d = 0; d < nbatch_; ++d) e = e * region.count[d] + (run.start[d] - region.start[d]) / region.step[d];
  return e;
}

std::vector<Region> FactorNode::pull_pieces(const Region& region, size_t input, size_t /*worker_bytes*/) const {
  if (region.size() == 0 || nbatch_ == 0 || input >= inputs().size()) return {};
  std::vector<Region> pieces;
  for (const Region& sub : runs(region)) pieces.push_back(input_regions(sub)[input]);
  if (pieces.size() < 2) return {};
  return pieces;
}

void FactorNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const bool alone = ts.can_fork && ts.eval && ts.eval->workers() > 1 && std::min(m_, n_) >= 128;
  // LAPACK on all the workers for a matrix filled alone (the pass's one output chunk).
  BlasThreads threads(alone ? ts.eval->workers() : 1);
  const int64_t cnt = region.count.back(), first = region.start.back(), step = region.step.back();
  const bool whole = first == 0 && step == 1 && cnt == row_;
  const size_t osz = itemsize(dtype());
  // Batch elements in runs along the last batch axis (at most batch_run() at a time: a
  // region over many matrices never holds all of their inputs).
  for (const Region& sub : runs(region)) {
    const int64_t e0 = first_element(region, sub), len = nbatch_ ? sub.count[nbatch_ - 1] : 1;
    const std::vector<Region> ins = input_regions(sub);
    ScratchScope scope(ts.scratch);
    std::vector<void*> bufs;
    for (size_t i = 0; i < ins.size(); ++i) {
      void* b = scope.alloc(static_cast<size_t>(ins[i].size()) * itemsize(inputs()[i]->dtype()));
      inputs()[i]->pull(ins[i], b, ts);
      bufs.push_back(b);
    }
    char* row =
        whole ? nullptr : static_cast<char*>(scope.alloc(static_cast<size_t>(std::max<int64_t>(1, row_)) * osz));
    for (int64_t j = 0; j < len; ++j) {
      const int64_t e = e0 + j;
      if (ts.eval) ts.eval->check_cancel();
      // the flat batch position of element e (for messages)
      int64_t pos = 0;
      for (size_t d = 0; d < nbatch_; ++d)
        pos = pos * shape()[d] + sub.start[d] + (d == nbatch_ - 1 ? j * sub.step[d] : 0);
      char* dst = whole ? static_cast<char*>(out) + static_cast<size_t>(e * row_) * osz : row;
      if (kind_ == FactorKind::Eig) {
        dispatch_computing(inputs()[0]->dtype(), [&](auto* tag) {
          using T = std::remove_pointer_t<decltype(tag)>;
          if constexpr (std::is_floating_point_v<T> || is_complex_v<T>) {
            const T* a = static_cast<const T*>(bufs[0]) + j * m_ * n_;
            eig_factor<T>(a, n_, opts_.vectors, reinterpret_cast<std::complex<lapack::real_t<T>>*>(dst), fn_, pos);
          }
        });
      } else {
        dispatch_computing(dtype(), [&](auto* tag) {
          using T = std::remove_pointer_t<decltype(tag)>;
          if constexpr (std::is_floating_point_v<T> || is_complex_v<T>) {
            const void* ptrs[2] = {
                static_cast<const T*>(bufs[0]) + j * m_ * n_,
                bufs.size() > 1 ? static_cast<const void*>(static_cast<const T*>(bufs[1]) + j * n_ * nrhs_) : nullptr};
            factor<T>(ptrs, reinterpret_cast<T*>(dst), pos);
          }
        });
      }
      if (!whole) {
        char* o = static_cast<char*>(out) + static_cast<size_t>(e * cnt) * osz;
        for (int64_t i = 0; i < cnt; ++i)
          std::memcpy(o + static_cast<size_t>(i) * osz, row + static_cast<size_t>(first + i * step) * osz, osz);
      }
    }
  }
}

// --- UnpackNode

namespace {
Shape unpacked_shape(const Node& f, const FactorPart& p) {
  Shape s(f.shape().begin(), f.shape().end() - 1);
  s.insert(s.end(), p.shape.begin(), p.shape.end());
  return s;
}
}  // namespace

UnpackNode::UnpackNode(NodePtr factor, FactorPart part)
    : Node(part.real ? real_of(factor->dtype()) : factor->dtype(), unpacked_shape(*factor, part), {factor}),
      part_(std::move(part)),
      nbatch_(factor->ndim() - 1) {}

std::vector<Region> UnpackNode::input_regions(const Region& region) const {
  Region r;
  r.start.assign(region.start.begin(), region.start.begin() + static_cast<std::ptrdiff_t>(nbatch_));
  r.step.assign(region.step.begin(), region.step.begin() + static_cast<std::ptrdiff_t>(nbatch_));
  r.count.assign(region.count.begin(), region.count.begin() + static_cast<std::ptrdiff_t>(nbatch_));
  // the flat range of the part covering the region's tail
  int64_t lo = 0, hi = 0, stride = 1;
  if (region.size() > 0) {
    for (size_t d = part_.shape.size(); d-- > 0;) {
      lo += region.start[nbatch_ + d] * stride;
      hi += region.last(nbatch_ + d) * stride;
      stride *= part_.shape[d];
    }
    hi += 1;
  }
  r.start.push_back(part_.offset + lo);
  r.step.push_back(1);
  r.count.push_back(hi - lo);
  return {r};
}

Shape UnpackNode::preferred_chunks() const {
  Shape c(inputs()[0]->preferred_chunks());
  c.pop_back();
  if (c.size() != nbatch_) c.assign(nbatch_, 1);
  c.insert(c.end(), part_.shape.begin(), part_.shape.end());
  for (int64_t& v : c) v = std::max<int64_t>(1, v);
  return c;
}

void UnpackNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const Region ir = input_regions(region)[0];
  const size_t isz = itemsize(inputs()[0]->dtype()), osz = itemsize(dtype());
  ScratchScope scope(ts.scratch);
  char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(ir.size()) * isz));
  inputs()[0]->pull(ir, buf, ts);
  const int64_t span = ir.count.back(), lo = ir.start.back() - part_.offset;
  int64_t nb = 1;
  for (size_t d = 0; d < nbatch_; ++d) nb *= region.count[d];
  const size_t t = part_.shape.size();
  int64_t per = 1;  // output elements per batch element
  for (size_t d = 0; d < t; ++d) per *= region.count[nbatch_ + d];
  // flat offsets within the part of the region's tail elements, in C order
  std::vector<int64_t> offs(static_cast<size_t>(per));
  {
    Shape idx(t, 0);
    for (int64_t i = 0; i < per; ++i) {
      int64_t f = 0, stride = 1;
      for (size_t d = t; d-- > 0;) {
        f += (region.start[nbatch_ + d] + idx[d] * region.step[nbatch_ + d]) * stride;
        stride *= part_.shape[d];
      }
      offs[static_cast<size_t>(i)] = f - lo;
      for (size_t d = t; d-- > 0;) {
        if (++idx[d] < region.count[nbatch_ + d]) break;
        idx[d] = 0;
      }
    }
  }
  char* o = static_cast<char*>(out);
  for (int64_t e = 0; e < nb; ++e) {
    const char* src = buf + static_cast<size_t>(e * span) * isz;
    for (int64_t i = 0; i < per; ++i, o += osz)
      std::memcpy(o, src + static_cast<size_t>(offs[static_cast<size_t>(i)]) * isz,
                  osz);  // (a real part: the first half)
  }
}

}  // namespace b2lazy
