//===- TransformOps.cpp - verifiers of the packing and fusion ops ---------===//

#include "embc/dialect/EmbDialect.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace embc::emb;

//===----------------------------------------------------------------------===//
// param_pack
//===----------------------------------------------------------------------===//

LogicalResult ParamPackOp::verify() {
  if (!getElementType().isIntOrFloat())
    return emitOpError("element type must be a scalar type, got ")
           << getElementType();
  if (getOffsets().size() != getMembers().size())
    return emitOpError("has ") << getMembers().size() << " members but "
                               << getOffsets().size() << " offsets";
  ArrayRef<int64_t> buckets = getBuckets();
  if (buckets.size() < 2 || buckets.front() != 0 || buckets.back() != getSize())
    return emitOpError("buckets must run from 0 to the pack size ")
           << getSize();
  for (size_t i = 1; i < buckets.size(); ++i)
    if (buckets[i] <= buckets[i - 1])
      return emitOpError("bucket boundaries must rise strictly, got ")
             << buckets[i - 1] << " then " << buckets[i];
  int64_t align = 64 / std::max<int64_t>(1, getElementType().getIntOrFloatBitWidth() / 8);
  for (auto [member, offset] : llvm::zip(getMembers(), getOffsets()))
    if (offset < 0 || offset % align != 0)
      return emitOpError("offset ")
             << offset << " of " << member
             << " is not a non-negative multiple of " << align
             << " elements (64 bytes)";
  return success();
}

LogicalResult
ParamPackOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  struct Span {
    int64_t begin, end;
    StringRef name;
  };
  SmallVector<Span> spans;
  for (auto [ref, offset] : llvm::zip(getMembers(), getOffsets())) {
    auto symbol = cast<FlatSymbolRefAttr>(ref);
    auto param = symbolTable.lookupNearestSymbolFrom<ParamOp>(*this, symbol);
    if (!param)
      return emitOpError("member ") << symbol << " is not an emb.param";
    auto type = cast<RankedTensorType>(param.getType());
    if (type.getElementType() != getElementType())
      return emitOpError("member ")
             << symbol << " has element type " << type.getElementType()
             << ", the pack " << getElementType();
    spans.push_back({offset, offset + type.getNumElements(), symbol.getValue()});
  }
  llvm::sort(spans, [](const Span &a, const Span &b) { return a.begin < b.begin; });
  for (size_t i = 0; i < spans.size(); ++i) {
    if (spans[i].end > getSize())
      return emitOpError("member @")
             << spans[i].name << " ends at element " << spans[i].end
             << ", past the pack size " << getSize();
    if (i > 0 && spans[i].begin < spans[i - 1].end)
      return emitOpError("members @")
             << spans[i - 1].name << " and @" << spans[i].name << " overlap";
  }
  // A parameter lives in one place: at most one pack holds it.
  auto module = (*this)->getParentOfType<ModuleOp>();
  for (auto other : module.getOps<ParamPackOp>()) {
    if (other == *this)
      continue;
    for (Attribute ref : getMembers())
      if (llvm::is_contained(other.getMembers(), ref))
        return emitOpError("member ")
               << ref << " is also in pack @" << other.getSymName();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// table_batch
//===----------------------------------------------------------------------===//

LogicalResult TableBatchOp::verify() {
  if (getMembers().empty())
    return emitOpError("needs at least one member table");
  llvm::StringSet<> seen;
  for (Attribute ref : getMembers())
    if (!seen.insert(cast<FlatSymbolRefAttr>(ref).getValue()).second)
      return emitOpError("lists ") << ref << " twice";
  return success();
}

LogicalResult
TableBatchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  TableOp first;
  for (Attribute ref : getMembers()) {
    auto symbol = cast<FlatSymbolRefAttr>(ref);
    FailureOr<TableOp> table = lookupTable(*this, symbol, symbolTable);
    if (failed(table))
      return failure();
    if (!first) {
      first = *table;
      continue;
    }
    // One buffer with one row width, one storage and one optimizer step.
    if (table->getDim() != first.getDim() ||
        table->getStorage() != first.getStorage() ||
        table->getOptimizer() != first.getOptimizer())
      return emitOpError("member ")
             << symbol << " differs from @" << first.getSymName()
             << " in dim, storage or optimizer; a batch shares all three";
    // ... in one place: the buffer lives in one tier.
    if (table->getPlacement() != first.getPlacement())
      return emitOpError("member ")
             << symbol << " has placement " << stringifyPlacement(table->getPlacement())
             << ", @" << first.getSymName() << " "
             << stringifyPlacement(first.getPlacement())
             << "; a batch's buffers live in one place";
  }
  auto module = (*this)->getParentOfType<ModuleOp>();
  for (auto other : module.getOps<TableBatchOp>()) {
    if (other == *this)
      continue;
    for (Attribute ref : getMembers())
      if (llvm::is_contained(other.getMembers(), ref))
        return emitOpError("member ")
               << ref << " is also in batch @" << other.getSymName();
  }
  return success();
}

