//===- Rounding.h - operands rounded to bf16/fp16 for dense compute -*- C++ -*-===//
//
// Private to EmbCpuKernels. Dense compute in bf16/fp16 (-emb-quantize,
// kernel attribute "compute") is emulated on the CPU: the operands of a GEMM,
// an interaction or a cross layer are rounded to the compute type
// (round-to-nearest-even, as the GPU's tensor cores take them) into a scratch
// copy, and the arithmetic then runs in f32 (or f64 in the gradient checks),
// which is what a tensor core's f32 accumulation does. The point is numerics
// parity with the GPU path, not speed: f32 plans never come here.
//
// Scratch lives in thread-local slots that only grow (no allocation per call
// once warm). Slots are fixed per use so that nested uses never share one:
// 0-1 GEMM operands, 2 an interaction's gradient, 3.. its inputs.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CPU_ROUNDING_H
#define EMBC_RUNTIME_LIB_CPU_ROUNDING_H

#include "embc/runtime/cpu/Parallel.h"
#include "embc/runtime/cpu/HalfFloat.h"

#include "KernelSupport.h"

#include <cstdint>
#include <vector>

namespace embc::runtime::cpu::detail {

inline constexpr int kGemmSlotA = 0, kGemmSlotB = 1, kGradSlot = 2, kInputSlots = 3;

/// n elements of thread-local scratch in `slot`, valid until the next call
/// for the same slot on this thread.
template <class T> T *scratch(int slot, int64_t n) {
  thread_local std::vector<std::vector<T>> slots;
  if (int(slots.size()) <= slot)
    slots.resize(size_t(slot) + 1);
  std::vector<T> &s = slots[size_t(slot)];
  if (int64_t(s.size()) < n)
    s.resize(size_t(n));
  return s.data();
}

/// `src` itself for F32; otherwise a copy of its n values rounded to `type`.
template <class T> const T *roundedCopy(ComputeType type, const T *src, int64_t n, int slot) {
  if (type == ComputeType::F32 || n <= 0)
    return src;
  T *dst = scratch<T>(slot, n);
  parallelFor(n, n > kParallelWork, [&](int64_t iBegin, int64_t iEnd) {
    for (int64_t i = iBegin; i < iEnd; ++i)
      dst[i] = roundTo(type, src[i]);
  });
  return dst;
}

/// Rounded copies of several B x D operands (slots kInputSlots + i).
template <class T>
std::vector<const T *> roundedCopies(ComputeType type, const std::vector<const T *> &xs,
                                     int64_t n) {
  if (type == ComputeType::F32)
    return xs;
  std::vector<const T *> out;
  out.reserve(xs.size());
  for (size_t i = 0; i < xs.size(); ++i)
    out.push_back(roundedCopy(type, xs[i], n, kInputSlots + int(i)));
  return out;
}

} // namespace embc::runtime::cpu::detail

#endif // EMBC_RUNTIME_LIB_CPU_ROUNDING_H
