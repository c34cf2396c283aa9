// Matrix-tile kernels shared by the contraction nodes: C += op(A) op(B) (gemm) and the
// upper triangle of C += op(A) op(A)^T (syrk), row-major with leading dimensions, through
// OpenBLAS for float32/float64 and complex, exact wrapping loops for integers and bool.
#pragma once
#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

#include "b2lazy/error.hpp"
#include "core/dispatch.hpp"
#include "ops/linalg/blas.hpp"

namespace b2lazy {

// What OpenBLAS holds per thread calling gemm or syrk for an m x n result over k: it packs
// panels of both operands (at most about 512 rows and 1024 columns, 256 deep) into
// per-thread buffers, kept once touched (measured through VmHWM for single-threaded
// dgemm: 0.8 MiB for 256 x 256 x 4096, 1.5 MiB for 128 x 4096 x 256, 2.3 MiB for
// 512 x 1024 x 4096, 3.3 MiB for 1024^3). The memory model counts it for every thread
// that multiplies.
inline int64_t blas_workspace_bytes(int64_t m, int64_t n, int64_t k, size_t itemsize) {
  const int64_t b = (std::min<int64_t>(m, 512) + std::min<int64_t>(n, 1024)) * std::min<int64_t>(k, 256) *
                    static_cast<int64_t>(itemsize);
  return std::min<int64_t>(b, int64_t(4) << 20);
}

// BLAS takes int: a panel past that is refused, never truncated.
inline int blas_int(int64_t v) {
  if (v > INT_MAX) throw ValueError("matmul: a panel dimension of " + std::to_string(v) + " exceeds BLAS's int range");
  return static_cast<int>(v);
}

// C (m x n) += op(A) (m x k) op(B) (k x n); op(X) is X stored transposed when its flag is
// set (a pulled panel of a transposed operand).
template <class T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* A, int64_t lda, const T* B, int64_t ldb, T* C,
          int64_t ldc) {
  if (m == 0 || n == 0 || k == 0) return;
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
    auto gemv = [](auto... args) {
      if constexpr (std::is_same_v<T, double>) B2LAZY_BLAS(cblas_dgemv)(args...);
      else B2LAZY_BLAS(cblas_sgemv)(args...);
    };
    auto gemm3 = [](auto... args) {
      if constexpr (std::is_same_v<T, double>) B2LAZY_BLAS(cblas_dgemm)(args...);
      else B2LAZY_BLAS(cblas_sgemm)(args...);
    };
    const auto I = blas_int;
    const auto NT = CblasNoTrans, TR = CblasTrans;
    if (n == 1)  // C column += op(A) x, x = the column of op(B)
      gemv(CblasRowMajor, ta ? TR : NT, I(ta ? k : m), I(ta ? m : k), T(1), A, I(lda), B, I(tb ? 1 : ldb), T(1), C,
           I(ldc));
    else if (m == 1)  // C row += op(B)^T a, a = the row of op(A)
      gemv(CblasRowMajor, tb ? NT : TR, I(tb ? n : k), I(tb ? k : n), T(1), B, I(ldb), A, I(ta ? lda : 1), T(1), C, 1);
    else
      gemm3(CblasRowMajor, ta ? TR : NT, tb ? TR : NT, I(m), I(n), I(k), T(1), A, I(lda), B, I(ldb), T(1), C, I(ldc));
  } else if constexpr (is_complex_v<T>) {  // cgemm / zgemm: alpha and beta by pointer
    const T one(1);
    const auto I = blas_int;
    const auto NT = CblasNoTrans, TR = CblasTrans;
    const auto cgemm = [](auto... args) {
      if constexpr (std::is_same_v<T, std::complex<double>>) return B2LAZY_BLAS(cblas_zgemm)(args...);
      else return B2LAZY_BLAS(cblas_cgemm)(args...);
    };
    cgemm(CblasRowMajor, ta ? TR : NT, tb ? TR : NT, I(m), I(n), I(k), &one, A, I(lda), B, I(ldb), &one, C, I(ldc));
  } else {  // bool: or of ands; integers: exact, wrapping like NumPy (modular in uint64)
    auto at = [&](int64_t i, int64_t p) { return ta ? A[p * lda + i] : A[i * lda + p]; };
    auto add = [](T& c, T a, T b) {
      if constexpr (std::is_same_v<T, bool>) c = c | (a & b);
      else c = static_cast<T>(static_cast<uint64_t>(c) + static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    };
    for (int64_t i = 0; i < m; ++i) {
      T* c = C + i * ldc;
      if (tb) {  // B's rows are op(B)'s columns: dot products
        for (int64_t j = 0; j < n; ++j)
          for (int64_t p = 0; p < k; ++p) add(c[j], at(i, p), B[j * ldb + p]);
        continue;
      }
      for (int64_t p = 0; p < k; ++p) {
        const T a = at(i, p);
        if (!a) continue;
        const T* b = B + p * ldb;
        for (int64_t j = 0; j < n; ++j) add(c[j], a, b[j]);
      }
    }
  }
}

// The upper triangle (diagonal included) of C (n x n) += op(A) op(A)^T, op(A) n x k: A
// stored k x n when `ta` (a Gram matrix A^T A), else n x k. Half the work of gemm; the
// strictly lower triangle of C is left as it is.
template <class T> void syrk_upper(bool ta, int64_t n, int64_t k, const T* A, int64_t lda, T* C, int64_t ldc) {
  if (n == 0 || k == 0) return;
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
    auto syrk = [](auto... args) {
      if constexpr (std::is_same_v<T, double>) B2LAZY_BLAS(cblas_dsyrk)(args...);
      else B2LAZY_BLAS(cblas_ssyrk)(args...);
    };
    syrk(CblasRowMajor, CblasUpper, ta ? CblasTrans : CblasNoTrans, blas_int(n), blas_int(k), T(1), A, blas_int(lda),
         T(1), C, blas_int(ldc));
  } else {  // row i of the triangle: columns i.. of op(A) op(A)^T, a gemm per row
    for (int64_t i = 0; i < n; ++i)
      gemm<T>(ta, !ta, 1, n - i, k, ta ? A + i : A + i * lda, lda, ta ? A + i : A + i * lda, lda, C + i * ldc + i, ldc);
  }
}

}  // namespace b2lazy
