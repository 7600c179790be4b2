//===- Gemm.cpp - GEMM blocks on libxsmm kernels or the BLAS --------------===//
//
// libxsmm is column-major. A row-major C[M,N] = op(A) op(B) is, read
// column-major, C^T[N,M] = op(B)^T op(A)^T, so libxsmm's "A" is our B and its
// "B" is our A, and a block of our rows is a block of its columns (its n):
//
//   op(B)^T: B stored K x N row-major is N x K column-major: used as is
//            (m = N, k = K, lda = N). With transB the stored B is N x K
//            row-major; libxsmm 1.17 has no transposed-A kernels, so B is
//            transposed once per call into scratch (B is a weight: small).
//   op(A)^T: without transA, A (M x K row-major) is K x M column-major:
//            used as is (ldb = K), a block of rows starts at A + r0 K. With
//            transA (dW = X^T dY, A stored K x M row-major) libxsmm's
//            transposed-B kernel reads it (ldb = M), a block starts at A + r0.
//
// libxsmm kernels take alpha = 1 and beta in {0, 1}; anything else, N < 4
// (a GEMV, which libxsmm's register blocking handles badly: 7 GFLOP/s
// measured against the BLAS's 40), N > 64 (not a thin layer: a 64-row block
// of 429 or 256 columns ran at 45-96 GFLOP/s on libxsmm against the BLAS's
// 86-111 on an Intel Xeon, within 12 % either way on an AMD Zen 4;
// docs/architecture.md, "Small GEMMs") or a build without libxsmm uses the
// BLAS on the same blocks, single-threaded (the team is the only pool).
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"

#include <cblas.h>

#ifdef EMBC_HAVE_LIBXSMM
#include <libxsmm.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <string>
#include <mutex>
#include <type_traits>
#include <vector>

namespace embc::runtime::cpu::detail {

namespace {

/// The output widths N for which a libxsmm kernel beats the BLAS: the thin
/// layers, which it is made for.
constexpr int64_t kLibxsmmMinN = 4, kLibxsmmMaxN = 64;

template <class T> T *transposeScratch(int64_t n) {
  thread_local std::vector<T> buffer;
  if (int64_t(buffer.size()) < n)
    buffer.resize(size_t(n));
  return buffer.data();
}

#ifdef EMBC_HAVE_LIBXSMM
/// EMBC_CPU_GEMM=blas sends every GEMM block to the BLAS, =libxsmm every
/// one libxsmm can take (whatever its width): for benchmarks that compare
/// the two in one run and for bisecting a numerical difference. Read once.
const char *gemmOverride() {
  static const std::string value = [] {
    const char *v = std::getenv("EMBC_CPU_GEMM");
    return std::string(v ? v : "");
  }();
  return value.c_str();
}

bool libxsmmEnabled() { return std::string(gemmOverride()) != "blas"; }

/// Whether a GEMM whose output is N wide goes to libxsmm.
bool libxsmmTakes(int64_t N) {
  if (!libxsmmEnabled() || N < kLibxsmmMinN)
    return false;
  return N <= kLibxsmmMaxN || std::string(gemmOverride()) == "libxsmm";
}

void initLibxsmm() {
  static std::once_flag once;
  std::call_once(once, [] { libxsmm_init(); });
}

template <class T>
auto dispatch(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc, T beta,
              bool transB) {
  initLibxsmm();
  const libxsmm_blasint mm = m, nn = n, kk = k, a = lda, b = ldb, c = ldc;
  const int flags = transB ? LIBXSMM_GEMM_FLAG_TRANS_B : 0;
  const T one = T(1);
  if constexpr (std::is_same_v<T, float>)
    return libxsmm_smmdispatch(mm, nn, kk, &a, &b, &c, &one, &beta, &flags, nullptr);
  else
    return libxsmm_dmmdispatch(mm, nn, kk, &a, &b, &c, &one, &beta, &flags, nullptr);
}
#endif

template <class T>
void blasGemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, T alpha, const T *A,
              int64_t lda, const T *B, int64_t ldb, T beta, T *C, int64_t ldc) {
  const auto ta = transA ? CblasTrans : CblasNoTrans;
  const auto tb = transB ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, ta, tb, blasint(M), blasint(N), blasint(K), alpha, A,
                blasint(lda), B, blasint(ldb), beta, C, blasint(ldc));
  else
    cblas_dgemm(CblasRowMajor, ta, tb, blasint(M), blasint(N), blasint(K), alpha, A,
                blasint(lda), B, blasint(ldb), beta, C, blasint(ldc));
}

} // namespace

