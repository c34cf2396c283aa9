#include "ops/linalg/gram_node.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/chunk_shapes.hpp"
#include "core/dispatch.hpp"
#include "core/saturating.hpp"
#include "ops/linalg/gemm.hpp"
#include "ops/linalg/keep_node.hpp"
#include "ops/linalg/matmul_node.hpp"
#include "ops/shape/permute_node.hpp"
#include "runtime/alignment.hpp"
#include "runtime/evaluation.hpp"
#include "runtime/memory_model.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {

constexpr size_t kStreamBytes = size_t(16) << 20;  // per thread, the pulled panels of x
constexpr int64_t kRowBlock = 256;                 // rows of one staircase step / one task
constexpr size_t kTileBytes = size_t(8) << 20;     // preferred output tile
// Below this k, an element costs fewer flops (2k) than keeping it costs memory traffic
// (written once, read back and transposed): tiles off the diagonal are computed directly.
constexpr int64_t kMinKeptK = 128;

Shape gram_shape(const Shape& x, bool trans) {
  Shape s(x.begin(), x.end() - 2);
  const int64_t n = trans ? x.back() : x[x.size() - 2];
  s.push_back(n);
  s.push_back(n);
  return s;
}

Region empty_region(size_t ndim) { return Region{Shape(ndim, 0), Shape(ndim, 1), Shape(ndim, 0)}; }

Region transposed(Region r) {
  const size_t n = r.ndim();
  std::swap(r.start[n - 2], r.start[n - 1]);
  std::swap(r.step[n - 2], r.step[n - 1]);
  std::swap(r.count[n - 2], r.count[n - 1]);
  return r;
}

// How one output region of a Gram product is computed.
enum class Way {
  Direct,    // from x, every element (steps other than 1)
  Diagonal,  // from x, rows == columns: syrk, mirrored in place
  Square,    // rows == columns, from the upper triangle (its pass ran syrk), mirrored in place
  Upper,     // every element on or above the diagonal: the upper triangle's tile
  Lower,     // every element on or below: the mirrored upper tile, transposed
  Crossing,  // both: the tile and its mirror, element by element
};

// `keep`: the upper triangle is worth computing once and keeping (a long k). A tile on
// the diagonal then comes from it too (Square: its pass computed that square with syrk);
// only whole matrices (n x n) are computed in place.
Way way_of(const Region& r, bool keep, int64_t n) {
  const size_t i = r.ndim() - 2, j = r.ndim() - 1;
  if (r.step[i] != 1 || r.step[j] != 1) return Way::Direct;
  if (r.start[i] == r.start[j] && r.count[i] == r.count[j])
    return !keep || r.count[i] == n ? Way::Diagonal : Way::Square;
  if (!keep) return Way::Direct;
  if (r.last(i) <= r.start[j]) return Way::Upper;
  if (r.start[i] >= r.last(j)) return Way::Lower;
  return Way::Crossing;
}

// x's region holding, for the output batch elements of `r`, the index set (start, step,
// count) along x's n axis and [k0, k1) along its k axis.
Region x_region(const Node& x, bool trans, const Region& r, int64_t start, int64_t step, int64_t count, int64_t k0,
                int64_t k1) {
  const size_t nb = x.ndim() - 2;
  Region in{Shape(x.ndim()), Shape(x.ndim(), 1), Shape(x.ndim())};
  for (size_t d = 0; d < nb; ++d) in.start[d] = r.start[d], in.step[d] = r.step[d], in.count[d] = r.count[d];
  const size_t na = trans ? nb + 1 : nb, ka = trans ? nb : nb + 1;
  in.start[na] = start, in.step[na] = step, in.count[na] = count;
  in.start[ka] = k0, in.count[ka] = k1 - k0;
  return in;
}

// The pulled panels of x of one k step, for a worker's share of the budget.
size_t stream_limit(size_t per_worker) {
  return std::min(kStreamBytes, std::max<size_t>(per_worker / 8, size_t(1) << 20));
}

size_t stream_bytes(const ThreadState& ts) {
  if (!ts.eval) return kStreamBytes;
  return stream_limit(ts.eval->max_memory() / static_cast<size_t>(std::max(1, ts.eval->workers())));
}

