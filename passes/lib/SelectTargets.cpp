//===- SelectTargets.cpp - -emb-select-targets ------------------------------===//
//
// A masked-token loss reads B x L x vocab logits of which P a sequence
// count. The row-wise ops between the last sequence op and the loss (the
// output projection, an MLM head's dense + activation + layer norm) are
// moved behind an emb.select_targets of the target positions, on B x P
// rows. Each row is computed by the same ops from the same input row, so
// the loss and its gradients are those of the plain model (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "embc/dialect/EmbDialect.h"
#include "embc/passes/Passes.h"
#include "embc/runtime/cpu/MaskKernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

namespace embc {
#define GEN_PASS_DEF_EMBSELECTTARGETSPASS
#include "embc/passes/Passes.h.inc"
} // namespace embc

using namespace mlir;
using namespace embc;
using namespace embc::emb;

namespace {

/// An op that computes each row of its first operand's rows on its own:
/// moving a selection of rows in front of it selects its result's rows.
bool isRowwise(Operation *op) {
  return isa<DenseOp, ActivationOp, LayerNormOp, TableScoresOp>(op);
}

RankedTensorType withRows(RankedTensorType type, int64_t rows) {
  SmallVector<int64_t> shape(type.getShape());
  shape[1] = rows;
  return RankedTensorType::get(shape, type.getElementType());
}

/// Rewrites one loss; returns whether it did.
bool selectTargets(func::FuncOp forward, LossOp loss) {
  auto mask = loss.getTarget().getDefiningOp<MaskTokensOp>();
  if (!mask || loss.getKind() != LossKind::sequence_softmax_ce)
    return false;
  auto targetType = cast<RankedTensorType>(loss.getTarget().getType());
  const int64_t L = targetType.getDimSize(1);
  const int64_t P = runtime::cpu::masking::count(L, mask.getRate().convertToDouble());
  if (P >= L)
    return false;
  // The logits may only feed the loss and the forward's result.
  for (OpOperand &use : loss.getInput().getUses())
    if (use.getOwner() != loss.getOperation() && !isa<func::ReturnOp>(use.getOwner()))
      return false;
  // The chain, from the loss's input down, while each value below the
  // logits feeds only the op above it (a value used elsewhere stays whole).
  SmallVector<Operation *> chain;
  Value v = loss.getInput();
  while (Operation *def = v.getDefiningOp()) {
    if (!isRowwise(def) || (!chain.empty() && !v.hasOneUse()))
      break;
    chain.push_back(def);
    v = def->getOperand(0);
  }
  if (chain.empty())
    return false;
  auto input = cast<RankedTensorType>(v.getType());
  if (input.getRank() != 3 || input.getDimSize(1) != L)
    return false;

  // At the loss: every operand of the chain (its weights' emb.get among
  // them) is defined before it.
  OpBuilder b(loss);
  auto select = SelectTargetsOp::create(b, loss.getLoc(), withRows(input, P),
                                        RankedTensorType::get({input.getDimSize(0), P},
                                                              targetType.getElementType()),
                                        v, loss.getTarget());
  IRMapping map;
  map.map(v, select.getRows());
  Value logits;
  for (Operation *op : llvm::reverse(chain)) {
    Operation *clone = b.clone(*op, map);
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    clone->getResult(0).setType(withRows(type, P));
    map.map(op->getResult(0), clone->getResult(0));
    logits = clone->getResult(0);
  }
  auto selected = LossOp::create(b, loss.getLoc(), loss.getResult().getType(), loss.getKindAttr(),
                                 logits, select.getSelected());
  for (NamedAttribute a : loss->getDiscardableAttrs()) // emb.sampled
    selected->setAttr(a.getName(), a.getValue());
  loss.getResult().replaceAllUsesWith(selected.getResult());
  // The prediction the forward returns: the selected logits.
  Value old = loss.getInput();
  for (OpOperand &use : llvm::make_early_inc_range(old.getUses()))
    if (isa<func::ReturnOp>(use.getOwner()))
      use.set(logits);
  loss.erase();
  for (Operation *op : chain)
    op->erase();
  auto results = forward.getBody().front().getTerminator()->getOperandTypes();
  forward.setType(
      FunctionType::get(forward.getContext(), forward.getArgumentTypes(), results));
  return true;
}

struct EmbSelectTargetsPass : embc::impl::EmbSelectTargetsPassBase<EmbSelectTargetsPass> {
  void runOnOperation() override {
    auto forward = getOperation().lookupSymbol<func::FuncOp>(kForwardFuncName);
    if (!forward)
      return; // already trained (@train_step) or not a model
    SmallVector<LossOp> losses;
    forward.walk([&](LossOp loss) { losses.push_back(loss); });
    for (LossOp loss : losses)
      if (selectTargets(forward, loss))
        ++numSelected;
  }
};

} // namespace
