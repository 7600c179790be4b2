//===- QuantizeDense.cpp - dense half of -emb-quantize --------------------===//
//
// bf16/fp16 dense compute with f32 master weights, and fp16 dynamic loss
// scaling. Parameters, gradients and optimizer state stay f32 (the master
// copy); what changes is the products: every emb.dense, emb.interaction and
// emb.cross and their gradient ops (forward, input and weight gradients) get
// `emb.compute = #emb<precision bf16|fp16>`, and the plan's kernels round
// their operands to that type and accumulate in f32, as tensor cores do.
// Elementwise ops (bias, activations, losses, adds) and reductions (bias
// gradients, the embedding side) stay f32, which is also what mixed
// precision on the GPU keeps in f32.
//
// fp16 has 5 exponent bits: gradients below 2^-24 vanish and large ones
// overflow. Dynamic loss scaling multiplies the loss gradient by a scale S
// (`emb.loss_scaled` on emb.loss_grad), so every gradient behind it, dense
// and embedding alike, is S times larger; `emb.unscale_grads` at the head of
// @update divides them back and skips the update when one overflowed.
// bf16 has f32's exponent range and needs no scaling.
//
// Why attributes, not cast ops: the values stay f32 tensors in the IR (they
// are f32 buffers in the plan); only the arithmetic inside a kernel rounds.
// An attribute on the op that does the product says exactly that, and it
// moves with the op into emb.fused groups.
//
//===----------------------------------------------------------------------===//

#include "QuantizeDense.h"

#include "embc/dialect/EmbDialect.h"

using namespace mlir;
using namespace embc;
using namespace embc::emb;

/// Ops whose products run in the compute precision.
static bool isDenseCompute(Operation *op) {
  return isa<DenseOp, DenseGradInputOp, DenseGradWeightOp, InteractionOp, InteractionGradOp,
             CrossOp, CrossGradOp>(op);
}

bool embc::computesInPrecision(Operation *op) { return isDenseCompute(op); }

LogicalResult embc::quantizeDense(ModuleOp module, func::FuncOp step, func::FuncOp update) {
  auto training = module->getAttrOfType<TrainingAttr>(kTrainingAttrName);
  if (!training)
    return module.emitError("the module has no ") << kTrainingAttrName << " attribute";
  Precision precision = training.getPrecision();
  if (precision == Precision::fp32)
    return success(); // nothing to do: the IR stays as it is

  // Master weights: the optimizer updates f32 copies; a parameter declared
  // in another type has no master copy to keep.
  for (auto param : module.getOps<ParamOp>()) {
    Type element = cast<RankedTensorType>(param.getType()).getElementType();
    if (!element.isF32())
      return param.emitOpError("has element type ")
             << element << "; " << stringifyPrecision(precision)
             << " compute keeps f32 master weights, so parameters must be f32";
  }

  MLIRContext *ctx = module.getContext();
  auto compute = PrecisionAttr::get(ctx, precision);
  WalkResult walk = step.walk([&](Operation *op) {
    if (!isDenseCompute(op))
      return WalkResult::advance();
    if (op->hasAttr(kComputeAttrName)) {
      op->emitOpError("already carries ")
          << kComputeAttrName << ": the dense precision is applied once";
      return WalkResult::interrupt();
    }
    for (Type type : op->getOperandTypes())
      if (!cast<RankedTensorType>(type).getElementType().isF32()) {
        op->emitOpError("has operand type ")
            << type << "; " << stringifyPrecision(precision)
            << " compute rounds f32 operands (f64 models train in fp32)";
        return WalkResult::interrupt();
      }
    op->setAttr(kComputeAttrName, compute);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (precision != Precision::fp16)
    return success();

  // fp16: dynamic loss scaling from the root of the backward.
  SmallVector<LossGradOp> roots;
  step.walk([&](LossGradOp op) { roots.push_back(op); });
  if (roots.size() != 1)
    return step.emitOpError("has ")
           << roots.size()
           << " emb.loss_grad ops; fp16 loss scaling scales the one loss gradient "
              "(run -emb-autodiff first)";
  if (!update.getOps<UnscaleGradsOp>().empty())
    return update.emitOpError("already holds emb.unscale_grads: loss scaling is applied once");
  roots.front()->setAttr(kLossScaledAttrName, UnitAttr::get(ctx));
  OpBuilder b(ctx);
  b.setInsertionPointToStart(&update.getBody().front());
  auto unscale =
      UnscaleGradsOp::create(b, update.getLoc(), b.getF64FloatAttr(kDefaultInitialLossScale),
                             b.getF64FloatAttr(2.0), b.getF64FloatAttr(0.5),
                             b.getI64IntegerAttr(kDefaultLossScaleInterval));
  return unscale.verify();
}
