//===- ToPlan.cpp - -emb-to-plan ---------------------------------------------===//
//
// Codegen for the CPU runtime: every value of @train_step gets a buffer in
// one arena, every op becomes a kernel of the plan's catalogue
// (docs/plan-format.md), and the plan records the data inputs, parameters,
// tables and their optimizer state. Buffers are laid out one after another;
// -emb-plan-memory will later reuse memory between values whose lifetimes do
// not overlap, and the report will show it.
//
//===----------------------------------------------------------------------===//

#include "Distribute.h"
#include "PipelineSchedule.h"
#include "PlanBuilder.h"
#include "Quantize.h"

#include "embc/passes/CudaCodegen.h"
#include "embc/passes/MemoryReport.h"
#include "embc/passes/Passes.h"
#include "embc/passes/ToPlan.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/ToolOutputFile.h"

#define DEBUG_TYPE "emb-to-plan"

namespace embc {
#define GEN_PASS_DEF_EMBTOPLANPASS
#include "embc/passes/Passes.h.inc"
} // namespace embc

using namespace mlir;
using namespace embc;
using namespace embc::emb;
using namespace embc::planbuilder;
namespace rt = embc::runtime;

#ifndef EMBC_VERSION
#define EMBC_VERSION "unknown"
#endif

int32_t PlanBuilder::addBuffer(std::string name, rt::BufferRole role,
                               rt::DType dtype, std::vector<int64_t> shape,
                               bool dynamic) {
  rt::Buffer buffer;
  buffer.name = std::move(name);
  buffer.role = role;
  buffer.dtype = dtype;
  if (shape.empty())
    shape.push_back(1); // scalars are one-element buffers
  buffer.shape = std::move(shape);
  buffer.dynamic = dynamic;
  buffer.bytes = rt::dtypeBytes(dtype);
  for (int64_t d : buffer.shape)
    buffer.bytes *= d;
  plan.buffers.push_back(std::move(buffer));
  return int32_t(plan.buffers.size() - 1);
}

int32_t PlanBuilder::addView(std::string name, int32_t parent,
                             int64_t relativeBytes, std::vector<int64_t> shape) {
  const rt::Buffer &whole = plan.buffers[parent];
  int32_t id = addBuffer(std::move(name), whole.role, whole.dtype, std::move(shape));
  plan.buffers[id].parent = parent;
  viewOffset[id] = relativeBytes;
  return id;
}

/// Upper bound on the number of ids a value holds in one batch.
int64_t PlanBuilder::idCapacity(Value ids) {
  auto type = cast<RankedTensorType>(ids.getType());
  if (type.hasStaticShape())
    return type.getNumElements();
  if (auto arg = dyn_cast<BlockArgument>(ids)) {
    auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (auto max = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                      kMaxIdsArgAttrName))
      return max.getInt();
  }
  if (Operation *def = ids.getDefiningOp()) {
    if (isa<HashOp>(def))
      return idCapacity(def->getOperand(0));
    if (auto exchange = dyn_cast<ShardIdsOp>(def)) {
      // Every rank may send all its ids to this one.
      auto bags = [](Value offsets) {
        return cast<RankedTensorType>(offsets.getType()).getDimSize(0) - 1;
      };
      int64_t mine = idCapacity(exchange.getIds());
      int64_t ranks = bags(exchange.getLocalOffsets()) / bags(exchange.getOffsets());
      return mine < 0 ? -1 : mine * ranks;
    }
    if (auto group = dyn_cast<ShardIdsGroupOp>(def)) {
      // The member whose local ids or local weights `ids` is.
      unsigned r = cast<OpResult>(ids).getResultNumber(), n = unsigned(group.getTables().size());
      unsigned member = r;
      if (r >= 2 * n)
        for (unsigned i = 0, seen = 0; i < n; ++i)
          if (group.getMemberLocalWeights(i) && seen++ == r - 2 * n)
            member = i;
      int64_t mine = idCapacity(group.getIds()[member]);
      auto bags = [](Value offsets) {
        return cast<RankedTensorType>(offsets.getType()).getDimSize(0) - 1;
      };
      int64_t ranks = bags(group.getLocalOffsets()[member]) / bags(group.getOffsets()[member]);
      return mine < 0 ? -1 : mine * ranks;
    }
    if (auto fused = dyn_cast<FusedOp>(def)) // what the group yields
      return idCapacity(fused.getBody().front().getTerminator()->getOperand(
          cast<OpResult>(ids).getResultNumber()));
  }
  return -1;
}

