#include "ops/linalg/matmul_node.hpp"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "b2lazy/context.hpp"
#include "core/dispatch.hpp"
#include "exec/eval_state.hpp"
#include "exec/scratch.hpp"
#include "exec/thread_state.hpp"
#include "ops/reduce/reduce_node.hpp"
#include "ops/shape/permute_node.hpp"
#include "ops/shape/slice_node.hpp"
#include "plan/chunking.hpp"

namespace b2lazy {

namespace {

// Parallelism is over output tiles (the executor's workers), so BLAS runs each call on
// the calling thread: the cores are used once, not by two thread pools at a time.
void single_threaded_blas() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

// Sources and views of them: pulling a panel again costs a read, not a computation.
bool cheap(const Node& n) {
  if (n.inputs().empty()) return true;
  if (dynamic_cast<const SliceNode*>(&n) || dynamic_cast<const PermuteNode*>(&n)) return cheap(*n.inputs()[0]);
  return false;
}

constexpr size_t kStreamBytes = size_t(16) << 20;  // per thread, both operand panels
constexpr size_t kBandBytes = size_t(64) << 20;    // preferred band of a kept operand

// C (m x n) += A (m x k) B (k x n), row-major with leading dimensions.
template <class T>
void gemm(int64_t m, int64_t n, int64_t k, const T* A, int64_t lda, const T* B, int64_t ldb, T* C, int64_t ldc) {
  if (m == 0 || n == 0 || k == 0) return;
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
    auto gemv = [](auto... args) {
      if constexpr (std::is_same_v<T, double>) cblas_dgemv(args...);
      else cblas_sgemv(args...);
    };
    auto gemm3 = [](auto... args) {
      if constexpr (std::is_same_v<T, double>) cblas_dgemm(args...);
      else cblas_sgemm(args...);
    };
    const int M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k);
    if (n == 1)
      gemv(CblasRowMajor, CblasNoTrans, M, K, T(1), A, static_cast<int>(lda), B, static_cast<int>(ldb), T(1), C,
           static_cast<int>(ldc));
    else if (m == 1)
      gemv(CblasRowMajor, CblasTrans, K, N, T(1), B, static_cast<int>(ldb), A, 1, T(1), C, 1);
    else
      gemm3(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, T(1), A, static_cast<int>(lda), B,
            static_cast<int>(ldb), T(1), C, static_cast<int>(ldc));
  } else if constexpr (std::is_same_v<T, bool>) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p)
        if (A[i * lda + p]) {
          const T* b = B + p * ldb;
          T* c = C + i * ldc;
          for (int64_t j = 0; j < n; ++j) c[j] = c[j] | b[j];
        }
  } else {  // integers: exact, wrapping like NumPy (modular arithmetic in uint64)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) {
        const uint64_t a = static_cast<uint64_t>(A[i * lda + p]);
        if (!a) continue;
        const T* b = B + p * ldb;
        T* c = C + i * ldc;
        for (int64_t j = 0; j < n; ++j)
          c[j] = static_cast<T>(static_cast<uint64_t>(c[j]) + a * static_cast<uint64_t>(b[j]));
      }
  }
}

// Steps through [k0, k1) in panels of about `len`, ending panels on multiples of `align`
// when a panel holds at least one aligned run.
struct Panels {
  int64_t k1, len, align;
  int64_t next(int64_t k) const {
    int64_t e = k + len;
    if (align > 0 && len >= align) e = std::max(k + 1, e / align * align);
    return std::min(e, k1);
  }
};

size_t budget(const ThreadState& ts, int divisor) {
  if (!ts.eval) return size_t(256) << 20;
  return ts.eval->max_memory / static_cast<size_t>(divisor * std::max(1, ts.eval->nworkers()));
}

}  // namespace

int64_t storage_alignment(const Node& n, size_t axis) {
  if (const ChunkGrid* g = n.storage_grid()) return g->chunks()[axis];
  if (auto* m = dynamic_cast<const MatmulNode*>(&n)) return m->alignment(axis);
  if (auto* p = dynamic_cast<const PermuteNode*>(&n))
    return storage_alignment(*n.inputs()[0], static_cast<size_t>(p->perm()[axis]));
  if (auto* r = dynamic_cast<const ReduceNode*>(&n)) {
    int d = r->input_axis(axis);
    return d < 0 ? 0 : storage_alignment(*n.inputs()[0], static_cast<size_t>(d));
  }
  if (n.is_elementwise()) {  // the largest alignment among same-shaped inputs
    int64_t best = 0;
    for (auto& in : n.inputs())
      if (in->shape() == n.shape()) best = std::max(best, storage_alignment(*in, axis));
    return best;
  }
  return 0;
}