template <class T>
GemmCall<T>::GemmCall(bool transA, bool transB, int64_t M, int64_t N, int64_t K, T alpha,
                      const T *A, const T *B, T beta, T *C)
    : transA_(transA), transB_(transB), M_(M), N_(N), K_(K), alpha_(alpha), beta_(beta), A_(A),
      B_(B), C_(C) {
  if (M == 0 || N == 0)
    return;
  blocks_ = (M + kGemmRowBlock - 1) / kGemmRowBlock;
  if (K == 0)
    return; // run() scales C by beta
#ifdef EMBC_HAVE_LIBXSMM
  if (!libxsmmTakes(N) || alpha != T(1) || (beta != T(0) && beta != T(1)))
    return;
  bRowMajor_ = B;
  if (transB) {
    T *t = transposeScratch<T>(K * N);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k)
        t[k * N + n] = B[n * K + k];
    bRowMajor_ = t;
  }
  const int64_t ldb = transA ? M : K;
  const int64_t tailRows = M - (blocks_ - 1) * kGemmRowBlock;
  full_ = reinterpret_cast<Kernel>(
      dispatch<T>(N, std::min(M, kGemmRowBlock), K, N, ldb, N, beta, transA));
  tail_ = reinterpret_cast<Kernel>(dispatch<T>(N, tailRows, K, N, ldb, N, beta, transA));
  if (!full_ || !tail_)
    full_ = tail_ = nullptr; // no kernel for this shape on this CPU: the BLAS
#endif
}

template <class T> void GemmCall<T>::runInto(int64_t blk, T *c) const {
  const int64_t r0 = blockBegin(blk), r1 = blockEnd(blk), rows = r1 - r0;
  if (K_ == 0) {
    // The product is empty: only the beta * C part remains.
    for (int64_t i = 0; i < rows * N_; ++i)
      c[i] = beta_ == T(0) ? T(0) : beta_ * c[i];
    return;
  }
  const T *a = transA_ ? A_ + r0 : A_ + r0 * K_;
  if (full_) {
    (rows == std::min(M_, kGemmRowBlock) ? full_ : tail_)(bRowMajor_, a, c);
    leaveWideRegisters();
    return;
  }
  blasGemm<T>(transA_, transB_, rows, N_, K_, alpha_, a, transA_ ? M_ : K_, B_,
              transB_ ? K_ : N_, beta_, c, N_);
}

template <class T>
SmallGemm<T> smallGemm(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc,
                       bool accumulate, bool transB) {
  SmallGemm<T> kernel;
#ifdef EMBC_HAVE_LIBXSMM
  if (libxsmmEnabled())
    kernel.fn = reinterpret_cast<typename SmallGemm<T>::Fn>(
      dispatch<T>(m, n, k, lda, ldb, ldc, accumulate ? T(1) : T(0), transB));
#endif
  return kernel;
}

const char *gemmLibrary() {
#ifdef EMBC_HAVE_LIBXSMM
  if (!libxsmmEnabled())
    return "blas";
  return std::string(gemmOverride()) == "libxsmm" ? "libxsmm" : "libxsmm (N <= 64) and blas";
#else
  return "blas";
#endif
}

template class GemmCall<float>;
template class GemmCall<double>;
template SmallGemm<float> smallGemm<float>(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                                           bool, bool);
template SmallGemm<double> smallGemm<double>(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                                             bool, bool);

} // namespace embc::runtime::cpu::detail
