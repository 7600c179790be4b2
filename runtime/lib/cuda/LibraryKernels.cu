//===- LibraryKernels.cu - the hand-written device kernels ---------------===//
//
// The plan format's library calls (Device.h) on CUB, built by nvcc for the
// architectures of the build (sm_90 SASS + PTX), and the bias-gradient
// fallback of the GEMM path. Everything is deterministic: CUB's radix sort is
// a stable LSD sort and its scan of integers is exact; the column sums add in
// a fixed order.
//
//===----------------------------------------------------------------------===//

#include "LibraryKernels.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <climits>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

using namespace embc::runtime::cuda;

namespace {

// Keys are i64 in the plan but always in [0, 2^keyBits): sorting them as
// unsigned sorts the same bits without CUB's sign-bit twiddling.
using Key = unsigned long long;
static_assert(sizeof(Key) == sizeof(int64_t), "i64 keys");

// CUB's 32-bit offsets are faster; counts beyond 2^31 - 1 use 64-bit ones.
template <typename F> cudaError_t withCount(int64_t count, F &&f) {
  if (count <= INT_MAX)
    return f(static_cast<int>(count));
  return f(static_cast<long long>(count));
}

// CUB and the launches below read the runtime's last error after queueing
// work. The device checks every call where it is made, so an error still
// pending here is stale (one it chose to tolerate) and must not be reported
// as this call's; sticky errors (faults) survive this and still surface.
void clearStaleError() { (void)cudaGetLastError(); }

__global__ void scanTotalFirst(const int32_t *in, int64_t count, int64_t *total) {
  // Read before the scan runs: `out` may overwrite `in`.
  *total = count > 0 ? static_cast<int64_t>(in[count - 1]) : 0;
}

__global__ void scanTotalLast(const int32_t *out, int64_t count, int64_t *total) {
  if (count > 0)
    *total += static_cast<int64_t>(out[count - 1]);
}

__device__ __forceinline__ float toFloat(float v) { return v; }
__device__ __forceinline__ float toFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float toFloat(__half v) { return __half2float(v); }

// Block (32, kGroups): x picks the column, y a row group. Each thread adds
// its group's rows in order, then the first row of threads adds the group
// partials in order: a fixed summation order whatever the launch.
constexpr int kGroups = 32;

template <typename T>
__global__ void columnSumsKernel(const T *b, int64_t k, int64_t n, int64_t ldb, float *bias) {
  __shared__ float partial[kGroups][33];
  const int64_t j = int64_t(blockIdx.x) * 32 + threadIdx.x;
  float s = 0.0f;
  if (j < n)
    for (int64_t i = threadIdx.y; i < k; i += kGroups)
      s += toFloat(b[i * ldb + j]);
  partial[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && j < n) {
    float total = 0.0f;
    for (int g = 0; g < kGroups; ++g)
      total += partial[g][threadIdx.x];
    bias[j] = total;
  }
}

// One thread per element over a grid-stride loop: rows of n contiguous
// floats, so a warp reads 128 contiguous bytes.
__global__ void __launch_bounds__(256)
    biasActivationKernel(float *c, int64_t m, int64_t n, int64_t ldc, int64_t batch,
                         int64_t strideC, const float *bias, bool relu) {
  const int64_t total = batch * m * n;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = e % n, row = e / n, i = row % m, b = row / m;
    float &v = c[b * strideC + i * ldc + j];
    float x = bias ? v + bias[j] : v;
    // fmaxf, not plan/ActivationMath.h's relu: this stands in for
    // cuBLASLt's RELU epilogue (max(x, 0)) when cuBLASLt has no algorithm
    // with it, so it keeps cuBLASLt's numerics. The two differ only in the
    // sign of a zero result.
    v = relu ? fmaxf(x, 0.0f) : x;
  }
}

} // namespace