/// The buffer of `v`, created on first use as an activation. Dynamic 1-D
/// id tensors and per-id gradient rows are sized by their id capacity.
FailureOr<int32_t> PlanBuilder::valueBuffer(Operation *op, Value v,
                                            rt::BufferRole role,
                                            StringRef name) {
  auto it = bufferOf.find(v);
  if (it != bufferOf.end())
    return it->second;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return op->emitOpError("produces a non-tensor value; the plan has no "
                           "buffer for ")
           << v.getType();
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  bool dynamic = !type.hasStaticShape();
  if (dynamic) {
    int64_t capacity = -1;
    if (auto grad = dyn_cast_or_null<LookupGradOp>(v.getDefiningOp()))
      capacity = idCapacity(grad.getIds());
    else
      capacity = idCapacity(v);
    if (capacity < 0 || !type.isDynamicDim(0) || type.getNumDynamicDims() != 1)
      return op->emitOpError("cannot bound the size of ")
             << v.getType()
             << ": a dynamic tensor needs an emb.max_ids bound on its ids";
    shape[0] = capacity;
  }
  Type element = type.getElementType();
  rt::DType dtype;
  if (element.isF32())
    dtype = rt::DType::F32;
  else if (element.isF64())
    dtype = rt::DType::F64;
  else if (element.isSignlessInteger(64))
    dtype = rt::DType::I64;
  else
    return op->emitOpError("element type ")
           << element << " has no CPU kernels (f32, f64 and i64 do)";
  int32_t id = addBuffer(name.str(), role, dtype, std::move(shape), dynamic);
  bufferOf[v] = id;
  return id;
}

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
      for (auto [i, s] : llvm::enumerate(stateShapes(dense, shape)))
        p.state.push_back(addBuffer("state/" + p.name + "/" + std::to_string(i),
                                    rt::BufferRole::OptimizerState,
                                    rt::DType::F32, s));
    }
    paramIndex[p.name] = int32_t(plan.params.size());
    plan.params.push_back(std::move(p));
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
        gradCapacity[cast<FlatSymbolRefAttr>(member).getValue()] *= plan.config.jobRanks();
    else
      gradCapacity[gather.getTarget()] *= plan.config.jobRanks();
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
        plan.buffers[t.qparams].origin = "emb-quantize";
      }
      int64_t capacity = std::max<int64_t>(gradCapacity.lookup(t.name), 1);
      t.gradRows = addBuffer("grad_rows/" + t.name, rt::BufferRole::Grad,
                             rt::DType::I64, {capacity}, /*dynamic=*/true);
      t.gradValues = addBuffer("grad_values/" + t.name, rt::BufferRole::Grad,
                               rt::DType::F32, {capacity, t.dim},
                               /*dynamic=*/true);
      for (auto [i, s] : llvm::enumerate(stateShapes(t.optimizer, shape)))
        t.state.push_back(addBuffer("state/" + t.name + "/" + std::to_string(i),
                                    rt::BufferRole::OptimizerState,
                                    rt::DType::F32, s));
      plan.buffers[t.buffer].rank = onlyRank;
      for (int32_t s : t.state)
        plan.buffers[s].rank = onlyRank;
    }
    tableIndex[t.name] = int32_t(plan.tables.size());
    plan.tables.push_back(std::move(t));
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
    plan.inputs.push_back(std::move(input));
  }
  return success();
}

StorageType PlanBuilder::storageOf(StringRef name) {
  auto table = module.lookupSymbol<TableOp>(name);
  return table ? table.getStorage() : StorageType::f32;
}

LogicalResult PlanBuilder::dequantizeAttr(Operation *op, StringRef table,
                                          nlohmann::json &attrs) {
  StorageType storage = storageOf(table);
  if (storage == StorageType::f32)
    return success();
  auto marked = op->getAttrOfType<StorageTypeAttr>(kDequantizeAttrName);
  if (!marked || marked.getValue() != storage)
    return op->emitOpError("reads table @")
           << table << " stored as " << stringifyStorageType(storage)
           << " but is not marked " << kDequantizeAttrName << " = #emb<storage "
           << stringifyStorageType(storage) << ">: run -emb-quantize";
  attrs["dequantize"] = rt::enumString(planStorage(storage));
  return success();
}

