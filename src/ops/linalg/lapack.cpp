#include "ops/linalg/lapack.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "ops/linalg/blas.hpp"

using b2lazy::lapack::lint;
using c8 = std::complex<float>;
using c16 = std::complex<double>;

// The Fortran interface (gfortran: arguments by pointer, each character argument's length
// passed last, as size_t).
extern "C" {
#define B2LAZY_LAPACK_DECL(T, P)                                                                 \
  void scipy_##P##potrf_(const char*, const lint*, T*, const lint*, lint*, size_t);              \
  void scipy_##P##geqrf_(const lint*, const lint*, T*, const lint*, T*, T*, const lint*, lint*); \
  void scipy_##P##getrf_(const lint*, const lint*, T*, const lint*, lint*, lint*);               \
  void scipy_##P##getri_(const lint*, T*, const lint*, const lint*, T*, const lint*, lint*);     \
  void scipy_##P##gesv_(const lint*, const lint*, T*, const lint*, lint*, T*, const lint*, lint*);
B2LAZY_LAPACK_DECL(float, s)
B2LAZY_LAPACK_DECL(double, d)
B2LAZY_LAPACK_DECL(c8, c)
B2LAZY_LAPACK_DECL(c16, z)
#undef B2LAZY_LAPACK_DECL
void scipy_sorgqr_(const lint*, const lint*, const lint*, float*, const lint*, const float*, float*, const lint*,
                   lint*);
void scipy_dorgqr_(const lint*, const lint*, const lint*, double*, const lint*, const double*, double*, const lint*,
                   lint*);
void scipy_cungqr_(const lint*, const lint*, const lint*, c8*, const lint*, const c8*, c8*, const lint*, lint*);
void scipy_zungqr_(const lint*, const lint*, const lint*, c16*, const lint*, const c16*, c16*, const lint*, lint*);
void scipy_ssyevd_(const char*, const char*, const lint*, float*, const lint*, float*, float*, const lint*, lint*,
                   const lint*, lint*, size_t, size_t);
void scipy_dsyevd_(const char*, const char*, const lint*, double*, const lint*, double*, double*, const lint*, lint*,
                   const lint*, lint*, size_t, size_t);
void scipy_cheevd_(const char*, const char*, const lint*, c8*, const lint*, float*, c8*, const lint*, float*,
                   const lint*, lint*, const lint*, lint*, size_t, size_t);
void scipy_zheevd_(const char*, const char*, const lint*, c16*, const lint*, double*, c16*, const lint*, double*,
                   const lint*, lint*, const lint*, lint*, size_t, size_t);
void scipy_sgesdd_(const char*, const lint*, const lint*, float*, const lint*, float*, float*, const lint*, float*,
                   const lint*, float*, const lint*, lint*, lint*, size_t);
void scipy_dgesdd_(const char*, const lint*, const lint*, double*, const lint*, double*, double*, const lint*, double*,
                   const lint*, double*, const lint*, lint*, lint*, size_t);
void scipy_cgesdd_(const char*, const lint*, const lint*, c8*, const lint*, float*, c8*, const lint*, c8*, const lint*,
                   c8*, const lint*, float*, lint*, lint*, size_t);
void scipy_zgesdd_(const char*, const lint*, const lint*, c16*, const lint*, double*, c16*, const lint*, c16*,
                   const lint*, c16*, const lint*, double*, lint*, lint*, size_t);
void scipy_sgeev_(const char*, const char*, const lint*, float*, const lint*, float*, float*, float*, const lint*,
                  float*, const lint*, float*, const lint*, lint*, size_t, size_t);
void scipy_dgeev_(const char*, const char*, const lint*, double*, const lint*, double*, double*, double*, const lint*,
                  double*, const lint*, double*, const lint*, lint*, size_t, size_t);
void scipy_cgeev_(const char*, const char*, const lint*, c8*, const lint*, c8*, c8*, const lint*, c8*, const lint*, c8*,
                  const lint*, float*, lint*, size_t, size_t);
void scipy_zgeev_(const char*, const char*, const lint*, c16*, const lint*, c16*, c16*, const lint*, c16*, const lint*,
                  c16*, const lint*, double*, lint*, size_t, size_t);
}

