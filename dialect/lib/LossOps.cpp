//===- LossOps.cpp - emb.loss ----------------------------------------------===//

#include "embc/dialect/EmbDialect.h"
#include "embc/dialect/PlanEmitter.h"

using namespace mlir;
using namespace embc::emb;
namespace rt = embc::runtime;

LogicalResult LossOp::verify() {
  if (failed(verifySameFloatElementType(*this)))
    return failure();
  auto input = cast<RankedTensorType>(getInput().getType());
  auto target = cast<RankedTensorType>(getTarget().getType());
  if (input.getRank() != 2 || !input.hasStaticShape())
    return emitOpError("'input' must be a static B x N tensor, got ") << input;
  if (target.getRank() != 2 || !target.hasStaticShape())
    return emitOpError("'target' must be a static B x N tensor, got ")
           << target;
  int64_t batch = input.getDimSize(0);
  if (target.getDimSize(0) != batch)
    return emitOpError("'target' batch (")
           << target.getDimSize(0) << ") != 'input' batch (" << batch << ")";
  StringRef kind = stringifyLossKind(getKind());
  switch (getKind()) {
  case LossKind::bce_with_logits:
  case LossKind::mse:
    if (input.getDimSize(1) != 1 || target.getDimSize(1) != 1)
      return emitOpError("'") << kind << "' expects B x 1 input and target, got "
                              << input << " and " << target;
    break;
  case LossKind::softmax_ce:
    if (input.getDimSize(1) < 2)
      return emitOpError("'softmax_ce' needs at least 2 classes, got ")
             << input;
    if (target.getDimSize(1) != 1)
      return emitOpError("'softmax_ce' expects a B x 1 class-index target, got ")
             << target;
    break;
  case LossKind::neg_sampling:
    if (input.getDimSize(1) != 1)
      return emitOpError("'neg_sampling' expects B x 1 positive scores, got ")
             << input;
    break;
  }
  return success();
}

int64_t LossOp::getForwardFlops() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto target = cast<RankedTensorType>(getTarget().getType());
  return 10 * (input.getNumElements() + target.getNumElements());
}

int64_t LossOp::getForwardBytes() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto target = cast<RankedTensorType>(getTarget().getType());
  return getElementBytes(getInput()) *
         (input.getNumElements() + target.getNumElements());
}

LogicalResult LossOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::Loss);
  k.attrs["kind"] = stringifyLossKind(getKind()).str();
  return e.emitOnOperands(*this, std::move(k));
}