/// Kernel name: the op's name without the dialect prefix.
rt::Kernel embc::planbuilder::kernelFor(Operation *op) {
  rt::Kernel k;
  k.op = op->getName().stripDialect().str();
  return k;
}

FailureOr<rt::Kernel> PlanBuilder::lowerOp(Operation *op) {
  if (isa<GradAllReduceStartOp, GradAllReduceWaitOp, GatherRowsOp>(op))
    return lowerCollective(op);
  rt::Kernel k = kernelFor(op);
  auto tableAttr = [&](StringRef name) { k.attrs["table"] = tableIndex.lookup(name); };
  auto groupTables = [&](ArrayAttr tables) {
    std::vector<int32_t> indices;
    for (Attribute t : tables)
      indices.push_back(tableIndex.lookup(cast<FlatSymbolRefAttr>(t).getValue()));
    return indices;
  };
  // Attributes each kernel needs beyond its buffers' shapes.
  if (auto lookup = dyn_cast<LookupOp>(op)) {
    tableAttr(lookup.getTable());
    k.attrs["pooling"] = stringifyPooling(lookup.getPooling()).str();
    if (failed(dequantizeAttr(op, lookup.getTable(), k.attrs)))
      return failure();
  } else if (auto grad = dyn_cast<LookupGradOp>(op)) {
    tableAttr(grad.getTable());
    k.attrs["pooling"] = stringifyPooling(grad.getPooling()).str();
    if (grad.getPooling() == Pooling::max &&
        failed(dequantizeAttr(op, grad.getTable(), k.attrs)))
      return failure();
  } else if (auto gather = dyn_cast<GatherOp>(op)) {
    tableAttr(gather.getTable());
    if (failed(dequantizeAttr(op, gather.getTable(), k.attrs)))
      return failure();
  } else if (auto exchange = dyn_cast<ShardIdsOp>(op)) {
    tableAttr(exchange.getTable());
    k.attrs["per_bag_mean"] = bool(exchange.getPerBagMean());
  } else if (auto group = dyn_cast<ShardIdsGroupOp>(op)) {
    k.attrs["tables"] = groupTables(group.getTables());
    k.attrs["weighted"] = std::vector<bool>(group.getWeighted().begin(), group.getWeighted().end());
    k.attrs["per_bag_mean"] =
        std::vector<bool>(group.getPerBagMean().begin(), group.getPerBagMean().end());
  } else if (isa<ShardPoolGroupOp, ShardPoolGradGroupOp>(op)) {
    k.attrs["tables"] = groupTables(op->getAttrOfType<ArrayAttr>("tables"));
  } else if (auto pool = dyn_cast<ShardPoolOp>(op)) {
    tableAttr(pool.getTable());
  } else if (auto pool = dyn_cast<ShardPoolGradOp>(op)) {
    tableAttr(pool.getTable());
  } else if (auto hash = dyn_cast<HashOp>(op)) {
    k.attrs["buckets"] = int64_t(hash.getBuckets());
    k.attrs["seed"] = int64_t(hash.getSeed());
  } else if (auto act = dyn_cast<ActivationOp>(op)) {
    k.attrs["kind"] = stringifyActivation(act.getKind()).str();
  } else if (auto act = dyn_cast<ActivationGradOp>(op)) {
    k.attrs["kind"] = stringifyActivation(act.getKind()).str();
    if (act.getFromOutput())
      k.attrs["from_output"] = true;
  } else if (auto loss = dyn_cast<LossOp>(op)) {
    k.attrs["kind"] = stringifyLossKind(loss.getKind()).str();
  } else if (auto loss = dyn_cast<LossGradOp>(op)) {
    k.attrs["kind"] = stringifyLossKind(loss.getKind()).str();
  } else if (auto inter = dyn_cast<InteractionOp>(op)) {
    k.attrs["self"] = bool(inter.getSelf());
  } else if (auto inter = dyn_cast<InteractionGradOp>(op)) {
    k.attrs["self"] = bool(inter.getSelf());
  } else if (auto slice = dyn_cast<SliceOp>(op)) {
    k.attrs["offset"] = int64_t(slice.getOffset());
  } else if (auto add = dyn_cast<AddOp>(op)) {
    k.attrs["bias"] = bool(add.getBias());
  } else if (auto dense = dyn_cast<DenseOp>(op)) {
    k.attrs["bias"] = bool(dense.getBias());
  } else if (auto acc = dyn_cast<AccumulateGradOp>(op)) {
    int32_t p = paramIndex.lookup(acc.getParam());
    k.attrs["param"] = p;
    k.inputs.push_back(bufferOf.lookup(acc.getGrad()));
    k.outputs.push_back(plan.params[p].grad);
    return k;
  } else if (auto acc = dyn_cast<AccumulateRowsOp>(op)) {
    int32_t t = tableIndex.lookup(acc.getTable());
    k.attrs["table"] = t;
    // A batched table's rows are batch rows: shift its ids as they go in.
    k.attrs["row_offset"] = batchOfTable.lookup(acc.getTable()).second;
    k.inputs = {bufferOf.lookup(acc.getIds()), bufferOf.lookup(acc.getValues())};
    k.outputs = {plan.tables[t].gradRows, plan.tables[t].gradValues};
    return k;
  } else if (!isa<DenseGradInputOp, DenseGradWeightOp, BiasGradOp, ConcatOp,
                  CrossOp, CrossGradOp, DotOp, DotGradOp, InteractionOp>(op)) {
    return op->emitOpError("has no kernel in the plan's catalogue");
  }
  for (Value v : op->getOperands())
    k.inputs.push_back(bufferOf.lookup(v));
  for (auto [i, r] : llvm::enumerate(op->getResults())) {
    FailureOr<int32_t> buffer =
        valueBuffer(op, r, rt::BufferRole::Activation,
                    "act/" + std::to_string(plan.buffers.size()) + "/" + k.op);
    if (failed(buffer))
      return failure();
    k.outputs.push_back(*buffer);
  }
  return k;
}

