//===- LossOps.cpp - emb.loss ----------------------------------------------===//

#include "embc/dialect/EmbDialect.h"
#include "embc/dialect/PlanEmitter.h"

using namespace mlir;
using namespace embc::emb;
namespace rt = embc::runtime;

/// The targets of a softmax are class indices stored as floats: exact below
/// 2^24.
static constexpr int64_t kMaxClasses = int64_t(1) << 24;

/// sequence_softmax_ce: B x L x C logits against B x L class indices.
static LogicalResult verifySequenceLoss(LossOp op, RankedTensorType input,
                                        RankedTensorType target) {
  if (input.getRank() != 3 || !input.hasStaticShape())
    return op.emitOpError("'sequence_softmax_ce' expects static B x L x C logits, got ") << input;
  if (input.getDimSize(2) < 2 || input.getDimSize(2) > kMaxClasses)
    return op.emitOpError("'sequence_softmax_ce' needs 2 to 2^24 classes, got ") << input;
  if (target.getRank() != 2 || target.getShape() != input.getShape().drop_back())
    return op.emitOpError("'sequence_softmax_ce' expects a B x L target (")
           << input.getDimSize(0) << "x" << input.getDimSize(1) << ") for logits " << input
           << ", got " << target;
  return success();
}

LogicalResult LossOp::verify() {
  if (failed(verifySameFloatElementType(*this)))
    return failure();
  auto input = cast<RankedTensorType>(getInput().getType());
  auto target = cast<RankedTensorType>(getTarget().getType());
  if (getKind() == LossKind::sequence_softmax_ce)
    return verifySequenceLoss(*this, input, target);
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
    if (input.getDimSize(1) < 2 || input.getDimSize(1) > kMaxClasses)
      return emitOpError("'softmax_ce' needs 2 to 2^24 classes, got ") << input;
    if (target.getDimSize(1) != 1)
      return emitOpError("'softmax_ce' expects a B x 1 class-index target, got ")
             << target;
    break;
  case LossKind::neg_sampling:
    if (input.getDimSize(1) != 1)
      return emitOpError("'neg_sampling' expects B x 1 positive scores, got ")
             << input;
    break;
  case LossKind::sequence_softmax_ce:
    break; // verified above
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
