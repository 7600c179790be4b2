//===- PlanFused.cpp - emb.fused groups as single plan kernels -------------===//
//
// Each kind of group maps to one kernel of the catalogue (docs/plan-format.md,
// "Fused kernels"). Values used only inside a group get no buffer; the
// group's results get the buffers of the values they yield.
//
//===----------------------------------------------------------------------===//

#include "PlanBuilder.h"

using namespace mlir;
using namespace embc::emb;
using namespace embc::planbuilder;

namespace {

/// The body's ops of type OpTy, in order.
template <class OpTy> SmallVector<OpTy> opsOf(FusedOp fused) {
  SmallVector<OpTy> ops;
  for (auto op : fused.getBody().front().getOps<OpTy>())
    ops.push_back(op);
  return ops;
}

template <class OpTy> OpTy firstOf(FusedOp fused) {
  auto ops = fused.getBody().front().getOps<OpTy>();
  return ops.empty() ? OpTy() : *ops.begin();
}

} // namespace

LogicalResult PlanBuilder::bindResults(FusedOp fused) {
  auto yield = cast<YieldOp>(fused.getBody().front().getTerminator());
  for (auto [inner, result] : llvm::zip(yield.getValues(), fused.getResults())) {
    FailureOr<int32_t> buffer =
        valueBuffer(fused, inner, rt::BufferRole::Activation,
                    "act/" + std::to_string(plan.buffers.size()) + "/fused_" +
                        stringifyFusionKind(fused.getKind()).str());
    if (failed(buffer))
      return failure();
    bufferOf[result] = *buffer;
  }
  return success();
}

FailureOr<rt::Kernel> PlanBuilder::lowerFused(FusedOp fused) {
  if (failed(bindResults(fused)))
    return failure();
  switch (fused.getKind()) {
  case FusionKind::lookup:
    return lowerFusedLookup(fused);
  case FusionKind::dense_act:
    return lowerDenseAct(fused);
  case FusionKind::dense_act_grad:
    return lowerDenseActGrad(fused);
  case FusionKind::elementwise:
    return lowerElementwise(fused);
  case FusionKind::interaction_concat:
    return lowerInteractionConcat(fused);
  case FusionKind::interaction_concat_grad:
    return lowerInteractionConcatGrad(fused);
  case FusionKind::embedding_update:
    return lowerEmbeddingUpdate(fused);
  case FusionKind::skipgram:
    return lowerSkipgram(fused);
  }
  return fused.emitOpError("has no kernel for this kind");
}

/// A buffer for a value the kernel writes although nothing reads it later.
static std::string scratchName(rt::Plan &plan, StringRef what) {
  return "act/" + std::to_string(plan.buffers.size()) + "/" + what.str();
}

FailureOr<rt::Kernel> PlanBuilder::lowerFusedLookup(FusedOp fused) {
  rt::Kernel k;
  k.op = rt::kernelName(rt::KernelOp::FusedLookup);
  nlohmann::json members = nlohmann::json::array();
  for (LookupOp lookup : opsOf<LookupOp>(fused)) {
    auto hash = lookup.getIds().getDefiningOp<HashOp>();
    bool hashed = hash && hash->getParentOp() == fused.getOperation();
    nlohmann::json m = {{"table", tableIndex.lookup(lookup.getTable())},
                        {"pooling", stringifyPooling(lookup.getPooling()).str()},
                        {"weighted", bool(lookup.getWeights())},
                        {"hash", hashed},
                        {"buckets", hashed ? int64_t(hash.getBuckets()) : 0},
                        {"seed", hashed ? int64_t(hash.getSeed()) : 0},
                        {"hashed_output", hashed && bufferOf.count(hash.getResult())}};
    if (failed(dequantizeAttr(lookup, lookup.getTable(), m)))
      return failure();
    k.inputs.push_back(read(hashed ? hash.getIds() : lookup.getIds()));
    k.inputs.push_back(read(lookup.getOffsets()));
    if (lookup.getWeights())
      k.inputs.push_back(read(lookup.getWeights()));
    FailureOr<int32_t> y = valueBuffer(lookup, lookup.getResult(), rt::BufferRole::Activation,
                                       scratchName(plan, "lookup"));
    if (failed(y))
      return failure();
    k.outputs.push_back(*y);
    if (m["hashed_output"])
      k.outputs.push_back(read(hash.getResult()));
    members.push_back(std::move(m));
  }
  k.attrs["members"] = std::move(members);
  return k;
}

