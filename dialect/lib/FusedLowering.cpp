//===- FusedLowering.cpp - emb.fused groups as single plan kernels ---------===//
//
// Each kind of group maps to one kernel of the catalogue (docs/plan-format.md,
// "Fused kernels"). Values used only inside a group get no buffer; the
// group's results get the buffers of the values they yield.
//
//===----------------------------------------------------------------------===//

#include "embc/dialect/PlanEmitter.h"

using namespace mlir;
using namespace embc::emb;
namespace rt = embc::runtime;

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

static LogicalResult bindResults(FusedOp fused, PlanEmitter &e) {
  auto yield = cast<YieldOp>(fused.getBody().front().getTerminator());
  for (auto [inner, result] : llvm::zip(yield.getValues(), fused.getResults())) {
    FailureOr<int32_t> buffer =
        e.activation(fused, inner, "fused_" + stringifyFusionKind(fused.getKind()).str());
    if (failed(buffer))
      return failure();
    e.bind(result, *buffer);
  }
  return success();
}

static FailureOr<rt::Kernel> lowerFusedLookup(FusedOp fused, PlanEmitter &e) {
  rt::Kernel k;
  k.op = rt::kernelName(rt::KernelOp::FusedLookup);
  nlohmann::json members = nlohmann::json::array();
  for (LookupOp lookup : opsOf<LookupOp>(fused)) {
    auto hash = lookup.getIds().getDefiningOp<HashOp>();
    bool hashed = hash && hash->getParentOp() == fused.getOperation();
    nlohmann::json m = {{"table", e.table(lookup.getTable())},
                        {"pooling", stringifyPooling(lookup.getPooling()).str()},
                        {"weighted", bool(lookup.getWeights())},
                        {"hash", hashed},
                        {"buckets", hashed ? int64_t(hash.getBuckets()) : 0},
                        {"seed", hashed ? int64_t(hash.getSeed()) : 0},
                        {"hashed_output", hashed && e.hasBuffer(hash.getResult())}};
    if (failed(e.dequantize(lookup, lookup.getTable(), m)))
      return failure();
    k.inputs.push_back(e.buffer(hashed ? hash.getIds() : lookup.getIds()));
    k.inputs.push_back(e.buffer(lookup.getOffsets()));
    if (lookup.getWeights())
      k.inputs.push_back(e.buffer(lookup.getWeights()));
    FailureOr<int32_t> y = e.activation(lookup, lookup.getResult(), lookup->getName().stripDialect());
    if (failed(y))
      return failure();
    k.outputs.push_back(*y);
    if (m["hashed_output"])
      k.outputs.push_back(e.buffer(hash.getResult()));
    members.push_back(std::move(m));
  }
  k.attrs["members"] = std::move(members);
  return k;
}

static FailureOr<rt::Kernel> lowerDenseAct(FusedOp fused, PlanEmitter &e) {
  auto dense = firstOf<DenseOp>(fused);
  auto act = firstOf<ActivationOp>(fused);
  rt::Kernel k;
  k.op = rt::kernelName(rt::KernelOp::DenseAct);
  k.attrs["kind"] = act ? stringifyActivation(act.getKind()).str()
                        : rt::enumString(rt::Activation::None);
  k.attrs["bias"] = bool(dense.getBias());
  for (Value v : dense->getOperands())
    k.inputs.push_back(e.buffer(v));
  k.outputs.push_back(e.buffer(act ? act.getResult() : dense.getResult()));
  if (act && e.hasBuffer(dense.getResult())) // the pre-activation is needed later
    k.outputs.push_back(e.buffer(dense.getResult()));
  return k;
}

