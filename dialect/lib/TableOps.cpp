//===- TableOps.cpp - emb.table, emb.param and emb.get --------------------===//

#include "embc/dialect/EmbDialect.h"
#include "embc/dialect/PlanEmitter.h"

using namespace mlir;
using namespace embc::emb;
namespace rt = embc::runtime;

int64_t TableOp::getStorageBytes() {
  // int4 packs two elements per byte (the verifier requires an even dim);
  // row-wise storages add an fp16 scale and bias per row.
  int64_t rowBytes = getDim() * getStorageElementBits(getStorage()) / 8 +
                     getStorageRowParamBytes(getStorage());
  return getRows() * rowBytes;
}

LogicalResult TableOp::verify() {
  // 2^40 elements (4 TiB at fp32) is beyond any single model we target; a
  // larger number is almost certainly a typo and would overflow byte counts.
  constexpr int64_t kMaxElements = int64_t(1) << 40;
  if (getDim() > (int64_t(1) << 16))
    return emitOpError("'dim' (") << getDim() << ") exceeds the limit 65536";
  if (getRows() > kMaxElements / getDim())
    return emitOpError("table of ")
           << getRows() << " x " << getDim()
           << " exceeds the limit of 2^40 elements";
  if (getStorage() == StorageType::int4_rowwise && getDim() % 2 != 0)
    return emitOpError("is stored as int4_rowwise, which packs two elements "
                       "per byte, but its dim ")
           << getDim() << " is odd; use an even dim or int8";
  InitKind kind = getInit().getKind();
  if (kind == InitKind::xavier_uniform || kind == InitKind::xavier_normal)
    return emitOpError("Xavier initialisation is for dense weights; use "
                       "uniform or normal for embedding tables");
  if (Attribute attr = (*this)->getAttr(kShardRowsAttrName)) {
    // Row boundaries of the ranks' shards: 0 first, rows last, ascending.
    auto bounds = dyn_cast<DenseI64ArrayAttr>(attr);
    if (!bounds || bounds.size() < 3)
      return emitOpError(kShardRowsAttrName)
             << " must be an array of N + 1 >= 3 row boundaries, got " << attr;
    ArrayRef<int64_t> b = bounds.asArrayRef();
    if (b.front() != 0 || b.back() != int64_t(getRows()) || !llvm::is_sorted(b))
      return emitOpError(kShardRowsAttrName)
             << " must rise from 0 to the table's " << getRows() << " rows, got " << attr;
    if (getSharding() == Sharding::none)
      return emitOpError("has ") << kShardRowsAttrName << " but sharding none";
  }
  if (getPlacement() != Placement::device && getSharding() != Sharding::none)
    return emitOpError("has placement ")
           << stringifyPlacement(getPlacement()) << " and sharding "
           << stringifySharding(getSharding())
           << ": a sharded table lives on its ranks' devices";
  return success();
}

LogicalResult ParamOp::verify() {
  auto type = cast<RankedTensorType>(getType());
  if (!isa<FloatType>(type.getElementType()))
    return emitOpError("parameter type must have a float element type, got ")
           << type;
  if (type.getRank() < 1 || type.getRank() > 2)
    return emitOpError("parameter must be 1-D or 2-D, got rank ")
           << type.getRank();
  InitKind kind = getInit().getKind();
  if ((kind == InitKind::xavier_uniform || kind == InitKind::xavier_normal) &&
      type.getRank() != 2)
    return emitOpError("Xavier initialisation needs a 2-D weight, got ")
           << type;
  return success();
}

LogicalResult GetOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto param =
      symbolTable.lookupNearestSymbolFrom<ParamOp>(*this, getParamAttr());
  if (!param)
    return emitOpError("'") << getParam()
                            << "' does not name an emb.param in this module";
  if (param.getType() != getResult().getType())
    return emitOpError("result type ")
           << getResult().getType() << " does not match the type "
           << param.getType() << " of @" << getParam();
  return success();
}

/// A read of the parameter itself: no kernel, the value is its buffer.
LogicalResult GetOp::lowerToPlan(PlanEmitter &e) {
  e.bind(getResult(), e.plan().params[*e.param(getParam())].buffer);
  return success();
}