struct MatmulNode::Geometry {
  int64_t mrows = 1, ncols = 1;  // output matrix of one batch element
  int64_t m_rest = 1, n_rest = 1;  // per unit of the first M / N axis
  int64_t nbatch = 1, nba = 1, nbb = 1;  // batch elements of out, a's and b's panels
  std::vector<int64_t> ea, eb;  // per output batch element: index into a's / b's panels

  Geometry(const MatmulNode& mm, const Region& r) {
    const Shape& as = mm.inputs()[0]->shape();
    const Shape& bs = mm.inputs()[1]->shape();
    const size_t nb = mm.nbatch_;
    for (size_t d = 0; d < mm.nm_; ++d) mrows *= r.count[nb + d];
    for (size_t d = 0; d < mm.nn_; ++d) ncols *= r.count[nb + mm.nm_ + d];
    for (size_t d = 1; d < mm.nm_; ++d) m_rest *= r.count[nb + d];
    for (size_t d = 1; d < mm.nn_; ++d) n_rest *= r.count[nb + mm.nm_ + d];
    Shape ca(nb), cb(nb);
    for (size_t d = 0; d < nb; ++d) {
      nbatch *= r.count[d];
      ca[d] = as[d] == 1 ? 1 : r.count[d];
      cb[d] = bs[d] == 1 ? 1 : r.count[d];
    }
    nba = prod(ca);
    nbb = prod(cb);
    Shape sa = c_strides(ca), sb = c_strides(cb), idx(nb, 0);
    ea.resize(static_cast<size_t>(nbatch));
    eb.resize(static_cast<size_t>(nbatch));
    for (int64_t e = 0; e < nbatch; ++e) {
      int64_t ia = 0, ib = 0;
      for (size_t d = 0; d < nb; ++d) {
        if (ca[d] != 1) ia += idx[d] * sa[d];
        if (cb[d] != 1) ib += idx[d] * sb[d];
      }
      ea[static_cast<size_t>(e)] = ia;
      eb[static_cast<size_t>(e)] = ib;
      for (size_t d = nb; d-- > 0;) {
        if (++idx[d] < r.count[d]) break;
        idx[d] = 0;
      }
    }
  }
};

MatmulNode::MatmulNode(NodePtr a, NodePtr b, size_t nbatch, size_t nm, size_t nk, size_t nn, Shape out_shape)
    : Node(a->dtype(), std::move(out_shape), {a, b}),
      nbatch_(nbatch), nm_(nm), nk_(nk), nn_(nn),
      a_expensive_(!cheap(*a)), b_expensive_(!cheap(*b)) {
  single_threaded_blas();
  const size_t ka = nbatch + nm;  // first K axis of a
  k_len_ = nk ? a->shape()[ka] : 1;
  for (size_t d = 1; d < nk; ++d) k_rest_ *= a->shape()[ka + d];
  if (nk) {
    int64_t al_a = storage_alignment(*a, ka), al_b = storage_alignment(*b, nbatch);
    k_align_ = al_a ? al_a : al_b;
    if (al_a && al_b && al_b > al_a && al_b % al_a == 0) k_align_ = al_b;
  }
}

std::string MatmulNode::describe() const {
  std::string s = "matmul " + shape_str(inputs()[0]->shape()) + " x " + shape_str(inputs()[1]->shape()) + " -> " +
                  dtype_name(dtype()) + " " + shape_str(shape());
  if (a_expensive_) s += " (keeps panels of a)";
  else if (b_expensive_) s += " (keeps panels of b)";
  return s;
}

int64_t MatmulNode::alignment(size_t axis) const {
  if (axis < nbatch_) return 0;
  if (axis < nbatch_ + nm_) return storage_alignment(*inputs()[0], axis);
  return storage_alignment(*inputs()[1], axis - nm_ + nk_);
}

