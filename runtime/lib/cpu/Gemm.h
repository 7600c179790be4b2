//===- Gemm.h - row-major GEMM on BLAS for float and double -----*- C++ -*-===//
//
// Private to EmbCpuKernels. One templated entry so kernels written for T
// call cblas_sgemm or cblas_dgemm without repeating the dispatch, and so the
// degenerate shapes (an empty inner dimension, which BLAS treats as a leading
// dimension error in row-major mode) are handled once.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CPU_GEMM_H
#define EMBC_RUNTIME_LIB_CPU_GEMM_H

#include "Rounding.h"

#include <cblas.h>
#include <cstdint>
#include <type_traits>

namespace embc::runtime::cpu::detail {

/// C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C, all row-major with
/// dense leading dimensions (op(A) = A^T when transA, etc.).
template <class T>
void gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, T alpha, const T *A,
          const T *B, T beta, T *C) {
  if (M == 0 || N == 0)
    return;
  if (K == 0) {
    // The product is empty: only the beta * C part remains.
    for (int64_t i = 0; i < M * N; ++i)
      C[i] = beta == T(0) ? T(0) : beta * C[i];
    return;
  }
  const auto ta = transA ? CblasTrans : CblasNoTrans;
  const auto tb = transB ? CblasTrans : CblasNoTrans;
  // Row-major leading dimensions: columns of the stored matrices.
  const blasint lda = blasint(transA ? M : K);
  const blasint ldb = blasint(transB ? K : N);
  const blasint ldc = blasint(N);
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, ta, tb, blasint(M), blasint(N), blasint(K), alpha, A, lda, B, ldb,
                beta, C, ldc);
  else
    cblas_dgemm(CblasRowMajor, ta, tb, blasint(M), blasint(N), blasint(K), alpha, A, lda, B, ldb,
                beta, C, ldc);
}

/// The GEMM of a dense kernel that computes in `compute`: for F32 exactly
/// gemm() (same call, same bits); for BF16/F16 both operands are rounded to
/// the compute type first (RNE, scratch slots 0 and 1) and the product
/// accumulates in T, as a tensor core with f32 accumulation does. C (and
/// beta * C) is never rounded: it is the f32 accumulator.
template <class T>
void gemm(ComputeType compute, bool transA, bool transB, int64_t M, int64_t N, int64_t K,
          T alpha, const T *A, const T *B, T beta, T *C) {
  if (compute != ComputeType::F32) {
    A = roundedCopy(compute, A, M * K, kGemmSlotA);
    B = roundedCopy(compute, B, K * N, kGemmSlotB);
  }
  gemm<T>(transA, transB, M, N, K, alpha, A, B, beta, C);
}

} // namespace embc::runtime::cpu::detail

#endif // EMBC_RUNTIME_LIB_CPU_GEMM_H
