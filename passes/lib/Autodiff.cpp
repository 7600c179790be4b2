//===- Autodiff.cpp - -emb-autodiff -----------------------------------------===//
//
// Reverse-mode differentiation of @forward into @train_step, plus the
// optimizer step @update. The pass knows no op's derivative: it walks the
// forward ops backwards and asks each one (GradientOpInterface) to build its
// own backward, summing the gradients of values used more than once.
//
//===----------------------------------------------------------------------===//

#include "embc/passes/Passes.h"

#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "emb-autodiff"

namespace embc {
#define GEN_PASS_DEF_EMBAUTODIFFPASS
#include "embc/passes/Passes.h.inc"
} // namespace embc

using namespace mlir;
using namespace embc;
using namespace embc::emb;

namespace {

constexpr StringLiteral kTrainStepName = "train_step";
constexpr StringLiteral kUpdateName = "update";

/// Whether a table's optimizer can honour its weight-decay mode with a
/// sparse (touched rows only) update. Global decay of an untouched row is a
/// pure scaling for SGD without momentum and for AdamW; for the others it
/// would also move the row's optimizer state, i.e. a dense update.
/// Whether `op` reads a parameter (emb.get) or a table row (an op with a
/// `table` symbol and a gradient rule: lookups, gathers, sequences): the
/// trainable values the backward pass starts from.
bool readsTrainable(Operation &op) {
  if (isa<GetOp>(op))
    return true;
  return isa<GradientOpInterface>(op) && op.getAttrOfType<FlatSymbolRefAttr>("table");
}

LogicalResult checkSparseDecay(TableOp table) {
  OptimizerAttr opt = table.getOptimizer();
  if (opt.getWeightDecay() == 0.0 ||
      opt.getWeightDecayMode() != WeightDecayMode::global)
    return success();
  bool scalable = (opt.getKind() == OptimizerKind::sgd &&
                   opt.getMomentum() == 0.0) ||
                  opt.getKind() == OptimizerKind::adamw;
  if (scalable)
    return success();
  return table.emitOpError("global weight decay with optimizer '")
         << stringifyOptimizerKind(opt.getKind())
         << (opt.getKind() == OptimizerKind::sgd ? "' with momentum" : "'")
         << " would update every row's optimizer state each step (a dense "
            "update of the table); use weight_decay_mode 'lazy', or sgd "
            "without momentum or adamw";
}

struct AutodiffPass : embc::impl::EmbAutodiffPassBase<AutodiffPass> {
  void runOnOperation() override;

private:
  LogicalResult buildBackward(func::FuncOp func);
  void buildUpdate(ModuleOp module, func::FuncOp step);
};

/// The gradient contributions of one value. emb.add sums those of a static
/// B x N (or B x L x N) tensor into one, so a residual stream read by every
/// layer keeps one backward chain; other values (a 1-D bias read twice, a
/// dynamic tensor), which emb.add cannot sum, keep one entry per use and
/// their op's rule runs once per entry (every backward rule is linear in the
/// gradient of the result, so this is the same as summing first).
using GradList = SmallVector<Value, 1>;

/// Adds `grad` to the gradients recorded for `value` (summing with emb.add
/// when the value already has one and emb.add can: it is used more than once).
void accumulate(OpBuilder &b, Location loc, DenseMap<Value, GradList> &grads,
                Value value, Value grad) {
  GradList &list = grads[value];
  auto type = dyn_cast<RankedTensorType>(value.getType());
  bool summable = type && type.getRank() >= 2 && type.hasStaticShape() &&
                  isa<FloatType>(type.getElementType());
  if (!list.empty() && summable)
    list.front() = AddOp::create(b, loc, value.getType(),
                                 ValueRange{list.front(), grad}, Value());
  else
    list.push_back(grad);
}

/// Forward ops whose gradient reads an intermediate the forward computes
/// anyway: a cross layer returns its xl W (`linear`), so that emb.cross_grad
/// runs two of its three D x D products instead of three. The values the
/// forward returns are unchanged.
void keepIntermediates(Block &body) {
  for (auto cross : llvm::make_early_inc_range(body.getOps<CrossOp>())) {
    if (cross.getLinear())
      continue;
    OpBuilder b(cross);
    auto kept = CrossOp::create(b, cross.getLoc(), cross.getType(0), cross.getType(0),
                                cross.getX0(), cross.getXl(), cross.getWeight(),
                                cross.getBias());
    kept->setAttrs(cross->getAttrs());
    cross.getResult().replaceAllUsesWith(kept.getResult());
    cross.erase();
  }
}

LogicalResult AutodiffPass::buildBackward(func::FuncOp func) {
  Block &body = func.getBody().front();
  keepIntermediates(body);
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  if (ret.getNumOperands() == 0)
    return func.emitOpError("@forward must return the loss first");
  Value loss = ret.getOperand(0);
  if (!loss.getDefiningOp<LossOp>())
    return func.emitOpError(
        "the first result of @forward must be produced by emb.loss");

  // Values that depend on something trainable (a parameter or a table).
  DenseSet<Value> trainable;
  SmallVector<Operation *> forwardOps;
  for (Operation &op : body.without_terminator()) {
    forwardOps.push_back(&op);
    // A loss is a root: nothing may differentiate through its value.
    if (isa<LossOp>(op))
      for (Operation *user : op.getUsers())
        if (isa<GradientOpInterface>(user)) {
          InFlightDiagnostic diag = op.emitOpError(
              "a loss can only be the root of the backward pass; its value "
              "cannot feed other differentiable ops");
          diag.attachNote(user->getLoc()) << "used by this '"
                                          << user->getName() << "'";
          return diag;
        }
    // Ops without a gradient rule propagate too, so that one on the way to
    // the loss is reported below instead of silently cutting the gradient.
    bool reads = readsTrainable(op) ||
                 llvm::any_of(op.getOperands(), [&](Value v) {
                   return trainable.contains(v);
                 });
    if (reads)
      for (Value r : op.getResults())
        trainable.insert(r);
  }

  OpBuilder b(ret);
  DenseMap<Value, GradList> grads;
  grads[loss] = {loss}; // the loss's own value marks "d loss / d loss = 1"
  for (Operation *op : llvm::reverse(forwardOps)) {
    size_t rounds = 0;
    for (Value r : op->getResults())
      rounds = std::max(rounds, grads.lookup(r).size());
    if (rounds == 0)
      continue;
    auto rule = dyn_cast<GradientOpInterface>(op);
    if (!rule)
      return op->emitOpError("has no gradient rule (GradientOpInterface) but "
                             "lies between a trainable value and the loss");
    SmallVector<bool> need;
    for (Value operand : op->getOperands())
      need.push_back(trainable.contains(operand));
    for (size_t round = 0; round < rounds; ++round) {
      SmallVector<Value> resultGrads;
      for (Value r : op->getResults()) {
        GradList list = grads.lookup(r);
        resultGrads.push_back(round < list.size() ? list[round] : Value());
      }
      SmallVector<Value> operandGrads;
      size_t opsBefore = body.getOperations().size();
      if (failed(rule.buildGradient(b, resultGrads, need, operandGrads)))
        return failure();
      numGradOps += body.getOperations().size() - opsBefore;
      for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads))
        if (grad)
          accumulate(b, op->getLoc(), grads, operand, grad);
    }
  }
  func.setSymName(kTrainStepName);
  return success();
}

