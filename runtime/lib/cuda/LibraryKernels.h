//===- LibraryKernels.h - the hand-written device kernels -------*- C++ -*-===//
//
// Host entry points of LibraryKernels.cu (built by nvcc): the library calls
// of the plan format (Device.h: sort_pairs, exclusive_scan) on CUB, and the
// column-sum fallback for a GEMM's bias gradient. Each returns the first
// CUDA error and queues its work on `stream`; temporary storage is the
// caller's (sized by the *TempBytes functions at prepare time), so a call
// never allocates and can be captured in a CUDA graph.
//
// Private to runtime/lib/cuda; plain C++ (g++ includes it).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CUDA_LIBRARYKERNELS_H
#define EMBC_RUNTIME_LIB_CUDA_LIBRARYKERNELS_H

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace embc::runtime::cuda::lib {

/// Bytes of CUB temporary storage sortPairs needs for `count` pairs.
cudaError_t sortPairsTempBytes(int64_t count, int keyBits, size_t &bytes);
/// Stable ascending sort of (keysIn[i], valuesIn[i]) by the low `keyBits`
/// bits of the key (an LSD radix sort over bits [0, keyBits)).
cudaError_t sortPairs(void *temp, size_t tempBytes, const int64_t *keysIn,
                      const int32_t *valuesIn, int64_t *keysOut, int32_t *valuesOut,
                      int64_t count, int keyBits, cudaStream_t stream);

/// Bytes of CUB temporary storage exclusiveScan needs for `count` items.
cudaError_t exclusiveScanTempBytes(int64_t count, size_t &bytes);
/// out[i] = in[0] + ... + in[i-1]; *total = the sum of all `count` (as i64).
/// `in` and `out` may be the same buffer.
cudaError_t exclusiveScan(void *temp, size_t tempBytes, const int32_t *in, int32_t *out,
                          int64_t *total, int64_t count, cudaStream_t stream);

/// The element type of a GEMM operand.
enum class AbType { F32, BF16, F16 };
/// bias[j] = sum over i < k of b[i * ldb + j] for j < n (b row-major k x n),
/// summed in order of i in f32: the bias gradient of dW = X^T dZ when
/// cuBLASLt has no algorithm with the bias-gradient epilogue.
cudaError_t columnSums(AbType type, const void *b, int64_t k, int64_t n, int64_t ldb, float *bias,
                       cudaStream_t stream);

/// c[b * strideC + i * ldc + j] = act(c[...] + bias[j]) for every matrix b
/// < batch of m x n (row-major), act = max(., 0) when `relu`, bias null for
/// none: the BIAS / RELU / RELU_BIAS epilogue of a GEMM when cuBLASLt has no
/// algorithm with it (the plain GEMM runs first). The same f32 arithmetic as
/// the fused epilogue: one add and one max per element.
cudaError_t biasActivation(float *c, int64_t m, int64_t n, int64_t ldc, int64_t batch,
                           int64_t strideC, const float *bias, bool relu, cudaStream_t stream);

} // namespace embc::runtime::cuda::lib

#endif // EMBC_RUNTIME_LIB_CUDA_LIBRARYKERNELS_H
