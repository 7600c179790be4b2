//===- LossScaleKernels.cpp - unscale-and-check -----------------------------===//
//
// The kernel at the head of an fp16 update (plan kernel `unscale_grads`):
// one pass over each gradient buffer that divides by the loss scale and
// tests finiteness in the same sweep, so loss scaling costs one read and one
// write of the gradients per optimizer step. The scale's policy is the
// executor's (exec/LossScale.h).
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/cpu/LossScaling.h"

#include "KernelSupport.h"

#include <cmath>

namespace embc::runtime::cpu {

bool unscaleAndCheck(float *x, int64_t n, float inverseScale) {
  // chunkedSum gives fixed chunks and a fixed combination order; the
  // "sum" is the count of non-finite values, exact in a double.
  double bad = detail::chunkedSum(n, 1, [x, inverseScale](int64_t lo, int64_t hi) {
    int64_t count = 0;
    for (int64_t i = lo; i < hi; ++i) {
      const float v = x[i] * inverseScale;
      x[i] = v;
      count += std::isfinite(v) ? 0 : 1;
    }
    return double(count);
  });
  return bad == 0.0;
}

} // namespace embc::runtime::cpu