LogicalResult PlanBuilder::lowerStep(func::FuncOp step) {
  bool inBackward = false;
  for (Operation &op : step.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      plan.lossBuffer = bufferOf.lookup(ret.getOperand(0));
      if (ret.getNumOperands() > 1)
        plan.predictionBuffer = bufferOf.lookup(ret.getOperand(1));
      continue;
    }
    if (auto get = dyn_cast<GetOp>(op)) { // a read of the parameter itself
      bufferOf[get.getResult()] = plan.params[paramIndex.lookup(get.getParam())].buffer;
      continue;
    }
    auto fused = dyn_cast<FusedOp>(op);
    Operation *first = fused ? &fused.getBody().front().front() : &op;
    if (first->hasTrait<BackwardOp>() && !inBackward) {
      inBackward = true;
      plan.forwardKernels = int64_t(plan.step.size());
    }
    FailureOr<rt::Kernel> kernel = fused ? lowerFused(fused) : lowerOp(&op);
    if (failed(kernel))
      return failure();
    precisionAttrs(&op, kernel->attrs);
    kernel->stage = int32_t(pipeline::stageOf(&op));
    plan.step.push_back(std::move(*kernel));
  }
  if (!inBackward)
    plan.forwardKernels = int64_t(plan.step.size());
  return success();
}

