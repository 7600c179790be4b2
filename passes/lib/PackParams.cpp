//===- PackParams.cpp - -emb-pack-params -----------------------------------===//
//
// Declares where parameters live, not what they compute: dense parameters of
// one element type go into one emb.param_pack (members at 64-byte aligned
// offsets, in the order the backward finishes their gradients), tables of
// one dim, storage, optimizer and placement into one emb.table_batch. In @update the
// per-parameter and per-table ops collapse into one op per pack or batch.
// -emb-to-plan turns the members' buffers into views of the packed ones.
//
//===----------------------------------------------------------------------===//

#include "TrainingFuncs.h"

#include "embc/passes/Passes.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "emb-pack-params"

namespace embc {
#define GEN_PASS_DEF_EMBPACKPARAMSPASS
#include "embc/passes/Passes.h.inc"
} // namespace embc

using namespace mlir;
using namespace embc;
using namespace embc::emb;

namespace {

/// A short spelling of an element type for symbol names (f32, bf16, ...).
std::string typeName(Type type) {
  std::string name;
  llvm::raw_string_ostream os(name);
  type.print(os);
  return name;
}

/// A symbol name not yet used in the module: `base`, else `base_1`, ...
std::string freshName(ModuleOp module, StringRef base) {
  std::string name = base.str();
  for (int i = 1; SymbolTable::lookupSymbolIn(module, name); ++i)
    name = (base + "_" + Twine(i)).str();
  return name;
}

struct PackParamsPass : embc::impl::EmbPackParamsPassBase<PackParamsPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult packParams(ModuleOp module, func::FuncOp step,
                           func::FuncOp update);
  LogicalResult formTableBatches(ModuleOp module, func::FuncOp update);
};

/// Replaces the ops `targets` (one per member, each naming a member by
/// symbol) with one op naming the group, at the first one's position.
/// All must agree on the clipping scale operand; returns failure otherwise.
template <class OpTy>
LogicalResult collapseOps(SmallVectorImpl<OpTy> &targets, StringRef group) {
  if (targets.empty())
    return success();
  OpTy first = targets.front();
  if constexpr (std::is_same_v<OpTy, UpdateOp>) {
    for (UpdateOp op : targets)
      if (op.getScale() != first.getScale())
        return op.emitOpError("is scaled differently from the update of @")
               << first.getTarget()
               << ": the members of a pack or batch take one optimizer step together";
  }
  OpBuilder b(first);
  auto symbol = FlatSymbolRefAttr::get(b.getContext(), group);
  if constexpr (std::is_same_v<OpTy, UpdateOp>)
    UpdateOp::create(b, first.getLoc(), symbol, first.getScale());
  else
    OpTy::create(b, first.getLoc(), symbol);
  for (OpTy op : targets)
    op.erase();
  return success();
}

LogicalResult PackParamsPass::packParams(ModuleOp module, func::FuncOp step,
                                         func::FuncOp update) {
  // Only parameters that @update steps are packed: one without an update is
  // not trained, and the pack's update (weight decay) would move it.
  llvm::DenseSet<Attribute> updated;
  update.walk([&](UpdateOp op) { updated.insert(op.getTargetAttr()); });
  auto trained = [&](ParamOp param) {
    return updated.contains(FlatSymbolRefAttr::get(param.getSymNameAttr()));
  };
  // Backward order (the order @train_step finishes the gradients), so that
  // the first all-reduce bucket is complete first.
  SmallVector<ParamOp> order;
  llvm::DenseSet<Operation *> placed;
  step.walk([&](AccumulateGradOp acc) {
    auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(
        module, acc.getParamAttr());
    if (param && trained(param) && placed.insert(param).second)
      order.push_back(param);
  });
  for (auto param : module.getOps<ParamOp>())
    if (trained(param) && placed.insert(param).second)
      order.push_back(param); // updated without a gradient: last
  llvm::MapVector<Type, SmallVector<ParamOp>> byType;
  for (ParamOp param : order)
    byType[cast<RankedTensorType>(param.getType()).getElementType()].push_back(param);

  Operation *insertAfter = nullptr;
  for (auto param : module.getOps<ParamOp>())
    insertAfter = param;
  int64_t bucketBytes = std::max<int64_t>(bucketKiB, 1) * 1024;

  for (auto &[element, params] : byType) {
    int64_t elementBytes = std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
    int64_t align = 64 / elementBytes;
    SmallVector<Attribute> members;
    SmallVector<int64_t> offsets, buckets = {0};
    int64_t size = 0;
    for (ParamOp param : params) {
      int64_t n = cast<RankedTensorType>(param.getType()).getNumElements();
      // Cut a bucket before a member that would overflow it.
      if (size > buckets.back() && (size + n - buckets.back()) * elementBytes > bucketBytes)
        buckets.push_back(size);
      members.push_back(FlatSymbolRefAttr::get(param.getSymNameAttr()));
      offsets.push_back(size);
      size += (n + align - 1) / align * align;
    }
    buckets.push_back(size);
    std::string name = freshName(module, "dense_" + typeName(element));
    OpBuilder b(module.getContext());
    b.setInsertionPointAfter(insertAfter);
    auto pack = ParamPackOp::create(b, params.front().getLoc(), name, element,
                                    uint64_t(size),
                                    b.getArrayAttr(members), offsets, buckets);
    insertAfter = pack;

    SmallVector<UpdateOp> updates;
    update.walk([&](UpdateOp op) {
      if (llvm::is_contained(members, op.getTargetAttr()))
        updates.push_back(op);
    });
    if (failed(collapseOps(updates, name)))
      return failure();
    numPackedParams += params.size();
    LLVM_DEBUG(llvm::dbgs() << "emb-pack-params: " << params.size() << " parameters packed\n");
  }
  return success();
}

