#include "ops/linalg/matmul_node.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <string>

#include "b2lazy/context.hpp"
#include "b2lazy/error.hpp"
#include "core/big_alloc.hpp"
#include "core/chunk_shapes.hpp"
#include "core/dispatch.hpp"
#include "core/saturating.hpp"
#include "ops/linalg/gemm.hpp"
#include "ops/linalg/keep_node.hpp"
#include "ops/shape/permute_node.hpp"
#include "runtime/alignment.hpp"
#include "runtime/evaluation.hpp"
#include "runtime/memory_model.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {

constexpr size_t kStreamBytes = size_t(16) << 20;  // per thread, both operand panels
constexpr size_t kBandBytes = size_t(16) << 20;    // kept band of an expensive operand
constexpr size_t kTileBytes = size_t(8) << 20;     // preferred output tile
constexpr int64_t kMinBandLines = 256;             // a band thinner than this multiplies inefficiently

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

Region swap_last_two(Region r) {
  const size_t n = r.ndim();
  std::swap(r.start[n - 2], r.start[n - 1]);
  std::swap(r.step[n - 2], r.step[n - 1]);
  std::swap(r.count[n - 2], r.count[n - 1]);
  return r;
}

// The band of an expensive operand a worker keeps between the tiles of one task.
struct KeptBand : NodeCache::Entry {
  Region region;
  BigBuffer data;
  size_t size = 0;
  size_t bytes() const override { return size; }
};

// A worker's share of the budget (max_memory / workers).
size_t per_worker(const ThreadState& ts) {
  if (!ts.eval) return size_t(1) << 30;
  return ts.eval->max_memory() / static_cast<size_t>(std::max(1, ts.eval->workers()));
}
// A kept band as large as the preferred one is always kept (input_regions relies on it).
size_t hold_limit(size_t per_worker) { return std::max(per_worker / 4, kBandBytes); }
// Both streamed operand panels of one K step.
size_t stream_limit(size_t per_worker) {
  return std::min(kStreamBytes, std::max<size_t>(per_worker / 8, size_t(1) << 20));
}

}  // namespace

int64_t MatmulNode::alignment_along(size_t axis, const AlignmentQuery& /*q*/) const { return alignment(axis); }

