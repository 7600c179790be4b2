//===- LookupOps.cpp - emb.lookup, emb.gather and emb.hash ----------------===//

#include "embc/dialect/EmbDialect.h"
#include "embc/dialect/PlanEmitter.h"

using namespace mlir;
using namespace embc::emb;
namespace rt = embc::runtime;

/// Hashed ids must land inside the table they index.
static LogicalResult verifyHashFitsTable(Operation *op, Value ids,
                                         TableOp table) {
  if (auto hash = ids.getDefiningOp<HashOp>())
    if (hash.getBuckets() > table.getRows())
      return op->emitOpError("ids are hashed into ")
             << hash.getBuckets() << " buckets but table @"
             << table.getSymName() << " has only " << table.getRows()
             << " rows";
  return success();
}

FailureOr<TableOp>
embc::emb::lookupTable(Operation *op, FlatSymbolRefAttr table,
                       SymbolTableCollection &symbolTable) {
  auto tableOp = symbolTable.lookupNearestSymbolFrom<TableOp>(op, table);
  if (!tableOp)
    return op->emitOpError("'")
           << table.getValue() << "' does not name an emb.table in this module";
  return tableOp;
}

//===----------------------------------------------------------------------===//
// LookupOp
//===----------------------------------------------------------------------===//

LogicalResult LookupOp::verify() {
  auto ids = cast<RankedTensorType>(getIds().getType());
  auto offsets = cast<RankedTensorType>(getOffsets().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (ids.getRank() != 1)
    return emitOpError("'ids' must be 1-D, got ") << ids;
  if (offsets.getRank() != 1 || offsets.isDynamicDim(0))
    return emitOpError("'offsets' must be 1-D with a static size, got ")
           << offsets;
  if (result.getRank() != 2 || !result.hasStaticShape())
    return emitOpError("result must be a static B x dim tensor, got ")
           << result;
  if (offsets.getDimSize(0) != result.getDimSize(0) + 1)
    return emitOpError("'offsets' must have batch + 1 = ")
           << result.getDimSize(0) + 1 << " entries, got "
           << offsets.getDimSize(0);
  if (Value weights = getWeights()) {
    auto weightsType = cast<RankedTensorType>(weights.getType());
    if (weightsType.getShape() != ids.getShape())
      return emitOpError("'weights' shape ")
             << weightsType << " must match 'ids' shape " << ids;
  }
  return success();
}

LogicalResult LookupOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<TableOp> table = lookupTable(*this, getTableAttr(), symbolTable);
  if (failed(table))
    return failure();
  int64_t dim = cast<RankedTensorType>(getResult().getType()).getDimSize(1);
  if (dim != int64_t(table->getDim()))
    return emitOpError("result width (")
           << dim << ") != dim of table @" << getTable() << " ("
           << table->getDim() << ")";
  return verifyHashFitsTable(*this, getIds(), *table);
}

int64_t LookupOp::getForwardFlops() {
  auto result = cast<RankedTensorType>(getResult().getType());
  return result.getNumElements() * (getWeights() ? 2 : 1);
}

int64_t LookupOp::getForwardBytes() {
  // At least one row read per bag, plus the pooled output.
  return 2 * cast<RankedTensorType>(getResult().getType()).getNumElements() *
         getElementBytes(getResult());
}

//===----------------------------------------------------------------------===//
// GatherOp
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::verify() {
  auto ids = cast<RankedTensorType>(getIds().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (!ids.hasStaticShape())
    return emitOpError("'ids' must have a static shape, got ") << ids;
  if (!result.hasStaticShape())
    return emitOpError("result must have a static shape, got ") << result;
  if (result.getRank() != ids.getRank() + 1 ||
      result.getShape().drop_back() != ids.getShape())
    return emitOpError("result shape must be the ids shape followed by the "
                       "table dim, got ids ")
           << ids << " and result " << result;
  return success();
}

LogicalResult GatherOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<TableOp> table = lookupTable(*this, getTableAttr(), symbolTable);
  if (failed(table))
    return failure();
  int64_t dim = cast<RankedTensorType>(getResult().getType()).getShape().back();
  if (dim != int64_t(table->getDim()))
    return emitOpError("result width (")
           << dim << ") != dim of table @" << getTable() << " ("
           << table->getDim() << ")";
  return verifyHashFitsTable(*this, getIds(), *table);
}

int64_t GatherOp::getForwardFlops() { return 0; }

int64_t GatherOp::getForwardBytes() {
  return 2 * cast<RankedTensorType>(getResult().getType()).getNumElements() *
         getElementBytes(getResult());
}

//===----------------------------------------------------------------------===//
// HashOp
//===----------------------------------------------------------------------===//

LogicalResult HashOp::verify() {
  auto ids = cast<RankedTensorType>(getIds().getType());
  if (ids.getElementType().getIntOrFloatBitWidth() != 64)
    return emitOpError("ids must be 64-bit integers, got ") << ids;
  return success();
}

//===----------------------------------------------------------------------===//
// Plan lowering
//===----------------------------------------------------------------------===//

LogicalResult LookupOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::Lookup);
  k.attrs["table"] = e.table(getTable());
  k.attrs["pooling"] = stringifyPooling(getPooling()).str();
  if (failed(e.dequantize(*this, getTable(), k.attrs)))
    return failure();
  return e.emitOnOperands(*this, std::move(k));
}

LogicalResult GatherOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::Gather);
  k.attrs["table"] = e.table(getTable());
  if (failed(e.dequantize(*this, getTable(), k.attrs)))
    return failure();
  return e.emitOnOperands(*this, std::move(k));
}

LogicalResult HashOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::Hash);
  k.attrs["buckets"] = int64_t(getBuckets());
  k.attrs["seed"] = int64_t(getSeed());
  return e.emitOnOperands(*this, std::move(k));
}
