//===- CommOps.cpp - verifiers of the data-parallel collectives ------------===//
//
// The collectives -emb-distribute inserts (EmbCommOps.td) name what they
// exchange by symbol; these checks make sure the symbol is something with a
// gradient of that kind and that a slice lies inside it, so the plan lowering
// can trust the ops.
//
//===----------------------------------------------------------------------===//

#include "embc/dialect/EmbDialect.h"
#include "embc/dialect/PlanEmitter.h"

using namespace mlir;
using namespace embc::emb;
namespace rt = embc::runtime;

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

/// One table's exchange of ids (emb.shard_ids, or a member of
/// emb.shard_ids_group).
static LogicalResult verifyShardIds(Operation *op, Value idsValue, Value offsetsValue,
                                    Value weights, Value localIdsValue,
                                    Value localOffsetsValue, Value localWeights,
                                    bool perBagMean) {
  auto ids = cast<RankedTensorType>(idsValue.getType());
  auto offsets = cast<RankedTensorType>(offsetsValue.getType());
  auto localIds = cast<RankedTensorType>(localIdsValue.getType());
  auto localOffsets = cast<RankedTensorType>(localOffsetsValue.getType());
  if (ids.getRank() != 1 || localIds.getRank() != 1 || !localIds.isDynamicDim(0))
    return op->emitOpError("ids must be 1-D and the local ids dynamic (tensor<?xi64>), got ")
           << ids << " and " << localIds;
  if (offsets.getRank() != 1 || !offsets.hasStaticShape() || localOffsets.getRank() != 1 ||
      !localOffsets.hasStaticShape() || offsets.getDimSize(0) < 2)
    return op->emitOpError("offsets must be 1-D and static with at least one bag, got ")
           << offsets << " and " << localOffsets;
  int64_t bags = offsets.getDimSize(0) - 1, all = localOffsets.getDimSize(0) - 1;
  if (all % bags != 0 || all < bags)
    return op->emitOpError("the local offsets must hold N x ")
           << bags << " bags (+1), got " << localOffsets;
  bool weighted = weights || perBagMean;
  if (weighted != bool(localWeights))
    return op->emitOpError(weighted ? "needs a local weights result (it has weights or "
                                      "per_bag_mean)"
                                    : "has a local weights result but neither weights nor "
                                      "per_bag_mean");
  if (weights)
    if (cast<RankedTensorType>(weights.getType()).getShape() != ids.getShape())
      return op->emitOpError("'weights' shape ")
             << weights.getType() << " must match 'ids' " << ids;
  if (localWeights)
    if (cast<RankedTensorType>(localWeights.getType()).getShape() != localIds.getShape())
      return op->emitOpError("local weights ")
             << localWeights.getType() << " must have the shape of the local ids " << localIds;
  return success();
}