struct MatmulNode::Geometry {
  int64_t mrows = 1, ncols = 1;          // output matrix of one batch element
  int64_t m_rest = 1, n_rest = 1;        // per unit of the first M / N axis
  int64_t nbatch = 1, nba = 1, nbb = 1;  // batch elements of out, a's and b's panels
  std::vector<int64_t> ea, eb;           // per output batch element: index into a's / b's panels

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
    : Node(a->dtype(), std::move(out_shape), {keep_if_expensive(a), keep_if_expensive(b)}),
      nbatch_(nbatch),
      nm_(nm),
      nk_(nk),
      nn_(nn),
      a_expensive_(!cheap_to_pull(*a)),
      b_expensive_(!cheap_to_pull(*b)) {
  single_threaded_blas();
  // A transposed matrix operand is read as it is stored and multiplied transposed.
  a_trans_ = nm == 1 && nk == 1 && is_matrix_transpose(*inputs()[0]);
  b_trans_ = nk == 1 && nn == 1 && is_matrix_transpose(*inputs()[1]);
  const size_t ka = nbatch + nm;  // first K axis of a
  k_len_ = nk ? a->shape()[ka] : 1;
  for (size_t d = 1; d < nk; ++d) k_rest_ *= a->shape()[ka + d];
  if (nk) {
    int64_t al_a = storage_alignment(*a, ka), al_b = storage_alignment(*b, nbatch);
    k_align_ = al_a ? al_a : al_b;
    if (al_a && al_b && al_b > al_a && al_b % al_a == 0) k_align_ = al_b;
  }
  align_.assign(ndim(), 0);
  for (size_t axis = nbatch_; axis < ndim(); ++axis)
    align_[axis] = axis < nbatch_ + nm_ ? storage_alignment(*inputs()[0], axis)
                                        : storage_alignment(*inputs()[1], axis - nm_ + nk_);
}

std::string MatmulNode::describe() const {
  std::string s = "matmul " + shape_str(inputs()[0]->shape()) + " x " + shape_str(inputs()[1]->shape()) + " -> " +
                  dtype_name(dtype()) + " " + shape_str(shape());
  if (a_trans_) s += " (a read transposed)";
  if (b_trans_) s += " (b read transposed)";
  if (a_expensive_) s += " (keeps panels of a)";
  else if (b_expensive_) s += " (keeps panels of b)";
  return s;
}

Region MatmulNode::a_region(const Region& r, int64_t k0, int64_t k1) const {
  const Shape& as = inputs()[0]->shape();
  Region in{Shape(as.size()), Shape(as.size(), 1), Shape(as.size())};
  for (size_t d = 0; d < nbatch_; ++d) {
    if (as[d] == 1) in.count[d] = 1;
    else in.start[d] = r.start[d], in.step[d] = r.step[d], in.count[d] = r.count[d];
  }
  for (size_t d = nbatch_; d < nbatch_ + nm_; ++d)
    in.start[d] = r.start[d], in.step[d] = r.step[d], in.count[d] = r.count[d];
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

Region MatmulNode::a_read(const Region& r, int64_t k0, int64_t k1) const {
  return a_trans_ ? swap_last_two(a_region(r, k0, k1)) : a_region(r, k0, k1);
}

Region MatmulNode::b_read(const Region& r, int64_t k0, int64_t k1) const {
  return b_trans_ ? swap_last_two(b_region(r, k0, k1)) : b_region(r, k0, k1);
}

// contract()'s decisions for one region, shared by contract(), its memory model
// (contract_bytes) and its read model (pull_pieces), so the three cannot drift.
struct MatmulNode::Schedule {
  const MatmulNode* mm;
  Geometry g;
  int64_t kb, ke, ktot;
  size_t isz, stream;
  bool a_view, b_view, hold_a, hold_b;
  int64_t m_step, n_step;  // sub-tiles, in units of the first M / N output axis

  // K-panel length for a sub-tile of `rows` x `cols`: the streamed panels fit `stream`,
  // or one storage chunk if that is at most 4x more (reading a chunk for a part of it is
  // the costlier waste). (Only for a streamed a: b's panels are row ranges.)
  int64_t panel(int64_t rows, int64_t cols) const {
    const int64_t per_k =
        sat_mul(sat_add(hold_a ? 0 : sat_mul(g.nba, rows), hold_b ? 0 : sat_mul(g.nbb, cols)), mm->k_rest_);
    const int64_t items = static_cast<int64_t>(stream / isz);
    int64_t kp = per_k ? items / per_k : ke - kb;
    if (!hold_a && mm->k_align_ > kp && per_k && mm->k_align_ <= 4 * items / per_k) kp = mm->k_align_;
    return std::clamp<int64_t>(kp, 1, std::max<int64_t>(1, ke - kb));
  }
  Panels panels(int64_t rows, int64_t cols) const { return Panels{ke, panel(rows, cols), mm->k_align_}; }
};

MatmulNode::Schedule MatmulNode::schedule(const Region& region, int64_t kb, int64_t ke, size_t per_worker, bool a_view,
                                          bool b_view) const {
  Schedule s{this,
             Geometry(*this, region),
             kb,
             ke,
             sat_mul(ke - kb, k_rest_),
             itemsize(dtype()),
             stream_limit(per_worker),
             a_view,
             b_view,
             false,
             false,
             1,
             1};
  const Geometry& g = s.g;
  const int64_t isz = static_cast<int64_t>(s.isz);
  const int64_t hold = static_cast<int64_t>(std::min<size_t>(hold_limit(per_worker), INT64_MAX));
  const int64_t a_band = sat_mul(sat_mul(sat_mul(g.nba, g.mrows), s.ktot), isz);
  const int64_t b_band = sat_mul(sat_mul(sat_mul(g.nbb, s.ktot), g.ncols), isz);
  // A stored operand whose K-panels would cut its blocks (row strips of a, blocks as wide
  // as K: every panel decompresses the whole band again) is held whole along K like an
  // expensive one, when its band fits: read once per region instead of once per panel.
  const Node& a = a_trans_ ? *inputs()[0]->inputs()[0] : *inputs()[0];
  const Node& b = b_trans_ ? *inputs()[1]->inputs()[0] : *inputs()[1];
  const int64_t kp = s.panel(g.mrows, g.ncols);
  const int64_t npanels = ceil_div(std::max<int64_t>(1, ke - kb), kp);
  auto cuts_blocks = [&](const Node& x, const Region& whole, const Region& first_panel) {
    const int64_t once = x.decompressed_bytes(whole);
    return once > 0 && npanels > 1 && sat_mul(x.decompressed_bytes(first_panel), npanels) >= sat_mul(once, 2);
  };
  s.hold_a = a_view ||
             ((a_expensive_ || cuts_blocks(a, a_read(region, kb, ke), a_read(region, kb, kb + kp))) && a_band <= hold);
  s.hold_b =
      b_view || (!s.hold_a && (b_expensive_ || cuts_blocks(b, b_read(region, kb, ke), b_read(region, kb, kb + kp))) &&
                 b_band <= hold);
  // A held band already takes memory: the streamed panels get half the budget, and the
  // region is cut into sub-tiles (along N when a is held, along M when b is) only when
  // even a 256-deep panel would not fit.
  if ((s.hold_a && !a_view) || (s.hold_b && !b_view)) s.stream /= 2;
  const size_t m_axis = nbatch_, n_axis = nbatch_ + nm_;
  s.m_step = nm_ ? region.count[m_axis] : 1;
  s.n_step = nn_ ? region.count[n_axis] : 1;
  const int64_t lines = static_cast<int64_t>(s.stream / s.isz) / 256;
  if (s.hold_a && nn_) s.n_step = std::clamp<int64_t>(lines / g.n_rest, 1, s.n_step);
  if (s.hold_b && nm_) s.m_step = std::clamp<int64_t>(lines / g.m_rest, 1, s.m_step);
  return s;
}

std::vector<Region> MatmulNode::pull_pieces(const Region& region, size_t input, size_t worker_bytes) const {
  if (region.size() == 0 || k_len_ == 0 || input > 1) return {};
  const Schedule s = schedule(region, 0, k_len_, worker_bytes, false, false);
  if (input == 0 ? s.hold_a : s.hold_b) return {};
  // Regions of the operand as this node's input (above a transposition): input_regions'.
  std::vector<Region> pieces;
  const size_t m_axis = nbatch_, n_axis = nbatch_ + nm_;
  const int64_t m_len = nm_ ? region.count[m_axis] : 1, n_len = nn_ ? region.count[n_axis] : 1;
  for (int64_t i0 = 0; i0 < m_len; i0 += s.m_step) {
    const int64_t i1 = std::min(m_len, i0 + s.m_step);
    for (int64_t j0 = 0; j0 < n_len; j0 += s.n_step) {
      const int64_t j1 = std::min(n_len, j0 + s.n_step);
      Region sub = region;
      if (nm_) sub.start[m_axis] += i0 * region.step[m_axis], sub.count[m_axis] = i1 - i0;
      if (nn_) sub.start[n_axis] += j0 * region.step[n_axis], sub.count[n_axis] = j1 - j0;
      const Panels panels = s.panels((i1 - i0) * s.g.m_rest, (j1 - j0) * s.g.n_rest);
      for (int64_t k0 = 0; k0 < k_len_;) {
        const int64_t k1 = panels.next(k0);
        pieces.push_back(input == 0 ? a_region(sub, k0, k1) : b_region(sub, k0, k1));
        k0 = k1;
      }
    }
  }
  return pieces;
}

std::vector<Region> MatmulNode::input_regions(const Region& r) const {
  // A kept band of a serves the tiles after the first in its row of output chunks (they
  // run on the same thread, one row per task): only the row's first tile reads it.
  Region ra = a_region(r, 0, k_len_);
  if (a_expensive_ && nn_ && r.start[nbatch_ + nm_] != 0 &&
      static_cast<size_t>(ra.size()) * itemsize(dtype()) <= kBandBytes)
    ra.count.assign(ra.count.size(), 0);
  return {ra, b_region(r, 0, k_len_)};
}

Shape MatmulNode::kept_chunks(const Shape& box, size_t /*target_bytes*/, size_t most_bytes) const {
  if (nbatch_ == 0 || !(a_expensive_ || b_expensive_) || box.size() != shape().size()) return {};
  Shape c = preferred_chunks();
  int64_t n = 1;
  for (size_t d = 0; d < c.size(); ++d) n *= (c[d] = std::clamp<int64_t>(c[d], 1, std::max<int64_t>(1, box[d])));
  if (static_cast<size_t>(n) * itemsize(dtype()) > most_bytes) return {};
  return c;
}

Shape MatmulNode::preferred_chunks() const {
  const Shape& s = shape();
  const size_t isz = itemsize(dtype());
  Shape c(s.size(), 1);
  int64_t mat = 1;
  for (size_t d = nbatch_; d < s.size(); ++d) mat *= std::max<int64_t>(1, s[d]);
  const int64_t ktot = k_len_ * k_rest_;
  if (a_expensive_ && nm_) {
    // Tiles in bands of rows aligned with a's storage chunks; a band's tiles share the
    // kept panel of a (ThreadState::kept) and are evaluated together.
    int64_t m_rest = 1;
    for (size_t d = nbatch_ + 1; d < nbatch_ + nm_; ++d) m_rest *= std::max<int64_t>(1, s[d]);
    for (size_t d = nbatch_ + 1; d < nbatch_ + nm_; ++d) c[d] = std::max<int64_t>(1, s[d]);
    const size_t first = nbatch_;
    int64_t lines = static_cast<int64_t>(kBandBytes / isz) / std::max<int64_t>(1, m_rest * std::max<int64_t>(1, ktot));
    lines = std::clamp<int64_t>(lines, 1, std::max<int64_t>(1, s[first]));
    const int64_t al = alignment(first);
    if (al > 0 && al < s[first]) lines = lines >= al ? lines / al * al : lines;
    c[first] = lines;
    Shape ns(s.begin() + static_cast<std::ptrdiff_t>(nbatch_ + nm_), s.end());
    // Half-size tiles: the kept band already takes memory beside them.
    Shape cn = contiguous_chunks(ns, isz, std::max<size_t>(isz, kTileBytes / 2 / static_cast<size_t>(lines * m_rest)));
    for (size_t d = 0; d < nn_; ++d) c[nbatch_ + nm_ + d] = cn[d];
    return c;
  }
  if (b_expensive_ && nn_) {
    // Bands of whole columns aligned with b's storage chunks: each keeps b's panel.
    for (size_t d = nbatch_; d < s.size(); ++d) c[d] = std::max<int64_t>(1, s[d]);
    const size_t first = nbatch_ + nm_;
    const int64_t per_line = std::max<int64_t>(1, mat / std::max<int64_t>(1, s[first]));
    int64_t kept_per_line = std::max<int64_t>(1, ktot);
    for (size_t d = first + 1; d < s.size(); ++d) kept_per_line *= std::max<int64_t>(1, s[d]);
    int64_t lines = static_cast<int64_t>(kBandBytes / isz) / std::max(per_line, kept_per_line);
    lines = std::clamp<int64_t>(lines, 1, std::max<int64_t>(1, s[first]));
    const int64_t al = alignment(first);
    if (al > 0 && al < s[first]) lines = lines >= al ? lines / al * al : lines;
    c[first] = lines;
    return c;
  }
  const size_t tile = kTileBytes;
  if (static_cast<size_t>(mat) * isz <= tile) {  // whole matrices, several per chunk
    Shape batch(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(nbatch_));
    Shape cb = contiguous_chunks(batch, static_cast<size_t>(mat) * isz, tile);
    for (size_t d = 0; d < s.size(); ++d) c[d] = d < nbatch_ ? cb[d] : std::max<int64_t>(1, s[d]);
    return c;
  }
  Shape inner(s.begin() + static_cast<std::ptrdiff_t>(nbatch_), s.end());
  if (nbatch_ == 0 && nm_ == 1 && nn_ == 1) {
    // Bands across the smaller operand's whole extent: every band pulls all of that
    // operand (kept once by the plan) and only its own rows (columns) of the other,
    // read once and never kept. Square tiles pull row and column panels of both, so
    // both are kept: more memory for the same reads and flops.
    const int64_t m = std::max<int64_t>(1, s[0]), n = std::max<int64_t>(1, s[1]);
    const bool rows = n <= m;  // b (k x n) is the smaller: row bands, b kept
    const int64_t across = rows ? n : m, along = rows ? m : n;
    int64_t lines = static_cast<int64_t>(2 * tile / isz) / across;
    if (lines >= kMinBandLines && lines < along) {
      const int64_t al = alignment(rows ? 0 : 1);
      if (al > 0 && al < lines) lines = lines / al * al;
      return rows ? Shape{lines, n} : Shape{m, lines};
    }
  }
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
  // Large regions parallelise their multiplications inside contract(); this is for a
  // small result over a long K: each worker sums a K range; the partials are added.
  if (!ts.can_fork || !ts.eval || ts.eval->workers() < 2) return false;
  const int nw = ts.eval->workers();
  if (region.size() >= 64 * 64 || static_cast<double>(region.size()) * static_cast<double>(k_len_ * k_rest_) <
                                      double(1 << 22))  // (the product could overflow)
    return false;
  const size_t isz = itemsize(dtype());
  // A small result over a long K: each worker sums a K range; the partials are added.
  if (k_len_ < nw) return false;
  ScratchScope scope(ts.scratch);
  const size_t bytes = static_cast<size_t>(region.size()) * isz;
  char* parts = static_cast<char*>(scope.alloc(bytes * static_cast<size_t>(nw)));
  ts.eval->parallel_for(nw, [&](int64_t p, int, ThreadState& wts) {
    auto at = [&](int64_t q) {
      return static_cast<int64_t>(static_cast<__int128>(k_len_) * q / nw);
    };  // (k_len_ * q could overflow)
    contract(region, at(p), at(p + 1), parts + bytes * static_cast<size_t>(p), wts);
  });
  std::memcpy(out, parts, bytes);
  dispatch_computing(dtype(), [&]<class T>(T*) {
    T* acc = static_cast<T*>(out);
    for (int p = 1; p < nw; ++p) {
      const T* x = reinterpret_cast<const T*>(parts + bytes * static_cast<size_t>(p));
      for (int64_t i = 0; i < region.size(); ++i) {
        if constexpr (std::is_same_v<T, uint8_t>) {
          if (dtype() == DType::Bool) {  // bool is dispatched as uint8: or, not +
            acc[i] = static_cast<T>(acc[i] | x[i]);
            continue;
          }
        }
        if constexpr (std::is_integral_v<T>)
          acc[i] = static_cast<T>(static_cast<uint64_t>(acc[i]) + static_cast<uint64_t>(x[i]));
        else acc[i] += x[i];
      }
    }
  });
  return true;
}

void MatmulNode::contract(const Region& region, int64_t kb, int64_t ke, void* out, ThreadState& ts) const {
  const size_t isz = itemsize(dtype());
  std::memset(out, 0, static_cast<size_t>(region.size()) * isz);
  if (ke <= kb || region.size() == 0) return;
  // Transposed operands are pulled from the node below the transposition.
  const Node& a = a_trans_ ? *inputs()[0]->inputs()[0] : *inputs()[0];
  const Node& b = b_trans_ ? *inputs()[1]->inputs()[0] : *inputs()[1];
  auto pull_a = [&](const Region& r, void* p) { a.pull(a_trans_ ? swap_last_two(r) : r, p, ts); };
  auto pull_b = [&](const Region& r, void* p) { b.pull(b_trans_ ? swap_last_two(r) : r, p, ts); };
  const bool ta = a_trans_, tb = b_trans_;
  const int64_t ktot = (ke - kb) * k_rest_;
  // An operand the plan keeps whole in memory (computed once, or a source kept
  // decompressed) is read in place for the whole K range, like a kept band without a copy:
  // a matrix's panel with its rows at the matrix's stride (BLAS's leading dimension).
  int64_t a_ld = 0, b_ld = 0;
  const void* a_view =
      views_rows(a) ? a.pull_view_rows(a_read(region, kb, ke), a_ld, ts) : a.pull_view(a_read(region, kb, ke), ts);
  const void* b_view =
      views_rows(b) ? b.pull_view_rows(b_read(region, kb, ke), b_ld, ts) : b.pull_view(b_read(region, kb, ke), ts);
  const Schedule sc = schedule(region, kb, ke, per_worker(ts), a_view != nullptr, b_view != nullptr);
  const Geometry& g = sc.g;
  const bool hold_a = sc.hold_a, hold_b = sc.hold_b;

  // The kept operand's panel stays with this thread until another band needs it, so
  // the next tile of the same band (the executor hands out a band's tiles together)
  // reuses it.
  auto kept = [&](const Region& r, size_t bytes, auto&& pull) -> const void* {
    KeptBand& k = ts.nodes->entry<KeptBand>(this);
    if (k.data && k.region == r) return k.data.get();
    if (bytes > k.size) {
      k.data.reset();
      k.data = make_big(bytes);
      k.size = bytes;
    }
    k.region = Region{};
    pull(r, k.data.get());
    k.region = r;
    return k.data.get();
  };
  const void* a_full = nullptr;
  const void* b_full = nullptr;
  if (hold_a)
    a_full =
        a_view ? a_view : kept(a_region(region, kb, ke), static_cast<size_t>(g.nba * g.mrows * ktot) * isz, pull_a);
  if (hold_b)
    b_full =
        b_view ? b_view : kept(b_region(region, kb, ke), static_cast<size_t>(g.nbb * ktot * g.ncols) * isz, pull_b);
  const size_t m_axis = nbatch_, n_axis = nbatch_ + nm_;
  const int64_t m_len = nm_ ? region.count[m_axis] : 1, n_len = nn_ ? region.count[n_axis] : 1;
  const int64_t m_step = sc.m_step, n_step = sc.n_step;

  const int nw = ts.can_fork && ts.eval ? ts.eval->workers() : 1;
  dispatch_computing(dtype(), [&]<class T>(T*) {
    T* C = static_cast<T*>(out);
    for (int64_t i0 = 0; i0 < m_len; i0 += m_step) {
      const int64_t i1 = std::min(m_len, i0 + m_step), rows = (i1 - i0) * g.m_rest;
      for (int64_t j0 = 0; j0 < n_len; j0 += n_step) {
        const int64_t j1 = std::min(n_len, j0 + n_step), cols = (j1 - j0) * g.n_rest;
        Region sub = region;
        if (nm_) sub.start[m_axis] += i0 * region.step[m_axis], sub.count[m_axis] = i1 - i0;
        if (nn_) sub.start[n_axis] += j0 * region.step[n_axis], sub.count[n_axis] = j1 - j0;
        const Panels panels = sc.panels(rows, cols);
        for (int64_t k0 = kb; k0 < ke;) {
          const int64_t k1 = panels.next(k0), kc = (k1 - k0) * k_rest_;
          ScratchScope scope(ts.scratch);
          const T *A, *B;
          // Leading dimensions and offsets of this sub-tile's K-panel inside each operand
          // buffer (kept whole along K, or pulled for the panel); transposed buffers hold
          // op(X) column by column.
          int64_t lda, ldb, a_off = 0, b_off = 0, a_bs, b_bs;
          if (hold_a) {
            A = static_cast<const T*>(a_full), a_bs = g.mrows * ktot;
            lda = a_view && a_ld ? a_ld : ta ? g.mrows : ktot;
            a_off = ta ? (k0 - kb) * lda + i0 : (k0 - kb) * k_rest_ + i0 * g.m_rest * lda;
          } else {
            T* p = scope.alloc_n<T>(static_cast<size_t>(g.nba * rows * kc));
            pull_a(a_region(sub, k0, k1), p);
            A = p, lda = ta ? rows : kc, a_bs = rows * kc;
          }
          if (hold_b) {
            B = static_cast<const T*>(b_full), b_bs = ktot * g.ncols;
            ldb = b_view && b_ld ? b_ld : tb ? ktot : g.ncols;
            b_off = tb ? (k0 - kb) + j0 * ldb : (k0 - kb) * k_rest_ * ldb + j0 * g.n_rest;
          } else {
            T* p = scope.alloc_n<T>(static_cast<size_t>(g.nbb * kc * cols));
            pull_b(b_region(sub, k0, k1), p);
            B = p, ldb = tb ? kc : cols, b_bs = kc * cols;
          }
          // Batch element e, rows [r0, r1) of this sub-tile.
          auto multiply = [&](int64_t e, int64_t r0, int64_t r1) {
            const T* Ae = A + g.ea[static_cast<size_t>(e)] * a_bs + a_off + (ta ? r0 : r0 * lda);
            const T* Be = B + g.eb[static_cast<size_t>(e)] * b_bs + b_off;
            T* Ce = C + e * g.mrows * g.ncols + (i0 * g.m_rest + r0) * g.ncols + j0 * g.n_rest;
            if constexpr (std::is_same_v<T, uint8_t>) {
              if (dtype() == DType::Bool) {  // dispatched as uint8: or of ands, not counts
                gemm<bool>(ta, tb, r1 - r0, cols, kc, reinterpret_cast<const bool*>(Ae), lda,
                           reinterpret_cast<const bool*>(Be), ldb, reinterpret_cast<bool*>(Ce), g.ncols);
                return;
              }
            }
            gemm<T>(ta, tb, r1 - r0, cols, kc, Ae, lda, Be, ldb, Ce, g.ncols);
          };
          if (nw > 1 && static_cast<double>(g.nbatch * rows * cols) * static_cast<double>(kc) >= double(1 << 21)) {
            // Alone on the calling thread (a single-chunk evaluation): the panels were
            // pulled once; the workers share the multiplication.
            const int64_t pieces = g.nbatch >= nw ? g.nbatch : std::min<int64_t>(rows, 4 * nw);
            ts.eval->parallel_for(pieces, [&](int64_t p, int, ThreadState&) {
              if (g.nbatch >= nw) return multiply(p, 0, rows);
              for (int64_t e = 0; e < g.nbatch; ++e) multiply(e, rows * p / pieces, rows * (p + 1) / pieces);
            });
          } else {
            for (int64_t e = 0; e < g.nbatch; ++e) multiply(e, 0, rows);
          }
          k0 = k1;
        }
      }
    }
  });
}

int64_t MatmulNode::contract_bytes(const Region& region, int64_t kb, int64_t ke, const MemoryModel& m) const {
  // As contract() decides: a kept band of an expensive operand (or one read in place),
  // streamed K-panels of the others for the first (largest) sub-tile, and the deepest pull.
  if (region.size() == 0 || ke <= kb || k_rest_ == 0) return 0;  // (an empty K pulls nothing)
  const Node& a = a_trans_ ? *inputs()[0]->inputs()[0] : *inputs()[0];
  const Node& b = b_trans_ ? *inputs()[1]->inputs()[0] : *inputs()[1];
  auto in_place = [&](const Node& x, const Region& r) {
    return views_rows(x) ? m.in_place_rows(x, r) : m.in_place(x, r);
  };
  const Schedule sc = schedule(region, kb, ke, m.max_memory() / static_cast<size_t>(m.nworkers()),
                               in_place(a, a_read(region, kb, ke)), in_place(b, b_read(region, kb, ke)));
  const Geometry& g = sc.g;
  int64_t band = 0, deepest = 0;
  if (sc.hold_a && !sc.a_view)
    band = MemoryModel::region_bytes(a, a_read(region, kb, ke)), deepest = m.pull_bytes(a, a_read(region, kb, ke));
  if (sc.hold_b && !sc.b_view)
    band = MemoryModel::region_bytes(b, b_read(region, kb, ke)), deepest = m.pull_bytes(b, b_read(region, kb, ke));
  // The first (largest) sub-tile and its first K-panel.
  const size_t m_axis = nbatch_, n_axis = nbatch_ + nm_;
  Region sub = region;
  if (nm_) sub.count[m_axis] = sc.m_step;
  if (nn_) sub.count[n_axis] = sc.n_step;
  const int64_t rows = nm_ ? sat_mul(sub.count[m_axis], g.m_rest) : 1,
                cols = nn_ ? sat_mul(sub.count[n_axis], g.n_rest) : 1;
  const int64_t kp = sc.panel(rows, cols);
  int64_t panels = 0;
  if (!sc.hold_a) {
    const Region r = a_read(sub, kb, kb + kp);
    panels = sat_add(panels, MemoryModel::region_bytes(a, r));
    deepest = std::max(deepest, sat_add(panels, m.pull_bytes(a, r)));
  }
  if (!sc.hold_b) {
    const Region r = b_read(sub, kb, kb + kp);
    panels = sat_add(panels, MemoryModel::region_bytes(b, r));
    deepest = std::max(deepest, sat_add(panels, m.pull_bytes(b, r)));
  }
  return sat_add(band, std::max(panels, deepest));
}

int64_t MatmulNode::fill_bytes(const Region& region, const MemoryModel& m) const {
  if (region.size() == 0 || k_len_ == 0 || k_rest_ == 0) return 0;
  // As fork(): a small result over a long K, alone on the calling thread, is contracted
  // by every worker over a K range (each its panels and BLAS's), into partial results
  // added here.
  const int nw = m.nworkers();
  const Geometry g(*this, region);
  const int64_t blas = blas_workspace_bytes(g.mrows, g.ncols, sat_mul(k_len_, k_rest_), itemsize(dtype()));
  if (nw >= 2 && k_len_ >= nw && region.size() < 64 * 64 &&
      static_cast<double>(region.size()) * static_cast<double>(k_len_) * static_cast<double>(k_rest_) >=
          double(1 << 22) &&
      m.forks() > 1) {
    const int64_t part = contract_bytes(region, 0, ceil_div(k_len_, int64_t(nw)), m);
    return sat_add(sat_mul(nw, MemoryModel::region_bytes(*this, region)), m.spread(sat_add(part, blas)));
  }
  // Else its panels here; BLAS's workspace on this thread, or on every worker when the
  // multiplications of a pass's one chunk are shared (contract()).
  return sat_add(contract_bytes(region, 0, k_len_, m), m.spread(blas));
}

}  // namespace b2lazy
