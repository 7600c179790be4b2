//===- CommOps.cpp - verifiers of the data-parallel collectives ------------===//
//
// The collectives -emb-distribute inserts (EmbCommOps.td) name what they
// exchange by symbol; these checks make sure the symbol is something with a
// gradient of that kind and that a slice lies inside it, so the plan lowering
// can trust the ops.
//
//===----------------------------------------------------------------------===//

#include "embc/dialect/EmbDialect.h"

using namespace mlir;
using namespace embc::emb;

/// Elements of the gradient accumulator of `target` (an emb.param_pack or an
/// emb.param), or failure with an error on `op`.
static FailureOr<int64_t> denseGradientSize(Operation *op, FlatSymbolRefAttr target,
                                            SymbolTableCollection &symbols) {
  Operation *symbol = symbols.lookupNearestSymbolFrom(op, target);
  if (auto pack = dyn_cast_or_null<ParamPackOp>(symbol))
    return int64_t(pack.getSize());
  if (auto param = dyn_cast_or_null<ParamOp>(symbol))
    return cast<RankedTensorType>(param.getType()).getNumElements();
  return op->emitOpError("'") << target.getValue()
                              << "' does not name an emb.param_pack or emb.param";
}

LogicalResult
GradAllReduceStartOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> size = denseGradientSize(*this, getTargetAttr(), symbolTable);
  if (failed(size))
    return failure();
  if (int64_t(getOffset()) + int64_t(getSize()) > *size)
    return emitOpError("slice [")
           << getOffset() << ", " << getOffset() + getSize() << ") lies outside the "
           << *size << "-element gradient of @" << getTarget();
  return success();
}

LogicalResult
GradAllReduceWaitOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return denseGradientSize(*this, getTargetAttr(), symbolTable);
}

LogicalResult GatherRowsOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (symbolTable.lookupNearestSymbolFrom<TableBatchOp>(*this, getTargetAttr()))
    return success();
  return lookupTable(*this, getTargetAttr(), symbolTable);
}

//===----------------------------------------------------------------------===//
// Sharded tables
//===----------------------------------------------------------------------===//

/// The sharded table `table` names (one with emb.shard_rows), or an error.
static FailureOr<TableOp> shardedTable(Operation *op, FlatSymbolRefAttr table,
                                       SymbolTableCollection &symbols) {
  FailureOr<TableOp> t = lookupTable(op, table, symbols);
  if (failed(t))
    return failure();
  if (!(*t)->hasAttr(kShardRowsAttrName))
    return op->emitOpError("table @")
           << table.getValue() << " is not sharded (it has no " << kShardRowsAttrName
           << "; -emb-distribute sets it)";
  return t;
}

/// A pooled B x dim tensor (static) whose dim is the table's.
static LogicalResult verifyPooled(Operation *op, Type type, StringRef what) {
  auto t = cast<RankedTensorType>(type);
  if (t.getRank() != 2 || !t.hasStaticShape())
    return op->emitOpError(what) << " must be a static B x dim tensor, got " << t;
  return success();
}

/// `many` has a whole multiple of `few`'s rows and the same columns.
static LogicalResult verifyRanksTimes(Operation *op, RankedTensorType few,
                                      RankedTensorType many) {
  if (few.getDimSize(1) != many.getDimSize(1))
    return op->emitOpError("widths differ: ") << few << " and " << many;
  if (many.getDimSize(0) % few.getDimSize(0) != 0 || many.getDimSize(0) < few.getDimSize(0))
    return op->emitOpError("the rank-concatenated side ")
           << many << " must have a whole multiple of the rows of " << few;
  return success();
}

static LogicalResult verifyDimIsTable(Operation *op, RankedTensorType pooled, TableOp table) {
  if (pooled.getDimSize(1) != int64_t(table.getDim()))
    return op->emitOpError("width ") << pooled.getDimSize(1) << " != dim of table @"
                                     << table.getSymName() << " (" << table.getDim() << ")";
  return success();
}

LogicalResult ShardIdsOp::verify() {
  auto ids = cast<RankedTensorType>(getIds().getType());
  auto offsets = cast<RankedTensorType>(getOffsets().getType());
  auto localIds = cast<RankedTensorType>(getLocalIds().getType());
  auto localOffsets = cast<RankedTensorType>(getLocalOffsets().getType());
  if (ids.getRank() != 1 || localIds.getRank() != 1 || !localIds.isDynamicDim(0))
    return emitOpError("ids must be 1-D and the local ids dynamic (tensor<?xi64>), got ")
           << ids << " and " << localIds;
  if (offsets.getRank() != 1 || !offsets.hasStaticShape() || localOffsets.getRank() != 1 ||
      !localOffsets.hasStaticShape() || offsets.getDimSize(0) < 2)
    return emitOpError("offsets must be 1-D and static with at least one bag, got ")
           << offsets << " and " << localOffsets;
  int64_t bags = offsets.getDimSize(0) - 1, all = localOffsets.getDimSize(0) - 1;
  if (all % bags != 0 || all < bags)
    return emitOpError("the local offsets must hold N x ")
           << bags << " bags (+1), got " << localOffsets;
  bool weighted = getWeights() || getPerBagMean();
  if (weighted != bool(getLocalWeights()))
    return emitOpError(weighted ? "needs a local weights result (it has weights or "
                                  "per_bag_mean)"
                                : "has a local weights result but neither weights nor "
                                  "per_bag_mean");
  if (Value w = getWeights())
    if (cast<RankedTensorType>(w.getType()).getShape() != ids.getShape())
      return emitOpError("'weights' shape ") << w.getType() << " must match 'ids' " << ids;
  if (Value w = getLocalWeights())
    if (cast<RankedTensorType>(w.getType()).getShape() != localIds.getShape())
      return emitOpError("local weights ")
             << w.getType() << " must have the shape of the local ids " << localIds;
  return success();
}

LogicalResult ShardIdsOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return shardedTable(*this, getTableAttr(), symbols);
}

LogicalResult ShardPoolOp::verify() {
  if (failed(verifyPooled(*this, getPartial().getType(), "'partial'")) ||
      failed(verifyPooled(*this, getResult().getType(), "result")))
    return failure();
  return verifyRanksTimes(*this, cast<RankedTensorType>(getResult().getType()),
                          cast<RankedTensorType>(getPartial().getType()));
}

LogicalResult ShardPoolOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<TableOp> table = shardedTable(*this, getTableAttr(), symbols);
  if (failed(table))
    return failure();
  return verifyDimIsTable(*this, cast<RankedTensorType>(getResult().getType()), *table);
}

LogicalResult ShardPoolGradOp::verify() {
  if (failed(verifyPooled(*this, getGrad().getType(), "'grad'")) ||
      failed(verifyPooled(*this, getResult().getType(), "result")))
    return failure();
  return verifyRanksTimes(*this, cast<RankedTensorType>(getGrad().getType()),
                          cast<RankedTensorType>(getResult().getType()));
}

LogicalResult ShardPoolGradOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<TableOp> table = shardedTable(*this, getTableAttr(), symbols);
  if (failed(table))
    return failure();
  return verifyDimIsTable(*this, cast<RankedTensorType>(getGrad().getType()), *table);
}