void AutodiffPass::buildUpdate(ModuleOp module, func::FuncOp step) {
  // Targets in the order their gradients first appear: deterministic plans.
  llvm::SetVector<StringRef> params, tables;
  step.walk([&](Operation *op) {
    if (auto acc = dyn_cast<AccumulateGradOp>(op))
      params.insert(acc.getParam());
    else if (auto rows = dyn_cast<AccumulateRowsOp>(op))
      tables.insert(rows.getTable());
  });

  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = step.getLoc();
  auto update = func::FuncOp::create(b, loc, kUpdateName,
                                     b.getFunctionType({}, {}));
  b.setInsertionPointToStart(update.addEntryBlock());
  for (StringRef t : tables)
    CoalesceRowsOp::create(b, loc, FlatSymbolRefAttr::get(b.getContext(), t));
  Value scale;
  auto training = module->getAttrOfType<TrainingAttr>(kTrainingAttrName);
  if (training && training.getGradClipNorm() > 0.0)
    scale = ClipGradNormOp::create(
        b, loc, RankedTensorType::get({}, b.getF32Type()),
        b.getF64FloatAttr(training.getGradClipNorm()));
  for (StringRef p : params)
    UpdateOp::create(b, loc, FlatSymbolRefAttr::get(b.getContext(), p), scale);
  for (StringRef t : tables)
    UpdateOp::create(b, loc, FlatSymbolRefAttr::get(b.getContext(), t), scale);
  func::ReturnOp::create(b, loc);
}

void AutodiffPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto forward = module.lookupSymbol<func::FuncOp>(kForwardFuncName);
  if (!forward) {
    module.emitError("-emb-autodiff needs a func.func @forward");
    return signalPassFailure();
  }
  if (module.lookupSymbol(kTrainStepName) || module.lookupSymbol(kUpdateName)) {
    module.emitError("the module already has @train_step or @update: "
                     "-emb-autodiff runs once");
    return signalPassFailure();
  }
  bool ok = true;
  for (auto table : module.getOps<TableOp>())
    ok &= succeeded(checkSparseDecay(table));
  if (!ok || failed(buildBackward(forward)))
    return signalPassFailure();
  buildUpdate(module, forward);
}

} // namespace