namespace b2lazy::lapack {

namespace {
// A workspace size LAPACK's query returned (in a T's real part), at least `least`.
template <class T> lint queried(const T& w, lint least = 1) {
  double v;
  if constexpr (std::is_same_v<T, c8> || std::is_same_v<T, c16>) v = static_cast<double>(w.real());
  else v = static_cast<double>(w);
  return std::max<lint>(least, static_cast<lint>(v * (1 + 1e-7)) + 1);
}
lint ld(lint n) { return std::max<lint>(1, n); }
}  // namespace

#define B2LAZY_LAPACK_SIMPLE(T, P)                                                             \
  template <> lint potrf<T>(char uplo, lint n, T* a, lint lda) {                               \
    single_threaded_blas();                                                                    \
    lint info = 0;                                                                             \
    scipy_##P##potrf_(&uplo, &n, a, &lda, &info, 1);                                           \
    return info;                                                                               \
  }                                                                                            \
  template <> lint geqrf<T>(lint m, lint n, T * a, lint lda, T * tau) {                        \
    single_threaded_blas();                                                                    \
    lint info = 0, q = -1;                                                                     \
    T w{};                                                                                     \
    scipy_##P##geqrf_(&m, &n, a, &lda, tau, &w, &q, &info);                                    \
    lint lw = queried(w, ld(n));                                                               \
    std::vector<T> work(static_cast<size_t>(lw));                                              \
    scipy_##P##geqrf_(&m, &n, a, &lda, tau, work.data(), &lw, &info);                          \
    return info;                                                                               \
  }                                                                                            \
  template <> lint getrf<T>(lint m, lint n, T * a, lint lda, lint * ipiv) {                    \
    single_threaded_blas();                                                                    \
    lint info = 0;                                                                             \
    scipy_##P##getrf_(&m, &n, a, &lda, ipiv, &info);                                           \
    return info;                                                                               \
  }                                                                                            \
  template <> lint getri<T>(lint n, T * a, lint lda, const lint* ipiv) {                       \
    single_threaded_blas();                                                                    \
    lint info = 0, q = -1;                                                                     \
    T w{};                                                                                     \
    scipy_##P##getri_(&n, a, &lda, ipiv, &w, &q, &info);                                       \
    lint lw = queried(w, ld(n));                                                               \
    std::vector<T> work(static_cast<size_t>(lw));                                              \
    scipy_##P##getri_(&n, a, &lda, ipiv, work.data(), &lw, &info);                             \
    return info;                                                                               \
  }                                                                                            \
  template <> lint gesv<T>(lint n, lint nrhs, T * a, lint lda, lint * ipiv, T * b, lint ldb) { \
    single_threaded_blas();                                                                    \
    lint info = 0;                                                                             \
    scipy_##P##gesv_(&n, &nrhs, a, &lda, ipiv, b, &ldb, &info);                                \
    return info;                                                                               \
  }
B2LAZY_LAPACK_SIMPLE(float, s)
B2LAZY_LAPACK_SIMPLE(double, d)
B2LAZY_LAPACK_SIMPLE(c8, c)
B2LAZY_LAPACK_SIMPLE(c16, z)
#undef B2LAZY_LAPACK_SIMPLE

#define B2LAZY_LAPACK_ORGQR(T, F)                                                    \
  template <> lint orgqr<T>(lint m, lint n, lint k, T * a, lint lda, const T* tau) { \
    single_threaded_blas();                                                          \
    lint info = 0, q = -1;                                                           \
    T w{};                                                                           \
    F(&m, &n, &k, a, &lda, tau, &w, &q, &info);                                      \
    lint lw = queried(w, ld(n));                                                     \
    std::vector<T> work(static_cast<size_t>(lw));                                    \
    F(&m, &n, &k, a, &lda, tau, work.data(), &lw, &info);                            \
    return info;                                                                     \
  }
B2LAZY_LAPACK_ORGQR(float, scipy_sorgqr_)
B2LAZY_LAPACK_ORGQR(double, scipy_dorgqr_)
B2LAZY_LAPACK_ORGQR(c8, scipy_cungqr_)
B2LAZY_LAPACK_ORGQR(c16, scipy_zungqr_)
#undef B2LAZY_LAPACK_ORGQR

#define B2LAZY_LAPACK_SYEVD(T, F)                                                       \
  template <> lint heevd<T>(char jobz, lint n, T* a, lint lda, T* w) {                  \
    single_threaded_blas();                                                             \
    const char uplo = 'L';                                                              \
    lint info = 0, q = -1, iw = 0;                                                      \
    T wk{};                                                                             \
    F(&jobz, &uplo, &n, a, &lda, w, &wk, &q, &iw, &q, &info, 1, 1);                     \
    lint lw = queried(wk), liw = std::max<lint>(1, iw);                                 \
    std::vector<T> work(static_cast<size_t>(lw));                                       \
    std::vector<lint> iwork(static_cast<size_t>(liw));                                  \
    F(&jobz, &uplo, &n, a, &lda, w, work.data(), &lw, iwork.data(), &liw, &info, 1, 1); \
    return info;                                                                        \
  }
B2LAZY_LAPACK_SYEVD(float, scipy_ssyevd_)
B2LAZY_LAPACK_SYEVD(double, scipy_dsyevd_)
#undef B2LAZY_LAPACK_SYEVD
#define B2LAZY_LAPACK_HEEVD(T, R, F)                                                                        \
  template <> lint heevd<T>(char jobz, lint n, T* a, lint lda, R* w) {                                      \
    single_threaded_blas();                                                                                 \
    const char uplo = 'L';                                                                                  \
    lint info = 0, q = -1, iw = 0;                                                                          \
    T wk{};                                                                                                 \
    R rw{};                                                                                                 \
    F(&jobz, &uplo, &n, a, &lda, w, &wk, &q, &rw, &q, &iw, &q, &info, 1, 1);                                \
    lint lw = queried(wk), lrw = queried(rw), liw = std::max<lint>(1, iw);                                  \
    std::vector<T> work(static_cast<size_t>(lw));                                                           \
    std::vector<R> rwork(static_cast<size_t>(lrw));                                                         \
    std::vector<lint> iwork(static_cast<size_t>(liw));                                                      \
    F(&jobz, &uplo, &n, a, &lda, w, work.data(), &lw, rwork.data(), &lrw, iwork.data(), &liw, &info, 1, 1); \
    return info;                                                                                            \
  }
B2LAZY_LAPACK_HEEVD(c8, float, scipy_cheevd_)
B2LAZY_LAPACK_HEEVD(c16, double, scipy_zheevd_)
#undef B2LAZY_LAPACK_HEEVD

#define B2LAZY_LAPACK_GESDD_REAL(T, F)                                                                           \
  template <> lint gesdd<T>(char jobz, lint m, lint n, T* a, lint lda, T* s, T* u, lint ldu, T* vt, lint ldvt) { \
    single_threaded_blas();                                                                                      \
    const lint k = std::min(m, n);                                                                               \
    lint info = 0, q = -1;                                                                                       \
    T wk{};                                                                                                      \
    std::vector<lint> iwork(static_cast<size_t>(std::max<lint>(1, 8 * k)));                                      \
    F(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, &wk, &q, iwork.data(), &info, 1);                           \
    lint lw = queried(wk);                                                                                       \
    std::vector<T> work(static_cast<size_t>(lw));                                                                \
    F(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work.data(), &lw, iwork.data(), &info, 1);                  \
    return info;                                                                                                 \
  }
B2LAZY_LAPACK_GESDD_REAL(float, scipy_sgesdd_)
B2LAZY_LAPACK_GESDD_REAL(double, scipy_dgesdd_)
#undef B2LAZY_LAPACK_GESDD_REAL
#define B2LAZY_LAPACK_GESDD_COMPLEX(T, R, F)                                                                     \
  template <> lint gesdd<T>(char jobz, lint m, lint n, T* a, lint lda, R* s, T* u, lint ldu, T* vt, lint ldvt) { \
    single_threaded_blas();                                                                                      \
    const int64_t k = std::min(m, n), big = std::max(m, n);                                                      \
    const int64_t lrw = jobz == 'N' ? 7 * k : k * std::max(5 * k + 7, 2 * big + 2 * k + 1);                      \
    lint info = 0, q = -1;                                                                                       \
    T wk{};                                                                                                      \
    std::vector<R> rwork(static_cast<size_t>(std::max<int64_t>(1, lrw)));                                        \
    std::vector<lint> iwork(static_cast<size_t>(std::max<int64_t>(1, 8 * k)));                                   \
    F(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, &wk, &q, rwork.data(), iwork.data(), &info, 1);             \
    lint lw = queried(wk);                                                                                       \
    std::vector<T> work(static_cast<size_t>(lw));                                                                \
    F(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work.data(), &lw, rwork.data(), iwork.data(), &info, 1);    \
    return info;                                                                                                 \
  }
B2LAZY_LAPACK_GESDD_COMPLEX(c8, float, scipy_cgesdd_)
B2LAZY_LAPACK_GESDD_COMPLEX(c16, double, scipy_zgesdd_)
#undef B2LAZY_LAPACK_GESDD_COMPLEX

#define B2LAZY_LAPACK_GEEV_REAL(T, F)                                                                                \
  template <> lint geev<T>(char jobvr, lint n, T* a, lint lda, std::complex<T>* w, std::complex<T>* vr, lint ldvr) { \
    single_threaded_blas();                                                                                          \
    const char jobvl = 'N';                                                                                          \
    const lint one = 1, ldv = jobvr == 'V' ? ld(n) : 1;                                                              \
    lint info = 0, q = -1;                                                                                           \
    T wk{};                                                                                                          \
    std::vector<T> wr(static_cast<size_t>(ld(n))), wi(static_cast<size_t>(ld(n)));                                   \
    std::vector<T> v(jobvr == 'V' ? static_cast<size_t>(n) * static_cast<size_t>(n) : 1);                            \
    F(&jobvl, &jobvr, &n, a, &lda, wr.data(), wi.data(), nullptr, &one, v.data(), &ldv, &wk, &q, &info, 1, 1);       \
    lint lw = queried(wk, 4 * ld(n));                                                                                \
    std::vector<T> work(static_cast<size_t>(lw));                                                                    \
    F(&jobvl, &jobvr, &n, a, &lda, wr.data(), wi.data(), nullptr, &one, v.data(), &ldv, work.data(), &lw, &info, 1,  \
      1);                                                                                                            \
    if (info != 0) return info;                                                                                      \
    for (lint j = 0; j < n; ++j) w[j] = {wr[static_cast<size_t>(j)], wi[static_cast<size_t>(j)]};                    \
    if (jobvr != 'V') return 0;                                                                                      \
    /* a complex pair (wi > 0 then its conjugate): columns j and j+1 hold re and im */                               \
    for (lint j = 0; j < n; ++j) {                                                                                   \
      const T* c = v.data() + static_cast<size_t>(j) * static_cast<size_t>(n);                                       \
      std::complex<T>* o = vr + static_cast<size_t>(j) * static_cast<size_t>(ldvr);                                  \
      if (wi[static_cast<size_t>(j)] != 0 && j + 1 < n) {                                                            \
        const T* d = c + n;                                                                                          \
        std::complex<T>* o2 = o + ldvr;                                                                              \
        for (lint i = 0; i < n; ++i) {                                                                               \
          o[i] = {c[i], d[i]};                                                                                       \
          o2[i] = {c[i], -d[i]};                                                                                     \
        }                                                                                                            \
        ++j;                                                                                                         \
      } else {                                                                                                       \
        for (lint i = 0; i < n; ++i) o[i] = {c[i], 0};                                                               \
      }                                                                                                              \
    }                                                                                                                \
    return 0;                                                                                                        \
  }
B2LAZY_LAPACK_GEEV_REAL(float, scipy_sgeev_)
B2LAZY_LAPACK_GEEV_REAL(double, scipy_dgeev_)
#undef B2LAZY_LAPACK_GEEV_REAL
#define B2LAZY_LAPACK_GEEV_COMPLEX(T, R, F)                                                                 \
  template <> lint geev<T>(char jobvr, lint n, T* a, lint lda, T* w, T* vr, lint ldvr) {                    \
    single_threaded_blas();                                                                                 \
    const char jobvl = 'N';                                                                                 \
    const lint one = 1, ldv = jobvr == 'V' ? ldvr : 1;                                                      \
    lint info = 0, q = -1;                                                                                  \
    T wk{}, dummy{};                                                                                        \
    std::vector<R> rwork(static_cast<size_t>(std::max<lint>(1, 2 * n)));                                    \
    T* v = jobvr == 'V' ? vr : &dummy;                                                                      \
    F(&jobvl, &jobvr, &n, a, &lda, w, nullptr, &one, v, &ldv, &wk, &q, rwork.data(), &info, 1, 1);          \
    lint lw = queried(wk, 2 * ld(n));                                                                       \
    std::vector<T> work(static_cast<size_t>(lw));                                                           \
    F(&jobvl, &jobvr, &n, a, &lda, w, nullptr, &one, v, &ldv, work.data(), &lw, rwork.data(), &info, 1, 1); \
    return info;                                                                                            \
  }
B2LAZY_LAPACK_GEEV_COMPLEX(c8, float, scipy_cgeev_)
B2LAZY_LAPACK_GEEV_COMPLEX(c16, double, scipy_zgeev_)
#undef B2LAZY_LAPACK_GEEV_COMPLEX

}  // namespace b2lazy::lapack
