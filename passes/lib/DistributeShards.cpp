//===- DistributeShards.cpp - sharded tables of -emb-distribute -----------===//
//
// A table with `sharding` table_wise or row_wise is split across the N
// ranks instead of replicated: rank r stores rows [b_r, b_{r+1}) of it
// (emb.shard_rows). table_wise gives all rows to one owner, chosen so that
// the ranks' table bytes are balanced (largest table first, to the rank
// with the fewest bytes so far); row_wise gives each rank ceil(rows / N).
//
// Each lookup of such a table becomes three ops:
//
//   %i, %o = emb.shard_ids @t[%ids, %offsets]    ids to the ranks storing them
//   %p = emb.lookup @t[%i, %o] sum               this rank's part of all N x B bags
//   %e = emb.shard_pool @t %p                    parts back to their ranks, summed
//
// and its backward uses the same local ids, with the pooled gradient
// gathered by emb.shard_pool_grad. A table_wise bag is complete on its
// owner, so every pooling works and the numbers are the unsharded ones; a
// row_wise bag is split, so its parts are plain (weighted) sums: mean
// divides each id's weight by the whole bag's size (per_bag_mean) and max
// is refused. Each rank then coalesces and updates its own rows only: no
// gather of the table's gradient.
//
//===----------------------------------------------------------------------===//

#include "Distribute.h"
#include "PipelineSchedule.h"

#include "embc/dialect/EmbDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <map>

using namespace mlir;
using namespace embc;
using namespace embc::emb;

namespace {

/// Row boundaries of each sharded table's shards.
DenseI64ArrayAttr shardLayout(TableOp table, int64_t n, std::vector<int64_t> &ownedBytes) {
  int64_t rows = int64_t(table.getRows());
  if (table.getSharding() != Sharding::row_wise) {
    size_t owner = size_t(std::min_element(ownedBytes.begin(), ownedBytes.end()) -
                          ownedBytes.begin());
    ownedBytes[owner] += table.getStorageBytes();
    return distribute::singleOwnerRows(table.getContext(), rows, n, int64_t(owner));
  }
  SmallVector<int64_t> bounds(size_t(n + 1), 0);
  int64_t each = (rows + n - 1) / n;
  for (int64_t r = 0; r <= n; ++r)
    bounds[size_t(r)] = std::min(r * each, rows);
  return DenseI64ArrayAttr::get(table.getContext(), bounds);
}

/// What a sharded table refuses, reported on the table or the op.
LogicalResult checkShardable(TableOp table, ModuleOp module, func::FuncOp update) {
  StringRef name = table.getSymName();
  if (table.getSharding() == Sharding::column_wise)
    return table.emitError("sharding 'column_wise' of table '")
           << name << "' is not supported; use table_wise or row_wise";
  if (table.getStorage() != StorageType::f32)
    return table.emitError("table '")
           << name << "' is stored as " << stringifyStorageType(table.getStorage())
           << ": sharded tables are trained in f32 (remove 'storage' or 'sharding')";
  if (!update.getOps<ClipGradNormOp>().empty())
    return table.emitError("table '")
           << name << "' is sharded, and gradient clipping needs the norm of every "
           << "rank's rows, which is not exchanged yet (remove 'grad_clip_norm' or "
           << "'sharding')";
  for (auto batch : module.getOps<TableBatchOp>())
    for (Attribute member : batch.getMembers())
      if (cast<FlatSymbolRefAttr>(member).getValue() == name)
        return table.emitError("table '")
               << name << "' is sharded but batched into @" << batch.getSymName()
               << " (-emb-pack-params keeps sharded tables alone)";
  return success();
}

/// The local ids of one (ids, offsets, weights, pooling) tuple.
struct Exchange {
  ShardIdsOp ids;
  Pooling local;
};

} // namespace

DenseI64ArrayAttr distribute::singleOwnerRows(MLIRContext *ctx, int64_t rows, int64_t ranks,
                                              int64_t owner) {
  SmallVector<int64_t> bounds(size_t(ranks + 1), 0);
  for (int64_t r = owner + 1; r <= ranks; ++r)
    bounds[size_t(r)] = rows;
  return DenseI64ArrayAttr::get(ctx, bounds);
}