LogicalResult PackParamsPass::formTableBatches(ModuleOp module,
                                          func::FuncOp update) {
  // Same dim, storage, optimizer and placement: one buffer (in one tier),
  // one update. A table to be
  // sharded over several ranks (-emb-distribute) stays alone: its rows are
  // split by its own layout, which one buffer of several tables cannot
  // follow. (With one rank its sharding means nothing.) With the pipeline
  // stages on several ranks no table is batched: each may end up stored only
  // on the rank whose stages read it, which the stage split (after this
  // pass) decides.
  auto plan = module->getAttrOfType<PlanAttr>(kPlanAttrName);
  if (plan && plan.getPipelineRanks() > 1)
    return success();
  bool distributed = plan && plan.getDataParallel() > 1;
  llvm::MapVector<std::tuple<uint64_t, StorageType, Attribute, Placement>,
                  SmallVector<TableOp>>
      groups;
  for (auto table : module.getOps<TableOp>())
    if (!distributed || table.getSharding() == Sharding::none)
      groups[{table.getDim(), table.getStorage(), table.getOptimizer(), table.getPlacement()}]
          .push_back(table);

  Operation *insertAfter = nullptr;
  for (Operation &op : module.getBody()->getOperations())
    if (isa<TableOp, ParamOp, ParamPackOp>(op))
      insertAfter = &op;

  for (auto &[key, tables] : groups) {
    if (tables.size() < 2)
      continue; // a batch of one changes nothing
    SmallVector<Attribute> members;
    for (TableOp table : tables)
      members.push_back(FlatSymbolRefAttr::get(table.getSymNameAttr()));
    std::string name =
        freshName(module, "tables_d" + std::to_string(std::get<0>(key)));
    OpBuilder b(module.getContext());
    b.setInsertionPointAfter(insertAfter);
    auto batch = TableBatchOp::create(b, tables.front().getLoc(), name,
                                      b.getArrayAttr(members));
    insertAfter = batch;

    SmallVector<CoalesceRowsOp> coalesces;
    SmallVector<UpdateOp> updates;
    update.walk([&](Operation *op) {
      if (auto c = dyn_cast<CoalesceRowsOp>(op);
          c && llvm::is_contained(members, c.getTableAttr()))
        coalesces.push_back(c);
      if (auto u = dyn_cast<UpdateOp>(op);
          u && llvm::is_contained(members, u.getTargetAttr()))
        updates.push_back(u);
    });
    if (failed(collapseOps(coalesces, name)) ||
        failed(collapseOps(updates, name)))
      return failure();
    numBatchedTables += tables.size();
  }
  return success();
}

void PackParamsPass::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<TrainingFuncs> funcs = lookupTrainingFuncs(module, "-emb-pack-params");
  if (failed(funcs))
    return signalPassFailure();
  if (!module.getOps<ParamPackOp>().empty() ||
      !module.getOps<TableBatchOp>().empty()) {
    module.emitError("the module is already packed (it has an "
                     "emb.param_pack or emb.table_batch)");
    return signalPassFailure();
  }
  if (failed(packParams(module, funcs->step, funcs->update)) ||
      (batchTables && failed(formTableBatches(module, funcs->update))))
    return signalPassFailure();
}

} // namespace