static FailureOr<rt::Kernel> lowerDenseActGrad(FusedOp fused, PlanEmitter &e) {
  auto weight = firstOf<DenseGradWeightOp>(fused);
  auto act = firstOf<ActivationGradOp>(fused);
  auto bias = firstOf<BiasGradOp>(fused);
  auto input = firstOf<DenseGradInputOp>(fused);
  AccumulateGradOp accW, accB;
  for (auto acc : opsOf<AccumulateGradOp>(fused))
    (acc.getGrad() == weight.getResult() ? accW : accB) = acc;
  rt::Kernel k;
  k.op = rt::kernelName(rt::KernelOp::DenseActGrad);
  k.attrs["kind"] = act ? stringifyActivation(act.getKind()).str()
                        : rt::enumString(rt::Activation::None);
  k.attrs["from_output"] = act && act.getFromOutput();
  k.attrs["bias"] = bool(bias);
  k.attrs["input_grad"] = bool(input);
  const rt::Param &w = e.plan().params[*e.param(accW.getParam())];
  k.inputs.push_back(e.buffer(act ? act.getGrad() : weight.getGrad()));
  if (act)
    k.inputs.push_back(e.buffer(act.getInput()));
  k.inputs.push_back(e.buffer(weight.getInput()));
  k.inputs.push_back(w.buffer);
  if (act) {
    auto type = cast<RankedTensorType>(act.getType());
    k.outputs.push_back(e.addBuffer("workspace/" + w.name + "/dz", rt::BufferRole::Workspace,
                                  rt::DType::F32,
                                  std::vector<int64_t>(type.getShape().begin(), type.getShape().end())));
  }
  k.outputs.push_back(w.grad);
  if (bias)
    k.outputs.push_back(e.plan().params[*e.param(accB.getParam())].grad);
  if (input) {
    FailureOr<int32_t> dx = e.activation(input, input.getResult(), input->getName().stripDialect());
    if (failed(dx))
      return failure();
    k.outputs.push_back(*dx);
  }
  return k;
}

/// dense_multi: x, w_0 .. w_n-1, the biases of the layers that have one ->
/// y_0 .. y_n-1; "biases" says which do.
static FailureOr<rt::Kernel> lowerDenseMulti(FusedOp fused, PlanEmitter &e) {
  rt::Kernel k;
  k.op = rt::kernelName(rt::KernelOp::DenseMulti);
  SmallVector<DenseOp> layers = opsOf<DenseOp>(fused);
  nlohmann::json biases = nlohmann::json::array();
  k.inputs.push_back(e.buffer(layers.front().getInput()));
  for (DenseOp dense : layers) {
    k.inputs.push_back(e.buffer(dense.getWeight()));
    biases.push_back(bool(dense.getBias()));
  }
  for (DenseOp dense : layers) {
    if (dense.getBias())
      k.inputs.push_back(e.buffer(dense.getBias()));
    FailureOr<int32_t> y = e.activation(dense, dense.getResult(), "dense");
    if (failed(y))
      return failure();
    k.outputs.push_back(*y);
  }
  k.attrs["biases"] = std::move(biases);
  return k;
}

/// dense_multi_grad: dy_0 .. dy_n-1, x, w_0 .. w_n-1 -> dx, dW_0 .. dW_n-1,
/// the db of the layers that have a bias. Layer i is the i-th term of the
/// sum of input gradients ((dx_0 + dx_1) + ...), read from its chain of
/// adds (Fuse.cpp, sharedInputBackward).
static FailureOr<rt::Kernel> lowerDenseMultiGrad(FusedOp fused, PlanEmitter &e) {
  SmallVector<AddOp> adds = opsOf<AddOp>(fused);
  AddOp root;
  for (AddOp add : adds)
    if (llvm::none_of(adds, [&](AddOp other) { return other.getInputs()[0] == add.getResult(); }))
      root = add;
  SmallVector<DenseGradInputOp> layers; // last first
  for (AddOp add = root; add;) {
    layers.push_back(add.getInputs()[1].getDefiningOp<DenseGradInputOp>());
    Value left = add.getInputs()[0];
    add = left.getDefiningOp<AddOp>();
    if (!add)
      layers.push_back(left.getDefiningOp<DenseGradInputOp>());
  }
  std::reverse(layers.begin(), layers.end());
  rt::Kernel k;
  k.op = rt::kernelName(rt::KernelOp::DenseMultiGrad);
  nlohmann::json biases = nlohmann::json::array();
  SmallVector<int32_t> weights, weightGrads, biasGrads;
  llvm::SmallPtrSet<Operation *, 8> taken; // bias gradients: one layer each
  Value x;
  for (DenseGradInputOp input : layers) {
    if (!input)
      return fused.emitOpError("dense_multi_grad: a term of the sum is not a dense_grad_input");
    k.inputs.push_back(e.buffer(input.getGrad()));
    weights.push_back(e.buffer(input.getWeight()));
    auto get = input.getWeight().getDefiningOp<GetOp>();
    int32_t dw = -1, db = -1;
    for (AccumulateGradOp acc : opsOf<AccumulateGradOp>(fused)) {
      Operation *def = acc.getGrad().getDefiningOp();
      if (auto w = dyn_cast_or_null<DenseGradWeightOp>(def);
          w && w.getGrad() == input.getGrad() && get && acc.getParamAttr() == get.getParamAttr()) {
        x = w.getInput();
        dw = e.plan().params[*e.param(acc.getParam())].grad;
      }
      if (auto b = dyn_cast_or_null<BiasGradOp>(def);
          b && b.getGrad() == input.getGrad() && db < 0 && !taken.contains(b)) {
        taken.insert(b);
        db = e.plan().params[*e.param(acc.getParam())].grad;
      }
    }
    if (dw < 0)
      return fused.emitOpError("dense_multi_grad: a layer has no weight gradient");
    weightGrads.push_back(dw);
    if (db >= 0)
      biasGrads.push_back(db);
    biases.push_back(db >= 0);
  }
  k.inputs.push_back(e.buffer(x));
  k.inputs.insert(k.inputs.end(), weights.begin(), weights.end());
  k.outputs.push_back(e.buffer(root.getResult()));
  k.outputs.insert(k.outputs.end(), weightGrads.begin(), weightGrads.end());
  k.outputs.insert(k.outputs.end(), biasGrads.begin(), biasGrads.end());
  k.attrs["biases"] = std::move(biases);
  return k;
}