SmallVector<int64_t>
TableBatchOp::getRowOffsets(SymbolTableCollection &symbols) {
  SmallVector<int64_t> offsets;
  int64_t next = 0;
  for (Attribute ref : getMembers()) {
    offsets.push_back(next);
    if (auto table = symbols.lookupNearestSymbolFrom<TableOp>(
            *this, cast<FlatSymbolRefAttr>(ref)))
      next += int64_t(table.getRows());
  }
  return offsets;
}

//===----------------------------------------------------------------------===//
// fused
//===----------------------------------------------------------------------===//

namespace {

/// The ops each kind of group may hold: what its kernel knows how to run.
bool allowedIn(FusionKind kind, Operation *op) {
  switch (kind) {
  case FusionKind::lookup:
    return isa<HashOp, LookupOp>(op);
  case FusionKind::dense_act:
    return isa<DenseOp, ActivationOp>(op);
  case FusionKind::dense_act_grad:
    return isa<ActivationGradOp, BiasGradOp, DenseGradWeightOp,
               DenseGradInputOp, AccumulateGradOp>(op);
  case FusionKind::elementwise:
    return isa<AddOp, ActivationOp, ActivationGradOp>(op);
  case FusionKind::interaction_concat:
    return isa<InteractionOp, ConcatOp>(op);
  case FusionKind::interaction_concat_grad:
    return isa<SliceOp, InteractionGradOp, AddOp>(op);
  case FusionKind::embedding_update:
    return isa<LookupGradOp, AccumulateRowsOp, CoalesceRowsOp, UpdateOp>(op);
  case FusionKind::skipgram:
    return isa<LookupOp, GatherOp, DotOp, LossOp, LossGradOp, DotGradOp, AddOp, LookupGradOp,
               AccumulateRowsOp, CoalesceRowsOp, UpdateOp>(op);
  case FusionKind::add_layer_norm:
    return isa<DropoutOp, AddOp, LayerNormOp>(op);
  case FusionKind::add_layer_norm_grad:
    return isa<LayerNormGradOp, AddOp, DropoutGradOp>(op);
  case FusionKind::dense_multi:
    return isa<DenseOp>(op);
  case FusionKind::dense_multi_grad:
    return isa<DenseGradInputOp, DenseGradWeightOp, BiasGradOp, AccumulateGradOp, AddOp>(op);
  }
  return false;
}

} // namespace

LogicalResult FusedOp::verify() {
  Block &body = getBody().front();
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError("body must end with emb.yield");
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yields ")
           << yield.getValues().getTypes() << " but its results are "
           << getResultTypes();
  if (body.getNumArguments() != 0)
    return emitOpError("body takes no block arguments (it reads values "
                       "from outside directly)");
  unsigned ops = 0;
  for (Operation &op : body.without_terminator()) {
    ++ops;
    if (!allowedIn(getKind(), &op))
      return op.emitOpError("cannot be part of a '")
             << stringifyFusionKind(getKind()) << "' fusion group";
  }
  if (ops == 0)
    return emitOpError("has an empty body");
  return success();
}
