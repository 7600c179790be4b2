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

//===----------------------------------------------------------------------===//
// emb.sampled_logits
//===----------------------------------------------------------------------===//

namespace {
/// The shapes emb.sampled_logits and its gradient share.
struct SampledShapes {
  RankedTensorType input, weight, target;
  int64_t classes = 0; ///< V
};
} // namespace

/// input (rows x D), weight (D x V, or V x D when tied) and target (input's
/// rows): V on success.
static FailureOr<SampledShapes> verifySampled(Operation *op, Value inputValue, Value weightValue,
                                              Value targetValue, bool tied) {
  SampledShapes s{cast<RankedTensorType>(inputValue.getType()),
                  cast<RankedTensorType>(weightValue.getType()),
                  cast<RankedTensorType>(targetValue.getType())};
  if (s.input.getRank() < 2 || !s.input.hasStaticShape())
    return op->emitOpError("input must be a static tensor of rows x D, got ") << s.input;
  if (s.weight.getRank() != 2 || !s.weight.hasStaticShape())
    return op->emitOpError("weight must be a static matrix, got ") << s.weight;
  const int64_t D = s.input.getShape().back();
  if (s.weight.getDimSize(tied ? 1 : 0) != D)
    return op->emitOpError("weight must be ")
           << (tied ? "V x " : "") << D << (tied ? "" : " x V") << " for input " << s.input
           << (tied ? " (tied: a table's rows)" : " (a dense layer's)") << ", got " << s.weight;
  s.classes = s.weight.getDimSize(tied ? 0 : 1);
  if (s.classes < 2 || s.classes > kMaxClasses)
    return op->emitOpError("needs 2 to 2^24 classes, got a weight ") << s.weight;
  if (s.target.getShape() != s.input.getShape().drop_back())
    return op->emitOpError("target must have the input's rows (") << s.input << " without its "
                                                                  << "last dimension), got "
                                                                  << s.target;
  if (s.weight.getElementType() != s.input.getElementType() ||
      s.target.getElementType() != s.input.getElementType())
    return op->emitOpError("input, weight and target must share one float type");
  return s;
}

/// A tensor of the target's shape with one more dimension of `n`.
static SmallVector<int64_t> rowsWith(RankedTensorType target, int64_t n) {
  SmallVector<int64_t> shape(target.getShape());
  shape.push_back(n);
  return shape;
}

LogicalResult SampledLogitsOp::verify() {
  FailureOr<SampledShapes> s = verifySampled(*this, getInput(), getWeight(), getTarget(),
                                             getTied());
  if (failed(s))
    return failure();
  const int64_t S = getNumSampled();
  if (S < 1)
    return emitOpError("num_sampled must be at least 1, got ") << S;
  if (getStream() < 0)
    return emitOpError("stream must not be negative, got ") << getStream();
  auto logits = cast<RankedTensorType>(getLogits().getType());
  if (logits.getShape() != ArrayRef<int64_t>(rowsWith(s->target, 1 + S)))
    return emitOpError("logits must be the target's rows x (1 + num_sampled) = ")
           << (1 + S) << ", got " << logits;
  if (getClasses().getType() != s->target)
    return emitOpError("classes must have the target's type ") << s->target << ", got "
                                                               << getClasses().getType();
  auto candidates = cast<RankedTensorType>(getCandidates().getType());
  if (candidates.getRank() != 1 || candidates.getDimSize(0) != S ||
      !candidates.getElementType().isInteger(64))
    return emitOpError("candidates must be tensor<") << S << "xi64>, got " << candidates;
  if (Value bias = getBias()) {
    auto b = cast<RankedTensorType>(bias.getType());
    if (b.getRank() != 1 || b.getDimSize(0) != s->classes)
      return emitOpError("bias must have one entry per class (") << s->classes << "), got " << b;
  }
  return success();
}

LogicalResult SampledLogitsGradOp::verify() {
  FailureOr<SampledShapes> s = verifySampled(*this, getInput(), getWeight(), getTarget(),
                                             getTied());
  if (failed(s))
    return failure();
  auto candidates = cast<RankedTensorType>(getCandidates().getType());
  if (candidates.getRank() != 1 || !candidates.hasStaticShape())
    return emitOpError("candidates must be a static vector, got ") << candidates;
  const int64_t S = candidates.getDimSize(0);
  auto grad = cast<RankedTensorType>(getGrad().getType());
  if (grad.getShape() != ArrayRef<int64_t>(rowsWith(s->target, 1 + S)))
    return emitOpError("grad must be the target's rows x (1 + ") << S << "), got " << grad;
  if (getInputGrad().getType() != s->input || getWeightGrad().getType() != s->weight)
    return emitOpError("the input and weight gradients must have their operands' types");
  if (Value bias = getBiasGrad()) {
    auto b = cast<RankedTensorType>(bias.getType());
    if (b.getRank() != 1 || b.getDimSize(0) != s->classes)
      return emitOpError("bias_grad must have one entry per class (") << s->classes << "), got "
                                                                      << b;
  }
  return success();
}

int64_t SampledLogitsOp::getForwardFlops() {
  auto logits = cast<RankedTensorType>(getLogits().getType());
  return 2 * logits.getNumElements() * cast<RankedTensorType>(getInput().getType()).getShape().back();
}

int64_t SampledLogitsOp::getForwardBytes() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto logits = cast<RankedTensorType>(getLogits().getType());
  const int64_t S = getNumSampled(), D = input.getShape().back();
  return getElementBytes(getInput()) * (input.getNumElements() + S * D + logits.getNumElements());
}

LogicalResult SampledLogitsOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                             ArrayRef<bool> need,
                                             SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(getNumOperands(), Value());
  Value dy = resultGrads[0];
  // A tied weight is a table read whole: its gradient goes to the table's
  // rows, as emb.table_scores's does.
  auto table = getWeight().getDefiningOp<ReadTableOp>();
  const bool biasGrad = getBias() && need.size() > 3 && need[3];
  if (!dy || !(need[0] || need[1] || table || biasGrad))
    return success();
  auto grad = SampledLogitsGradOp::create(
      b, getLoc(), getInput().getType(), getWeight().getType(),
      getBias() ? getBias().getType() : Type(), dy, getInput(), getWeight(), getTarget(),
      getCandidates(), getTiedAttr());
  if (need[0])
    operandGrads[0] = grad.getInputGrad();
  if (need[1])
    operandGrads[1] = grad.getWeightGrad();
  if (biasGrad)
    operandGrads[3] = grad.getBiasGrad();
  if (table && !need[1]) {
    auto weight = cast<RankedTensorType>(getWeight().getType());
    Value ids = RowIdsOp::create(b, getLoc(),
                                 RankedTensorType::get({weight.getDimSize(0)}, b.getI64Type()),
                                 table.getTableAttr());
    AccumulateRowsOp::create(b, getLoc(), table.getTableAttr(), ids, grad.getWeightGrad());
  }
  return success();
}