// gram_fill's k step is one storage chunk of x along k when that is at most 4x the
// budgeted panel: reading a chunk for a part of it is the costlier waste. Not when x reads
// item ranges (C-order blocks): a run of rows of a chunk then decompresses just those rows.
int64_t chunk_k_step(const Node& x, bool trans) {
  return x.reads_ranges() ? 0 : storage_alignment(x, trans ? x.ndim() - 2 : x.ndim() - 1);
}

// The k step for panels of `kp` (the budget's): a storage chunk along k when chunk_k_step
// says so; else, for a stored x, whole blocks along k (a panel cutting a block decompresses
// all of it, and the next panel the same block again): one block if at most 2x more (4x
// did not fit x^T x's bands into 64 MiB), else a multiple of them.
int64_t k_step(const Node& x, bool trans, int64_t kp) {
  kp = std::max<int64_t>(1, kp);
  const int64_t align = chunk_k_step(x, trans);
  if (align > kp && align <= 4 * kp) return align;
  if (align > 0) return kp;
  const Shape blocks = x.storage_blocks();
  const int64_t b = blocks.size() == x.ndim() ? blocks[trans ? x.ndim() - 2 : x.ndim() - 1] : 0;
  if (b <= 1) return kp;
  if (b > kp) return b <= 2 * kp ? b : kp;
  return kp / b * b;
}

// What gram_fill holds besides its output: x's panels, streamed along k in k_step's.
int64_t panel_bytes(const Node& x, bool trans, const std::vector<Region>& x_regions, size_t per_worker) {
  const int64_t isz = static_cast<int64_t>(itemsize(x.dtype()));
  int64_t whole = 0;
  for (auto& r : x_regions) whole = sat_add(whole, sat_mul(r.size(), isz));
  const int64_t limit = static_cast<int64_t>(stream_limit(per_worker));
  const size_t nb = x.ndim() - 2;
  const int64_t klen = std::max<int64_t>(1, trans ? x.shape()[nb] : x.shape()[nb + 1]);
  const int64_t per_k = std::max<int64_t>(1, whole / klen);  // bytes of the panels per k
  return std::min(whole, sat_mul(per_k, k_step(x, trans, limit / per_k)));
}

size_t worker_share(const MemoryModel& m) { return m.max_memory() / static_cast<size_t>(m.nworkers()); }

// BLAS's packing buffers for the tiles of output region `r` (batch elements one at a time).
int64_t gram_blas_bytes(const Node& x, bool trans, const Region& r) {
  const size_t nb = r.ndim() - 2;
  const int64_t klen = trans ? x.shape()[nb] : x.shape()[nb + 1];
  return blas_workspace_bytes(r.count[nb], r.count[nb + 1], klen, itemsize(x.dtype()));
}

// The most any one pull of the inputs at `in` holds below it (x kept once: nothing).
int64_t deepest_pull(const Node& n, const std::vector<Region>& in, const MemoryModel& m) {
  int64_t most = 0;
  for (size_t i = 0; i < in.size() && i < n.inputs().size(); ++i)
    most = std::max(most, m.pull_bytes(*n.inputs()[i], in[i]));
  return most;
}

// What gram_fill reads of x for output region `r`: the columns' panel (x's n range
// [cj0, cj0 + ncols) along it) and, unless the rows are among the columns (`off` >= 0:
// they start at column off of it), the rows' panel ([i0, i0 + t_end)). With `upper`, only
// rows [0, t_end) and columns [u_begin, nc) of r hold elements on or above the diagonal.
struct GramSpan {
  bool upper = false, empty = false;
  int64_t t_end = 0, u_begin = 0, cj0 = 0, ncols = 0, off = -1;
};
GramSpan gram_span(const Region& r, bool upper) {
  const size_t nb = r.ndim() - 2;
  GramSpan g;
  const int64_t m = r.count[nb], nc = r.count[nb + 1];
  const int64_t i0 = r.start[nb], si = r.step[nb], j0 = r.start[nb + 1], sj = r.step[nb + 1];
  g.upper = upper && si == 1 && sj == 1;
  g.t_end = m;
  if (g.upper) {
    g.t_end = std::clamp<int64_t>(r.last(nb + 1) - i0 + 1, 0, m);
    g.u_begin = std::clamp<int64_t>(i0 - j0, 0, nc);
    g.empty = g.t_end == 0 || g.u_begin >= nc;
  }
  g.cj0 = j0 + g.u_begin * sj, g.ncols = nc - g.u_begin;
  if (si == sj && sj != 0 && (i0 - g.cj0) % sj == 0) {
    const int64_t o = (i0 - g.cj0) / sj;
    if (o >= 0 && o + g.t_end <= g.ncols) g.off = o;
  }
  return g;
}