LogicalResult PlanBuilder::lowerUpdate(func::FuncOp update) {
  // Gradients are summed over every micro-batch of every accumulation step,
  // and over the ranks (-emb-distribute): each is a mean over its examples.
  double gradScale = 1.0 / double(plan.config.gradAccumulation * plan.config.microBatches *
                                  plan.config.dataParallel);
  int32_t scaleBuffer = -1;
  for (Operation &op : update.getBody().front()) {
    rt::Kernel k = kernelFor(&op);
    if (isa<func::ReturnOp>(op))
      continue;
    if (isa<GradAllReduceStartOp, GradAllReduceWaitOp, GatherRowsOp>(op)) {
      FailureOr<rt::Kernel> collective = lowerCollective(&op);
      if (failed(collective))
        return failure();
      k = std::move(*collective);
    } else if (auto coalesce = dyn_cast<CoalesceRowsOp>(op)) {
      auto batch = batchIndex.find(coalesce.getTable());
      if (batch != batchIndex.end()) {
        const rt::TableBatch &tb = plan.tableBatches[batch->second];
        k.attrs["batch"] = batch->second;
        k.outputs = {tb.gradRows, tb.gradValues};
      } else {
        int32_t t = tableIndex.lookup(coalesce.getTable());
        k.attrs["table"] = t;
        k.outputs = {plan.tables[t].gradRows, plan.tables[t].gradValues};
      }
    } else if (auto unscale = dyn_cast<UnscaleGradsOp>(op)) {
      k = lowerUnscale(unscale);
    } else if (auto clip = dyn_cast<ClipGradNormOp>(op)) {
      k.attrs["max_norm"] = clip.getMaxNorm().convertToDouble();
      k.attrs["grad_scale"] = gradScale;
      for (const rt::Param &p : plan.params)
        k.inputs.push_back(p.grad);
      for (const rt::Table &t : plan.tables) // batched tables share one
        if (!llvm::is_contained(k.inputs, t.gradValues))
          k.inputs.push_back(t.gradValues);
      scaleBuffer = addBuffer("clip_scale", rt::BufferRole::Workspace,
                              rt::DType::F32, {1});
      bufferOf[clip.getScale()] = scaleBuffer;
      k.outputs = {scaleBuffer};
    } else if (auto upd = dyn_cast<UpdateOp>(op)) {
      if (std::optional<rt::Kernel> group = groupUpdate(upd, gradScale)) {
        if (upd.getScale())
          group->inputs.push_back(bufferOf.lookup(upd.getScale()));
        plan.update.push_back(std::move(*group));
        continue;
      }
      k.attrs["grad_scale"] = gradScale;
      auto param = paramIndex.find(upd.getTarget());
      if (param != paramIndex.end()) {
        const rt::Param &p = plan.params[param->second];
        k.op = rt::kernelName(rt::KernelOp::UpdateParam);
        k.attrs["param"] = param->second;
        k.inputs = {p.grad};
        k.outputs = {p.buffer};
        k.outputs.insert(k.outputs.end(), p.state.begin(), p.state.end());
      } else {
        int32_t t = tableIndex.lookup(upd.getTarget());
        const rt::Table &table = plan.tables[t];
        k.op = rt::kernelName(rt::KernelOp::UpdateTable);
        k.attrs["table"] = t;
        if (table.storage != rt::Storage::F32)
          k.attrs["requantize"] = rt::enumString(rt::Requantize::Stochastic);
        k.inputs = {table.gradRows, table.gradValues};
        k.outputs = {table.buffer};
        k.outputs.insert(k.outputs.end(), table.state.begin(), table.state.end());
      }
      if (upd.getScale())
        k.inputs.push_back(bufferOf.lookup(upd.getScale()));
    } else {
      return op.emitOpError("has no kernel in the plan's update catalogue");
    }
    plan.update.push_back(std::move(k));
  }
  return success();
}

void PlanBuilder::layout() {
  int64_t offset = 0;
  for (rt::Buffer &b : plan.buffers) {
    if (b.parent >= 0)
      continue; // placed with its parent below
    b.offset = offset;
    offset += (b.bytes * b.slots + 63) / 64 * 64; // copies per micro-batch in flight
  }
  for (auto [id, relative] : viewOffset)
    plan.buffers[id].offset = plan.buffers[plan.buffers[id].parent].offset + relative;
  plan.arenaBytes = offset;
}