static FailureOr<rt::Kernel> lowerElementwise(FusedOp fused, PlanEmitter &e) {
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
      step["op"] = rt::enumString(rt::ElementwiseOp::Add);
      step["bias"] = bool(add.getBias());
    } else if (auto act = dyn_cast<ActivationOp>(op)) {
      step["op"] = rt::enumString(rt::ElementwiseOp::Activation);
      step["kind"] = stringifyActivation(act.getKind()).str();
    } else {
      auto grad = cast<ActivationGradOp>(op);
      step["op"] = rt::enumString(rt::ElementwiseOp::ActivationGrad);
      step["kind"] = stringifyActivation(grad.getKind()).str();
      step["from_output"] = bool(grad.getFromOutput());
    }
    refOf[op.getResult(0)] = next++;
    steps.push_back(std::move(step));
  }
  for (Value v : inputs)
    k.inputs.push_back(e.buffer(v));
  nlohmann::json results = nlohmann::json::array();
  auto yield = cast<YieldOp>(body.getTerminator());
  for (Value v : yield.getValues()) {
    results.push_back(refOf.lookup(v));
    k.outputs.push_back(e.buffer(v));
  }
  auto type = cast<RankedTensorType>(yield.getValues().front().getType());
  k.attrs["width"] = type.getShape().back();
  k.attrs["ops"] = std::move(steps);
  k.attrs["results"] = std::move(results);
  return k;
}

static FailureOr<rt::Kernel> lowerInteractionConcat(FusedOp fused, PlanEmitter &e) {
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
    k.inputs.push_back(e.buffer(v));
    ++copies;
  }
  for (Value v : inter.getInputs())
    k.inputs.push_back(e.buffer(v));
  k.attrs["self"] = bool(inter.getSelf());
  k.attrs["copies"] = copies;
  k.attrs["position"] = position;
  k.outputs.push_back(e.buffer(concat.getResult()));
  return k;
}

static FailureOr<rt::Kernel> lowerInteractionConcatGrad(FusedOp fused, PlanEmitter &e) {
  auto grad = firstOf<InteractionGradOp>(fused);
  auto interSlice = grad.getGrad().getDefiningOp<SliceOp>();
  SmallVector<SliceOp> copies;
  for (SliceOp slice : opsOf<SliceOp>(fused))
    if (slice != interSlice)
      copies.push_back(slice);
  llvm::sort(copies, [](SliceOp a, SliceOp b) { return a.getOffset() < b.getOffset(); });

  rt::Kernel k;
  k.op = rt::kernelName(rt::KernelOp::InteractionConcatGrad);
  k.inputs.push_back(e.buffer(interSlice.getInput()));
  for (Value v : grad.getInputs())
    k.inputs.push_back(e.buffer(v));
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
        e.activation(fused, v, what);
    if (failed(buffer))
      return failure();
    k.outputs.push_back(*buffer);
    return success();
  };
  for (Value v : dx)
    if (failed(output(v, grad->getName().stripDialect())))
      return failure();
  for (SliceOp copy : unmerged)
    if (failed(output(copy.getResult(), copy->getName().stripDialect())))
      return failure();
  k.attrs["self"] = bool(grad.getSelf());
  k.attrs["copies"] = int64_t(copies.size());
  k.attrs["position"] = position;
  k.attrs["copy_widths"] = std::move(widths);
  k.attrs["copy_into"] = std::move(into);
  return k;
}

