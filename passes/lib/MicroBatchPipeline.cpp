//===- MicroBatchPipeline.cpp - -emb-pipeline -------------------------------===//
//
// Splits the batch into m micro-batches: @train_step is rewritten to run on
// B/m examples and runs m times per batch, its gradients accumulating (the
// update scales them by 1/m, -emb-to-plan). With p > 1 the ops are spread
// over pipeline stages, and the schedule of one optimizer step is emitted as
// an emb.schedule (PipelineSchedule.cpp).
//
// The ops have no InferTypeOpInterface, so the micro-batch types come from a
// dataflow rule: a result is batch-major when one of its operands is and its
// leading dimension was the batch, unless it is parameter-shaped (flows into
// emb.accumulate_grad). The rewritten module is then verified: every op's
// verifier re-checks its shapes, and names the op that did not survive.
//
//===----------------------------------------------------------------------===//

#include "PipelineSchedule.h"

#include "embc/passes/Passes.h"

#include "mlir/IR/Verifier.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "emb-pipeline"

namespace embc {
#define GEN_PASS_DEF_EMBPIPELINEPASS
#include "embc/passes/Passes.h.inc"
} // namespace embc

using namespace mlir;
using namespace embc;
using namespace embc::emb;
using namespace embc::pipeline;

namespace {

RankedTensorType withLeading(RankedTensorType type, int64_t leading) {
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = leading;
  return type.clone(shape);
}

/// Values that hold a parameter's gradient (or a sum of parts of one): they
/// keep their shape whatever the batch.
llvm::DenseSet<Value> parameterShaped(func::FuncOp step) {
  llvm::DenseSet<Value> shaped;
  SmallVector<Value> work;
  step.walk([&](AccumulateGradOp acc) { work.push_back(acc.getGrad()); });
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!shaped.insert(v).second)
      continue;
    if (auto add = v.getDefiningOp<AddOp>())
      for (Value operand : add.getOperands())
        if (operand.getType() == v.getType())
          work.push_back(operand);
  }
  return shaped;
}

/// Rewrites @train_step's batch-major arguments and the values computed from
/// them to micro-batch size b = B / m.
LogicalResult rewriteToMicroBatch(func::FuncOp step, int64_t batch, int64_t m,
                                  int64_t &retyped) {
  int64_t b = batch / m;
  MLIRContext *ctx = step.getContext();
  llvm::DenseSet<Value> batchMajor;
  for (BlockArgument arg : step.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto role = step.getArgAttrOfType<StringAttr>(i, kRoleArgAttrName);
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!role || !type || type.getRank() == 0)
      return step.emitOpError("argument ")
             << i << " has no emb.role or is not a ranked tensor: -emb-pipeline "
             << "cannot tell whether it is batch-major";
    StringRef r = role.getValue();
    int64_t lead = type.getDimSize(0);
    if (r == "dense" || r == "label" || r == "negatives" || r == "offsets") {
      int64_t expect = r == "offsets" ? batch + 1 : batch;
      if (lead != expect)
        return step.emitOpError("argument ")
               << i << " (" << r << ") has " << lead << " rows; the batch of "
               << batch << " needs " << expect;
      arg.setType(withLeading(type, r == "offsets" ? b + 1 : b));
    } else if (r == "ids" || r == "weights") {
      // Jagged: the capacity is B * hotness, now b * hotness.
      auto maxIds = step.getArgAttrOfType<IntegerAttr>(i, kMaxIdsArgAttrName);
      int64_t capacity = type.isDynamicDim(0) ? (maxIds ? maxIds.getInt() : -1) : lead;
      if (capacity < 0 || capacity % m != 0)
        return step.emitOpError("argument ")
               << i << " (" << r << ") holds up to " << capacity
               << " ids, which do not split into " << m << " micro-batches";
      if (!type.isDynamicDim(0))
        arg.setType(withLeading(type, capacity / m));
      if (maxIds)
        step.setArgAttr(i, kMaxIdsArgAttrName,
                        IntegerAttr::get(IntegerType::get(ctx, 64), capacity / m));
    } else {
      return step.emitOpError("argument ")
             << i << " has role '" << r << "', which -emb-pipeline cannot split";
    }
    batchMajor.insert(arg);
  }

  llvm::DenseSet<Value> shaped = parameterShaped(step);
  for (Operation &op : step.getBody().front()) {
    if (op.getNumRegions() != 0)
      return op.emitOpError("has regions: run -emb-pipeline before -emb-fuse");
    if (llvm::none_of(op.getOperands(), [&](Value v) { return batchMajor.contains(v); }))
      continue;
    for (Value r : op.getResults()) {
      auto type = dyn_cast<RankedTensorType>(r.getType());
      if (!type || type.getRank() == 0 || shaped.contains(r))
        continue;
      if (type.isDynamicDim(0)) { // per-id rows: bounded by the ids' capacity
        batchMajor.insert(r);
      } else if (type.getDimSize(0) == batch) {
        r.setType(withLeading(type, b));
        batchMajor.insert(r);
        ++retyped;
      }
    }
  }
  auto ret = cast<func::ReturnOp>(step.getBody().front().getTerminator());
  step.setFunctionType(FunctionType::get(ctx, step.getBody().front().getArgumentTypes(),
                                         ret.getOperandTypes()));
  return success();
}