// out (dense, shape r.count) = the Gram product of x at r. With `upper` (unit steps
// only), only the elements with row <= column are computed; the others stay zero or get
// the product's values. Panels of x along k are pulled once per region: the columns' panel,
// and the rows' too unless the rows are among the columns (then it is a part of it).
void gram_fill(const Node& x, bool trans, const Region& r, bool upper, void* out, ThreadState& ts) {
  const DType dt = x.dtype();
  const size_t isz = itemsize(dt);
  const size_t nb = r.ndim() - 2;
  const int64_t klen = trans ? x.shape()[nb] : x.shape()[nb + 1];
  if (!(upper && r.step[nb] == 1 && r.step[nb + 1] == 1)) std::memset(out, 0, static_cast<size_t>(r.size()) * isz);
  if (r.size() == 0) return;
  int64_t nbatch = 1;
  for (size_t d = 0; d < nb; ++d) nbatch *= r.count[d];
  const int64_t m = r.count[nb], nc = r.count[nb + 1];
  const int64_t i0 = r.start[nb], si = r.step[nb], sj = r.step[nb + 1];
  const GramSpan span = gram_span(r, upper);
  upper = span.upper;
  if (span.empty) return;
  // Rows [0, t_end) and columns [u_begin, nc) hold every element needed.
  const int64_t t_end = span.t_end, u_begin = span.u_begin, cj0 = span.cj0, ncols = span.ncols;
  // Upper: zero only what the row blocks below accumulate into (from the diagonal of each
  // block's first row to the end); the rest is never touched, so a fresh buffer's pages
  // below the diagonal are never faulted in.
  auto first_col = [&](int64_t t) {  // of row t, in the region's columns
    return u_begin + std::clamp<int64_t>(i0 + t / kRowBlock * kRowBlock - cj0, 0, ncols);
  };
  if (upper) {
    for (int64_t e = 0; e < nbatch; ++e)
      for (int64_t t = 0; t < t_end; ++t) {
        const int64_t c0 = first_col(t);
        std::memset(static_cast<char*>(out) + static_cast<size_t>((e * m + t) * nc + c0) * isz, 0,
                    static_cast<size_t>(nc - c0) * isz);
      }
  }
  if (klen == 0) return;
  // Rows among the columns (same step, in range): their panel is part of the columns'.
  const int64_t off = span.off;
  const bool shared = off >= 0;
  const int64_t wr = shared ? ncols : t_end;  // width of the rows' panel buffer

  const int64_t per_k = nbatch * (ncols + (shared ? 0 : t_end));
  const int64_t kp = k_step(x, trans, static_cast<int64_t>(stream_bytes(ts) / isz) / per_k);
  const int64_t align = chunk_k_step(x, trans);
  const int64_t nblocks = (t_end + kRowBlock - 1) / kRowBlock;
  const int nw = ts.can_fork && ts.eval ? ts.eval->workers() : 1;

  dispatch_computing(dt, [&]<class T>(T*) {
    const bool is_bool = dt == DType::Bool;
    auto mm = [&](bool ta, bool tb, int64_t mm_m, int64_t mm_n, int64_t k, const T* A, int64_t lda, const T* B,
                  int64_t ldb, T* C, int64_t ldc) {
      if constexpr (std::is_same_v<T, uint8_t>) {
        if (is_bool) {  // dispatched as uint8: or of ands, not counts
          gemm<bool>(ta, tb, mm_m, mm_n, k, reinterpret_cast<const bool*>(A), lda, reinterpret_cast<const bool*>(B),
                     ldb, reinterpret_cast<bool*>(C), ldc);
          return;
        }
      }
      gemm<T>(ta, tb, mm_m, mm_n, k, A, lda, B, ldb, C, ldc);
    };
    auto sq = [&](int64_t n, int64_t k, const T* A, int64_t lda, T* C, int64_t ldc) {
      if constexpr (std::is_same_v<T, uint8_t>) {
        if (is_bool) {
          syrk_upper<bool>(trans, n, k, reinterpret_cast<const bool*>(A), lda, reinterpret_cast<bool*>(C), ldc);
          return;
        }
      }
      syrk_upper<T>(trans, n, k, A, lda, C, ldc);
    };
    T* C = static_cast<T*>(out);
    // A panel pulled while the workers share this region's row blocks is pulled by them
    // too, in parts along its leading axis (x's k for x^T x, its n for x x^T: contiguous
    // parts of the buffer for one batch element); else by this thread while they wait.
    const bool split = nw > 1 && nbatch == 1;
    auto pull_panel = [&](const Region& reg, T* buf) {
      const int64_t len = reg.count[nb];
      if (!split || len < 2 * nw) return x.pull(reg, buf, ts);
      const int64_t row = reg.size() / std::max<int64_t>(1, len);
      ts.eval->parallel_for(nw, [&](int64_t p, int, ThreadState& wts) {
        const int64_t lo = len * p / nw, hi = len * (p + 1) / nw;
        Region part = reg;
        part.start[nb] += lo * reg.step[nb];
        part.count[nb] = hi - lo;
        x.pull(part, buf + lo * row, wts);
      });
    };
    for (int64_t k0 = 0; k0 < klen;) {
      int64_t k1 = std::min(klen, k0 + kp);
      if (align > 0 && kp >= align && k1 < klen) k1 = std::max(k0 + 1, k1 / align * align);
      const int64_t kc = k1 - k0;
      ScratchScope scope(ts.scratch);
      T* pc = scope.alloc_n<T>(static_cast<size_t>(nbatch * kc * ncols));
      pull_panel(x_region(x, trans, r, cj0, sj, ncols, k0, k1), pc);
      T* pr = pc;
      if (!shared) {
        pr = scope.alloc_n<T>(static_cast<size_t>(nbatch * kc * t_end));
        pull_panel(x_region(x, trans, r, i0, si, t_end, k0, k1), pr);
      }
      // Panels: trans, k x width per batch element; else width x k.
      auto rows_at = [&](int64_t e, int64_t t) {  // the rows' operand from row t
        const T* p = pr + e * kc * wr;
        const int64_t pos = t + (shared ? off : 0);
        return trans ? p + pos : p + pos * kc;
      };
      auto cols_at = [&](int64_t e, int64_t u) {  // the columns' operand from column u (of ncols)
        const T* p = pc + e * kc * ncols;
        return trans ? p + u : p + u * kc;
      };
      const int64_t lda = trans ? wr : kc, ldb = trans ? ncols : kc;
      auto block = [&](int64_t piece) {
        const int64_t e = piece / nblocks, t0 = piece % nblocks * kRowBlock, t1 = std::min(t_end, t0 + kRowBlock);
        T* Ce = C + e * m * nc + u_begin;  // column u of ncols is column u_begin + u of the region
        if (!upper) {
          mm(trans, !trans, t1 - t0, ncols, kc, rows_at(e, t0), lda, cols_at(e, 0), ldb, Ce + t0 * nc, nc);
          return;
        }
        if (shared) {  // the square on the diagonal by syrk, the rest to its right by gemm
          const int64_t d0 = off + t0, d1 = off + t1;
          sq(t1 - t0, kc, rows_at(e, t0), lda, Ce + t0 * nc + d0, nc);
          mm(trans, !trans, t1 - t0, ncols - d1, kc, rows_at(e, t0), lda, cols_at(e, d1), ldb, Ce + t0 * nc + d1, nc);
          return;
        }
        // The first column any of these rows needs; a few below the diagonal come along.
        const int64_t us = std::clamp<int64_t>(i0 + t0 - cj0, 0, ncols);
        mm(trans, !trans, t1 - t0, ncols - us, kc, rows_at(e, t0), lda, cols_at(e, us), ldb, Ce + t0 * nc + us, nc);
      };
      const int64_t pieces = nbatch * nblocks;
      const double work = static_cast<double>(nbatch) * static_cast<double>(t_end) * static_cast<double>(ncols) *
                          static_cast<double>(kc);
      if (nw > 1 && pieces > 1 && work >= double(1 << 21))  // alone on the calling thread: share it
        ts.eval->parallel_for(pieces, [&](int64_t p, int, ThreadState&) { block(p); });
      else
        for (int64_t p = 0; p < pieces; ++p) block(p);
      k0 = k1;
    }
  });
}

