//===- LossScaling.h - unscaling gradients on the CPU ----------*- C++ -*-===//
//
// The CPU kernel of an fp16 update's `unscale_grads`: divide the gradients
// by the loss scale and check them. The scale and its policy are the
// executor's (exec/LossScale.h), shared by every backend.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_LOSSSCALING_H
#define EMBC_RUNTIME_CPU_LOSSSCALING_H

#include <cstdint>

namespace embc::runtime::cpu {

/// Multiplies x[0..n) by `inverseScale` in place; returns false when any
/// result is inf or NaN (all n values are still visited and scaled).
/// Deterministic and parallel over fixed chunks.
bool unscaleAndCheck(float *x, int64_t n, float inverseScale);

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_LOSSSCALING_H