/// Bytes a kernel moves per launch, for the report: each buffer it reads or
/// writes once, except that a table (or its optimizer state) counts only the
/// rows a batch can touch, since kernels never sweep a whole table. A lookup
/// reads one table row per id (the table is an attribute, not an operand);
/// an update touches each distinct row once, at most min(ids, rows) of
/// each source's table.
void PlanBuilder::estimateBytes(rt::Kernel &kernel) {
  // Kernels outside the catalogue are refused when the plan is validated.
  const rt::KernelSpec *spec = rt::findKernel(kernel.op);
  const std::optional<rt::KernelOp> op =
      spec ? std::optional<rt::KernelOp>(spec->op) : std::nullopt;
  int64_t rowsTouched = 0;
  for (int32_t i : kernel.inputs)
    if (plan.buffers[i].dtype == rt::DType::I64 && plan.buffers[i].dynamic)
      rowsTouched += plan.buffers[i].shape[0];
  auto numel = [&](int32_t id) {
    int64_t n = 1;
    for (int64_t d : plan.buffers[id].shape)
      n *= d;
    return n;
  };
  // A table's row: its values (and its row-wise scale and bias).
  auto rowBytes = [&](const rt::Table &t) {
    const rt::Buffer &b = plan.buffers[t.buffer];
    int64_t bytes = b.bytes / std::max<int64_t>(b.shape[0], 1);
    if (t.qparams >= 0)
      bytes += 4;
    return bytes;
  };
  auto tableAt = [&](const nlohmann::json &index) -> const rt::Table * {
    if (!index.is_number_integer() || index.get<int64_t>() < 0 ||
        index.get<size_t>() >= plan.tables.size())
      return nullptr;
    return &plan.tables[index.get<size_t>()];
  };
  int64_t rowsRead = 0;
  if ((op == rt::KernelOp::Lookup || op == rt::KernelOp::Gather) && kernel.attrs.contains("table") &&
      !kernel.inputs.empty())
    if (const rt::Table *t = tableAt(kernel.attrs["table"]))
      rowsRead += numel(kernel.inputs[0]) * rowBytes(*t);
  if (op == rt::KernelOp::FusedLookup && kernel.attrs.contains("members")) {
    size_t in = 0;
    for (const nlohmann::json &m : kernel.attrs["members"]) {
      if (in < kernel.inputs.size() && m.contains("table"))
        if (const rt::Table *t = tableAt(m["table"]))
          rowsRead += numel(kernel.inputs[in]) * rowBytes(*t);
      in += m.value("weighted", false) ? 3 : 2;
    }
  }
  if (op == rt::KernelOp::SkipgramStep && kernel.inputs.size() == 5 &&
      kernel.attrs.contains("center")) {
    // Every example reads and writes its centre, context and negatives rows.
    const int64_t rows = numel(kernel.inputs[0]) + numel(kernel.inputs[2]) +
                         numel(kernel.inputs[4]);
    const rt::Buffer &values = plan.buffers[kernel.outputs.size() > 2 ? kernel.outputs[2] : 0];
    const int64_t rowBytesOfTarget = values.shape.size() == 2 ? values.bytes / values.shape[0] : 0;
    rowsRead += rows * rowBytesOfTarget;
    rowsTouched = rows;
  }
  if (op == rt::KernelOp::EmbeddingUpdate && kernel.attrs.contains("sources")) {
    int64_t distinct = 0;
    size_t in = 0;
    for (const nlohmann::json &s : kernel.attrs["sources"]) {
      if (in < kernel.inputs.size())
        distinct += std::min(numel(kernel.inputs[in]), s.value("rows", int64_t(0)));
      in += s.value("kind", "") == "rows" ? 2 : s.value("weighted", false) ? 4 : 3;
    }
    rowsTouched = distinct;
  }
  int64_t total = rowsRead;
  llvm::SmallDenseSet<int32_t> seen;
  auto count = [&](int32_t id, int factor) {
    if (!seen.insert(id).second)
      return;
    const rt::Buffer &b = plan.buffers[id];
    bool table = rowsTouched > 0 &&
                 (b.role == rt::BufferRole::Table ||
                  (b.role == rt::BufferRole::OptimizerState && b.shape[0] > rowsTouched));
    // Tables, their state and shared sparse gradients: only the rows this
    // launch's ids reach.
    if (table || (b.dynamic && rowsTouched > 0))
      total += factor * std::min(b.bytes, rowsTouched * (b.bytes / b.shape[0]));
    else
      total += factor * b.bytes;
  };
  for (int32_t i : kernel.inputs)
    count(i, 1);
  for (int32_t o : kernel.outputs) // written; read too when it accumulates or updates
    count(o, plan.buffers[o].role == rt::BufferRole::Activation ? 1 : 2);
  kernel.bytes = total;
}