// Mirror each batch element's square upper triangle into its lower one, in place, in
// blocks (a plain column walk would stride through memory once per element).
void mirror_square(void* out, int64_t nbatch, int64_t n, DType dt) {
  constexpr int64_t B = 64;
  dispatch_computing(dt, [&]<class T>(T*) {
    T* p = static_cast<T*>(out);
    for (int64_t e = 0; e < nbatch; ++e, p += n * n)
      for (int64_t t0 = 0; t0 < n; t0 += B)
        for (int64_t u0 = 0; u0 <= t0; u0 += B)
          for (int64_t t = t0; t < std::min(n, t0 + B); ++t)
            for (int64_t u = u0; u < std::min(t, u0 + B); ++u) p[t * n + u] = p[u * n + t];
  });
}

bool swaps_last_two(const Node& n, const NodePtr& of) { return is_matrix_transpose(n) && n.inputs()[0] == of; }

}  // namespace

UpperGramNode::UpperGramNode(NodePtr x, bool trans)
    : Node(x->dtype(), gram_shape(x->shape(), trans), {x}), trans_(trans) {
  single_threaded_blas();
}

std::string UpperGramNode::describe() const {
  return std::string("upper triangle of ") + (trans_ ? "x^T x" : "x x^T") + " -> " + dtype_name(dtype()) + " " +
         shape_str(shape()) + " (syrk on the diagonal, gemm above it)";
}

