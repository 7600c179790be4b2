//===- Gemm.h - row-major GEMMs on the team, small-GEMM kernels -*- C++ -*-===//
//
// Private to EmbCpuKernels. Every GEMM of the CPU kernels goes through here.
// The output C is cut into fixed blocks of kGemmRowBlock rows; the team's
// threads take contiguous runs of blocks, and each block is one call of a
// single-threaded kernel: a libxsmm JIT kernel generated for the exact shape
// (the thin layers of recommendation models, N = 1..512 and K = 13..512, are
// what it is made for), or the BLAS where libxsmm has no kernel (N < 4, an
// alpha other than 1, a build without libxsmm). Why libxsmm: measured in
// docs/architecture.md ("Small GEMMs"); it has no threads of its own, so it
// runs inside the one team (Parallel.h) instead of beside it.
//
// Blocks never depend on the team size, so neither does any result.
// gemmRowBlocks also runs an epilogue on each block of C right after it is
// computed, while it is in cache: the fused dense kernels apply the bias and
// activation there (one pass over the output instead of two).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CPU_GEMM_H
#define EMBC_RUNTIME_LIB_CPU_GEMM_H

#include "embc/runtime/cpu/Parallel.h"

#include "Rounding.h"

#include <cstdint>

namespace embc::runtime::cpu::detail {

/// Rows of C per block.
inline constexpr int64_t kGemmRowBlock = 64;
/// GEMMs with fewer flops run on the calling thread (a team wake-up and
/// join costs about as much as 2 MFLOP of GEMM on one core).
inline constexpr double kGemmParallelFlops = double(1 << 21);

/// One GEMM C[M,N] = alpha op(A)[M,K] op(B)[K,N] + beta C, row-major with
/// dense leading dimensions, prepared once per call and then run block by
/// block. For transB it transposes B into per-thread scratch at
/// construction (B is a weight: small), so the object must be used on the
/// thread that made it or from a region that thread started.
template <class T> class GemmCall {
public:
  GemmCall(bool transA, bool transB, int64_t M, int64_t N, int64_t K, T alpha, const T *A,
           const T *B, T beta, T *C);
  int64_t blocks() const { return blocks_; }
  bool parallel() const { return 2.0 * double(M_) * double(N_) * double(K_) > kGemmParallelFlops; }
  /// Rows [r0, r1) of C that block `blk` computes.
  int64_t blockBegin(int64_t blk) const { return blk * kGemmRowBlock; }
  int64_t blockEnd(int64_t blk) const {
    return blk + 1 == blocks_ ? M_ : (blk + 1) * kGemmRowBlock;
  }
  /// Computes block `blk` of C on the calling thread.
  void run(int64_t blk) const { runInto(blk, C_ + blockBegin(blk) * N_); }
  /// Computes block `blk` into `c` (its rows x N, row-major, dense) instead
  /// of C's rows, with the same kernel and beta (beta = 1 adds onto `c`).
  void runInto(int64_t blk, T *c) const;
  /// Whether op(B) is a transposed copy in the constructing thread's scratch
  /// (transB on libxsmm): the next such call made on that thread replaces
  /// it, so two of them cannot be used at once.
  bool usesTransposeScratch() const { return transB_ && bRowMajor_ && bRowMajor_ != B_; }

private:
  using Kernel = void (*)(const T *, const T *, T *, ...);
  bool transA_, transB_;
  int64_t M_, N_, K_;
  T alpha_, beta_;
  const T *A_, *B_;
  T *C_;
  int64_t blocks_ = 0;
  const T *bRowMajor_ = nullptr; ///< op(B) as row-major K x N (transB: a copy)
  Kernel full_ = nullptr, tail_ = nullptr; ///< libxsmm kernels, or null: BLAS
};

/// C = alpha op(A) op(B) + beta C on the team.
template <class T>
void gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, T alpha, const T *A,
          const T *B, T beta, T *C) {
  GemmCall<T> call(transA, transB, M, N, K, alpha, A, B, beta, C);
  parallelFor(call.blocks(), call.parallel() && call.blocks() > 1,
              [&](int64_t b0, int64_t b1) {
                for (int64_t blk = b0; blk < b1; ++blk)
                  call.run(blk);
              });
}

/// gemm, then epilogue(r0, r1) on rows [r0, r1) of C by the thread that
/// computed them, right after. The epilogue must touch only those rows.
template <class T, class Epilogue>
void gemmRowBlocks(bool transA, bool transB, int64_t M, int64_t N, int64_t K, T alpha,
                   const T *A, const T *B, T beta, T *C, bool parallel, Epilogue &&epilogue) {
  GemmCall<T> call(transA, transB, M, N, K, alpha, A, B, beta, C);
  parallelFor(call.blocks(), (parallel || call.parallel()) && call.blocks() > 1,
              [&](int64_t b0, int64_t b1) {
                for (int64_t blk = b0; blk < b1; ++blk) {
                  call.run(blk);
                  epilogue(call.blockBegin(blk), call.blockEnd(blk));
                }
              });
}

/// The GEMM of a dense kernel that computes in `compute`: for F32 exactly
/// gemm(); for BF16/F16 both operands are rounded to the compute type first
/// (RNE, scratch slots 0 and 1) and the product accumulates in T, as a
/// tensor core with f32 accumulation does. C (and beta * C) is never
/// rounded: it is the f32 accumulator.
template <class T>
void gemm(ComputeType compute, bool transA, bool transB, int64_t M, int64_t N, int64_t K,
          T alpha, const T *A, const T *B, T beta, T *C) {
  if (compute != ComputeType::F32) {
    A = roundedCopy(compute, A, M * K, kGemmSlotA);
    B = roundedCopy(compute, B, K * N, kGemmSlotB);
  }
  gemm<T>(transA, transB, M, N, K, alpha, A, B, beta, C);
}

/// Clears the upper halves of the vector registers after a libxsmm kernel.
/// Its JIT code uses 256/512-bit registers and returns without vzeroupper;
/// the kernels compiled here are SSE (x86-64-v2), and SSE instructions
/// that run with dirty upper halves each carry a merge: two_tower's lookup
/// and embedding update ran 1.5-2x slower after libxsmm GEMMs until this
/// was added (measured: docs/performance.md).
inline void leaveWideRegisters() {
#if defined(__x86_64__)
  static const bool avx = __builtin_cpu_supports("avx");
  if (avx)
    asm volatile("vzeroupper" ::: "memory");
#endif
}

/// A single-threaded column-major kernel C(m x n) = A(m x k) op(B) (+ C
/// when `accumulate`), op(B) = B^T (stored n x k) with transB: one libxsmm
/// JIT kernel, for the kernels that run many tiny GEMMs of one shape (the
/// pairwise interaction's per-row Gram matrices). Empty when libxsmm has no
/// kernel for the shape or the build has no libxsmm: callers keep a loop.
template <class T> struct SmallGemm {
  using Fn = void (*)(const T *, const T *, T *, ...);
  Fn fn = nullptr;
  explicit operator bool() const { return fn != nullptr; }
  void operator()(const T *a, const T *b, T *c) const {
    fn(a, b, c);
    leaveWideRegisters();
  }
};
template <class T>
SmallGemm<T> smallGemm(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc,
                       bool accumulate, bool transB);

/// Whether GEMMs use libxsmm kernels in this build ("libxsmm" / "blas").
const char *gemmLibrary();

} // namespace embc::runtime::cpu::detail

#endif // EMBC_RUNTIME_LIB_CPU_GEMM_H
