//===- KernelSupport.h - shared helpers of the CPU kernels ------*- C++ -*-===//
//
// Private to EmbCpuKernels. Holds the threshold below which kernels stay
// serial (thread start-up costs more than the work) and the deterministic
// reduction used wherever a kernel sums many values: the input is cut into a
// fixed number of chunks that depends only on the length, each chunk is summed
// on its own, and the partial sums are added in chunk order. The result is
// therefore the same bit for bit whatever the thread count. Also the small
// vector loops (dot, axpy) several kernels share.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CPU_KERNELSUPPORT_H
#define EMBC_RUNTIME_LIB_CPU_KERNELSUPPORT_H

#include "embc/runtime/cpu/Parallel.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace embc::runtime::cpu::detail {

/// Element operations (roughly) below which a loop runs on one thread.
inline constexpr int64_t kParallelWork = int64_t(1) << 15;

/// Number of chunks of a deterministic reduction.
inline constexpr int64_t kReduceChunks = 64;

/// Sums partial(begin, end) over fixed chunks of [0, n), in chunk order.
/// `partial` must be safe to call concurrently on disjoint ranges.
template <class Partial> double chunkedSum(int64_t n, int64_t workPerItem, Partial partial) {
  if (n <= 0)
    return 0.0;
  std::array<double, kReduceChunks> sums{};
  const int64_t chunk = (n + kReduceChunks - 1) / kReduceChunks;
  const int64_t chunks = (n + chunk - 1) / chunk;
  parallelFor(chunks, n * workPerItem > kParallelWork, [&](int64_t cBegin, int64_t cEnd) {
    for (int64_t c = cBegin; c < cEnd; ++c) {
      const int64_t begin = c * chunk;
      sums[c] = partial(begin, std::min(n, begin + chunk));
    }
  });
  double total = 0.0;
  for (int64_t c = 0; c < chunks; ++c)
    total += sums[c];
  return total;
}

/// Sets n values to zero.
template <class T> inline void fillZero(T *__restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = T(0);
}

/// <a, b> over n values. `omp simd` lets the compiler vectorise the
/// reduction (a fixed lane order, so still deterministic).
template <class T> inline T dot(const T *__restrict a, const T *__restrict b, int64_t n) {
  T sum = T(0);
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i)
    sum += a[i] * b[i];
  return sum;
}

/// y += alpha * x over n values.
template <class T> inline void axpy(T alpha, const T *__restrict x, T *__restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] += alpha * x[i];
}

/// Throws unless `offsets` (B + 1 of them) delimit B valid bags; `where`
/// names the kernel in the message.
inline void checkOffsets(const int64_t *offsets, int64_t B, const char *where) {
  for (int64_t b = 0; b < B; ++b)
    if (offsets[b + 1] < offsets[b] || offsets[b] < 0)
      throw std::invalid_argument(std::string(where) + ": bag " + std::to_string(b) +
                                  " has offsets [" + std::to_string(offsets[b]) + ", " +
                                  std::to_string(offsets[b + 1]) + "), not a valid range");
}

} // namespace embc::runtime::cpu::detail

#endif // EMBC_RUNTIME_LIB_CPU_KERNELSUPPORT_H
