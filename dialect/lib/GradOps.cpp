//===- GradOps.cpp - verifiers of the backward and update ops -------------===//
//
// The ops -emb-autodiff builds (EmbGradOps.td). Their verifiers catch a
// gradient rule that builds mismatched shapes, so a broken rule fails at its
// own op instead of in the runtime.
//
//===----------------------------------------------------------------------===//

#include "embc/dialect/EmbDialect.h"
#include "embc/dialect/PlanEmitter.h"

using namespace mlir;
using namespace embc::emb;
namespace rt = embc::runtime;

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Checks that `v` is a static 2-D tensor; names it `what` in the error.
static LogicalResult verifyMatrix(Operation *op, Value v, StringRef what) {
  RankedTensorType type = tensorType(v);
  if (type.getRank() != 2 || !type.hasStaticShape())
    return op->emitOpError() << what << " must be a static 2-D tensor, got "
                             << type;
  return success();
}

LogicalResult LossGradOp::verify() {
  unsigned expected = getKind() == LossKind::neg_sampling ? 2 : 1;
  if (getGrads().size() != expected)
    return emitOpError("'") << stringifyLossKind(getKind()) << "' has "
                            << expected << " gradient result(s), got "
                            << getGrads().size();
  if (getGrads()[0].getType() != getInput().getType())
    return emitOpError("gradient type ")
           << getGrads()[0].getType() << " must match the input type "
           << getInput().getType();
  if (expected == 2 && getGrads()[1].getType() != getTarget().getType())
    return emitOpError("gradient type ")
           << getGrads()[1].getType() << " must match the target type "
           << getTarget().getType();
  return verifySameFloatElementType(*this);
}

/// True when `a` and `b` have the same dimensions but the last (the rows of
/// a dense layer's input and output).
static bool sameRows(Value a, Value b) {
  return tensorType(a).getShape().drop_back() == tensorType(b).getShape().drop_back();
}

LogicalResult DenseGradInputOp::verify() {
  if (failed(verifyRowMatrix(*this, getGrad(), "'grad'")) ||
      failed(verifyMatrix(*this, getWeight(), "'weight'")) ||
      failed(verifyRowMatrix(*this, getResult(), "result")))
    return failure();
  auto w = tensorType(getWeight()).getShape();
  if (tensorType(getGrad()).getShape().back() != w[1] || !sameRows(getGrad(), getResult()) ||
      tensorType(getResult()).getShape().back() != w[0])
    return emitOpError("expected grad [rows] x N, weight K x N and result [rows] x K, got ")
           << getGrad().getType() << ", " << getWeight().getType() << ", "
           << getResult().getType();
  return verifySameFloatElementType(*this);
}

LogicalResult DenseGradWeightOp::verify() {
  if (failed(verifyRowMatrix(*this, getInput(), "'input'")) ||
      failed(verifyRowMatrix(*this, getGrad(), "'grad'")) ||
      failed(verifyMatrix(*this, getResult(), "result")))
    return failure();
  auto dw = tensorType(getResult()).getShape();
  if (!sameRows(getInput(), getGrad()) || dw[0] != tensorType(getInput()).getShape().back() ||
      dw[1] != tensorType(getGrad()).getShape().back())
    return emitOpError("expected input [rows] x K, grad [rows] x N and result K x N, got ")
           << getInput().getType() << ", " << getGrad().getType() << ", "
           << getResult().getType();
  return verifySameFloatElementType(*this);
}

LogicalResult BiasGradOp::verify() {
  if (failed(verifyRowMatrix(*this, getGrad(), "'grad'")))
    return failure();
  RankedTensorType result = tensorType(getResult());
  const int64_t width = tensorType(getGrad()).getShape().back();
  if (result.getRank() != 1 || result.getDimSize(0) != width)
    return emitOpError("result must have one entry per column of 'grad' (")
           << width << "), got " << result;
  return verifySameFloatElementType(*this);
}

LogicalResult SliceOp::verify() {
  if (failed(verifyMatrix(*this, getInput(), "'input'")) ||
      failed(verifyMatrix(*this, getResult(), "result")))
    return failure();
  auto in = tensorType(getInput()).getShape();
  auto out = tensorType(getResult()).getShape();
  int64_t offset = static_cast<int64_t>(getOffset());
  if (in[0] != out[0] || offset + out[1] > in[1])
    return emitOpError("columns [")
           << offset << ", " << offset + out[1] << ") of "
           << getInput().getType() << " do not fit";
  return verifySameFloatElementType(*this);
}