Region MatmulNode::a_region(const Region& r, int64_t k0, int64_t k1) const {
  const Shape& as = inputs()[0]->shape();
  Region in{Shape(as.size()), Shape(as.size(), 1), Shape(as.size())};
  for (size_t d = 0; d < nbatch_; ++d) {
    if (as[d] == 1) in.count[d] = 1;
    else in.start[d] = r.start[d], in.step[d] = r.step[d], in.count[d] = r.count[d];
  }
  for (size_t d = nbatch_; d < nbatch_ + nm_; ++d) in.start[d] = r.start[d], in.step[d] = r.step[d], in.count[d] = r.count[d];
  for (size_t d = nbatch_ + nm_; d < as.size(); ++d) in.count[d] = as[d];
  if (nk_) in.start[nbatch_ + nm_] = k0, in.count[nbatch_ + nm_] = k1 - k0;
  return in;
}

Region MatmulNode::b_region(const Region& r, int64_t k0, int64_t k1) const {
  const Shape& bs = inputs()[1]->shape();
  Region in{Shape(bs.size()), Shape(bs.size(), 1), Shape(bs.size())};
  for (size_t d = 0; d < nbatch_; ++d) {
    if (bs[d] == 1) in.count[d] = 1;
    else in.start[d] = r.start[d], in.step[d] = r.step[d], in.count[d] = r.count[d];
  }
  for (size_t d = nbatch_; d < nbatch_ + nk_; ++d) in.count[d] = bs[d];
  if (nk_) in.start[nbatch_] = k0, in.count[nbatch_] = k1 - k0;
  for (size_t d = 0; d < nn_; ++d) {
    size_t o = nbatch_ + nm_ + d, i = nbatch_ + nk_ + d;
    in.start[i] = r.start[o], in.step[i] = r.step[o], in.count[i] = r.count[o];
  }
  return in;
}

std::vector<Region> MatmulNode::input_regions(const Region& r) const {
  return {a_region(r, 0, k_len_), b_region(r, 0, k_len_)};
}

Shape MatmulNode::preferred_chunks() const {
  const Shape& s = shape();
  const size_t isz = itemsize(dtype());
  Shape c(s.size(), 1);
  int64_t mat = 1;
  for (size_t d = nbatch_; d < s.size(); ++d) mat *= std::max<int64_t>(1, s[d]);
  const int64_t ktot = k_len_ * k_rest_;
  if ((a_expensive_ && nm_) || (b_expensive_ && nn_)) {
    // Bands of whole rows (or columns), aligned with the kept operand's storage chunks.
    const bool rows = a_expensive_ && nm_;
    const size_t first = rows ? nbatch_ : nbatch_ + nm_;
    const size_t last = rows ? nbatch_ + nm_ : s.size();
    for (size_t d = nbatch_; d < s.size(); ++d) c[d] = std::max<int64_t>(1, s[d]);
    const int64_t per_line = std::max<int64_t>(1, mat / std::max<int64_t>(1, s[first]));  // out elements
    int64_t kept_per_line = 1;
    for (size_t d = first + 1; d < last; ++d) kept_per_line *= std::max<int64_t>(1, s[d]);
    kept_per_line *= std::max<int64_t>(1, ktot);
    int64_t lines = static_cast<int64_t>(kBandBytes / isz) / std::max(per_line, kept_per_line);
    lines = std::clamp<int64_t>(lines, 1, std::max<int64_t>(1, s[first]));
    const int64_t al = alignment(first);
    if (al > 0 && al < s[first]) lines = lines >= al ? lines / al * al : lines;
    c[first] = lines;
    return c;
  }
  const size_t tile = size_t(8) << 20;
  if (static_cast<size_t>(mat) * isz <= tile) {  // whole matrices, several per chunk
    Shape batch(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(nbatch_));
    Shape cb = contiguous_chunks(batch, static_cast<size_t>(mat) * isz, tile);
    for (size_t d = 0; d < s.size(); ++d) c[d] = d < nbatch_ ? cb[d] : std::max<int64_t>(1, s[d]);
    return c;
  }
  Shape inner(s.begin() + static_cast<std::ptrdiff_t>(nbatch_), s.end());
  Shape ci = balanced_chunks(inner, isz, tile);
  for (size_t d = 0; d < inner.size(); ++d) c[nbatch_ + d] = ci[d];
  return c;
}

void MatmulNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  if (fork(region, out, ts)) return;
  contract(region, 0, k_len_, out, ts);
}

bool MatmulNode::fork(const Region& region, void* out, ThreadState& ts) const {
  if (!ts.can_fork || !ts.eval || ts.eval->nworkers() < 2) return false;
  const int nw = ts.eval->nworkers();
  const int64_t ktot = k_len_ * k_rest_;
  if (region.size() * std::max<int64_t>(ktot, 1) < (int64_t(1) << 22)) return false;
  const size_t isz = itemsize(dtype());
  // Split the outermost axis with more than one element: pieces are contiguous in out.
  size_t o = 0;
  while (o < region.ndim() && region.count[o] == 1) ++o;
  if (o < region.ndim() && region.count[o] >= nw) {
    const int64_t pieces = std::min<int64_t>(region.count[o], 4 * nw);
    const int64_t per = region.size() / region.count[o];
    ts.eval->parallel_for(pieces, [&](int64_t p, int, ThreadState& wts) {
      int64_t i0 = region.count[o] * p / pieces, i1 = region.count[o] * (p + 1) / pieces;
      if (i1 == i0) return;
      Region sub = region;
      sub.start[o] = region.start[o] + i0 * region.step[o];
      sub.count[o] = i1 - i0;
      contract(sub, 0, k_len_, static_cast<char*>(out) + static_cast<size_t>(i0 * per) * isz, wts);
    });
    return true;
  }
  // A small result over a long K: each worker sums a K range; the partials are added.
  if (k_len_ < nw || static_cast<size_t>(region.size()) * isz * static_cast<size_t>(nw) > (size_t(64) << 20)) return false;
  ScratchScope scope(ts.scratch);
  const size_t bytes = static_cast<size_t>(region.size()) * isz;
  char* parts = static_cast<char*>(scope.alloc(bytes * static_cast<size_t>(nw)));
  ts.eval->parallel_for(nw, [&](int64_t p, int, ThreadState& wts) {
    contract(region, k_len_ * p / nw, k_len_ * (p + 1) / nw, parts + bytes * static_cast<size_t>(p), wts);
  });
  std::memcpy(out, parts, bytes);
  dispatch(dtype(), [&]<class T>(T*) {
    T* acc = static_cast<T*>(out);
    for (int p = 1; p < nw; ++p) {
      const T* x = reinterpret_cast<const T*>(parts + bytes * static_cast<size_t>(p));
      for (int64_t i = 0; i < region.size(); ++i) {
        if constexpr (std::is_same_v<T, bool>) acc[i] = acc[i] | x[i];
        else if constexpr (std::is_integral_v<T>) acc[i] = static_cast<T>(static_cast<uint64_t>(acc[i]) + static_cast<uint64_t>(x[i]));
        else acc[i] += x[i];
      }
    }
  });
  return true;
}

