//===- LossScaleBindings.cpp - the unscale_grads kernel on the CPU --------===//
//
// `unscale_grads` heads an fp16 plan's update (-emb-quantize): it divides
// every accumulated gradient by the loss scale, tests them all for inf/NaN
// and advances the scale policy (Plan.h LossScaling). On an overflow it sets
// ExecState::skipUpdate and the executor runs nothing else of the update,
// so parameters, tables and optimizer state stay bit-identical.
//
// Its outputs are the gradient buffers it rewrites in place: dense
// gradients (a pack's whole buffer) and the sparse gradient values of tables
// and table batches, of which only the filled rows (ExecState::length) hold
// this step's gradient.
//
//===----------------------------------------------------------------------===//

#include "CpuBinder.h"

#include "embc/runtime/cpu/LossScaling.h"
#include "embc/runtime/exec/LossScale.h"

using namespace embc::runtime;

namespace {

BoundKernel bindUnscaleGrads(const Binder &b) {
  const Kernel &k = b.k;
  const LossScaling config = b.p.config.lossScaling;
  if (!config.enabled)
    b.fail("the plan's config.loss_scaling is disabled; unscale_grads needs it");
  if (!k.inputs.empty() || k.outputs.empty())
    b.fail("expected no inputs and at least one gradient output, got " +
           std::to_string(k.inputs.size()) + " and " + std::to_string(k.outputs.size()));
  struct Target {
    int32_t buffer;
    int64_t rowElements; ///< elements per leading-dimension entry
  };
  std::vector<Target> targets;
  for (size_t i = 0; i < k.outputs.size(); ++i) {
    const Buffer &g = b.out(i);
    if (g.role != BufferRole::Grad || g.dtype != DType::F32)
      b.fail("output " + std::to_string(i) + " '" + g.name + "' is not an f32 gradient (role " +
             roleName(g.role) + ", dtype " + dtypeName(g.dtype) + ")");
    targets.push_back({k.outputs[i], Binder::numel(g) / g.shape[0]});
  }
  return [=](ExecState &s) {
    const float inverse = float(1.0 / s.lossScale.scale);
    bool finite = true;
    for (const Target &t : targets) {
      // Dynamic (sparse values): the filled rows; dense: the whole buffer.
      int64_t n = s.length[t.buffer] * t.rowElements;
      finite &= cpu::unscaleAndCheck(s.data<float>(t.buffer), n, inverse);
    }
    bool apply =
        advanceLossScale(s.lossScale, finite, config.growth, config.backoff, config.interval);
    if (!apply)
      s.skipUpdate = true;
  };
}

} // namespace

std::vector<CpuBinding> embc::runtime::lossScalingBindings() {
  return {{KernelOp::UnscaleGrads, bindUnscaleGrads}};
}