struct PipelinePass : embc::impl::EmbPipelinePassBase<PipelinePass> {
  using Base::Base;
  void runOnOperation() override;
};

void PipelinePass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = module.getContext();
  auto plan = module->getAttrOfType<PlanAttr>(kPlanAttrName);
  auto training = module->getAttrOfType<TrainingAttr>(kTrainingAttrName);
  int64_t m = microBatches ? int64_t(microBatches) : (plan ? plan.getMicroBatches() : 1);
  int64_t p = stages ? int64_t(stages) : (plan ? plan.getPipelineStages() : 1);
  PipelineSchedule kind = plan ? plan.getSchedule() : PipelineSchedule::gpipe;
  if (!schedule.empty()) {
    // The plan's word (gpipe, 1f1b) or the dialect's (one_f_one_b).
    if (auto word = embc::runtime::parseEnum<embc::runtime::ScheduleKind>(schedule.getValue()))
      kind = toDialectSchedule(*word);
    else if (auto dialectWord = symbolizePipelineSchedule(schedule))
      kind = *dialectWord;
    else {
      module.emitError("-emb-pipeline: unknown schedule '")
          << schedule << "' (" << embc::runtime::enumChoices<embc::runtime::ScheduleKind>()
          << ")";
      return signalPassFailure();
    }
  }
  if (m < 1 || p < 1) {
    module.emitError("-emb-pipeline: micro-batches (")
        << m << ") and stages (" << p << ") must be at least 1";
    return signalPassFailure();
  }
  if (m == 1 && p == 1)
    return markAllAnalysesPreserved(); // nothing to split

  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  if (!step || !training) {
    module.emitError("-emb-pipeline needs @train_step and emb.training: run "
                     "-emb-autodiff first");
    return signalPassFailure();
  }
  if (step->hasAttr(kMicroBatchesAttrName) || !module.getOps<ScheduleOp>().empty()) {
    step.emitOpError("is already pipelined");
    return signalPassFailure();
  }
  int64_t batch = training.getBatchSize();
  LLVM_DEBUG(llvm::dbgs() << "emb-pipeline: " << m << " micro-batches, " << p << " stages, "
                          << stringifyPipelineSchedule(kind) << "\n");
  if (batch % m != 0) {
    emitError(NameLoc::get(StringAttr::get(module.getContext(), "/plan/micro_batches"),
                           module.getLoc()),
              "-emb-pipeline: ")
        << m << " micro-batches do not divide the batch of " << batch;
    return signalPassFailure();
  }

  int64_t retyped = 0, instructions = 0;
  if (m > 1) {
    if (failed(rewriteToMicroBatch(step, batch, m, retyped)))
      return signalPassFailure();
    if (failed(verify(module))) {
      step.emitOpError("does not verify at micro-batch size ")
          << batch / m << " (see the op errors above)";
      return signalPassFailure();
    }
  }
  if (p > 1 && failed(assignStages(step, p)))
    return signalPassFailure();
  if (failed(emitSchedule(module, step, kind, p, m, instructions)))
    return signalPassFailure();
  auto i64 = IntegerType::get(ctx, 64);
  step->setAttr(kMicroBatchesAttrName, IntegerAttr::get(i64, m));
  step->setAttr(kStagesAttrName, IntegerAttr::get(i64, p));
  if (plan) // the settings in effect, for the passes after this one
    module->setAttr(kPlanAttrName,
                    PlanAttr::get(ctx, plan.getMemoryBudget(), plan.getRemat(), m, p,
                                  kind, plan.getDataParallel(), plan.getPipelineRanks()));
  numRetyped += retyped;
  numInstructions += instructions;
  if (failed(verify(module)))
    return signalPassFailure();
}

} // namespace