FailureOr<rt::Kernel> PlanBuilder::lowerDenseAct(FusedOp fused) {
  auto dense = firstOf<DenseOp>(fused);
  auto act = firstOf<ActivationOp>(fused);
  rt::Kernel k;
  k.op = rt::kernelName(rt::KernelOp::DenseAct);
  k.attrs["kind"] = act ? stringifyActivation(act.getKind()).str() : "none";
  k.attrs["bias"] = bool(dense.getBias());
  for (Value v : dense->getOperands())
    k.inputs.push_back(read(v));
  k.outputs.push_back(read(act ? act.getResult() : dense.getResult()));
  if (act && bufferOf.count(dense.getResult())) // the pre-activation is needed later
    k.outputs.push_back(read(dense.getResult()));
  return k;
}

FailureOr<rt::Kernel> PlanBuilder::lowerDenseActGrad(FusedOp fused) {
  auto weight = firstOf<DenseGradWeightOp>(fused);
  auto act = firstOf<ActivationGradOp>(fused);
  auto bias = firstOf<BiasGradOp>(fused);
  auto input = firstOf<DenseGradInputOp>(fused);
  AccumulateGradOp accW, accB;
  for (auto acc : opsOf<AccumulateGradOp>(fused))
    (acc.getGrad() == weight.getResult() ? accW : accB) = acc;
  rt::Kernel k;
  k.op = rt::kernelName(rt::KernelOp::DenseActGrad);
  k.attrs["kind"] = act ? stringifyActivation(act.getKind()).str() : "none";
  k.attrs["from_output"] = act && act.getFromOutput();
  k.attrs["bias"] = bool(bias);
  k.attrs["input_grad"] = bool(input);
  const rt::Param &w = plan.params[paramIndex.lookup(accW.getParam())];
  k.inputs.push_back(read(act ? act.getGrad() : weight.getGrad()));
  if (act)
    k.inputs.push_back(read(act.getInput()));
  k.inputs.push_back(read(weight.getInput()));
  k.inputs.push_back(w.buffer);
  if (act) {
    auto type = cast<RankedTensorType>(act.getType());
    k.outputs.push_back(addBuffer("workspace/" + w.name + "/dz", rt::BufferRole::Workspace,
                                  rt::DType::F32, {type.getDimSize(0), type.getDimSize(1)}));
  }
  k.outputs.push_back(w.grad);
  if (bias)
    k.outputs.push_back(plan.params[paramIndex.lookup(accB.getParam())].grad);
  if (input) {
    FailureOr<int32_t> dx = valueBuffer(input, input.getResult(), rt::BufferRole::Activation,
                                        scratchName(plan, "dense_grad_input"));
    if (failed(dx))
      return failure();
    k.outputs.push_back(*dx);
  }
  return k;
}

FailureOr<rt::Kernel> PlanBuilder::lowerElementwise(FusedOp fused) {
  rt::Kernel k;
  k.op = rt::kernelName(rt::KernelOp::Elementwise);
  Block &body = fused.getBody().front();
  DenseMap<Value, int64_t> refOf; // inputs first, then one ref per step
  SmallVector<Value> inputs;
  for (Operation &op : body.without_terminator())
    for (Value v : op.getOperands())
      if (v.getParentBlock() != &body && !refOf.count(v)) {
        refOf[v] = int64_t(inputs.size());
        inputs.push_back(v);
      }
  nlohmann::json steps = nlohmann::json::array();
  int64_t next = int64_t(inputs.size());
  for (Operation &op : body.without_terminator()) {
    nlohmann::json step;
    nlohmann::json args = nlohmann::json::array();
    for (Value v : op.getOperands())
      args.push_back(refOf.lookup(v));
    step["args"] = args;
    if (auto add = dyn_cast<AddOp>(op)) {
      step["op"] = "add";
      step["bias"] = bool(add.getBias());
    } else if (auto act = dyn_cast<ActivationOp>(op)) {
      step["op"] = "activation";
      step["kind"] = stringifyActivation(act.getKind()).str();
    } else {
      auto grad = cast<ActivationGradOp>(op);
      step["op"] = "activation_grad";
      step["kind"] = stringifyActivation(grad.getKind()).str();
      step["from_output"] = bool(grad.getFromOutput());
    }
    refOf[op.getResult(0)] = next++;
    steps.push_back(std::move(step));
  }
  for (Value v : inputs)
    k.inputs.push_back(read(v));
  nlohmann::json results = nlohmann::json::array();
  auto yield = cast<YieldOp>(body.getTerminator());
  for (Value v : yield.getValues()) {
    results.push_back(refOf.lookup(v));
    k.outputs.push_back(read(v));
  }
  auto type = cast<RankedTensorType>(yield.getValues().front().getType());
  k.attrs["width"] = type.getShape().back();
  k.attrs["ops"] = std::move(steps);
  k.attrs["results"] = std::move(results);
  return k;
}