void UpperGramNode::fill(const Region& region, void* out, ThreadState& ts) const {
  gram_fill(*inputs()[0], trans_, region, true, out, ts);
}

std::vector<Region> UpperGramNode::pull_pieces(const Region& r, size_t input, size_t) const {
  // The columns' panel and the rows' (two strips of x, not their hull: a tile far above
  // the diagonal reads two strips of a re-packed x), whole along k.
  const Node& x = *inputs()[0];
  const size_t nb = r.ndim() - 2;
  const int64_t klen = trans_ ? x.shape()[nb] : x.shape()[nb + 1];
  if (input != 0 || r.size() == 0) return {};
  const GramSpan g = gram_span(r, true);
  if (g.empty) return {empty_region(x.ndim())};  // below the diagonal: nothing read
  std::vector<Region> out{x_region(x, trans_, r, g.cj0, r.step[nb + 1], g.ncols, 0, klen)};
  if (g.off < 0) out.push_back(x_region(x, trans_, r, r.start[nb], r.step[nb], g.t_end, 0, klen));
  return out;
}

std::vector<Region> UpperGramNode::input_regions(const Region& r) const {
  const Node& x = *inputs()[0];
  const size_t nb = r.ndim() - 2;
  const int64_t klen = trans_ ? x.shape()[nb] : x.shape()[nb + 1];
  if (r.size() == 0) return {empty_region(x.ndim())};
  // The rows' and the columns' panels: their hull along the n axis (unit steps; others
  // are not asked of this node).
  const int64_t lo = std::min(r.start[nb], r.start[nb + 1]);
  const int64_t hi = std::max(r.last(nb), r.last(nb + 1));
  return {x_region(x, trans_, r, lo, 1, hi - lo + 1, 0, klen)};
}

namespace {
// x (kept once computed when it is expensive) and its upper triangle, in GramNode's order.
std::vector<NodePtr> gram_inputs(const NodePtr& x, bool trans) {
  NodePtr kx = keep_if_expensive(x);
  NodePtr up = std::make_shared<UpperGramNode>(kx, trans);
  return {up, up, kx, kx};
}
}  // namespace

