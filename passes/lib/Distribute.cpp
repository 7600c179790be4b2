//===- Distribute.cpp - -emb-distribute -------------------------------------===//
//
// Data parallelism over N ranks: each rank runs @train_step on its slice of
// the global batch, and the collectives inserted here make every rank take
// the same optimizer step. Dense gradients are all-reduced (summed) bucket by
// bucket, each bucket starting as soon as the backward has finished its
// members; replicated tables' sparse gradients are all-gathered in rank
// order before they are coalesced; sharded tables exchange ids and pooled
// rows instead (DistributeShards.cpp). The update's extra 1/N is
// -emb-to-plan's (grad_scale). With pipeline_ranks the same collectives
// serve the stages placed on ranks (DistributeStages.cpp).
//
//===----------------------------------------------------------------------===//

#include "Distribute.h"
#include "PipelineSchedule.h"

#include "embc/passes/Passes.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "emb-distribute"

namespace embc {
#define GEN_PASS_DEF_EMBDISTRIBUTEPASS
#include "embc/passes/Passes.h.inc"
} // namespace embc

using namespace mlir;
using namespace embc;
using namespace embc::emb;

namespace {

/// One all-reduce: elements [offset, offset + size) of the gradient of
/// `target` (a pack or an unpacked parameter), complete once every member
/// has had its last gradient accumulated.
struct Bucket {
  FlatSymbolRefAttr target;
  int64_t offset, size;
  SmallVector<StringRef> members;
};

struct DistributePass : embc::impl::EmbDistributePassBase<DistributePass> {
  using Base::Base;
  void runOnOperation() override;

private:
  SmallVector<Bucket> denseBuckets(ModuleOp module, func::FuncOp update);
  void startInStep(ArrayRef<Bucket> buckets, func::FuncOp step);
};

/// The buckets of every trained dense gradient, in the order the pack lists
/// them (backward order: bucket 0 completes first), then unpacked
/// parameters in module order.
SmallVector<Bucket> DistributePass::denseBuckets(ModuleOp module, func::FuncOp update) {
  // Only what @update steps: a gradient nobody reads needs no sum.
  llvm::DenseSet<StringRef> updated;
  update.walk([&](UpdateOp op) { updated.insert(op.getTarget()); });

  SmallVector<Bucket> buckets;
  llvm::DenseSet<StringRef> packed;
  for (auto pack : module.getOps<ParamPackOp>()) {
    for (Attribute ref : pack.getMembers())
      packed.insert(cast<FlatSymbolRefAttr>(ref).getValue());
    if (!updated.contains(pack.getSymName()))
      continue;
    ArrayRef<int64_t> cuts = pack.getBuckets();
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
      Bucket bucket{FlatSymbolRefAttr::get(pack.getSymNameAttr()), cuts[i],
                    cuts[i + 1] - cuts[i], {}};
      for (auto [ref, offset] : llvm::zip(pack.getMembers(), pack.getOffsets()))
        if (offset >= cuts[i] && offset < cuts[i + 1])
          bucket.members.push_back(cast<FlatSymbolRefAttr>(ref).getValue());
      buckets.push_back(std::move(bucket));
    }
  }
  // Without -emb-pack-params each parameter is its own bucket: more, smaller
  // messages, but the same sums.
  for (auto param : module.getOps<ParamOp>())
    if (!packed.contains(param.getSymName()) && updated.contains(param.getSymName()))
      buckets.push_back({FlatSymbolRefAttr::get(param.getSymNameAttr()), 0,
                         cast<RankedTensorType>(param.getType()).getNumElements(),
                         {param.getSymName()}});
  return buckets;
}

/// Places each bucket's start right after the top-level op of the step that
/// accumulates the last gradient of its members (before the return when
/// none does: its gradient is zero, and still summed so every rank makes the
/// same calls).
void DistributePass::startInStep(ArrayRef<Bucket> buckets, func::FuncOp step) {
  Block *block = &step.getBody().front();
  llvm::StringMap<Operation *> lastAccumulate;
  step.walk([&](AccumulateGradOp acc) {
    lastAccumulate[acc.getParam()] = block->findAncestorOpInBlock(*acc);
  });
  // Several buckets finishing at one op start in bucket order after it.
  llvm::DenseMap<Operation *, Operation *> lastInsertedAfter;
  for (const Bucket &bucket : buckets) {
    Operation *finish = nullptr;
    for (StringRef member : bucket.members)
      if (Operation *op = lastAccumulate.lookup(member))
        if (!finish || finish->isBeforeInBlock(op))
          finish = op;
    OpBuilder b(step.getContext());
    Location loc = step.getLoc();
    if (!finish) {
      b.setInsertionPoint(block->getTerminator());
    } else {
      Operation *&after = lastInsertedAfter[finish];
      b.setInsertionPointAfter(after ? after : finish);
      loc = finish->getLoc();
    }
    auto start = GradAllReduceStartOp::create(b, loc, bucket.target.getValue(),
                                              uint64_t(bucket.offset),
                                              uint64_t(bucket.size));
    if (finish)
      lastInsertedAfter[finish] = start;
  }
}