FailureOr<rt::Kernel> PlanBuilder::lowerInteractionConcat(FusedOp fused) {
  auto inter = firstOf<InteractionOp>(fused);
  auto concat = firstOf<ConcatOp>(fused);
  rt::Kernel k;
  k.op = rt::kernelName(rt::KernelOp::InteractionConcat);
  int64_t copies = 0, position = -1;
  for (Value v : concat.getInputs()) {
    if (v == inter.getResult()) {
      position = copies;
      continue;
    }
    k.inputs.push_back(read(v));
    ++copies;
  }
  for (Value v : inter.getInputs())
    k.inputs.push_back(read(v));
  k.attrs["self"] = bool(inter.getSelf());
  k.attrs["copies"] = copies;
  k.attrs["position"] = position;
  k.outputs.push_back(read(concat.getResult()));
  return k;
}

FailureOr<rt::Kernel> PlanBuilder::lowerInteractionConcatGrad(FusedOp fused) {
  auto grad = firstOf<InteractionGradOp>(fused);
  auto interSlice = grad.getGrad().getDefiningOp<SliceOp>();
  SmallVector<SliceOp> copies;
  for (SliceOp slice : opsOf<SliceOp>(fused))
    if (slice != interSlice)
      copies.push_back(slice);
  llvm::sort(copies, [](SliceOp a, SliceOp b) { return a.getOffset() < b.getOffset(); });

  rt::Kernel k;
  k.op = rt::kernelName(rt::KernelOp::InteractionConcatGrad);
  k.inputs.push_back(read(interSlice.getInput()));
  for (Value v : grad.getInputs())
    k.inputs.push_back(read(v));
  nlohmann::json widths = nlohmann::json::array(), into = nlohmann::json::array();
  int64_t position = 0;
  // The gradient of input i is the add that folds a copy into it, if any.
  SmallVector<Value> dx(grad.getResults().begin(), grad.getResults().end());
  SmallVector<SliceOp> unmerged;
  for (SliceOp copy : copies) {
    if (copy.getOffset() < interSlice.getOffset())
      ++position;
    widths.push_back(cast<RankedTensorType>(copy.getType()).getDimSize(1));
    int64_t target = -1;
    if (copy.getResult().hasOneUse())
      if (auto add = dyn_cast<AddOp>(*copy.getResult().getUsers().begin());
          add && add->getParentOp() == fused.getOperation()) {
        Value other = add.getInputs()[0] == copy.getResult() ? add.getInputs()[1]
                                                              : add.getInputs()[0];
        target = cast<OpResult>(other).getResultNumber();
        dx[target] = add.getResult();
      }
    into.push_back(target);
    if (target < 0)
      unmerged.push_back(copy);
  }
  auto output = [&](Value v, StringRef what) -> LogicalResult {
    FailureOr<int32_t> buffer =
        valueBuffer(fused, v, rt::BufferRole::Activation, scratchName(plan, what));
    if (failed(buffer))
      return failure();
    k.outputs.push_back(*buffer);
    return success();
  };
  for (Value v : dx)
    if (failed(output(v, "interaction_grad")))
      return failure();
  for (SliceOp copy : unmerged)
    if (failed(output(copy.getResult(), "slice")))
      return failure();
  k.attrs["self"] = bool(grad.getSelf());
  k.attrs["copies"] = int64_t(copies.size());
  k.attrs["position"] = position;
  k.attrs["copy_widths"] = std::move(widths);
  k.attrs["copy_into"] = std::move(into);
  return k;
}

FailureOr<rt::Kernel> PlanBuilder::lowerEmbeddingUpdate(FusedOp fused) {
  auto update = firstOf<UpdateOp>(fused);
  rt::Kernel k;
  k.op = rt::kernelName(rt::KernelOp::EmbeddingUpdate);
  k.attrs["grad_scale"] = 1.0 / double(plan.config.gradAccumulation *
                                       plan.config.microBatches * plan.config.dataParallel);
  if (auto batch = batchIndex.find(update.getTarget()); batch != batchIndex.end()) {
    const rt::TableBatch &b = plan.tableBatches[batch->second];
    k.attrs["batch"] = batch->second;
    if (b.storage != rt::Storage::F32)
      k.attrs["requantize"] = rt::enumString(rt::Requantize::Stochastic);
    k.outputs = {b.buffer};
    k.outputs.insert(k.outputs.end(), b.state.begin(), b.state.end());
  } else {
    int32_t t = tableIndex.lookup(update.getTarget());
    k.attrs["table"] = t;
    if (plan.tables[t].storage != rt::Storage::F32)
      k.attrs["requantize"] = rt::enumString(rt::Requantize::Stochastic);
    k.outputs = {plan.tables[t].buffer};
    k.outputs.insert(k.outputs.end(), plan.tables[t].state.begin(), plan.tables[t].state.end());
  }
  nlohmann::json sources = nlohmann::json::array();
  for (AccumulateRowsOp acc : opsOf<AccumulateRowsOp>(fused)) {
    const rt::Table &table = plan.tables[tableIndex.lookup(acc.getTable())];
    nlohmann::json source = {{"row_offset", batchOfTable.lookup(acc.getTable()).second},
                             {"rows", table.rows}};
    auto grad = acc.getValues().getDefiningOp<LookupGradOp>();
    if (grad && grad->getParentOp() == fused.getOperation()) {
      source["kind"] = "bag";
      source["pooling"] = stringifyPooling(grad.getPooling()).str();
      source["weighted"] = bool(grad.getWeights());
      k.inputs.push_back(read(grad.getIds()));
      k.inputs.push_back(read(grad.getOffsets()));
      if (grad.getWeights())
        k.inputs.push_back(read(grad.getWeights()));
      k.inputs.push_back(read(grad.getGrad()));
    } else {
      source["kind"] = "rows";
      k.inputs.push_back(read(acc.getIds()));
      k.inputs.push_back(read(acc.getValues()));
    }
    sources.push_back(std::move(source));
  }
  k.attrs["sources"] = std::move(sources);
  return k;
}