cudaError_t lib::biasActivation(float *c, int64_t m, int64_t n, int64_t ldc, int64_t batch,
                                int64_t strideC, const float *bias, bool relu,
                                cudaStream_t stream) {
  clearStaleError();
  const int64_t total = batch * m * n;
  if (total <= 0)
    return cudaSuccess;
  const int64_t blocks = std::min<int64_t>((total + 255) / 256, 132 * 16);
  biasActivationKernel<<<unsigned(blocks), 256, 0, stream>>>(c, m, n, ldc, batch, strideC, bias,
                                                             relu);
  return cudaGetLastError();
}

cudaError_t lib::sortPairsTempBytes(int64_t count, int keyBits, size_t &bytes) {
  bytes = 0;
  if (count <= 0 || keyBits <= 0)
    return cudaSuccess; // served by a copy, below
  return withCount(count, [&](auto items) {
    return cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const Key *>(nullptr),
                                           static_cast<Key *>(nullptr),
                                           static_cast<const int32_t *>(nullptr),
                                           static_cast<int32_t *>(nullptr), items, 0, keyBits);
  });
}

cudaError_t lib::sortPairs(void *temp, size_t tempBytes, const int64_t *keysIn,
                           const int32_t *valuesIn, int64_t *keysOut, int32_t *valuesOut,
                           int64_t count, int keyBits, cudaStream_t stream) {
  clearStaleError();
  if (count <= 0)
    return cudaSuccess;
  if (keyBits <= 0) {
    // Every key is 0: the stable order is the input order.
    cudaError_t err = cudaMemcpyAsync(keysOut, keysIn, size_t(count) * sizeof(int64_t),
                                      cudaMemcpyDeviceToDevice, stream);
    if (err != cudaSuccess)
      return err;
    return cudaMemcpyAsync(valuesOut, valuesIn, size_t(count) * sizeof(int32_t),
                           cudaMemcpyDeviceToDevice, stream);
  }
  return withCount(count, [&](auto items) {
    size_t bytes = tempBytes;
    return cub::DeviceRadixSort::SortPairs(temp, bytes, reinterpret_cast<const Key *>(keysIn),
                                           reinterpret_cast<Key *>(keysOut), valuesIn, valuesOut,
                                           items, 0, keyBits, stream);
  });
}

cudaError_t lib::exclusiveScanTempBytes(int64_t count, size_t &bytes) {
  bytes = 0;
  if (count <= 0)
    return cudaSuccess;
  return withCount(count, [&](auto items) {
    return cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const int32_t *>(nullptr),
                                         static_cast<int32_t *>(nullptr), items);
  });
}

cudaError_t lib::exclusiveScan(void *temp, size_t tempBytes, const int32_t *in, int32_t *out,
                               int64_t *total, int64_t count, cudaStream_t stream) {
  clearStaleError();
  scanTotalFirst<<<1, 1, 0, stream>>>(in, count, total);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess || count <= 0)
    return err;
  err = withCount(count, [&](auto items) {
    size_t bytes = tempBytes;
    return cub::DeviceScan::ExclusiveSum(temp, bytes, in, out, items, stream);
  });
  if (err != cudaSuccess)
    return err;
  scanTotalLast<<<1, 1, 0, stream>>>(out, count, total);
  return cudaGetLastError();
}

cudaError_t lib::columnSums(AbType type, const void *b, int64_t k, int64_t n, int64_t ldb,
                            float *bias, cudaStream_t stream) {
  clearStaleError();
  if (n <= 0)
    return cudaSuccess;
  const dim3 grid(unsigned((n + 31) / 32)), block(32, kGroups);
  switch (type) {
  case AbType::F32:
    columnSumsKernel<<<grid, block, 0, stream>>>(static_cast<const float *>(b), k, n, ldb, bias);
    break;
  case AbType::BF16:
    columnSumsKernel<<<grid, block, 0, stream>>>(static_cast<const __nv_bfloat16 *>(b), k, n, ldb,
                                                 bias);
    break;
  case AbType::F16:
    columnSumsKernel<<<grid, block, 0, stream>>>(static_cast<const __half *>(b), k, n, ldb, bias);
    break;
  }
  return cudaGetLastError();
}