LogicalResult distribute::shardTables(ModuleOp module, int64_t n, func::FuncOp step,
                                      func::FuncOp update,
                                      llvm::DenseSet<StringRef> &sharded) {
  // Largest first, so the greedy owners balance the bytes.
  SmallVector<TableOp> tables;
  for (auto table : module.getOps<TableOp>())
    if (table.getSharding() != Sharding::none)
      tables.push_back(table);
  llvm::stable_sort(tables, [](TableOp a, TableOp b) {
    return a.getStorageBytes() > b.getStorageBytes();
  });
  std::vector<int64_t> ownedBytes(size_t(n), 0);
  for (TableOp table : tables) {
    if (failed(checkShardable(table, module, update)))
      return failure();
    table->setAttr(kShardRowsAttrName, shardLayout(table, n, ownedBytes));
    sharded.insert(table.getSymName());
  }
  if (sharded.empty())
    return success();

  // Unpooled gathers of a sharded table are not split yet.
  WalkResult refused = step.walk([&](GatherOp gather) {
    if (!sharded.contains(gather.getTable()))
      return WalkResult::advance();
    gather.emitOpError("reads sharded table @")
        << gather.getTable() << ": unpooled lookups of sharded tables are not supported "
        << "(remove 'sharding')";
    return WalkResult::interrupt();
  });
  if (refused.wasInterrupted())
    return failure();

  SymbolTableCollection symbols;
  auto rowWise = [&](StringRef table) {
    return module.lookupSymbol<TableOp>(table).getSharding() == Sharding::row_wise;
  };
  // One exchange per distinct bag tuple: a lookup rematerialised in the
  // backward (-emb-remat) reuses the forward's.
  using Key = std::tuple<const void *, const void *, const void *, const void *, uint32_t>;
  std::map<Key, Exchange> exchanges;
  auto key = [](FlatSymbolRefAttr t, Value ids, Value offsets, Value weights, Pooling p) {
    return Key(t.getAsOpaquePointer(), ids.getAsOpaquePointer(),
               offsets.getAsOpaquePointer(), weights.getAsOpaquePointer(), uint32_t(p));
  };
  auto copyStage = [](Operation *from, Operation *to) {
    if (Attribute stage = from->getAttr(pipeline::kStageAttrName))
      to->setAttr(pipeline::kStageAttrName, stage);
  };

  SmallVector<LookupOp> lookups;
  step.walk([&](LookupOp op) {
    if (sharded.contains(op.getTable()))
      lookups.push_back(op);
  });
  for (LookupOp lookup : lookups) {
    Pooling pooling = lookup.getPooling();
    bool split = rowWise(lookup.getTable());
    if (split && pooling == Pooling::max)
      return lookup.emitOpError("max-pools row_wise table @")
             << lookup.getTable() << ": a bag split across ranks has no partial max to "
             << "combine; shard it table_wise";
    auto pooled = cast<RankedTensorType>(lookup.getType());
    int64_t bags = pooled.getDimSize(0), dim = pooled.getDimSize(1);
    OpBuilder b(lookup);
    Location loc = lookup.getLoc();
    auto k = key(lookup.getTableAttr(), lookup.getIds(), lookup.getOffsets(),
                 lookup.getWeights(), pooling);
    Exchange &ex = exchanges[k];
    if (!ex.ids) {
      bool perBagMean = split && pooling == Pooling::mean;
      auto idType = RankedTensorType::get({ShapedType::kDynamic}, b.getI64Type());
      SmallVector<Type> types = {idType,
                                 RankedTensorType::get({n * bags + 1}, b.getI64Type())};
      if (lookup.getWeights() || perBagMean)
        types.push_back(RankedTensorType::get({ShapedType::kDynamic}, pooled.getElementType()));
      ex.ids = ShardIdsOp::create(b, loc, TypeRange(types), lookup.getTableAttr(),
                                  lookup.getIds(), lookup.getOffsets(), lookup.getWeights(),
                                  perBagMean ? b.getUnitAttr() : nullptr);
      copyStage(lookup, ex.ids);
      ex.local = split ? Pooling::sum : pooling;
    }
    auto partialType = RankedTensorType::get({n * bags, dim}, pooled.getElementType());
    auto local = LookupOp::create(b, loc, partialType, lookup.getTableAttr(),
                                  ex.ids.getLocalIds(), ex.ids.getLocalOffsets(),
                                  ex.ids.getLocalWeights(),
                                  PoolingAttr::get(b.getContext(), ex.local));
    auto back = ShardPoolOp::create(b, loc, pooled, lookup.getTableAttr(), local);
    copyStage(lookup, local);
    copyStage(lookup, back);
    lookup.replaceAllUsesWith(back.getResult());
    lookup.erase();
  }

  // The backward: gradients of the lookups, and the rows they accumulate.
  SmallVector<LookupGradOp> grads;
  step.walk([&](LookupGradOp op) {
    if (sharded.contains(op.getTable()))
      grads.push_back(op);
  });
  for (LookupGradOp grad : grads) {
    auto it = exchanges.find(key(grad.getTableAttr(), grad.getIds(), grad.getOffsets(),
                                 grad.getWeights(), grad.getPooling()));
    if (it == exchanges.end())
      return grad.emitOpError("has no forward lookup of sharded table @")
             << grad.getTable() << " with the same ids, offsets and pooling";
    Exchange &ex = it->second;
    auto dy = cast<RankedTensorType>(grad.getGrad().getType());
    OpBuilder b(grad);
    auto all = ShardPoolGradOp::create(
        b, grad.getLoc(),
        RankedTensorType::get({n * dy.getDimSize(0), dy.getDimSize(1)}, dy.getElementType()),
        grad.getTableAttr(), grad.getGrad());
    // One row per local id: as many as arrive, whatever the batch's ids.
    auto rowsType = RankedTensorType::get({ShapedType::kDynamic, dy.getDimSize(1)},
                                          dy.getElementType());
    auto local = LookupGradOp::create(b, grad.getLoc(), rowsType, grad.getTableAttr(),
                                      ex.ids.getLocalIds(), ex.ids.getLocalOffsets(),
                                      ex.ids.getLocalWeights(),
                                      PoolingAttr::get(b.getContext(), ex.local), all);
    copyStage(grad, all);
    copyStage(grad, local);
    grad.replaceAllUsesWith(local.getResult());
    grad.erase();
  }
  WalkResult unmatched = step.walk([&](AccumulateRowsOp acc) {
    if (!sharded.contains(acc.getTable()))
      return WalkResult::advance();
    for (auto &[k, ex] : exchanges)
      if (std::get<0>(k) == acc.getTableAttr().getAsOpaquePointer() &&
          std::get<1>(k) == acc.getIds().getAsOpaquePointer()) {
        acc.getIdsMutable().assign(ex.ids.getLocalIds());
        return WalkResult::advance();
      }
    acc.emitOpError("appends rows of sharded table @")
        << acc.getTable() << " for ids no lookup exchanged";
    return WalkResult::interrupt();
  });
  return failure(unmatched.wasInterrupted());
}
