//===- SampleSoftmax.cpp - -emb-sample-softmax -------------------------------===//
//
// A token loss marked emb.sampled = S trains its output projection on the
// target and S sampled classes: the projection (emb.dense or
// emb.table_scores) and the loss become emb.sampled_logits and a loss
// against its class 0 (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "embc/dialect/EmbDialect.h"
#include "embc/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace embc {
#define GEN_PASS_DEF_EMBSAMPLESOFTMAXPASS
#include "embc/passes/Passes.h.inc"
} // namespace embc

using namespace mlir;
using namespace embc;
using namespace embc::emb;

namespace {

/// The projection's operands, read from emb.dense or emb.table_scores.
struct Projection {
  Operation *op = nullptr;
  Value input, weight, bias;
  bool tied = false;
};

FailureOr<Projection> projectionOf(LossOp loss) {
  Projection p;
  p.op = loss.getInput().getDefiningOp();
  if (auto dense = dyn_cast_or_null<DenseOp>(p.op)) {
    p.input = dense.getInput();
    p.weight = dense.getWeight();
    p.bias = dense.getBias();
    return p;
  }
  if (auto scores = dyn_cast_or_null<TableScoresOp>(p.op)) {
    auto in = cast<RankedTensorType>(scores.getInput().getType());
    auto out = cast<RankedTensorType>(scores.getResult().getType());
    OpBuilder b(scores);
    p.input = scores.getInput();
    p.weight = ReadTableOp::create(
        b, scores.getLoc(),
        RankedTensorType::get({out.getShape().back(), in.getShape().back()}, in.getElementType()),
        scores.getTableAttr());
    p.tied = true;
    return p;
  }
  return loss.emitOpError("is marked ")
         << kSampledAttrName << " but its logits come from "
         << (p.op ? "'" + p.op->getName().getStringRef().str() + "'" : std::string("an argument"))
         << ", not an output projection (emb.dense or emb.table_scores)";
}

LogicalResult sample(func::FuncOp forward, LossOp loss, int64_t stream) {
  auto marked = dyn_cast<IntegerAttr>(loss->getAttr(kSampledAttrName));
  if (!marked)
    return loss.emitOpError() << kSampledAttrName << " must be an integer";
  const int64_t S = marked.getInt();
  if (loss.getKind() != LossKind::sequence_softmax_ce)
    return loss.emitOpError("is marked ")
           << kSampledAttrName << " but is '" << stringifyLossKind(loss.getKind())
           << "': only a token loss (sequence_softmax_ce) samples its classes";
  auto logitsType = cast<RankedTensorType>(loss.getInput().getType());
  const int64_t V = logitsType.getShape().back();
  if (S < 1 || S >= V)
    return loss.emitOpError("samples ")
           << S << " of " << V << " classes: " << kSampledAttrName << " must be in [1, " << V
           << ")";
  for (OpOperand &use : loss.getInput().getUses())
    if (use.getOwner() != loss.getOperation() && !isa<func::ReturnOp>(use.getOwner()))
      return loss.emitOpError("samples the logits of a projection that '")
             << use.getOwner()->getName() << "' reads too: only the loss may";
  FailureOr<Projection> p = projectionOf(loss);
  if (failed(p))
    return failure();

  OpBuilder b(loss);
  auto target = cast<RankedTensorType>(loss.getTarget().getType());
  SmallVector<int64_t> shape(target.getShape());
  shape.push_back(1 + S);
  auto sampled = SampledLogitsOp::create(
      b, loss.getLoc(), RankedTensorType::get(shape, logitsType.getElementType()), target,
      RankedTensorType::get({S}, b.getI64Type()), p->input, p->weight, loss.getTarget(), p->bias,
      b.getI64IntegerAttr(S), b.getBoolAttr(p->tied), b.getI64IntegerAttr(stream));
  auto replaced = LossOp::create(b, loss.getLoc(), loss.getResult().getType(), loss.getKindAttr(),
                                 sampled.getLogits(), sampled.getClasses());
  loss.getResult().replaceAllUsesWith(replaced.getResult());
  // The forward's prediction: the sampled logits.
  for (OpOperand &use : llvm::make_early_inc_range(loss.getInput().getUses()))
    if (isa<func::ReturnOp>(use.getOwner()))
      use.set(sampled.getLogits());
  loss.erase();
  p->op->erase();
  auto results = forward.getBody().front().getTerminator()->getOperandTypes();
  forward.setType(FunctionType::get(forward.getContext(), forward.getArgumentTypes(), results));
  return success();
}

struct EmbSampleSoftmaxPass : embc::impl::EmbSampleSoftmaxPassBase<EmbSampleSoftmaxPass> {
  void runOnOperation() override {
    auto forward = getOperation().lookupSymbol<func::FuncOp>(kForwardFuncName);
    if (!forward)
      return; // already trained (@train_step) or not a model
    SmallVector<LossOp> losses;
    forward.walk([&](LossOp loss) {
      if (loss->hasAttr(kSampledAttrName))
        losses.push_back(loss);
    });
    for (auto [stream, loss] : llvm::enumerate(losses)) {
      if (failed(sample(forward, loss, int64_t(stream))))
        return signalPassFailure();
      ++numSampled;
    }
  }
};

} // namespace
