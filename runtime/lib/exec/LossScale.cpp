//===- LossScale.cpp - the dynamic loss scale's policy ---------------------===//
//
// See LossScale.h (moved from cpu/LossScaleKernels.cpp, unchanged).
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/exec/LossScale.h"

bool embc::runtime::advanceLossScale(LossScaleState &state, bool finite, double growth,
                                     double backoff, int64_t interval) {
  if (!finite) {
    state.scale *= backoff;
    state.goodSteps = 0;
    ++state.skippedSteps;
    return false;
  }
  if (++state.goodSteps >= interval) {
    state.scale *= growth;
    state.goodSteps = 0;
  }
  return true;
}
