#include "ops/linalg/tiled_cholesky.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <complex>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "b2lazy/error.hpp"
#include "core/big_alloc.hpp"
#include "core/chunk_shapes.hpp"
#include "core/dispatch.hpp"
#include "core/saturating.hpp"
#include "ops/linalg/blas.hpp"
#include "ops/linalg/factor_node.hpp"
#include "ops/linalg/gemm.hpp"
#include "ops/linalg/lapack.hpp"
#include "runtime/evaluation.hpp"
#include "runtime/memory_model.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"
#include "storage/b2nd_source.hpp"
#include "storage/b2nd_writer.hpp"
#include "storage/buffer_source.hpp"

namespace b2lazy {

namespace {

std::atomic<int64_t> g_runs{0};
std::atomic<int64_t> g_tile_bytes{0};

using c8 = std::complex<float>;
using c16 = std::complex<double>;

std::string bytes_str(int64_t b) {
  char buf[64];
  if (b >= (int64_t(1) << 30)) std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(b) / double(1 << 30));
  else if (b < (int64_t(1) << 20))
    std::snprintf(buf, sizeof buf, "%.0f KiB", std::ceil(static_cast<double>(b) / 1024.0));
  else std::snprintf(buf, sizeof buf, "%.0f MiB", std::ceil(static_cast<double>(b) / double(1 << 20)));
  return buf;
}

CBLAS_TRANSPOSE op(bool conj_trans) { return conj_trans ? CblasConjTrans : CblasNoTrans; }

// C (m x n) -= op(A) op(B), op: the conjugate transpose when its flag is set; row-major.
template <class T>
void gemm_sub(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* A, int64_t lda, const T* B, int64_t ldb, T* C,
              int64_t ldc) {
  if (m == 0 || n == 0 || k == 0) return;
  const auto I = blas_int;
  if constexpr (std::is_same_v<T, double>) B2LAZY_BLAS(cblas_dgemm)
  (CblasRowMajor, op(ta), op(tb), I(m), I(n), I(k), -1.0, A, I(lda), B, I(ldb), 1.0, C, I(ldc));
  else if constexpr (std::is_same_v<T, float>) B2LAZY_BLAS(cblas_sgemm)(CblasRowMajor, op(ta), op(tb), I(m), I(n), I(k),
                                                                        -1.0f, A, I(lda), B, I(ldb), 1.0f, C, I(ldc));
  else {
    const T alpha(-1), beta(1);
    if constexpr (std::is_same_v<T, c16>) B2LAZY_BLAS(cblas_zgemm)
    (CblasRowMajor, op(ta), op(tb), I(m), I(n), I(k), &alpha, A, I(lda), B, I(ldb), &beta, C, I(ldc));
    else B2LAZY_BLAS(cblas_cgemm)(CblasRowMajor, op(ta), op(tb), I(m), I(n), I(k), &alpha, A, I(lda), B, I(ldb), &beta,
                                  C, I(ldc));
  }
}

// The lower triangle of C (n x n) -= A A^H, A n x k (SYRK / HERK).
template <class T> void herk_sub(int64_t n, int64_t k, const T* A, int64_t lda, T* C, int64_t ldc) {
  if (n == 0 || k == 0) return;
  const auto I = blas_int;
  if constexpr (std::is_same_v<T, double>)
    B2LAZY_BLAS(cblas_dsyrk)(CblasRowMajor, CblasLower, CblasNoTrans, I(n), I(k), -1.0, A, I(lda), 1.0, C, I(ldc));
  else if constexpr (std::is_same_v<T, float>)
    B2LAZY_BLAS(cblas_ssyrk)(CblasRowMajor, CblasLower, CblasNoTrans, I(n), I(k), -1.0f, A, I(lda), 1.0f, C, I(ldc));
  else if constexpr (std::is_same_v<T, c16>)
    B2LAZY_BLAS(cblas_zherk)(CblasRowMajor, CblasLower, CblasNoTrans, I(n), I(k), -1.0, A, I(lda), 1.0, C, I(ldc));
  else B2LAZY_BLAS(cblas_cherk)(CblasRowMajor, CblasLower, CblasNoTrans, I(n), I(k), -1.0f, A, I(lda), 1.0f, C, I(ldc));
}

// B (m x n) := B L^-H (right) or op(L)^-1 B (left, L^-H when `conj_trans`); L lower.
template <class T>
void trsm(bool right, bool conj_trans, int64_t m, int64_t n, const T* L, int64_t ldl, T* B, int64_t ldb) {
  if (m == 0 || n == 0) return;
  const auto I = blas_int;
  const CBLAS_SIDE side = right ? CblasRight : CblasLeft;
  if constexpr (std::is_same_v<T, double>) B2LAZY_BLAS(cblas_dtrsm)
  (CblasRowMajor, side, CblasLower, op(conj_trans), CblasNonUnit, I(m), I(n), 1.0, L, I(ldl), B, I(ldb));
  else if constexpr (std::is_same_v<T, float>) B2LAZY_BLAS(cblas_strsm)(
      CblasRowMajor, side, CblasLower, op(conj_trans), CblasNonUnit, I(m), I(n), 1.0f, L, I(ldl), B, I(ldb));
  else {
    const T one(1);
    if constexpr (std::is_same_v<T, c16>) B2LAZY_BLAS(cblas_ztrsm)
    (CblasRowMajor, side, CblasLower, op(conj_trans), CblasNonUnit, I(m), I(n), &one, L, I(ldl), B, I(ldb));
    else B2LAZY_BLAS(cblas_ctrsm)(CblasRowMajor, side, CblasLower, op(conj_trans), CblasNonUnit, I(m), I(n), &one, L,
                                  I(ldl), B, I(ldb));
  }
}

template <class T> T conj_of(T v) {
  if constexpr (is_complex_v<T>) return std::conj(v);
  else return v;
}

template <class F> void dispatch_float(DType t, F&& f) {
  switch (t) {
    case DType::F32: return f(static_cast<float*>(nullptr));
    case DType::F64: return f(static_cast<double*>(nullptr));
    case DType::C64: return f(static_cast<c8*>(nullptr));
    case DType::C128: return f(static_cast<c16*>(nullptr));
    default: throw TypeError("cholesky: tiles of " + std::string(dtype_name(t)) + " are not supported");
  }
}

// Scratch of the thread's running task (released when the task ends: State::work).
template <class T> T* grab(ThreadState& ts, size_t count) {
  return static_cast<T*>(ts.scratch.alloc(count * sizeof(T)));
}

Region tile_region(int64_t r0, int64_t c0, int64_t rows, int64_t cols) { return {{r0, c0}, {1, 1}, {rows, cols}}; }

std::string temp_path() {
  static std::atomic<int64_t> counter{0};
  return (std::filesystem::temp_directory_path() /
          (".b2lazy-cholesky-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".b2nd"))
      .string();
}

// A spilled array being written: tiles as chunks, lz4 as the plan's spills. The writer and
// the source made from it live as long as the evaluation (State::spills): the thread
// states key their Blosc2 contexts and decompression counts by them (a new one at a freed
// one's address would inherit its contexts), as the plan's spilled stages live as long.
struct Spill {
  std::unique_ptr<B2ndWriter> w;
  NodePtr source;
  std::string path;
  int fd = -1;  // the finished file, unlinked: truncated to give its disk space back early
  ~Spill() { release(); }
  void release() {
    if (fd < 0) return;
    [[maybe_unused]] const int rc = ::ftruncate(fd, 0);  // (else: when the last descriptor closes)
    ::close(fd);
    fd = -1;
  }
  Spill(const Shape& shape, DType t, Shape chunks) : path(temp_path()) {
    for (size_t d = 0; d < chunks.size(); ++d) chunks[d] = std::max<int64_t>(1, std::min(chunks[d], shape[d]));
    ComputeOptions o;
    o.cparams.codec = "lz4";  // (no compression: the tiles are read and written over and over)
    o.cparams.clevel = 0;
    o.cparams.filter = "nofilter";
    o.urlpath = path;
    w = std::make_unique<B2ndWriter>(shape, t, chunks, shrink_chunks(chunks, itemsize(t), size_t(256) << 10), o);
  }
  // The array as a source, read through its open descriptor: its name is gone already.
  NodePtr finish() {
    source = w->finish_source("cholesky");
    fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    std::error_code ec;
    std::filesystem::remove(path, ec);
    return source;
  }
};

}  // namespace

int64_t tiled_cholesky_runs() { return g_runs.load(); }
int64_t tiled_cholesky_tile_bytes() { return g_tile_bytes.load(); }
void set_tiled_cholesky_tile_bytes(int64_t bytes) { g_tile_bytes.store(std::max<int64_t>(0, bytes)); }

// --- The factorisation of one evaluation, shared by the threads that ask for it.
struct TiledCholeskyNode::State {
  enum class Phase { Sym, Lu, Potrf, Trsm, Update, Solve };

  State(const TiledCholeskyNode& node, size_t max_memory, int workers)
      : nd(node), n(node.n_), t(node.inputs()[0]->dtype()), isz(itemsize(t)) {
    if (node.kind_ != SpdKind::Cholesky && node.in_memory(max_memory)) {
      lu = true;
      return;
    }
    b = node.tile(max_memory, workers);
    nt = n == 0 ? 0 : (n + b - 1) / b;
    tiled = nt > 1 || g_tile_bytes.load() > 0;
  }

  const TiledCholeskyNode& nd;
  const int64_t n;
  const DType t;
  const size_t isz;
  bool lu = false;     // solve, inv: LAPACK's LU, in memory
  bool tiled = false;  // spilled tiles (else one tile in memory)
  int64_t b = 0, nt = 0;

  // The result: the panels of L (panel k: rows [k b, n), columns [k b, k b + dim(k))),
  // and for solve and inv x.
  std::vector<NodePtr> panels;
  NodePtr x;

  int64_t dim(int64_t i) const { return std::min(b, n - i * b); }

  // --- The phases' tasks, taken by the threads in `work`.
  std::mutex mu;
  std::condition_variable cv;
  bool started = false, done = false;
  std::exception_ptr error;
  std::vector<std::function<void(ThreadState&)>> tasks;
  size_t next = 0, finished = 0;
  Phase phase = Phase::Potrf;
  int64_t k = 0;                               // the tile column being factored
  NodePtr trail;                               // the trailing matrix from (k b, k b), or null: the input
  std::vector<std::unique_ptr<Spill>> spills;  // every one made (see Spill)
  Spill *panel_w = nullptr, *trail_w = nullptr, *x_w = nullptr, *trail_s = nullptr;
  Spill* spill(const Shape& shape, const Shape& chunks) {
    spills.push_back(std::make_unique<Spill>(shape, t, chunks));
    return spills.back().get();
  }
  void retire_trail() {  // the trailing matrix read no more
    trail.reset();
    if (trail_s) trail_s->release();
    trail_s = nullptr;
  }
  std::shared_ptr<unsigned char[]> diag;  // L_kk, for the TRSM phase
  struct LjCache {
    int64_t k = -1, j = -1;
    std::vector<unsigned char> buf;
  };
  std::unordered_map<const ThreadState*, LjCache> lj_cache;  // per thread: the last L_jk it read
  std::string failure;                                       // solve, inv: why the tiled path does not apply

  void run(ThreadState& ts) {
    {
      std::lock_guard<std::mutex> g(mu);
      if (done) return;
    }
    const int workers = ts.eval ? ts.eval->workers() : 1;
    if (!tiled) {  // one LAPACK call: on all the workers' cores (the others wait for it)
      BlasThreads threads(workers > 1 && n >= 128 ? workers : 1);
      return work(ts);
    }
    if (ts.can_fork && workers > 1) ts.eval->parallel_for(workers, [&](int64_t, int, ThreadState& w) { work(w); });
    work(ts);
  }

  void work(ThreadState& ts) {
    std::unique_lock<std::mutex> lk(mu);
    if (!started) {
      started = true;
      if (tiled) g_runs++;
      try {
        begin(lu ? Phase::Lu : nd.kind_ != SpdKind::Cholesky && tiled ? Phase::Sym : Phase::Potrf);
      } catch (...) {
        error = std::current_exception();
      }
    }
    for (;;) {
      if (error) std::rethrow_exception(error);
      if (done) return;
      if (next < tasks.size()) {
        std::function<void(ThreadState&)> task = tasks[next++];
        lk.unlock();
        std::exception_ptr e;
        try {
          if (ts.eval) ts.eval->check_cancel();
          ScratchScope scope(ts.scratch);
          task(ts);
        } catch (...) {
          e = std::current_exception();
        }
        lk.lock();
        if (e) {
          if (!error) error = e;
        } else if (++finished == tasks.size()) {
          try {
            end();
          } catch (...) {
            error = std::current_exception();
          }
        }
        cv.notify_all();
        continue;
      }
      cv.wait_for(lk, std::chrono::milliseconds(50));
      if (ts.eval && !error && !done) try {
          ts.eval->check_cancel();
        } catch (...) {
          error = std::current_exception();
          cv.notify_all();
        }
    }
  }

  // Phase `p`'s tasks (under the lock); a phase without any ends at once.
  void begin(Phase p) {
    phase = p;
    tasks.clear();
    next = finished = 0;
    dispatch_float(t, [&]<class T>(T*) { make_tasks<T>(); });
    if (!done && tasks.empty()) end();
  }

  // The phase's last task finished (under the lock): what follows.
  void end() {
    switch (phase) {
      case Phase::Lu: done = true; return;
      case Phase::Sym:
        if (!failure.empty()) throw ValueError(over_budget(failure));
        return begin(Phase::Potrf);
      case Phase::Potrf:
        if (k + 1 >= nt) {
          if (tiled) panels.push_back(panel_w->finish());
          panel_w = nullptr;
          retire_trail();
          diag.reset();
          lj_cache.clear();
          return begin(Phase::Solve);
        }
        return begin(Phase::Trsm);
      case Phase::Trsm:
        panels.push_back(panel_w->finish());
        panel_w = nullptr;
        diag.reset();
        return begin(Phase::Update);
      case Phase::Update:
        retire_trail();
        trail = trail_w->finish();
        trail_s = std::exchange(trail_w, nullptr);
        ++k;
        return begin(Phase::Potrf);
      case Phase::Solve:
        if (x_w) x = x_w->finish();
        x_w = nullptr;
        done = true;
        return;
    }
  }

  std::string over_budget(const std::string& why) const {
    const int64_t need = nd.lu_->matrix_bytes();
    return nd.fn_ + ": the matrix " + shape_str({n, n}) + " " + dtype_name(t) + " is " +
           bytes_str(sat_mul(sat_mul(n, n), static_cast<int64_t>(isz))) + " (" + bytes_str(need) +
           " with LAPACK's copies and workspace), over max_memory; out of core (by tiled Cholesky) " + nd.fn_ +
           " takes only symmetric positive-definite matrices, and " + why + ": raise max_memory to " + bytes_str(need) +
           " to factor it whole by LU";
  }

  // The tile (i, j) of the matrix being factored (the input, or the trailing matrix).
  void read_a(int64_t i, int64_t j, void* out, ThreadState& ts) const {
    if (!trail) return nd.inputs()[0]->pull(tile_region(i * b, j * b, dim(i), dim(j)), out, ts);
    trail->pull(tile_region((i - k) * b, (j - k) * b, dim(i), dim(j)), out, ts);
  }
  // Tile (i, j) of L (i >= j) from panel j.
  void read_l(int64_t i, int64_t j, void* out, ThreadState& ts) const {
    panels[static_cast<size_t>(j)]->pull(tile_region((i - j) * b, 0, dim(i), dim(j)), out, ts);
  }

  template <class T> void make_tasks() {
    switch (phase) {
      case Phase::Lu:
        tasks.push_back([this](ThreadState& ts) {
          const int64_t row = nd.lu_->shape().back();
          std::shared_ptr<unsigned char[]> buf(static_cast<unsigned char*>(alloc_big(std::max<size_t>(1, row * isz))),
                                               BigDeleter{});
          nd.lu_->fill(Region::whole(nd.lu_->shape()), buf.get(), ts);
          x = std::make_shared<BufferSource>(buf.get(), t, nd.shape(), Shape{},
                                             std::shared_ptr<const void>(buf, buf.get()), "lu");
        });
        return;
      case Phase::Sym:  // tiles (i, j) and (j, i) against each other
        for (int64_t i = 0; i < nt; ++i)
          for (int64_t j = 0; j <= i; ++j) tasks.push_back([this, i, j](ThreadState& ts) { symmetric<T>(i, j, ts); });
        return;
      case Phase::Potrf:
        if (n == 0) return;
        if (tiled) panel_w = spill(Shape{n - k * b, dim(k)}, Shape{b, dim(k)});
        tasks.push_back([this](ThreadState& ts) { potrf<T>(ts); });
        return;
      case Phase::Trsm:
        for (int64_t i = k + 1; i < nt; ++i) tasks.push_back([this, i](ThreadState& ts) { trsm_tile<T>(i, ts); });
        return;
      case Phase::Update:
        trail_w = spill(Shape{n - (k + 1) * b, n - (k + 1) * b}, Shape{b, b});
        for (int64_t j = k + 1; j < nt; ++j)
          for (int64_t i = j; i < nt; ++i) tasks.push_back([this, i, j](ThreadState& ts) { update_tile<T>(i, j, ts); });
        return;
      case Phase::Solve: {
        if (nd.kind_ == SpdKind::Cholesky) {
          done = true;
          return;
        }
        const int64_t nrhs = nd.nrhs_;
        if (n == 0 || nrhs == 0) {
          x = std::make_shared<BufferSource>(nullptr, t, nd.shape(), Shape{}, nullptr, "solve");
          done = true;
          return;
        }
        const int64_t cw = std::clamp<int64_t>(2 * b * b / std::max<int64_t>(1, n), 1, nrhs);
        x_w = spill(Shape{n, nrhs}, Shape{b, cw});
        for (int64_t c0 = 0; c0 < nrhs; c0 += cw)
          tasks.push_back([this, c0, cw, nrhs](ThreadState& ts) { substitute<T>(c0, std::min(cw, nrhs - c0), ts); });
        return;
      }
    }
  }

  template <class T> void symmetric(int64_t i, int64_t j, ThreadState& ts) {
    using R = lapack::real_t<T>;
    const int64_t bi = dim(i), bj = dim(j);
    T* a = grab<T>(ts, static_cast<size_t>(bi * bj));
    T* at = i == j ? a : grab<T>(ts, static_cast<size_t>(bi * bj));
    read_a(i, j, a, ts);
    if (i != j) read_a(j, i, at, ts);
    R big = 0, worst = 0;
    for (int64_t r = 0; r < bi; ++r)
      for (int64_t c = 0; c < bj; ++c) {
        const T x1 = a[r * bj + c], x2 = at[c * bi + r];
        big = std::max(big, std::max(std::abs(x1), std::abs(x2)));
        worst = std::max(worst, std::abs(x1 - conj_of(x2)));
      }
    if (!(worst <= R(64) * std::numeric_limits<R>::epsilon() * big)) {
      std::lock_guard<std::mutex> g(mu);
      if (failure.empty())
        failure = "this one is not symmetric (its element (" + std::to_string(i * b) + "..., " + std::to_string(j * b) +
                  "...) block differs from its transpose's)";
    }
  }

  template <class T> void potrf(ThreadState& ts) {
    const int64_t bk = dim(k);
    T* d;
    std::shared_ptr<unsigned char[]> keep(static_cast<unsigned char*>(alloc_big(static_cast<size_t>(bk * bk) * isz)),
                                          BigDeleter{});
    d = reinterpret_cast<T*>(keep.get());
    read_a(k, k, d, ts);
    // Row-major lower = column-major upper: potrf('U') leaves L in the row-major lower triangle.
    const lapack::lint info = lapack::potrf<T>('U', static_cast<lapack::lint>(bk), d, static_cast<lapack::lint>(bk));
    if (info > 0) {
      const std::string minor = std::to_string(k * b + info);
      if (nd.kind_ != SpdKind::Cholesky)
        throw ValueError(over_budget("this one is not positive definite (its leading minor of order " + minor +
                                     " is not positive)"));
      throw LinAlgError(nd.fn_ + ": the matrix is not positive definite: its leading minor of order " + minor +
                        " is not positive");
    }
    for (int64_t r = 0; r < bk; ++r) std::fill(d + r * bk + r + 1, d + (r + 1) * bk, T(0));
    if (!tiled) {  // one tile, in memory: L itself
      panels.push_back(std::make_shared<BufferSource>(d, t, Shape{n, n}, Shape{},
                                                      std::shared_ptr<const void>(keep, keep.get()), "cholesky"));
      return;
    }
    panel_w->w->write_chunk(0, d, ts);
    diag = std::move(keep);
  }

  template <class T> void trsm_tile(int64_t i, ThreadState& ts) {
    const int64_t bi = dim(i), bk = dim(k);
    T* a = grab<T>(ts, static_cast<size_t>(bi * bk));
    read_a(i, k, a, ts);
    trsm<T>(true, true, bi, bk, reinterpret_cast<const T*>(diag.get()), bk, a, bk);
    panel_w->w->write_chunk(i - k, a, ts);
  }

  template <class T> void update_tile(int64_t i, int64_t j, ThreadState& ts) {
    const int64_t bi = dim(i), bj = dim(j), bk = dim(k);
    T* c = grab<T>(ts, static_cast<size_t>(bi * bj));
    T* li = grab<T>(ts, static_cast<size_t>(bi * bk));
    read_a(i, j, c, ts);
    read_l(i, k, li, ts);
    if (i == j) {
      herk_sub<T>(bi, bk, li, bk, c, bj);
    } else {
      // L_jk, kept by the thread for its next task (tasks go down a tile column j).
      LjCache* lc;
      {
        std::lock_guard<std::mutex> g(mu);
        lc = &lj_cache[&ts];  // (a reference into an unordered_map outlives rehashing)
      }
      if (lc->k != k || lc->j != j) {
        lc->buf.resize(static_cast<size_t>(b * b) * isz);
        read_l(j, k, lc->buf.data(), ts);
        lc->k = k, lc->j = j;
      }
      gemm_sub<T>(false, true, bi, bj, bk, li, bk, reinterpret_cast<const T*>(lc->buf.data()), bk, c, bj);
    }
    const int64_t ntt = nt - k - 1;
    trail_w->w->write_chunk((i - k - 1) * ntt + (j - k - 1), c, ts);
  }

  // Columns [c0, c0 + w) of x: forward (L y = b), then back (L^H x = y) by tiles.
  template <class T> void substitute(int64_t c0, int64_t w, ThreadState& ts) {
    T* y = grab<T>(ts, static_cast<size_t>(n * w));
    if (nd.kind_ == SpdKind::Solve) {
      nd.inputs()[1]->pull(tile_region(0, c0, n, w), y, ts);
    } else {  // inv: the identity's columns
      std::fill(y, y + n * w, T(0));
      for (int64_t c = 0; c < w; ++c) y[(c0 + c) * w + c] = T(1);
    }
    T* l = grab<T>(ts, static_cast<size_t>(b * b));
    for (int64_t i = 0; i < nt; ++i) {
      T* yi = y + i * b * w;
      for (int64_t q = 0; q < i; ++q) {
        read_l(i, q, l, ts);
        gemm_sub<T>(false, false, dim(i), w, dim(q), l, dim(q), y + q * b * w, w, yi, w);
      }
      read_l(i, i, l, ts);
      trsm<T>(false, false, dim(i), w, l, dim(i), yi, w);
    }
    for (int64_t i = nt; i-- > 0;) {
      T* yi = y + i * b * w;
      for (int64_t q = i + 1; q < nt; ++q) {
        read_l(q, i, l, ts);  // L_qi (dim(q) x dim(i)); y_i -= L_qi^H y_q
        gemm_sub<T>(true, false, dim(i), w, dim(q), l, dim(i), y + q * b * w, w, yi, w);
      }
      read_l(i, i, l, ts);
      trsm<T>(false, true, dim(i), w, l, dim(i), yi, w);
    }
    const int64_t cw = x_w->w->grid().chunks()[1];
    const int64_t ncb = (nd.nrhs_ + cw - 1) / cw;
    for (int64_t i = 0; i < nt; ++i) x_w->w->write_chunk(i * ncb + c0 / cw, y + i * b * w, ts);
  }
};

TiledCholeskyNode::TiledCholeskyNode(SpdKind kind, std::vector<NodePtr> inputs, bool upper, std::string fn)
    : Node(inputs.at(0)->dtype(),
           kind == SpdKind::Solve ? Shape{inputs.at(0)->shape().at(0), inputs.at(1)->shape().at(1)}
                                  : inputs.at(0)->shape(),
           inputs),
      kind_(kind),
      upper_(upper),
      fn_(std::move(fn)) {
  const Shape& s = this->inputs()[0]->shape();
  if (s.size() != 2 || s[0] != s[1]) throw ValueError(fn_ + ": a square 2-d matrix is expected");
  n_ = s[0];
  if (kind == SpdKind::Solve) nrhs_ = shape()[1];
  if (kind == SpdKind::Inv) nrhs_ = n_;
  if (kind != SpdKind::Cholesky)
    lu_ = std::make_shared<FactorNode>(kind == SpdKind::Solve ? FactorKind::Solve : FactorKind::Inv, this->inputs(),
                                       FactorOptions{}, fn_);
}

std::string TiledCholeskyNode::describe() const {
  const char* what = kind_ == SpdKind::Cholesky ? "cholesky" : kind_ == SpdKind::Solve ? "solve" : "inv";
  return "cholesky_tiles " + std::string(what) + " of " + shape_str(inputs()[0]->shape()) + " " + dtype_name(dtype()) +
         (kind_ == SpdKind::Cholesky ? "" : " (LU within max_memory)") +
         ": over max_memory, by tiles spilled to temporary b2nd files";
}

bool TiledCholeskyNode::in_memory(size_t max_memory) const {
  if (g_tile_bytes.load() > 0) return false;
  if (kind_ != SpdKind::Cholesky) return static_cast<uint64_t>(lu_->matrix_bytes()) <= max_memory;
  const int64_t isz = static_cast<int64_t>(itemsize(dtype()));
  return static_cast<uint64_t>(sat_mul(3, sat_mul(sat_mul(n_, n_), isz))) <= max_memory;
}

int64_t TiledCholeskyNode::tile(size_t max_memory, int workers) const {
  const int64_t isz = static_cast<int64_t>(itemsize(dtype()));
  if (const int64_t o = g_tile_bytes.load(); o > 0)
    return std::clamp<int64_t>(static_cast<int64_t>(std::sqrt(static_cast<double>(o / isz))), 1,
                               std::max<int64_t>(1, n_));
  if (in_memory(max_memory)) return std::max<int64_t>(1, n_);
  // Half the budget for the factorisation: 5 tiles per thread and the diagonal tile.
  const double share = static_cast<double>(std::min<size_t>(max_memory, size_t(1) << 50)) / 2;
  int64_t b = static_cast<int64_t>(std::sqrt(share / static_cast<double>((5 * std::max(1, workers) + 1) * isz)));
  if (b >= 128) b -= b % 64;
  b = std::max<int64_t>(b, 16);
  if (b >= n_) b = std::max<int64_t>(1, (n_ + 1) / 2);
  return b;
}

int64_t TiledCholeskyNode::thread_bytes(int64_t b) const {
  return sat_mul(5, sat_mul(sat_mul(b, b), static_cast<int64_t>(itemsize(dtype()))));
}

std::vector<Region> TiledCholeskyNode::input_regions(const Region& region) const {
  std::vector<Region> out;
  for (const NodePtr& in : inputs()) {
    Region r = Region::whole(in->shape());
    if (region.size() == 0) r.count.assign(r.count.size(), 0);
    out.push_back(std::move(r));
  }
  return out;
}

int64_t TiledCholeskyNode::fill_bytes(const Region& region, const MemoryModel& m) const {
  if (region.size() == 0) return 0;
  const int64_t isz = static_cast<int64_t>(itemsize(dtype()));
  const int64_t out = MemoryModel::region_bytes(*this, region);
  if (kind_ != SpdKind::Cholesky && in_memory(m.max_memory()))  // the LU's, and x held
    return sat_add(lu_->fill_bytes(Region::whole(lu_->shape()), m), out);
  const int64_t b = tile(m.max_memory(), m.nworkers());
  const Node& a = *inputs()[0];
  if (!g_tile_bytes.load() && in_memory(m.max_memory()))
    return sat_add(sat_mul(2, sat_mul(sat_mul(n_, n_), isz)), m.pull_bytes(a, Region::whole(a.shape())));
  int64_t held = sat_add(thread_bytes(b), sat_mul(sat_mul(b, b), isz));  // and the diagonal tile
  held = sat_add(held, m.pull_bytes(a, tile_region(0, 0, std::min(b, n_), std::min(b, n_))));
  return sat_add(held, sat_mul(upper_ ? 2 : 1, out));  // (a region of the factor read by panels, transposed)
}

Shape TiledCholeskyNode::preferred_chunks() const { return {}; }

std::shared_ptr<TiledCholeskyNode::State> TiledCholeskyNode::state(ThreadState& ts) const {
  std::shared_ptr<State> st;
  if (ts.eval) {
    Evaluation* ev = ts.eval;
    st = std::static_pointer_cast<State>(
        ev->shared_state(this, [&] { return std::make_shared<State>(*this, ev->max_memory(), ev->workers()); }));
  } else {
    st = std::make_shared<State>(*this, std::numeric_limits<size_t>::max(), 1);
  }
  st->run(ts);
  return st;
}

void TiledCholeskyNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  if (region.step[0] < 0 || region.step[1] < 0) {  // the same elements in increasing order, then reversed
    Region up = region;
    for (size_t d = 0; d < 2; ++d)
      if (up.step[d] < 0) up.start[d] += (up.count[d] - 1) * up.step[d], up.step[d] = -up.step[d];
    const size_t isz = itemsize(dtype());
    ScratchScope scope(ts.scratch);
    char* tmp = static_cast<char*>(scope.alloc(static_cast<size_t>(region.size()) * isz));
    fill(up, tmp, ts);
    const int64_t rc = region.count[0], cc = region.count[1];
    for (int64_t i = 0; i < rc; ++i)
      for (int64_t j = 0; j < cc; ++j) {
        const int64_t si = region.step[0] < 0 ? rc - 1 - i : i, sj = region.step[1] < 0 ? cc - 1 - j : j;
        std::memcpy(static_cast<char*>(out) + static_cast<size_t>(i * cc + j) * isz,
                    tmp + static_cast<size_t>(si * cc + sj) * isz, isz);
      }
    return;
  }
  std::shared_ptr<State> st = state(ts);
  if (kind_ != SpdKind::Cholesky) return st->x->pull(region, out, ts);
  const size_t isz = itemsize(dtype());
  // A region of L: zeros, then each panel's rows at or below its first.
  auto read_l = [&](const Region& r, char* dst) {
    const int64_t rc = r.count[0], cc = r.count[1];
    std::memset(dst, 0, static_cast<size_t>(rc * cc) * isz);
    const int64_t b = st->b;
    ScratchScope scope(ts.scratch);
    char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(rc * cc) * isz));
    for (size_t k = 0; k < st->panels.size(); ++k) {
      const int64_t lo = static_cast<int64_t>(k) * b, hi = std::min(n_, lo + b);
      auto first_at = [](int64_t start, int64_t step, int64_t at) {  // first t with start + t step >= at
        return at <= start ? int64_t(0) : (at - start + step - 1) / step;
      };
      const int64_t t0 = first_at(r.start[1], r.step[1], lo), t1 = std::min(cc, first_at(r.start[1], r.step[1], hi));
      const int64_t s0 = first_at(r.start[0], r.step[0], lo);
      if (t0 >= t1 || s0 >= rc) continue;
      const Region sub{{r.start[0] + s0 * r.step[0] - lo, r.start[1] + t0 * r.step[1] - lo},
                       {r.step[0], r.step[1]},
                       {rc - s0, t1 - t0}};
      st->panels[k]->pull(sub, buf, ts);
      const size_t row = static_cast<size_t>(t1 - t0) * isz;
      for (int64_t s = 0; s < rc - s0; ++s)
        std::memcpy(dst + (static_cast<size_t>((s0 + s) * cc + t0)) * isz, buf + static_cast<size_t>(s) * row, row);
    }
  };
  if (!upper_) return read_l(region, static_cast<char*>(out));
  // U = L^H: the transposed region of L, conjugated.
  const Region tr{
      {region.start[1], region.start[0]}, {region.step[1], region.step[0]}, {region.count[1], region.count[0]}};
  ScratchScope scope(ts.scratch);
  char* tmp = static_cast<char*>(scope.alloc(static_cast<size_t>(region.size()) * isz));
  read_l(tr, tmp);
  dispatch_float(dtype(), [&]<class T>(T*) {
    const T* s = reinterpret_cast<const T*>(tmp);
    T* d = static_cast<T*>(out);
    const int64_t rc = region.count[0], cc = region.count[1];
    for (int64_t i = 0; i < rc; ++i)
      for (int64_t j = 0; j < cc; ++j) d[i * cc + j] = conj_of(s[j * rc + i]);
  });
}

}  // namespace b2lazy