int64_t UpperGramNode::fill_bytes(const Region& region, const MemoryModel& m) const {
  if (region.size() == 0) return 0;
  const auto in = input_regions(region);
  return sat_add(sat_add(panel_bytes(*inputs()[0], trans_, in, worker_share(m)), deepest_pull(*this, in, m)),
                 m.spread(gram_blas_bytes(*inputs()[0], trans_,
                                          region)));  // (on every worker when a pass's one chunk shares its tiles)
}

Shape UpperGramNode::kept_chunks(const Shape& box, size_t target_bytes, size_t most_bytes) const {
  // x^T x over C-order blocks (python-blosc2's row strips): a column strip of x, at any
  // width, decompresses the whole rows it spans, so a band of rows of the upper triangle
  // (up to `most_bytes`; one is held per worker while it is computed) reads x once per
  // band. Square tiles of t columns read x once per tile too, unless the planner re-packs
  // x in tiles for them (x is then read once and written once, and each tile reads two
  // column strips of the copy: n / t + 1 reads of x in all, upper tiles only). Bands when
  // they read x no more often than that (a large budget: few bands), else tiles.
  const Node& x = *inputs()[0];
  if (!trans_ || !x.reads_ranges() || box.size() != 2) return {};
  const int64_t isz = static_cast<int64_t>(itemsize(dtype())), n = std::max<int64_t>(1, box[1]);
  const int64_t bytes = static_cast<int64_t>(std::max(target_bytes, most_bytes));
  const int64_t rows = std::clamp<int64_t>(bytes / (n * isz), 1, std::max<int64_t>(1, box[0]));
  const int64_t side = std::max<int64_t>(
      1, static_cast<int64_t>(std::sqrt(static_cast<double>(target_bytes) / static_cast<double>(isz))));
  const int64_t band_reads = ceil_div(std::max<int64_t>(1, box[0]), rows);
  const int64_t tile_reads = 3 + ceil_div(n, side);
  if (band_reads > tile_reads) return {};
  return {rows, n};
}

GramNode::GramNode(NodePtr x, bool trans)
    : Node(x->dtype(), gram_shape(x->shape(), trans), gram_inputs(x, trans)),
      trans_(trans),
      keep_((trans ? x->shape()[x->ndim() - 2] : x->shape().back()) >= kMinKeptK) {
  single_threaded_blas();
}

std::string GramNode::describe() const {
  const Shape& xs = inputs()[2]->shape();
  return std::string("matmul ") + (trans_ ? "x^T x" : "x x^T") + ", x " + shape_str(xs) + " -> " + dtype_name(dtype()) +
         " " + shape_str(shape()) +
         (keep_ ? " (symmetric: syrk on diagonal tiles, the upper triangle computed once and mirrored)"
                : " (symmetric: syrk on diagonal tiles; k too short to keep the triangle, gemm off them)");
}

std::vector<Region> GramNode::input_regions(const Region& r) const {
  const Node& x = *inputs()[2];
  std::vector<Region> in(4, empty_region(r.ndim()));
  in[2] = in[3] = empty_region(x.ndim());
  if (r.size() == 0) return in;
  const size_t nb = r.ndim() - 2;
  const int64_t klen = trans_ ? x.shape()[nb] : x.shape()[nb + 1];
  switch (way_of(r, keep_, shape().back())) {
    case Way::Direct:
      in[2] = x_region(x, trans_, r, r.start[nb], r.step[nb], r.count[nb], 0, klen);
      in[3] = x_region(x, trans_, r, r.start[nb + 1], r.step[nb + 1], r.count[nb + 1], 0, klen);
      break;
    case Way::Diagonal: in[2] = x_region(x, trans_, r, r.start[nb], 1, r.count[nb], 0, klen); break;
    case Way::Upper:
    case Way::Square: in[0] = r; break;
    case Way::Lower: in[1] = transposed(r); break;
    case Way::Crossing:
      in[0] = r;
      in[1] = transposed(r);
      break;
  }
  return in;
}

