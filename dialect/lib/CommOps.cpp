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
