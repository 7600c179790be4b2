//===- LossScale.h - fp16 dynamic loss scaling: state and policy -*- C++ -*-===//
//
// fp16 training multiplies the loss gradient by a scale S so that small
// gradients survive fp16's narrow range, and divides every accumulated
// gradient by S before the optimizer sees it. If any unscaled gradient is
// inf or NaN (S was too large: a product overflowed fp16), the whole update
// is skipped and S shrinks by `backoff`; after `interval` good updates in a
// row it grows by `growth` (the policy of PyTorch's GradScaler and apex).
//
// The state is three numbers the executor keeps and checkpoints save, so a
// resumed run continues with the same scale. Backend-neutral: the CPU
// backend's `unscale_grads` binding and the CUDA backend's finish() both
// apply this policy to ExecState::lossScale (the unscaling itself is each
// backend's kernel: cpu/LossScaling.h, the generated CUDA).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_EXEC_LOSSSCALE_H
#define EMBC_RUNTIME_EXEC_LOSSSCALE_H

#include <cstdint>

namespace embc::runtime {

/// The mutable part of dynamic loss scaling.
struct LossScaleState {
  double scale = 1.0;       ///< S: what the loss gradient is multiplied by
  int64_t goodSteps = 0;    ///< updates applied since the scale last changed
  int64_t skippedSteps = 0; ///< updates skipped in the whole run
};

/// Advances `state` after an update's gradients were checked: on overflow
/// (finite == false) the scale is multiplied by `backoff`, goodSteps resets
/// and skippedSteps counts it; otherwise goodSteps counts up and, on
/// reaching `interval`, the scale is multiplied by `growth` and goodSteps
/// resets. Returns whether the update may be applied (== finite).
bool advanceLossScale(LossScaleState &state, bool finite, double growth, double backoff,
                      int64_t interval);

} // namespace embc::runtime

#endif // EMBC_RUNTIME_EXEC_LOSSSCALE_H