int64_t GramNode::fill_bytes(const Region& r, const MemoryModel& m) const {
  if (r.size() == 0) return 0;
  const int64_t tile = MemoryModel::region_bytes(*this, r);
  const auto in = input_regions(r);
  const int64_t below = deepest_pull(*this, in, m);
  switch (way_of(r, keep_, shape().back())) {
    case Way::Direct:
    case Way::Diagonal:
      return sat_add(sat_add(panel_bytes(*inputs()[2], trans_, {in[2], in[3]}, worker_share(m)), below),
                     m.spread(gram_blas_bytes(*inputs()[2], trans_, r)));
    case Way::Upper:
    case Way::Square: return below;                // pulled straight into the output
    case Way::Lower: return sat_add(tile, below);  // the mirror tile, transposed into place
    case Way::Crossing: return sat_add(sat_mul(2, tile), below);
  }
  return below;
}

void GramNode::fill(const Region& r, void* out, ThreadState& ts) const {
  if (r.size() == 0) return;
  const size_t isz = itemsize(dtype());
  const size_t nb = r.ndim() - 2;
  int64_t nbatch = 1;
  for (size_t d = 0; d < nb; ++d) nbatch *= r.count[d];
  const int64_t m = r.count[nb], nc = r.count[nb + 1];
  const Way way = way_of(r, keep_, shape().back());
  if (way == Way::Direct || way == Way::Diagonal) {
    gram_fill(*inputs()[2], trans_, r, way == Way::Diagonal, out, ts);
    if (way == Way::Diagonal) mirror_square(out, nbatch, m, dtype());
    return;
  }
  if (way == Way::Upper) return inputs()[0]->pull(r, out, ts);
  if (way == Way::Square) {
    inputs()[0]->pull(r, out, ts);
    mirror_square(out, nbatch, m, dtype());
    return;
  }
  ScratchScope scope(ts.scratch);
  char* low = static_cast<char*>(scope.alloc(static_cast<size_t>(r.size()) * isz));  // the mirror tile, nc x m
  inputs()[1]->pull(transposed(r), low, ts);
  char* up = nullptr;
  if (way == Way::Crossing) {
    up = static_cast<char*>(scope.alloc(static_cast<size_t>(r.size()) * isz));
    inputs()[0]->pull(r, up, ts);
  }
  const int64_t i0 = r.start[nb], j0 = r.start[nb + 1];
  char* o = static_cast<char*>(out);
  for (int64_t e = 0; e < nbatch; ++e) {
    const int64_t base = e * m * nc;
    for (int64_t t = 0; t < m; ++t)
      for (int64_t u = 0; u < nc; ++u) {
        const char* src = up && i0 + t <= j0 + u ? up + (base + t * nc + u) * isz : low + (base + u * m + t) * isz;
        std::memcpy(o + (base + t * nc + u) * isz, src, isz);
      }
  }
}

Shape GramNode::preferred_chunks() const {
  // Square tiles, so that a tile is on the diagonal, above it or below it; whole small
  // matrices, several per chunk, for batches of them.
  const Shape& s = shape();
  const size_t nb = s.size() - 2, isz = itemsize(dtype());
  const int64_t n = std::max<int64_t>(1, s.back());
  Shape c(s.size(), 1);
  if (static_cast<size_t>(n * n) * isz <= kTileBytes) {
    Shape batch(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(nb));
    Shape cb = contiguous_chunks(batch, static_cast<size_t>(n * n) * isz, kTileBytes);
    for (size_t d = 0; d < nb; ++d) c[d] = cb[d];
    c[nb] = c[nb + 1] = n;
    return c;
  }
  int64_t side = n;
  while (side > 1 && static_cast<size_t>(side * side) * isz > kTileBytes) side -= side / 2;
  c[nb] = c[nb + 1] = side;
  return c;
}

NodePtr make_matmul_node(NodePtr a, NodePtr b, size_t nbatch, Shape out_shape) {
  if (swaps_last_two(*a, b)) return std::make_shared<GramNode>(b, true);
  if (swaps_last_two(*b, a)) return std::make_shared<GramNode>(a, false);
  return std::make_shared<MatmulNode>(std::move(a), std::move(b), nbatch, 1, 1, 1, std::move(out_shape));
}

}  // namespace b2lazy
