// LAPACK from the same OpenBLAS as blas.hpp (the scipy-openblas32 wheel: Fortran symbols
// prefixed `scipy_`, 32-bit integers), for the factorisations of b2lazy.linalg. Matrices
// are column-major, as LAPACK takes them. Each wrapper sizes its own workspace (a query
// first) and returns LAPACK's `info`.
#pragma once
#include <complex>
#include <cstdint>
#include <type_traits>

namespace b2lazy::lapack {

using lint = int32_t;  // LAPACK's integer in this build (openblas32)

template <class T> struct real_type { using type = T; };
template <class T> struct real_type<std::complex<T>> { using type = T; };
template <class T> using real_t = typename real_type<T>::type;

// Cholesky: the lower triangle (uplo 'L') of the n x n `a` replaced by L.
template <class T> lint potrf(char uplo, lint n, T* a, lint lda);
// QR: R in a's upper triangle, the reflectors below it and in `tau` (min(m, n)).
template <class T> lint geqrf(lint m, lint n, T* a, lint lda, T* tau);
// The first `n` columns of Q (m x n, n <= m) from geqrf's `k` reflectors (orgqr / ungqr).
template <class T> lint orgqr(lint m, lint n, lint k, T* a, lint lda, const T* tau);
// Hermitian eigenproblem (syevd / heevd): eigenvalues ascending in `w`; jobz 'V': the
// eigenvectors replace `a` (columns). The lower triangle is read.
template <class T> lint heevd(char jobz, lint n, T* a, lint lda, real_t<T>* w);
// SVD by divide and conquer (gesdd): jobz 'A' (U m x m, VT n x n), 'S' (U m x k, VT k x n)
// or 'N' (values only). `a` is destroyed.
template <class T>
lint gesdd(char jobz, lint m, lint n, T* a, lint lda, real_t<T>* s, T* u, lint ldu, T* vt, lint ldvt);
// LU with partial pivoting (getrf), its inverse (getri), and solve (gesv).
template <class T> lint getrf(lint m, lint n, T* a, lint lda, lint* ipiv);
template <class T> lint getri(lint n, T* a, lint lda, const lint* ipiv);
template <class T> lint gesv(lint n, lint nrhs, T* a, lint lda, lint* ipiv, T* b, lint ldb);
// General eigenproblem (geev), right eigenvectors only (jobvr 'V' or 'N'): the eigenvalues
// in `w` and the vectors in `vr` (columns, unit 2-norm), complex whatever T.
template <class T>
lint geev(char jobvr, lint n, T* a, lint lda, std::complex<real_t<T>>* w, std::complex<real_t<T>>* vr, lint ldvr);

}  // namespace b2lazy::lapack
