// BLAS for matrix tiles: OpenBLAS from the scipy-openblas32 wheel, whose symbols carry a
// `scipy_` prefix (so it cannot clash with another OpenBLAS in the same process, e.g.
// NumPy's). Debian 12's OpenBLAS 0.3.21 picked Prescott (SSE3) kernels on one of our
// machines (products at 0.13-0.30x NumPy). See docs/contributing/design.md.
#pragma once
#include <cblas.h>

#include <mutex>

#define B2LAZY_BLAS(name) scipy_##name

namespace b2lazy {

// Parallelism is over output tiles (the executor's workers), so BLAS runs each call on
// the calling thread: the cores are used once, not by two thread pools at a time.
inline void single_threaded_blas() {
  static std::once_flag once;
  std::call_once(once, [] { B2LAZY_BLAS(openblas_set_num_threads)(1); });
}

// BLAS on `n` threads while it lives, one again after: for work that runs alone (one
// matrix's factorisation, a tiled factor's step), where no other task uses BLAS meanwhile.
struct BlasThreads {
  explicit BlasThreads(int n) : n_(n) {
    single_threaded_blas();
    if (n_ > 1) B2LAZY_BLAS(openblas_set_num_threads)(n_);
  }
  ~BlasThreads() {
    if (n_ > 1) B2LAZY_BLAS(openblas_set_num_threads)(1);
  }
  BlasThreads(const BlasThreads&) = delete;
  BlasThreads& operator=(const BlasThreads&) = delete;
  int n_;
};

}  // namespace b2lazy