LogicalResult InteractionGradOp::verify() {
  if (getResults().size() != getInputs().size())
    return emitOpError("expected one gradient per input (")
           << getInputs().size() << "), got " << getResults().size();
  for (auto [in, out] : llvm::zip(getInputs(), getResults()))
    if (in.getType() != out.getType())
      return emitOpError("gradient type ")
             << out.getType() << " must match its input type "
             << in.getType();
  int64_t f = getInputs().size();
  int64_t pairs = getSelf() ? f * (f + 1) / 2 : f * (f - 1) / 2;
  if (failed(verifyMatrix(*this, getGrad(), "'grad'")))
    return failure();
  if (tensorType(getGrad()).getDimSize(1) != pairs)
    return emitOpError("'grad' must have ")
           << pairs << " columns for " << f << " inputs, got "
           << getGrad().getType();
  return verifySameFloatElementType(*this);
}

LogicalResult DotGradOp::verify() { return verifySameFloatElementType(*this); }

LogicalResult LookupGradOp::verify() {
  RankedTensorType ids = tensorType(getIds());
  RankedTensorType result = tensorType(getResult());
  if (ids.getRank() != 1)
    return emitOpError("'ids' must be 1-D, got ") << ids;
  if (result.getRank() != 2 || result.getDimSize(0) != ids.getDimSize(0))
    return emitOpError("result must have one row per id (")
           << ids << "), got " << result;
  if (failed(verifyMatrix(*this, getGrad(), "'grad'")))
    return failure();
  if (tensorType(getOffsets()).getDimSize(0) !=
      tensorType(getGrad()).getDimSize(0) + 1)
    return emitOpError("'offsets' must have batch + 1 entries");
  if (tensorType(getGrad()).getDimSize(1) != result.getDimSize(1))
    return emitOpError("result width must match 'grad' width");
  return success();
}

LogicalResult
LookupGradOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<TableOp> table = lookupTable(*this, getTableAttr(), symbolTable);
  if (failed(table))
    return failure();
  if (tensorType(getResult()).getDimSize(1) != int64_t(table->getDim()))
    return emitOpError("result width != dim of table @") << getTable();
  return success();
}

LogicalResult
AccumulateGradOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto param = symbolTable.lookupNearestSymbolFrom<ParamOp>(*this,
                                                            getParamAttr());
  if (!param)
    return emitOpError("'") << getParam()
                            << "' does not name an emb.param in this module";
  if (param.getType() != getGrad().getType())
    return emitOpError("gradient type ")
           << getGrad().getType() << " != type of @" << getParam() << " ("
           << param.getType() << ")";
  return success();
}

LogicalResult AccumulateRowsOp::verify() {
  auto ids = tensorType(getIds()).getShape();
  auto values = tensorType(getValues()).getShape();
  if (values.size() != ids.size() + 1 || values.drop_back() != ids)
    if (!(ids.size() == 1 && values.size() == 2 && ids[0] == values[0]))
      return emitOpError("'values' must have the shape of 'ids' followed by "
                         "the table dim, got ")
             << getIds().getType() << " and " << getValues().getType();
  return success();
}

LogicalResult
AccumulateRowsOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<TableOp> table = lookupTable(*this, getTableAttr(), symbolTable);
  if (failed(table))
    return failure();
  if (tensorType(getValues()).getShape().back() != int64_t(table->getDim()))
    return emitOpError("row width != dim of table @") << getTable();
  return success();
}

LogicalResult
CoalesceRowsOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (symbolTable.lookupNearestSymbolFrom<TableBatchOp>(*this, getTableAttr()))
    return success();
  return lookupTable(*this, getTableAttr(), symbolTable);
}

LogicalResult ClipGradNormOp::verify() {
  if (!(getMaxNorm().convertToDouble() > 0))
    return emitOpError("max_norm must be positive, got ")
           << getMaxNorm().convertToDouble();
  return success();
}

LogicalResult UpdateOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *target =
      symbolTable.lookupNearestSymbolFrom(*this, getTargetAttr());
  if (!target || !isa<ParamOp, TableOp, ParamPackOp, TableBatchOp>(target))
    return emitOpError("'") << getTarget()
                            << "' does not name an emb.param, emb.table, "
                               "emb.param_pack or emb.table_batch";
  return success();
}

LogicalResult ActivationGradOp::verify() {
  if (getFromOutput() && getKind() == Activation::gelu)
    return emitOpError("gelu's derivative cannot be computed from its output; "
                       "'from_output' needs relu, sigmoid or tanh");
  return success();
}

/// Every column from the first: the slice is its input.
OpFoldResult SliceOp::fold(FoldAdaptor) {
  if (getOffset() == 0 && getInput().getType() == getType())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// Plan lowering
//===----------------------------------------------------------------------===//

LogicalResult LossGradOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::LossGrad);
  k.attrs["kind"] = stringifyLossKind(getKind()).str();
  return e.emitOnOperands(*this, std::move(k));
}