FailureOr<rt::Plan> PlanBuilder::build() {
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  auto update = module.lookupSymbol<func::FuncOp>("update");
  if (!step || !update)
    return module.emitError("-emb-to-plan needs @train_step and @update: run "
                            "-emb-autodiff first");
  auto training = module->getAttrOfType<TrainingAttr>(kTrainingAttrName);
  if (!training)
    return module.emitError("the module has no emb.training attribute");

  plan.model = module.getSymName() ? module.getSymName()->str() : "model";
  plan.compiler = std::string("embc ") + EMBC_VERSION;
  rt::TrainingConfig &config = plan.config;
  config.batchSize = training.getBatchSize();
  config.gradAccumulation = training.getGradAccumulation();
  config.gradClipNorm = training.getGradClipNorm();
  config.lrSchedule = planEnum<rt::LrSchedule>(stringifyLrSchedule(training.getLrSchedule()));
  config.warmupSteps = training.getWarmupSteps();
  config.decaySteps = training.getDecaySteps();
  config.seed = uint64_t(training.getSeed());
  config.precision = planEnum<rt::ComputeType>(stringifyPrecision(training.getPrecision()));
  // Ranks: what -emb-distribute inserted collectives for. A plan asking for
  // more ranks without them would train each rank on its own.
  auto planAttr = module->getAttrOfType<PlanAttr>(kPlanAttrName);
  auto ranks = module->getAttrOfType<IntegerAttr>(distribute::kDataParallelAttrName);
  config.dataParallel = ranks ? ranks.getInt() : 1;
  if (planAttr && planAttr.getDataParallel() > 1 && !ranks)
    return module.emitError("the plan asks for data_parallel ")
           << planAttr.getDataParallel()
           << " but the module has no collectives: run -emb-distribute";
  step.walk([&](LossOp loss) {
    config.loss = planEnum<rt::LossKind>(stringifyLossKind(loss.getKind()));
  });
  // Per-example updates exist only as -emb-fuse's skipgram kernel: without
  // it (embc --no-fuse) the plan would silently train with batch updates.
  if (training.getEmbeddingUpdates() != EmbeddingUpdates::batch &&
      !step.walk([](FusedOp f) {
             return f.getKind() == FusionKind::skipgram ? WalkResult::interrupt()
                                                        : WalkResult::advance();
           }).wasInterrupted())
    return module.emitError("embedding_updates = ")
           << stringifyEmbeddingUpdates(training.getEmbeddingUpdates())
           << " runs as -emb-fuse's skipgram kernel, and the step has none: run -emb-fuse "
              "(embc without --no-fuse)";
  if (failed(checkPrecision(step, update)))
    return failure();

  if (failed(readPipelineConfig(step)) ||
      failed(addParamsAndTables(step, config.gradAccumulation * config.microBatches)) ||
      failed(addInputs(step)) || failed(lowerStep(step)) ||
      failed(lowerUpdate(update)) || failed(lowerSchedule(step)))
    return failure();
  layout();
  assignOrigins();
  if (failed(layoutMemory()))
    return failure();
  for (rt::Kernel &k : plan.step)
    estimateBytes(k);
  for (rt::Kernel &k : plan.update)
    estimateBytes(k);
  // -emb-auto's explanation of what it chose, first: it shaped the rest.
  if (auto lines = module->getAttrOfType<ArrayAttr>("emb.auto"))
    for (auto line : lines.getAsRange<StringAttr>())
      plan.notes.push_back(line.str());
  if (!plan.packs.empty() || !plan.tableBatches.empty())
    plan.notes.push_back("-emb-pack-params: " + std::to_string(plan.packs.size()) +
                         " parameter pack(s), " +
                         std::to_string(plan.tableBatches.size()) + " table batch(es)");
  if (module->hasAttr(kQuantizedAttrName)) {
    std::map<std::string, int64_t> byStorage;
    for (const rt::Table &t : plan.tables)
      ++byStorage[rt::enumString(t.storage)]; // words in alphabetical order
    std::string counts;
    for (auto &[storage, n] : byStorage)
      counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + storage;
    plan.notes.push_back("-emb-quantize: tables " + counts + " (" +
                         std::to_string(plan.bytesWithRole(rt::BufferRole::Table)) +
                         " bytes with row-wise scale/bias)");
  }
  if (auto remat = module->getAttrOfType<StringAttr>("emb.remat_note"))
    plan.notes.push_back("-emb-remat: " + remat.str());
  if (config.jobRanks() == 1) {
    // A sharding asked for on one rank is the whole table: say so rather
    // than drop it silently.
    int64_t asked = 0;
    module.walk([&](TableOp t) { asked += t.getSharding() != Sharding::none; });
    if (asked)
      plan.notes.push_back("-emb-distribute: one rank: the sharding of " + std::to_string(asked) +
                           " table(s) has no effect (set plan.data_parallel to shard them)");
  }
  if (config.jobRanks() > 1) {
    // What -emb-distribute inserted: the same collectives serve both layouts.
    int64_t allReduces = 0, gathers = 0, sharded = 0, placed = 0;
    module.walk([&](Operation *op) {
      allReduces += isa<GradAllReduceStartOp>(op);
      gathers += isa<GatherRowsOp>(op);
    });
    for (const rt::Table &t : plan.tables)
      sharded += !t.shardRows.empty();
    for (const rt::Buffer &b : plan.buffers)
      placed += b.rank >= 0;
    std::string ranks;
    for (int32_t r : config.stageRanks)
      ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    plan.notes.push_back(
        config.dataParallel > 1
            ? "-emb-distribute: " + std::to_string(config.dataParallel) +
                  " data-parallel ranks of " + std::to_string(config.batchSize) +
                  " examples each; " + std::to_string(allReduces) +
                  " gradient all-reduce bucket(s), " + std::to_string(gathers) +
                  " sparse gradient(s) all-gathered, " + std::to_string(sharded) +
                  " table(s) sharded"
            : "-emb-distribute: " + std::to_string(config.pipelineStages) +
                  " pipeline stages on " + std::to_string(config.pipelineRanks()) +
                  " ranks [" + ranks + "]; " + std::to_string(sharded) +
                  " table(s) on one rank, " + std::to_string(gathers) +
                  " replicated with gathered gradients, " + std::to_string(allReduces) +
                  " dense all-reduce bucket(s); " + std::to_string(placed) +
                  " buffer(s) on one rank only");
  }
  int64_t fused = 0;
  step.walk([&](FusedOp) { ++fused; });
  if (fused)
    plan.notes.push_back("-emb-fuse: " + std::to_string(fused) +
                         " fused kernels in the step");
  plan.notes.push_back("step: " + std::to_string(plan.forwardKernels) + " forward and " +
                       std::to_string(plan.step.size() - plan.forwardKernels) +
                       " backward kernels; update: " +
                       std::to_string(plan.update.size()) + " kernels");
  plan.notes.push_back(memoryNote);
  return plan;
}