void MatmulNode::contract(const Region& region, int64_t kb, int64_t ke, void* out, ThreadState& ts) const {
  const size_t isz = itemsize(dtype());
  const Geometry g(*this, region);
  std::memset(out, 0, static_cast<size_t>(region.size()) * isz);
  if (ke <= kb || region.size() == 0) return;
  const NodePtr& a = inputs()[0];
  const NodePtr& b = inputs()[1];
  const int64_t ktot = (ke - kb) * k_rest_;
  const size_t hold = budget(ts, 4);
  const size_t stream = std::min(kStreamBytes, std::max<size_t>(budget(ts, 8), size_t(1) << 20));
  const bool hold_a = a_expensive_ && static_cast<size_t>(g.nba * g.mrows * ktot) * isz <= hold;
  const bool hold_b = !hold_a && b_expensive_ && static_cast<size_t>(g.nbb * ktot * g.ncols) * isz <= hold;

  ScratchScope keep(ts.scratch);
  const void* a_full = nullptr;
  const void* b_full = nullptr;
  if (hold_a) {
    void* p = keep.alloc(static_cast<size_t>(g.nba * g.mrows * ktot) * isz);
    a->pull(a_region(region, kb, ke), p, ts);
    a_full = p;
  }
  if (hold_b) {
    void* p = keep.alloc(static_cast<size_t>(g.nbb * ktot * g.ncols) * isz);
    b->pull(b_region(region, kb, ke), p, ts);
    b_full = p;
  }
  // Sub-tiles: along the first N axis when a is kept, the first M axis when b is.
  const size_t m_axis = nbatch_, n_axis = nbatch_ + nm_;
  const int64_t m_len = nm_ ? region.count[m_axis] : 1, n_len = nn_ ? region.count[n_axis] : 1;
  int64_t m_step = m_len, n_step = n_len;
  const int64_t side = std::max<int64_t>(256, hold_a ? g.mrows : g.ncols);
  if (hold_a && nn_) n_step = std::clamp<int64_t>(side / g.n_rest, 1, n_len);
  if (hold_b && nm_) m_step = std::clamp<int64_t>(side / g.m_rest, 1, m_len);

  dispatch(dtype(), [&]<class T>(T*) {
    T* C = static_cast<T*>(out);
    for (int64_t i0 = 0; i0 < m_len; i0 += m_step) {
      const int64_t i1 = std::min(m_len, i0 + m_step), rows = (i1 - i0) * g.m_rest;
      for (int64_t j0 = 0; j0 < n_len; j0 += n_step) {
        const int64_t j1 = std::min(n_len, j0 + n_step), cols = (j1 - j0) * g.n_rest;
        Region sub = region;
        if (nm_) sub.start[m_axis] += i0 * region.step[m_axis], sub.count[m_axis] = i1 - i0;
        if (nn_) sub.start[n_axis] += j0 * region.step[n_axis], sub.count[n_axis] = j1 - j0;
        // K-panel length: the streamed panels fit `stream`, or one storage chunk if that
        // is at most 4x more (reading a chunk for a part of it is the costlier waste).
        const int64_t per_k = ((hold_a ? 0 : g.nba * rows) + (hold_b ? 0 : g.nbb * cols)) * k_rest_;
        int64_t kp = per_k ? static_cast<int64_t>(stream / isz) / per_k : ke - kb;
        if (k_align_ > kp && per_k && static_cast<size_t>(k_align_ * per_k) * isz <= 4 * stream) kp = k_align_;
        const Panels panels{ke, std::max<int64_t>(1, kp), k_align_};
        for (int64_t k0 = kb; k0 < ke;) {
          const int64_t k1 = panels.next(k0), kc = (k1 - k0) * k_rest_;
          ScratchScope scope(ts.scratch);
          const T *A, *B;
          int64_t lda, ldb, a_off = 0, b_off = 0, a_bs, b_bs;
          if (hold_a) {
            A = static_cast<const T*>(a_full), lda = ktot, a_off = (k0 - kb) * k_rest_, a_bs = g.mrows * ktot;
          } else {
            T* p = scope.alloc_n<T>(static_cast<size_t>(g.nba * rows * kc));
            a->pull(a_region(sub, k0, k1), p, ts);
            A = p, lda = kc, a_bs = rows * kc;
          }
          if (hold_b) {
            B = static_cast<const T*>(b_full), ldb = g.ncols, b_off = (k0 - kb) * k_rest_ * g.ncols, b_bs = ktot * g.ncols;
          } else {
            T* p = scope.alloc_n<T>(static_cast<size_t>(g.nbb * kc * cols));
            b->pull(b_region(sub, k0, k1), p, ts);
            B = p, ldb = cols, b_bs = kc * cols;
          }
          // Within a kept operand, this sub-tile starts at row i0 / column j0.
          if (hold_b) b_off += j0 * g.n_rest;  // j0 == 0: b is kept whole along N
          if (hold_a) a_off += i0 * g.m_rest * lda;
          for (int64_t e = 0; e < g.nbatch; ++e) {
            const T* Ae = A + g.ea[static_cast<size_t>(e)] * a_bs + a_off;
            const T* Be = B + g.eb[static_cast<size_t>(e)] * b_bs + b_off;
            T* Ce = C + e * g.mrows * g.ncols + i0 * g.m_rest * g.ncols + j0 * g.n_rest;
            gemm<T>(rows, cols, kc, Ae, lda, Be, ldb, Ce, g.ncols);
          }
          k0 = k1;
        }
      }
    }
  });
}

}  // namespace b2lazy
