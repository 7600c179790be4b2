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

//===----------------------------------------------------------------------===//
// TableScoresOp, ReadTableOp, RowIdsOp: a table read whole (tied embeddings)
//===----------------------------------------------------------------------===//

LogicalResult TableScoresOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  if (in.getRank() < 2 || !in.hasStaticShape())
    return emitOpError("input must be a static [rows] x dim tensor, got ") << in;
  if (out.getRank() != in.getRank() || !out.hasStaticShape() ||
      out.getShape().drop_back() != in.getShape().drop_back() ||
      out.getElementType() != in.getElementType())
    return emitOpError("result must have the input's rows and element type, got ")
           << out << " for " << in;
  return success();
}

LogicalResult TableScoresOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<TableOp> table = lookupTable(*this, getTableAttr(), symbolTable);
  if (failed(table))
    return failure();
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  if (in.getShape().back() != int64_t(table->getDim()))
    return emitOpError("input width (") << in.getShape().back() << ") != dim of table @"
                                        << getTable() << " (" << table->getDim() << ")";
  if (out.getShape().back() != int64_t(table->getRows()))
    return emitOpError("result width (") << out.getShape().back() << ") != rows of table @"
                                         << getTable() << " (" << table->getRows() << ")";
  return success();
}

int64_t TableScoresOp::getForwardFlops() {
  return 2 * cast<RankedTensorType>(getResult().getType()).getNumElements() *
         cast<RankedTensorType>(getInput().getType()).getShape().back();
}

int64_t TableScoresOp::getForwardBytes() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  return getElementBytes(getResult()) *
         (in.getNumElements() + out.getNumElements() +
          out.getShape().back() * in.getShape().back());
}

LogicalResult TableScoresOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                           ArrayRef<bool> need,
                                           SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign((*this)->getNumOperands(), Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  auto in = cast<RankedTensorType>(getInput().getType());
  auto dyType = cast<RankedTensorType>(dy.getType());
  const int64_t rows = dyType.getShape().back(), dim = in.getShape().back();
  auto tableType = RankedTensorType::get({rows, dim}, in.getElementType());
  Value table = ReadTableOp::create(b, getLoc(), tableType, getTableAttr());
  if (need[0]) // dx = dy table
    operandGrads[0] = DenseOp::create(b, getLoc(), in, dy, table, Value());
  // d table = dy^T input, every row of it.
  Value rowsGrad = DenseGradWeightOp::create(b, getLoc(), tableType, dy, getInput());
  Value ids = RowIdsOp::create(b, getLoc(), RankedTensorType::get({rows}, b.getI64Type()),
                               getTableAttr());
  AccumulateRowsOp::create(b, getLoc(), getTableAttr(), ids, rowsGrad);
  return success();
}

/// The f32 table `name`'s plan entry; refuses what cannot be read whole.
static FailureOr<const rt::Table *> wholeTable(Operation *op, PlanEmitter &e, StringRef name) {
  const rt::Table &t = e.plan().tables[size_t(e.table(name))];
  if (t.storage != rt::Storage::F32)
    return op->emitOpError("reads table @")
           << name << " whole, which is quantised: a tied table is f32";
  if (!t.shardRows.empty())
    return op->emitOpError("reads table @")
           << name << " whole, which is sharded over ranks: a tied table is replicated";
  return &t;
}

// The scores are the dense layer's input gradient with the table as its
// weight: input (rows x dim) times table^T (dim x table rows).
LogicalResult TableScoresOp::lowerToPlan(PlanEmitter &e) {
  FailureOr<const rt::Table *> t = wholeTable(*this, e, getTable());
  if (failed(t))
    return failure();
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::DenseGradInput);
  k.inputs = {e.buffer(getInput()), (*t)->buffer};
  FailureOr<int32_t> out = e.activation(*this, getResult(), "scores");
  if (failed(out))
    return failure();
  k.outputs = {*out};
  e.emit(std::move(k));
  return success();
}

LogicalResult ReadTableOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<TableOp> table = lookupTable(*this, getTableAttr(), symbolTable);
  if (failed(table))
    return failure();
  auto type = cast<RankedTensorType>(getResult().getType());
  if (type.getRank() != 2 || type.getDimSize(0) != int64_t(table->getRows()) ||
      type.getDimSize(1) != int64_t(table->getDim()))
    return emitOpError("result must be ")
           << table->getRows() << " x " << table->getDim() << " (table @" << getTable()
           << "), got " << type;
  return success();
}

LogicalResult ReadTableOp::lowerToPlan(PlanEmitter &e) {
  FailureOr<const rt::Table *> t = wholeTable(*this, e, getTable());
  if (failed(t))
    return failure();
  e.bind(getResult(), (*t)->buffer);
  return success();
}

LogicalResult RowIdsOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<TableOp> table = lookupTable(*this, getTableAttr(), symbolTable);
  if (failed(table))
    return failure();
  auto type = cast<RankedTensorType>(getResult().getType());
  if (type.getRank() != 1 || type.getDimSize(0) != int64_t(table->getRows()) ||
      type.getElementType().getIntOrFloatBitWidth() != 64)
    return emitOpError("result must be ")
           << table->getRows() << " 64-bit ids (the rows of table @" << getTable() << "), got "
           << type;
  return success();
}

LogicalResult RowIdsOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::RowIds);
  k.attrs["table"] = e.table(getTable());
  return e.emitOnOperands(*this, std::move(k));
}