static FailureOr<rt::Kernel> lowerEmbeddingUpdate(FusedOp fused, PlanEmitter &e) {
  auto update = firstOf<UpdateOp>(fused);
  rt::Kernel k;
  k.op = rt::kernelName(rt::KernelOp::EmbeddingUpdate);
  k.attrs["grad_scale"] = e.gradScale();
  if (e.updateTarget(update.getTarget(), k) != rt::Storage::F32)
    k.attrs["requantize"] = rt::enumString(rt::Requantize::Stochastic);
  nlohmann::json sources = nlohmann::json::array();
  for (AccumulateRowsOp acc : opsOf<AccumulateRowsOp>(fused)) {
    const rt::Table &table = e.plan().tables[e.table(acc.getTable())];
    nlohmann::json source = {{"row_offset", e.batchRowOffset(acc.getTable())},
                             {"rows", table.rows}};
    auto grad = acc.getValues().getDefiningOp<LookupGradOp>();
    if (grad && grad->getParentOp() == fused.getOperation()) {
      source["kind"] = rt::enumString(rt::RowSource::Bag);
      source["pooling"] = stringifyPooling(grad.getPooling()).str();
      source["weighted"] = bool(grad.getWeights());
      k.inputs.push_back(e.buffer(grad.getIds()));
      k.inputs.push_back(e.buffer(grad.getOffsets()));
      if (grad.getWeights())
        k.inputs.push_back(e.buffer(grad.getWeights()));
      k.inputs.push_back(e.buffer(grad.getGrad()));
    } else {
      source["kind"] = rt::enumString(rt::RowSource::Rows);
      k.inputs.push_back(e.buffer(acc.getIds()));
      k.inputs.push_back(e.buffer(acc.getValues()));
    }
    sources.push_back(std::move(source));
  }
  k.attrs["sources"] = std::move(sources);
  return k;
}

static FailureOr<rt::Kernel> lowerSkipgram(FusedOp fused, PlanEmitter &e) {
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
  k.inputs = {e.buffer(center.getIds()), e.buffer(center.getOffsets()), e.buffer(context.getIds()),
              e.buffer(context.getOffsets()), e.buffer(negatives.getIds())};
  // The loss and the positive scores, where the group yields them (the
  // step returns both); a value nobody reads still gets a buffer.
  auto yield = cast<YieldOp>(fused.getBody().front().getTerminator());
  for (Value inner : {loss.getResult(), pos.getResult()}) {
    int32_t buffer = -1;
    for (auto [value, result] : llvm::zip(yield.getValues(), fused.getResults()))
      if (value == inner)
        buffer = e.buffer(result);
    if (buffer < 0) {
      FailureOr<int32_t> scratch = e.activation(fused, inner, "skipgram");
      if (failed(scratch))
        return failure();
      buffer = *scratch;
    }
    k.outputs.push_back(buffer);
  }
  e.updateTarget(update.getTarget(), k);
  auto rowsOf = [&](FlatSymbolRefAttr table) {
    return nlohmann::json{{"row_offset", e.batchRowOffset(table.getValue())},
                          {"rows", e.plan().tables[e.table(table.getValue())].rows}};
  };
  k.attrs["center"] = rowsOf(center.getTableAttr());
  k.attrs["context"] = rowsOf(context.getTableAttr());
  k.attrs["negatives"] = rowsOf(negatives.getTableAttr());
  return k;
}

