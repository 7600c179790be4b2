//===- DistributeStages.cpp - pipeline stages on ranks (-emb-distribute) ---===//
//
// With pipeline_ranks R > 1 the stages of the emb.schedule run on R ranks:
// stage s on rank floor(s * R / p), so each rank takes a contiguous run of
// stages and the schedule's send/recv between ranks are messages. Every
// rank sees the whole batch (its stages need it) and keeps every dense
// parameter, whose gradient the caller all-reduces: a rank's gradient of a
// parameter its stages never read is zero, so the sum is exact.
//
// Tables are the memory worth splitting. One whose every use in @train_step
// is on one rank's stages is stored there only: emb.shard_rows with that
// single owner and sharding table_wise (the layout -emb-distribute gives a
// table_wise table of data-parallel ranks), so initialisation,
// updates and checkpoints already keep it whole on its owner and absent
// elsewhere; its lookups need no exchange, they run on the owner. Any other
// table is replicated, and the caller gathers its sparse gradient.
//
//===----------------------------------------------------------------------===//

#include "Distribute.h"
#include "PipelineSchedule.h"

#include "embc/dialect/EmbDialect.h"

#include "mlir/IR/SymbolTable.h"

#include <set>

using namespace mlir;
using namespace embc;
using namespace embc::emb;

LogicalResult distribute::placeStages(ModuleOp module, int64_t ranks, func::FuncOp step,
                                      func::FuncOp update,
                                      llvm::DenseSet<StringRef> &owned) {
  auto schedules = llvm::to_vector(module.getOps<ScheduleOp>());
  if (schedules.empty())
    return module.emitError("-emb-distribute: pipeline_ranks ")
           << ranks << " needs the stages of an emb.schedule: run -emb-pipeline "
           << "with pipeline_stages >= " << ranks << " first";
  ScheduleOp sched = schedules.front();
  int64_t p = int64_t(sched.getStages());
  if (p < ranks)
    return sched.emitOpError("has ")
           << p << " stage(s), fewer than the " << ranks
           << " pipeline ranks: each rank runs at least one stage";
  SmallVector<int64_t> stageRank;
  for (int64_t s = 0; s < p; ++s)
    stageRank.push_back(s * ranks / p);
  sched.setRanksAttr(DenseI64ArrayAttr::get(module.getContext(), stageRank));

  // Replicated when every rank must see every row's gradient: clipping
  // takes the norm of all of them, and fp16 loss scaling skips the update
  // on every rank when any is not finite.
  bool needsAllRows = !update.getOps<ClipGradNormOp>().empty() ||
                      !update.getOps<UnscaleGradsOp>().empty();
  // A batched table shares its batch's buffers, which one owner cannot have
  // alone (-emb-pack-params batches none when the plan has pipeline_ranks).
  llvm::DenseSet<StringRef> batched;
  for (auto batch : module.getOps<TableBatchOp>())
    for (Attribute member : batch.getMembers())
      batched.insert(cast<FlatSymbolRefAttr>(member).getValue());
  for (auto table : module.getOps<TableOp>()) {
    if (table.getSharding() != Sharding::none)
      return table.emitError("table '")
             << table.getSymName() << "' has sharding '"
             << stringifySharding(table.getSharding())
             << "', which splits a table across data-parallel ranks; with "
             << "pipeline_ranks each table lives on the rank whose stages read it "
             << "(remove 'sharding')";
    std::set<int64_t> users;
    if (auto uses = SymbolTable::getSymbolUses(table.getSymNameAttr(), &step.getBody()))
      for (const SymbolTable::SymbolUse &use : *uses) {
        Operation *top = step.getBody().front().findAncestorOpInBlock(*use.getUser());
        int64_t stage = top ? pipeline::stageOf(top) : 0;
        users.insert(stageRank[size_t(std::clamp<int64_t>(stage, 0, p - 1))]);
      }
    // A host or disk table stays whole on every rank: its tier is a
    // rank's own memory or file, not one owner's.
    if (users.size() != 1 || needsAllRows || table.getStorage() != StorageType::f32 ||
        table.getPlacement() != Placement::device || batched.contains(table.getSymName()))
      continue;
    table.setSharding(Sharding::table_wise); // whole, on one rank
    table->setAttr(kShardRowsAttrName, singleOwnerRows(module.getContext(),
                                                       int64_t(table.getRows()), ranks,
                                                       *users.begin()));
    owned.insert(table.getSymName());
  }
  return success();
}