LogicalResult ActivationGradOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::ActivationGrad);
  k.attrs["kind"] = stringifyActivation(getKind()).str();
  if (getFromOutput())
    k.attrs["from_output"] = true;
  return e.emitOnOperands(*this, std::move(k));
}

LogicalResult SliceOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::Slice);
  k.attrs["offset"] = int64_t(getOffset());
  return e.emitOnOperands(*this, std::move(k));
}

LogicalResult InteractionGradOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::InteractionGrad);
  k.attrs["self"] = bool(getSelf());
  return e.emitOnOperands(*this, std::move(k));
}

LogicalResult LookupGradOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::LookupGrad);
  k.attrs["table"] = e.table(getTable());
  k.attrs["pooling"] = stringifyPooling(getPooling()).str();
  // Only max pooling reads the table (which row won).
  if (getPooling() == Pooling::max && failed(e.dequantize(*this, getTable(), k.attrs)))
    return failure();
  return e.emitOnOperands(*this, std::move(k));
}

LogicalResult AccumulateGradOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::AccumulateGrad);
  const int32_t p = *e.param(getParam());
  k.attrs["param"] = p;
  k.inputs = {e.buffer(getGrad())};
  k.outputs = {e.plan().params[p].grad};
  e.emit(std::move(k));
  return success();
}

LogicalResult AccumulateRowsOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::AccumulateRows);
  const int32_t t = e.table(getTable());
  k.attrs["table"] = t;
  // A batched table's rows are batch rows: shift its ids as they go in.
  k.attrs["row_offset"] = e.batchRowOffset(getTable());
  k.inputs = {e.buffer(getIds()), e.buffer(getValues())};
  k.outputs = {e.plan().tables[t].gradRows, e.plan().tables[t].gradValues};
  e.emit(std::move(k));
  return success();
}

/// The sparse gradient (rows, values) of a table batch or a lone table.
static std::vector<int32_t> sparseGrad(PlanEmitter &e, StringRef target) {
  if (std::optional<int32_t> b = e.batch(target))
    return {e.plan().tableBatches[*b].gradRows, e.plan().tableBatches[*b].gradValues};
  const rt::Table &t = e.plan().tables[e.table(target)];
  return {t.gradRows, t.gradValues};
}

LogicalResult CoalesceRowsOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::CoalesceRows);
  if (std::optional<int32_t> b = e.batch(getTable()))
    k.attrs["batch"] = *b;
  else
    k.attrs["table"] = e.table(getTable());
  k.outputs = sparseGrad(e, getTable());
  e.emit(std::move(k));
  return success();
}

LogicalResult ClipGradNormOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::ClipGradNorm);
  k.attrs["max_norm"] = getMaxNorm().convertToDouble();
  k.attrs["grad_scale"] = e.gradScale();
  for (const rt::Param &p : e.plan().params)
    k.inputs.push_back(p.grad);
  for (const rt::Table &t : e.plan().tables) // batched tables share one
    if (!llvm::is_contained(k.inputs, t.gradValues))
      k.inputs.push_back(t.gradValues);
  const int32_t scale = e.addBuffer("clip_scale", rt::BufferRole::Workspace, rt::DType::F32, {1});
  e.bind(getScale(), scale);
  k.outputs = {scale};
  e.emit(std::move(k));
  return success();
}

LogicalResult UpdateOp::lowerToPlan(PlanEmitter &e) {
  const rt::Plan &plan = e.plan();
  rt::Kernel k;
  StringRef target = getTarget();
  auto updates = [&](int32_t grad, int32_t values, const std::vector<int32_t> &state) {
    k.inputs = {grad};
    k.outputs = {values};
    k.outputs.insert(k.outputs.end(), state.begin(), state.end());
  };
  if (std::optional<int32_t> pack = e.pack(target)) {
    const rt::ParamPack &p = plan.packs[*pack];
    k = PlanEmitter::kernel(rt::KernelOp::UpdatePacked);
    k.attrs["pack"] = *pack;
    updates(p.grad, p.buffer, p.state);
  } else if (std::optional<int32_t> param = e.param(target)) {
    const rt::Param &p = plan.params[*param];
    k = PlanEmitter::kernel(rt::KernelOp::UpdateParam);
    k.attrs["param"] = *param;
    updates(p.grad, p.buffer, p.state);
  } else {
    k = PlanEmitter::kernel(rt::KernelOp::UpdateTable);
    k.inputs = sparseGrad(e, target);
    if (e.updateTarget(target, k) != rt::Storage::F32)
      k.attrs["requantize"] = rt::enumString(rt::Requantize::Stochastic);
  }
  k.attrs["grad_scale"] = e.gradScale();
  if (getScale())
    k.inputs.push_back(e.buffer(getScale()));
  e.emit(std::move(k));
  return success();
}