/// The update target's buffer and state (a table batch or a lone table) as
/// the kernel's outputs, and its index as the attribute `batch` or `table`.
static void updateTarget(rt::Plan &plan, const llvm::StringMap<int32_t> &batchIndex,
                         const llvm::StringMap<int32_t> &tableIndex, UpdateOp update,
                         rt::Kernel &k) {
  if (auto batch = batchIndex.find(update.getTarget()); batch != batchIndex.end()) {
    const rt::TableBatch &b = plan.tableBatches[batch->second];
    k.attrs["batch"] = batch->second;
    k.outputs.push_back(b.buffer);
    k.outputs.insert(k.outputs.end(), b.state.begin(), b.state.end());
  } else {
    const int32_t t = tableIndex.lookup(update.getTarget());
    k.attrs["table"] = t;
    k.outputs.push_back(plan.tables[t].buffer);
    k.outputs.insert(k.outputs.end(), plan.tables[t].state.begin(), plan.tables[t].state.end());
  }
}

FailureOr<rt::Kernel> PlanBuilder::lowerSkipgram(FusedOp fused) {
  // -emb-fuse formed the group only for this exact step (Fuse.cpp).
  auto loss = firstOf<LossOp>(fused);
  auto update = firstOf<UpdateOp>(fused);
  if (!loss || !update)
    return fused.emitOpError("skipgram group without its loss or update");
  auto pos = loss.getInput().getDefiningOp<DotOp>();
  auto neg = loss.getTarget().getDefiningOp<DotOp>();
  auto center = pos ? pos.getLhs().getDefiningOp<LookupOp>() : LookupOp();
  auto context = pos ? pos.getRhs().getDefiningOp<LookupOp>() : LookupOp();
  auto negatives = neg ? neg.getRhs().getDefiningOp<GatherOp>() : GatherOp();
  if (!center || !context || !negatives)
    return fused.emitOpError("skipgram group whose loss is not neg_sampling of dots of "
                             "lookups and a gather");
  auto training = fused->getParentOfType<ModuleOp>()->getAttrOfType<TrainingAttr>(
      kTrainingAttrName);
  rt::Kernel k;
  k.op = rt::kernelName(rt::KernelOp::SkipgramStep);
  k.attrs["mode"] = stringifyEmbeddingUpdates(training.getEmbeddingUpdates()).str();
  k.inputs = {read(center.getIds()), read(center.getOffsets()), read(context.getIds()),
              read(context.getOffsets()), read(negatives.getIds())};
  // The loss and the positive scores, where the group yields them (the
  // step returns both); a value nobody reads still gets a buffer.
  auto yield = cast<YieldOp>(fused.getBody().front().getTerminator());
  for (Value inner : {loss.getResult(), pos.getResult()}) {
    int32_t buffer = -1;
    for (auto [value, result] : llvm::zip(yield.getValues(), fused.getResults()))
      if (value == inner)
        buffer = bufferOf.lookup(result);
    if (buffer < 0) {
      FailureOr<int32_t> scratch = valueBuffer(fused, inner, rt::BufferRole::Activation,
                                               scratchName(plan, "skipgram"));
      if (failed(scratch))
        return failure();
      buffer = *scratch;
    }
    k.outputs.push_back(buffer);
  }
  updateTarget(plan, batchIndex, tableIndex, update, k);
  auto rowsOf = [&](FlatSymbolRefAttr table) {
    return nlohmann::json{{"row_offset", batchOfTable.lookup(table.getValue()).second},
                          {"rows", plan.tables[tableIndex.lookup(table.getValue())].rows}};
  };
  k.attrs["center"] = rowsOf(center.getTableAttr());
  k.attrs["context"] = rowsOf(context.getTableAttr());
  k.attrs["negatives"] = rowsOf(negatives.getTableAttr());
  return k;
}
