//===- LossScaling.h - fp16 dynamic loss scaling on the CPU -----*- C++ -*-===//
//
// fp16 training multiplies the loss gradient by a scale S so that small
// gradients survive fp16's narrow range, and divides every accumulated
// gradient by S before the optimizer sees it. If any unscaled gradient is
// inf or NaN (S was too large: a product overflowed fp16), the whole update
// is skipped and S shrinks by `backoff`; after `interval` good updates in a
// row it grows by `growth` (the policy of PyTorch's GradScaler and apex).
//
// The state is three numbers the executor keeps and checkpoints save, so a
// resumed run continues with the same scale.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_LOSSSCALING_H
#define EMBC_RUNTIME_CPU_LOSSSCALING_H

#include <cstdint>

namespace embc::runtime::cpu {

/// The mutable part of dynamic loss scaling.
struct LossScaleState {
  double scale = 1.0;       ///< S: what the loss gradient is multiplied by
  int64_t goodSteps = 0;    ///< updates applied since the scale last changed
  int64_t skippedSteps = 0; ///< updates skipped in the whole run
};

/// Multiplies x[0..n) by `inverseScale` in place; returns false when any
/// result is inf or NaN (all n values are still visited and scaled).
/// Deterministic and parallel over fixed chunks.
bool unscaleAndCheck(float *x, int64_t n, float inverseScale);

/// Advances `state` after an update's gradients were checked: on overflow
/// (finite == false) the scale is multiplied by `backoff`, goodSteps resets
/// and skippedSteps counts it; otherwise goodSteps counts up and, on
/// reaching `interval`, the scale is multiplied by `growth` and goodSteps
/// resets. Returns whether the update may be applied (== finite).
bool advanceLossScale(LossScaleState &state, bool finite, double growth, double backoff,
                      int64_t interval);

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_LOSSSCALING_H
