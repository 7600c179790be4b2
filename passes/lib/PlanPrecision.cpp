//===- PlanPrecision.cpp - -emb-to-plan for dense precision and loss scaling -===//
//
// Lowers what the dense half of -emb-quantize (QuantizeDense.cpp) leaves in
// the IR: `emb.compute` becomes the kernel attribute "compute" (absent for
// f32, so an fp32 plan is byte for byte what it was before) and `emb.loss_scaled`
// the attribute "loss_scaled" of loss_grad (emb.unscale_grads lowers itself,
// PrecisionOps.cpp). It also refuses a module whose precision and IR
// disagree, so no model trains in a precision nobody asked for.
//
//===----------------------------------------------------------------------===//

#include "PlanBuilder.h"
#include "QuantizeDense.h"

using namespace mlir;
using namespace embc;
using namespace embc::emb;
using namespace embc::planbuilder;

LogicalResult PlanBuilder::checkPrecision(func::FuncOp step, func::FuncOp update) {
  auto training = module->getAttrOfType<TrainingAttr>(kTrainingAttrName);
  Precision precision = training.getPrecision();
  StringRef name = stringifyPrecision(precision);
  WalkResult walk = step.walk([&](Operation *op) {
    auto compute = op->getAttrOfType<PrecisionAttr>(kComputeAttrName);
    if (op->hasAttr(kComputeAttrName) && !compute) {
      op->emitOpError() << kComputeAttrName << " must be #emb<precision ...>, got "
                        << op->getAttr(kComputeAttrName);
      return WalkResult::interrupt();
    }
    if (compute && !computesInPrecision(op)) {
      op->emitOpError() << "carries " << kComputeAttrName
                        << " but has no products to compute in another precision";
      return WalkResult::interrupt();
    }
    if (computesInPrecision(op)) {
      Precision actual = compute ? compute.getValue() : Precision::fp32;
      if (actual != precision) {
        op->emitOpError() << "computes in " << stringifyPrecision(actual)
                          << " but the module's training precision is " << name
                          << (precision == Precision::fp32 ? "" : ": run -emb-quantize");
        return WalkResult::interrupt();
      }
    }
    if (op->hasAttr(kLossScaledAttrName) && (!isa<LossGradOp>(op) || precision != Precision::fp16)) {
      op->emitOpError() << kLossScaledAttrName
                        << " is only for the emb.loss_grad of an fp16 model (precision is "
                        << name << ")";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (precision != Precision::fp16)
    return success();
  // fp16 trains only with dynamic loss scaling: scaled loss gradient and the
  // unscale-and-check at the head of the update, both or neither.
  int scaledRoots = 0;
  step.walk([&](LossGradOp op) { scaledRoots += op->hasAttr(kLossScaledAttrName); });
  if (scaledRoots != 1 || update.getOps<UnscaleGradsOp>().empty())
    return module.emitError("precision fp16 needs dynamic loss scaling (an emb.loss_grad "
                            "with ")
           << kLossScaledAttrName << " and emb.unscale_grads in @update): run -emb-quantize";
  return success();
}

void PlanBuilder::precisionAttrs(Operation *op, nlohmann::json &attrs) {
  // A fused group computes in the precision of the ops it holds
  // (checkPrecision made them all agree with the module's).
  op->walk([&](Operation *inner) {
    if (auto compute = inner->getAttrOfType<PrecisionAttr>(kComputeAttrName))
      attrs["compute"] = stringifyPrecision(compute.getValue()).str();
    if (isa<LossGradOp>(inner) && inner->hasAttr(kLossScaledAttrName))
      attrs["loss_scaled"] = true;
  });
}