LogicalResult ShardIdsOp::verify() {
  return verifyShardIds(*this, getIds(), getOffsets(), getWeights(), getLocalIds(),
                        getLocalOffsets(), getLocalWeights(), getPerBagMean());
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

//===----------------------------------------------------------------------===//
// Groups of sharded tables' exchanges (-emb-batch-exchanges)
//===----------------------------------------------------------------------===//

/// Every member's table is sharded over the same ranks; returns them.
static FailureOr<SmallVector<TableOp>> shardedTables(Operation *op, ArrayAttr tables,
                                                     SymbolTableCollection &symbols) {
  SmallVector<TableOp> found;
  for (Attribute a : tables) {
    FailureOr<TableOp> t = shardedTable(op, cast<FlatSymbolRefAttr>(a), symbols);
    if (failed(t))
      return failure();
    found.push_back(*t);
  }
  auto ranks = [&](TableOp t) {
    return t->getAttrOfType<DenseI64ArrayAttr>(kShardRowsAttrName).size();
  };
  for (TableOp t : found)
    if (ranks(t) != ranks(found.front()))
      return op->emitOpError("tables @")
             << found.front().getSymName() << " and @" << t.getSymName()
             << " are sharded over different numbers of ranks";
  return found;
}

/// A group has members: as many values on each side as tables.
static LogicalResult verifyMemberCount(Operation *op, size_t tables, size_t in, size_t out,
                                       StringRef inName, StringRef outName) {
  if (tables == 0)
    return op->emitOpError("groups no table");
  if (in != tables || out != tables)
    return op->emitOpError("has ")
           << tables << " tables but " << in << " " << inName << " and " << out << " "
           << outName;
  return success();
}

Value ShardIdsGroupOp::getMemberWeights(unsigned i) {
  if (!getWeighted()[i])
    return {};
  unsigned before = unsigned(llvm::count(getWeighted().take_front(i), true));
  return getWeights()[before];
}

Value ShardIdsGroupOp::getMemberLocalWeights(unsigned i) {
  auto has = [&](unsigned j) { return getWeighted()[j] || getPerBagMean()[j]; };
  if (!has(i))
    return {};
  unsigned before = 0;
  for (unsigned j = 0; j < i; ++j)
    before += has(j);
  return getLocalWeights()[before];
}

LogicalResult ShardIdsGroupOp::verify() {
  size_t n = getTables().size();
  if (failed(verifyMemberCount(*this, n, getIds().size(), getLocalIds().size(), "ids",
                               "local ids")) ||
      failed(verifyMemberCount(*this, n, getOffsets().size(), getLocalOffsets().size(),
                               "offsets", "local offsets")))
    return failure();
  if (getWeighted().size() != n || getPerBagMean().size() != n)
    return emitOpError("'weighted' and 'per_bag_mean' need one entry per table (")
           << n << "), got " << getWeighted().size() << " and " << getPerBagMean().size();
  size_t weighted = size_t(llvm::count(getWeighted(), true)), withLocal = 0;
  for (size_t i = 0; i < n; ++i)
    withLocal += getWeighted()[i] || getPerBagMean()[i];
  if (getWeights().size() != weighted || getLocalWeights().size() != withLocal)
    return emitOpError("has ")
           << getWeights().size() << " weights and " << getLocalWeights().size()
           << " local weights, but its flags ask for " << weighted << " and " << withLocal;
  for (unsigned i = 0; i < n; ++i)
    if (failed(verifyShardIds(*this, getIds()[i], getOffsets()[i], getMemberWeights(i),
                              getLocalIds()[i], getLocalOffsets()[i],
                              getMemberLocalWeights(i), getPerBagMean()[i])))
      return failure();
  return success();
}

LogicalResult ShardIdsGroupOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return shardedTables(*this, getTables(), symbols);
}

/// A pooled group's members: static B x dim on both sides, the
/// rank-concatenated side `ranks` times the other's rows.
static LogicalResult verifyPooledGroup(Operation *op, ArrayAttr tables, ValueRange few,
                                       ValueRange many, StringRef fewName,
                                       StringRef manyName) {
  if (failed(verifyMemberCount(op, tables.size(), few.size(), many.size(), fewName,
                               manyName)))
    return failure();
  for (auto [f, m] : llvm::zip(few, many))
    if (failed(verifyPooled(op, f.getType(), fewName)) ||
        failed(verifyPooled(op, m.getType(), manyName)) ||
        failed(verifyRanksTimes(op, cast<RankedTensorType>(f.getType()),
                                cast<RankedTensorType>(m.getType()))))
      return failure();
  return success();
}

static LogicalResult verifyPooledGroupTables(Operation *op, ArrayAttr tables, ValueRange few,
                                             SymbolTableCollection &symbols) {
  FailureOr<SmallVector<TableOp>> found = shardedTables(op, tables, symbols);
  if (failed(found))
    return failure();
  for (auto [t, f] : llvm::zip(*found, few))
    if (failed(verifyDimIsTable(op, cast<RankedTensorType>(f.getType()), t)))
      return failure();
  return success();
}

LogicalResult ShardPoolGroupOp::verify() {
  if (getResults().size() != getPartials().size())
    return emitOpError("has ") << getPartials().size() << " partials but "
                               << getResults().size() << " results";
  return verifyPooledGroup(*this, getTables(), getResults(), getPartials(), "result",
                           "'partials'");
}

