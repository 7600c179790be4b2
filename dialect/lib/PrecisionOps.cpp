//===- PrecisionOps.cpp - verifier of emb.unscale_grads ------------------===//
//
// The loss-scaling op is only meaningful at the head of an fp16 update: a
// gradient consumed before it would be S times too large, and a clip norm
// computed before it would clip the scaled gradients.
//
//===----------------------------------------------------------------------===//

#include "embc/dialect/EmbDialect.h"
#include "embc/dialect/PlanEmitter.h"

#include <cmath>

using namespace mlir;
using namespace embc::emb;
namespace rt = embc::runtime;

LogicalResult UnscaleGradsOp::verify() {
  double initial = getInitial().convertToDouble();
  double growth = getGrowth().convertToDouble();
  double backoff = getBackoff().convertToDouble();
  if (!(initial > 0) || !std::isfinite(initial))
    return emitOpError("initial scale must be positive and finite, got ") << initial;
  if (!(growth >= 1) || !std::isfinite(growth))
    return emitOpError("growth must be >= 1, got ") << growth;
  if (!(backoff > 0 && backoff < 1))
    return emitOpError("backoff must lie in (0, 1) so an overflow lowers the scale, got ")
           << backoff;
  if (getInterval() < 1)
    return emitOpError("interval must be at least 1 good step, got ") << getInterval();

  if (auto module = (*this)->getParentOfType<ModuleOp>())
    if (auto training = module->getAttrOfType<TrainingAttr>(kTrainingAttrName);
        training && training.getPrecision() != Precision::fp16)
      return emitOpError("loss scaling is for fp16 compute, but the module's training "
                         "precision is ")
             << stringifyPrecision(training.getPrecision());

  // Nothing before it may consume the gradients, and it runs once.
  for (Operation *op = (*this)->getPrevNode(); op; op = op->getPrevNode()) {
    if (isa<UpdateOp, ClipGradNormOp>(op))
      return emitOpError("must come before every emb.update and emb.clip_grad_norm "
                         "(they need the unscaled gradients), but follows ")
             << op->getName();
    if (isa<UnscaleGradsOp>(op))
      return emitOpError("appears twice in one function: the gradients would be "
                         "unscaled twice");
  }
  return success();
}

/// Fills config.loss_scaling from the op, and rewrites every gradient in
/// place: a packed gradient once as a whole (its members are views), each
/// table's or batch's sparse values once.
LogicalResult UnscaleGradsOp::lowerToPlan(PlanEmitter &e) {
  rt::Plan &plan = e.plan();
  rt::LossScaling &ls = plan.config.lossScaling;
  ls.enabled = true;
  ls.initial = getInitial().convertToDouble();
  ls.growth = getGrowth().convertToDouble();
  ls.backoff = getBackoff().convertToDouble();
  ls.interval = getInterval();
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::UnscaleGrads);
  auto add = [&](int32_t buffer) {
    const int32_t parent = plan.buffers[buffer].parent;
    const int32_t whole = parent >= 0 ? parent : buffer;
    if (!llvm::is_contained(k.outputs, whole))
      k.outputs.push_back(whole);
  };
  for (const rt::Param &p : plan.params)
    add(p.grad);
  for (const rt::Table &t : plan.tables)
    add(t.gradValues);
  e.emit(std::move(k));
  return success();
}