namespace {

struct ToPlanPass : embc::impl::EmbToPlanPassBase<ToPlanPass> {
  using Base::Base;
  void runOnOperation() override {
    FailureOr<rt::Plan> plan = buildPlan(getOperation(), cuda);
    if (failed(plan))
      return signalPassFailure();
    std::string error;
    auto output = openOutputFile(outputFile, &error);
    if (!output) {
      getOperation().emitError(error);
      return signalPassFailure();
    }
    if (emitJson)
      output->os() << rt::planToJson(*plan).dump(2) << "\n";
    else
      output->os() << rt::serializePlan(*plan);
    output->keep();
    markAllAnalysesPreserved();
  }
};

} // namespace

FailureOr<rt::Plan> embc::buildPlan(ModuleOp module, bool cuda) {
  FailureOr<rt::Plan> plan = PlanBuilder(module).build();
  if (failed(plan) || !cuda)
    return plan;
  std::string error;
  if (!codegen::generateCuda(*plan, error))
    return module.emitError(error);
  return plan;
}

std::string embc::formatPlanReport(const rt::Plan &plan, bool everything) {
  std::string s;
  llvm::raw_string_ostream os(s);
  auto mib = [](int64_t bytes) { return double(bytes) / (1024.0 * 1024.0); };
  os << "plan for '" << plan.model << "': " << plan.buffers.size()
     << " buffers, " << plan.step.size() << " step kernels ("
     << plan.forwardKernels << " forward), " << plan.update.size()
     << " update kernels\n";
  printMemoryReport(plan, os, everything);
  // Kernels by op, in first-launch order: what fusion and packing changed.
  for (auto [title, kernels] : {std::pair<const char *, const std::vector<rt::Kernel> *>{
                                    "step", &plan.step},
                                {"update", &plan.update}}) {
    llvm::MapVector<StringRef, std::pair<int64_t, int64_t>> byOp; // launches, bytes
    int64_t total = 0;
    for (const rt::Kernel &k : *kernels) {
      auto &[launches, bytes] = byOp[k.op];
      ++launches;
      bytes += k.bytes;
      total += k.bytes;
    }
    os << "  " << title << " kernels: " << kernels->size() << ", ~"
       << llvm::format("%.2f", mib(total)) << " MiB moved per launch of all\n";
    for (auto &[op, counts] : byOp)
      os << llvm::format("    %-24s x%-4lld ~%9.3f MiB\n", op.str().c_str(),
                         (long long)counts.first, mib(counts.second));
  }
  for (const std::string &note : plan.notes)
    os << "  note: " << note << "\n";
  return s;
}