LogicalResult ShardPoolGroupOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyPooledGroupTables(*this, getTables(), getResults(), symbols);
}

LogicalResult ShardPoolGradGroupOp::verify() {
  return verifyPooledGroup(*this, getTables(), getGrads(), getResults(), "'grads'",
                           "result");
}

LogicalResult ShardPoolGradGroupOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyPooledGroupTables(*this, getTables(), getGrads(), symbols);
}

//===----------------------------------------------------------------------===//
// Plan lowering. A collective names the buffers it exchanges as outputs (it
// rewrites them in place) and its target by index, so the runtime binding
// needs nothing but the plan and the communicator.
//===----------------------------------------------------------------------===//

/// The dense gradient of a pack or of an unpacked parameter.
static void denseGradTarget(PlanEmitter &e, StringRef target, rt::Kernel &k) {
  if (std::optional<int32_t> pack = e.pack(target)) {
    k.attrs["pack"] = *pack;
    k.outputs = {e.plan().packs[*pack].grad};
  } else {
    const int32_t p = *e.param(target);
    k.attrs["param"] = p;
    k.outputs = {e.plan().params[p].grad};
  }
}

LogicalResult GradAllReduceStartOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::GradAllReduceStart);
  denseGradTarget(e, getTarget(), k);
  k.attrs["offset"] = int64_t(getOffset());
  k.attrs["size"] = int64_t(getSize());
  e.emit(std::move(k));
  return success();
}

LogicalResult GradAllReduceWaitOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::GradAllReduceWait);
  denseGradTarget(e, getTarget(), k);
  e.emit(std::move(k));
  return success();
}

LogicalResult GatherRowsOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::GatherRows);
  if (std::optional<int32_t> b = e.batch(getTarget())) {
    const rt::TableBatch &batch = e.plan().tableBatches[*b];
    k.attrs["batch"] = *b;
    k.outputs = {batch.gradRows, batch.gradValues};
  } else {
    const int32_t t = e.table(getTarget());
    k.attrs["table"] = t;
    k.outputs = {e.plan().tables[t].gradRows, e.plan().tables[t].gradValues};
  }
  e.emit(std::move(k));
  return success();
}

LogicalResult ShardIdsOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::ShardIds);
  k.attrs["table"] = e.table(getTable());
  k.attrs["per_bag_mean"] = bool(getPerBagMean());
  return e.emitOnOperands(*this, std::move(k));
}

LogicalResult ShardPoolOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::ShardPool);
  k.attrs["table"] = e.table(getTable());
  return e.emitOnOperands(*this, std::move(k));
}

LogicalResult ShardPoolGradOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::ShardPoolGrad);
  k.attrs["table"] = e.table(getTable());
  return e.emitOnOperands(*this, std::move(k));
}

/// The plan's indices of a group's tables.
static std::vector<int32_t> tableIndices(PlanEmitter &e, ArrayAttr tables) {
  std::vector<int32_t> indices;
  for (Attribute t : tables)
    indices.push_back(e.table(cast<FlatSymbolRefAttr>(t).getValue()));
  return indices;
}

LogicalResult ShardIdsGroupOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::ShardIdsGroup);
  k.attrs["tables"] = tableIndices(e, getTables());
  k.attrs["weighted"] = std::vector<bool>(getWeighted().begin(), getWeighted().end());
  k.attrs["per_bag_mean"] = std::vector<bool>(getPerBagMean().begin(), getPerBagMean().end());
  return e.emitOnOperands(*this, std::move(k));
}

LogicalResult ShardPoolGroupOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::ShardPoolGroup);
  k.attrs["tables"] = tableIndices(e, getTables());
  return e.emitOnOperands(*this, std::move(k));
}

LogicalResult ShardPoolGradGroupOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::ShardPoolGradGroup);
  k.attrs["tables"] = tableIndices(e, getTables());
  return e.emitOnOperands(*this, std::move(k));
}