/// add_layer_norm: y = layer_norm(x + dropout(p)); h = x + dropout(p) is an
/// output too when anything outside the group reads it (the residual
/// stream, the layer norm's gradient).
static FailureOr<rt::Kernel> lowerAddLayerNorm(FusedOp fused, PlanEmitter &e) {
  auto add = firstOf<AddOp>(fused);
  auto norm = firstOf<LayerNormOp>(fused);
  auto drop = firstOf<DropoutOp>(fused);
  Value x = add.getInputs()[0], p = add.getInputs()[1];
  if (drop && x == drop.getResult())
    std::swap(x, p);
  rt::Kernel k;
  k.op = rt::kernelName(rt::KernelOp::AddLayerNorm);
  k.attrs["eps"] = norm.getEps().convertToDouble();
  if (drop) {
    k.attrs["rate"] = drop.getRate().convertToDouble();
    k.attrs["stream"] = int64_t(drop.getStream());
  }
  for (Value v : std::initializer_list<Value>{x, drop ? Value(drop.getInput()) : p,
                                            norm.getGamma(), norm.getBeta()})
    k.inputs.push_back(e.buffer(v));
  k.outputs.push_back(e.buffer(norm.getResult()));
  if (e.hasBuffer(add.getResult()))
    k.outputs.push_back(e.buffer(add.getResult()));
  return k;
}

/// add_layer_norm_grad: dh = other + layer_norm_grad's dx (other: the
/// add's other operand, when there is an add), dp = dropout_grad(dh) when
/// the group has one.
static FailureOr<rt::Kernel> lowerAddLayerNormGrad(FusedOp fused, PlanEmitter &e) {
  auto grad = firstOf<LayerNormGradOp>(fused);
  auto add = firstOf<AddOp>(fused);
  auto drop = firstOf<DropoutGradOp>(fused);
  rt::Kernel k;
  k.op = rt::kernelName(rt::KernelOp::AddLayerNormGrad);
  k.attrs["eps"] = grad.getEps().convertToDouble();
  k.attrs["other"] = bool(add);
  if (drop) {
    k.attrs["rate"] = drop.getRate().convertToDouble();
    k.attrs["stream"] = int64_t(drop.getStream());
  }
  for (Value v : {grad.getGrad(), grad.getInput(), grad.getGamma()})
    k.inputs.push_back(e.buffer(v));
  Value dh = grad.getInputGrad();
  if (add) {
    Value other = add.getInputs()[0] == dh ? add.getInputs()[1] : add.getInputs()[0];
    k.inputs.push_back(e.buffer(other));
    dh = add.getResult();
  }
  // dh is always written: the rows the dropout's gradient reads.
  FailureOr<int32_t> dhBuffer =
      e.hasBuffer(dh) ? FailureOr<int32_t>(e.buffer(dh)) : e.activation(fused, dh, "fused_dh");
  if (failed(dhBuffer))
    return failure();
  for (int32_t b : {*dhBuffer, e.buffer(grad.getGammaGrad()), e.buffer(grad.getBetaGrad())})
    k.outputs.push_back(b);
  if (drop)
    k.outputs.push_back(e.buffer(drop.getResult()));
  return k;
}

LogicalResult FusedOp::lowerToPlan(PlanEmitter &e) {
  FusedOp fused = *this;
  if (failed(bindResults(fused, e)))
    return failure();
  FailureOr<rt::Kernel> kernel = failure();
  switch (fused.getKind()) {
  case FusionKind::lookup:
    kernel = lowerFusedLookup(fused, e);
    break;
  case FusionKind::dense_act:
    kernel = lowerDenseAct(fused, e);
    break;
  case FusionKind::dense_act_grad:
    kernel = lowerDenseActGrad(fused, e);
    break;
  case FusionKind::elementwise:
    kernel = lowerElementwise(fused, e);
    break;
  case FusionKind::interaction_concat:
    kernel = lowerInteractionConcat(fused, e);
    break;
  case FusionKind::interaction_concat_grad:
    kernel = lowerInteractionConcatGrad(fused, e);
    break;
  case FusionKind::embedding_update:
    kernel = lowerEmbeddingUpdate(fused, e);
    break;
  case FusionKind::skipgram:
    kernel = lowerSkipgram(fused, e);
    break;
  case FusionKind::add_layer_norm:
    kernel = lowerAddLayerNorm(fused, e);
    break;
  case FusionKind::add_layer_norm_grad:
    kernel = lowerAddLayerNormGrad(fused, e);
    break;
  case FusionKind::dense_multi:
    kernel = lowerDenseMulti(fused, e);
    break;
  case FusionKind::dense_multi_grad:
    kernel = lowerDenseMultiGrad(fused, e);
    break;
  }
  if (failed(kernel))
    return failure();
  e.emit(std::move(*kernel));
  return success();
}