void DistributePass::runOnOperation() {
  ModuleOp module = getOperation();
  auto plan = module->getAttrOfType<PlanAttr>(kPlanAttrName);
  int64_t n = ranks ? int64_t(ranks) : (plan ? plan.getDataParallel() : 1);
  int64_t stageRanks =
      pipelineRanks ? int64_t(pipelineRanks) : (plan ? plan.getPipelineRanks() : 1);
  if (n < 1 || stageRanks < 1) {
    module.emitError("-emb-distribute: ranks and pipeline ranks must be at least 1, got ")
        << n << " and " << stageRanks;
    return signalPassFailure();
  }
  if (n > 1 && stageRanks > 1) {
    module.emitError("-emb-distribute: data_parallel ")
        << n << " with pipeline_ranks " << stageRanks
        << " is not supported yet (each stage would need its own data-parallel group)";
    return signalPassFailure();
  }
  if (n == 1 && stageRanks == 1)
    return markAllAnalysesPreserved(); // one rank: nothing to exchange

  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  auto update = module.lookupSymbol<func::FuncOp>("update");
  auto training = module->getAttrOfType<TrainingAttr>(kTrainingAttrName);
  if (!step || !update || !training) {
    module.emitError("-emb-distribute needs @train_step, @update and emb.training: run "
                     "-emb-autodiff first");
    return signalPassFailure();
  }
  bool distributed = module->hasAttr(distribute::kDataParallelAttrName) ||
                     module.walk([](Operation *op) {
                            auto sched = dyn_cast<ScheduleOp>(op);
                            return isa<GradAllReduceStartOp, GradAllReduceWaitOp,
                                       GatherRowsOp>(op) || (sched && sched.getRanks())
                                       ? WalkResult::interrupt()
                                       : WalkResult::advance();
                          }).wasInterrupted();
  if (distributed) {
    module.emitError("the module is already distributed (it has ")
        << distribute::kDataParallelAttrName << " or collectives)";
    return signalPassFailure();
  }

  // Tables with a sharding are split across the ranks (DistributeShards.cpp);
  // the others are replicated. With the stages on ranks, a table read by
  // one rank's stages lives there alone (DistributeStages.cpp).
  llvm::DenseSet<StringRef> sharded;
  if (stageRanks > 1
          ? failed(distribute::placeStages(module, stageRanks, step, update, sharded))
          : failed(distribute::shardTables(module, n, step, update, sharded)))
    return signalPassFailure();

  SmallVector<Bucket> buckets = denseBuckets(module, update);
  // Overlap with the backward only when one run of the step is one
  // optimizer step; otherwise its gradients are partial until the last
  // accumulation (or micro-batch), and the sum is taken once, in @update.
  bool onceInStep = training.getGradAccumulation() == 1 &&
                    !step->hasAttr(pipeline::kMicroBatchesAttrName);
  if (onceInStep)
    startInStep(buckets, step);

  Block *body = &update.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(body);
  Location loc = update.getLoc();
  if (!onceInStep)
    for (const Bucket &bucket : buckets)
      GradAllReduceStartOp::create(b, loc, bucket.target.getValue(), uint64_t(bucket.offset),
                                   uint64_t(bucket.size));

  // The sparse gradients, gathered while the dense buckets travel: every
  // replicated table or batch that @update coalesces or steps, in @update's
  // order. A sharded table's rows already hold every rank's gradient.
  SymbolTableCollection symbols;
  llvm::SetVector<Attribute> sparse;
  for (Operation &op : *body) {
    FlatSymbolRefAttr target;
    if (auto coalesce = dyn_cast<CoalesceRowsOp>(op))
      target = coalesce.getTableAttr();
    else if (auto upd = dyn_cast<UpdateOp>(op))
      target = upd.getTargetAttr();
    else
      continue;
    Operation *symbol = symbols.lookupNearestSymbolFrom(module, target);
    if (isa_and_nonnull<TableOp, TableBatchOp>(symbol) && !sharded.contains(target.getValue()))
      sparse.insert(target);
  }
  for (Attribute target : sparse)
    GatherRowsOp::create(b, loc, cast<FlatSymbolRefAttr>(target));

  // One wait per gradient, before the first op that reads any of them.
  llvm::SetVector<Attribute> waited;
  for (const Bucket &bucket : buckets)
    if (waited.insert(bucket.target))
      GradAllReduceWaitOp::create(b, loc, bucket.target);

  // Pipeline ranks are marked by the schedule's `ranks`; their batch is not
  // split, so the plan's grad_scale keeps no 1/N.
  if (n > 1)
    module->setAttr(distribute::kDataParallelAttrName,
                    IntegerAttr::get(IntegerType::get(&getContext(), 64), n));
  numAllReduces += buckets.size();
  numGathers += sparse.size();
  (stageRanks > 1 ? numOwnedTables : numShardedTables) += sharded.size();
}

} // namespace
