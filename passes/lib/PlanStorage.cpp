//===- PlanStorage.cpp - the inputs, parameters and tables of a plan ------===//
//
// What -emb-to-plan lays out before any op lowers itself: a buffer for each
// data input of @train_step, and each parameter's and table's values,
// gradient and optimizer state (as views of a pack or table batch where
// -emb-pack-params grouped them, PlanPacking.cpp).
//
//===----------------------------------------------------------------------===//

#include "Distribute.h"
#include "PlanBuilder.h"
#include "Quantize.h"

using namespace mlir;
using namespace embc;
using namespace embc::emb;
using namespace embc::planbuilder;
namespace rt = embc::runtime;

LogicalResult PlanBuilder::addParamsAndTables(func::FuncOp step,
                                              int64_t accumulation) {
  auto training = module->getAttrOfType<TrainingAttr>(kTrainingAttrName);
  rt::Optimizer dense = convertOptimizer(training.getDenseOptimizer());
  if (failed(addPacks(dense)))
    return failure();
  for (auto param : module.getOps<ParamOp>()) {
    auto type = cast<RankedTensorType>(param.getType());
    if (!type.getElementType().isF32())
      return param.emitOpError("has element type ")
             << type.getElementType()
             << "; the CPU runtime trains f32 parameters";
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    rt::Param p;
    p.name = param.getSymName().str();
    p.init = convertInit(param.getInit());
    p.optimizer = dense;
    if (!packedParam(param, p)) {
      p.buffer = addBuffer("param/" + p.name, rt::BufferRole::Param,
                           rt::DType::F32, shape);
      p.grad = addBuffer("grad/" + p.name, rt::BufferRole::Grad,
                         rt::DType::F32, shape);
      p.state = addStateBuffers(p.name, dense, shape);
    }
    paramIndex[p.name] = int32_t(plan_.params.size());
    plan_.params.push_back(std::move(p));
  }

  // Each table's sparse gradient holds one row per id looked up in it, over
  // all the micro-batches of an optimizer step.
  llvm::StringMap<int64_t> gradCapacity;
  WalkResult walk = step.walk([&](AccumulateRowsOp acc) {
    // A table whose backward -emb-fuse merged with its update never
    // materialises its sparse gradient: its buffers keep one row.
    auto group = acc->getParentOfType<FusedOp>();
    if (group && (group.getKind() == FusionKind::embedding_update ||
                  group.getKind() == FusionKind::skipgram))
      return WalkResult::advance();
    int64_t ids = idCapacity(acc.getIds());
    if (ids < 0) {
      acc.emitOpError("cannot bound the number of ids in ")
          << acc.getIds().getType()
          << ": dynamic ids need an emb.max_ids bound on their argument";
      return WalkResult::interrupt();
    }
    gradCapacity[acc.getTable()] += ids * accumulation;
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // A gathered sparse gradient (-emb-distribute) holds every rank's rows.
  module.walk([&](GatherRowsOp gather) {
    if (auto batch = symbols.lookupNearestSymbolFrom<TableBatchOp>(
            module, gather.getTargetAttr()))
      for (Attribute member : batch.getMembers())
        gradCapacity[cast<FlatSymbolRefAttr>(member).getValue()] *= plan_.config.jobRanks();
    else
      gradCapacity[gather.getTarget()] *= plan_.config.jobRanks();
  });
  if (failed(addTableBatches(gradCapacity)))
    return failure();

  for (auto table : module.getOps<TableOp>()) {
    StorageType storage = table.getStorage();
    if (storage != StorageType::f32 && !module->hasAttr(kQuantizedAttrName))
      return table.emitOpError("is stored as ")
             << stringifyStorageType(storage)
             << ", but -emb-quantize has not run (the module has no "
             << kQuantizedAttrName << "): run it after -emb-autodiff";
    rt::Table t;
    t.name = table.getSymName().str();
    t.rows = int64_t(table.getRows());
    t.dim = int64_t(table.getDim());
    t.storage = planStorage(storage);
    t.placement = planPlacement(table.getPlacement());
    t.init = convertInit(table.getInit());
    t.optimizer = convertOptimizer(table.getOptimizer());
    // A sharded table's buffers hold one shard (-emb-distribute); when a
    // single rank stores rows (table_wise), only that rank uses them.
    int32_t onlyRank = -1;
    if (auto bounds = table->getAttrOfType<DenseI64ArrayAttr>(kShardRowsAttrName)) {
      t.shardRows.assign(bounds.asArrayRef().begin(), bounds.asArrayRef().end());
      for (size_t r = 0; r + 1 < t.shardRows.size(); ++r)
        if (t.shardRows[r + 1] > t.shardRows[r])
          onlyRank = onlyRank == -1 ? int32_t(r) : -2;
      onlyRank = std::max(onlyRank, -1);
    }
    int64_t stored = t.storedRows();
    std::vector<int64_t> shape = {stored, t.dim};
    if (!batchedTable(table, t)) {
      t.buffer = addBuffer("table/" + t.name, rt::BufferRole::Table, storageDType(storage),
                           storageShape(storage, stored, t.dim));
      if (hasRowParams(storage)) {
        // Per row: fp16 scale and bias of its 8- or 4-bit codes
        // (value = scale q + bias).
        t.qparams = addBuffer("qparams/" + t.name, rt::BufferRole::Table,
                              rt::DType::F16, {t.rows, 2});
        plan_.buffers[t.qparams].origin = "emb-quantize";
      }
      int64_t capacity = std::max<int64_t>(gradCapacity.lookup(t.name), 1);
      t.gradRows = addBuffer("grad_rows/" + t.name, rt::BufferRole::Grad,
                             rt::DType::I64, {capacity}, /*dynamic=*/true);
      t.gradValues = addBuffer("grad_values/" + t.name, rt::BufferRole::Grad,
                               rt::DType::F32, {capacity, t.dim},
                               /*dynamic=*/true);
      t.state = addStateBuffers(t.name, t.optimizer, shape);
      plan_.buffers[t.buffer].rank = onlyRank;
      for (int32_t s : t.state)
        plan_.buffers[s].rank = onlyRank;
    }
    tableIndex[t.name] = int32_t(plan_.tables.size());
    plan_.tables.push_back(std::move(t));
  }
  return success();
}

LogicalResult PlanBuilder::addInputs(func::FuncOp step) {
  for (BlockArgument arg : step.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto feature = step.getArgAttrOfType<StringAttr>(i, kFeatureArgAttrName);
    auto role = step.getArgAttrOfType<StringAttr>(i, kRoleArgAttrName);
    if (!feature || !role)
      return step.emitOpError("argument ")
             << i << " has no emb.feature / emb.role: the plan cannot bind "
             << "it to data";
    rt::Input input;
    input.feature = feature.str();
    StringRef roleWord = role.getValue();
    std::optional<rt::InputRole> inputRole =
        rt::parseEnum<rt::InputRole>(std::string_view(roleWord.data(), roleWord.size()));
    if (!inputRole)
      return step.emitOpError("argument ")
             << i << " has emb.role '" << roleWord << "', not one of "
             << rt::enumChoices<rt::InputRole>();
    input.role = *inputRole;
    auto source = step.getArgAttrOfType<StringAttr>(i, kSourceArgAttrName);
    input.source = source ? source.str() : input.feature;
    auto type = cast<RankedTensorType>(arg.getType());
    if (type.getRank() == 2)
      input.width = type.getDimSize(1);
    if (auto vocab = step.getArgAttrOfType<IntegerAttr>(i, kVocabArgAttrName))
      input.vocab = vocab.getInt();
    if (auto hot = step.getArgAttrOfType<IntegerAttr>(i, kHotnessArgAttrName))
      input.hotness = hot.getInt();
    if (auto kind = step.getArgAttrOfType<StringAttr>(i, kLabelKindArgAttrName)) {
      StringRef word = kind.getValue();
      input.labelKind = rt::parseEnum<rt::LabelKind>(std::string_view(word.data(), word.size()));
      if (!input.labelKind)
        return step.emitOpError("argument ")
               << i << " has emb.label_kind '" << word << "', not one of "
               << rt::enumChoices<rt::LabelKind>();
    }
    if (auto power = step.getArgAttrOfType<FloatAttr>(i, kPowerArgAttrName))
      input.power = power.getValueAsDouble();
    FailureOr<int32_t> buffer =
        valueBuffer(step, arg, rt::BufferRole::Input,
                    "input/" + input.feature + "/" + rt::enumString(input.role));
    if (failed(buffer))
      return failure();
    input.buffer = *buffer;
    plan_.inputs.push_back(std::move(input));
  }
  return success();
}
