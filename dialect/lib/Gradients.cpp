//===- Gradients.cpp - the backward rule of each differentiable op --------===//
//
// GradientOpInterface implementations, one per forward op. Each rule builds
// only the gradients it is asked for (needOperandGrad), so inputs that are
// data (ids, dense features, labels) cost nothing in the backward pass.
//
//===----------------------------------------------------------------------===//

#include "embc/dialect/EmbDialect.h"

using namespace mlir;
using namespace embc::emb;

/// Starts `operandGrads` as one null Value per operand of `op`.
static void resetGrads(Operation *op, SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(op->getNumOperands(), Value());
}

LogicalResult GetOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   ArrayRef<bool>,
                                   SmallVectorImpl<Value> &operandGrads) {
  resetGrads(*this, operandGrads);
  if (resultGrads[0])
    AccumulateGradOp::create(b, getLoc(), getParamAttr(), resultGrads[0]);
  return success();
}

LogicalResult LookupOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                      ArrayRef<bool>,
                                      SmallVectorImpl<Value> &operandGrads) {
  resetGrads(*this, operandGrads);
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  auto dyType = cast<RankedTensorType>(dy.getType());
  auto idsType = cast<RankedTensorType>(getIds().getType());
  auto rowsType = RankedTensorType::get(
      {idsType.getDimSize(0), dyType.getDimSize(1)}, dyType.getElementType());
  Value rows = LookupGradOp::create(b, getLoc(), rowsType, getTableAttr(),
                                    getIds(), getOffsets(), getWeights(),
                                    getPoolingAttr(), dy);
  AccumulateRowsOp::create(b, getLoc(), getTableAttr(), getIds(), rows);
  return success();
}

LogicalResult GatherOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                      ArrayRef<bool>,
                                      SmallVectorImpl<Value> &operandGrads) {
  resetGrads(*this, operandGrads);
  if (resultGrads[0])
    AccumulateRowsOp::create(b, getLoc(), getTableAttr(), getIds(),
                             resultGrads[0]);
  return success();
}

LogicalResult DenseOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     ArrayRef<bool> need,
                                     SmallVectorImpl<Value> &operandGrads) {
  resetGrads(*this, operandGrads);
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  if (need[0])
    operandGrads[0] = DenseGradInputOp::create(b, getLoc(), getInput().getType(),
                                               dy, getWeight());
  if (need[1])
    operandGrads[1] = DenseGradWeightOp::create(
        b, getLoc(), getWeight().getType(), getInput(), dy);
  if (getBias() && need[2])
    operandGrads[2] =
        BiasGradOp::create(b, getLoc(), getBias().getType(), dy);
  return success();
}

LogicalResult ActivationOp::buildGradient(OpBuilder &b,
                                          ArrayRef<Value> resultGrads,
                                          ArrayRef<bool> need,
                                          SmallVectorImpl<Value> &operandGrads) {
  resetGrads(*this, operandGrads);
  if (resultGrads[0] && need[0])
    operandGrads[0] =
        ActivationGradOp::create(b, getLoc(), getInput().getType(),
                                 getKindAttr(), resultGrads[0], getInput());
  return success();
}

LogicalResult ConcatOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                      ArrayRef<bool> need,
                                      SmallVectorImpl<Value> &operandGrads) {
  resetGrads(*this, operandGrads);
  if (!resultGrads[0])
    return success();
  int64_t offset = 0;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    if (need[i])
      operandGrads[i] = SliceOp::create(b, getLoc(), type, resultGrads[0],
                                        b.getI64IntegerAttr(offset));
    offset += type.getDimSize(1);
  }
  return success();
}

LogicalResult AddOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   ArrayRef<bool> need,
                                   SmallVectorImpl<Value> &operandGrads) {
  resetGrads(*this, operandGrads);
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  unsigned numInputs = getInputs().size();
  for (unsigned i = 0; i < numInputs; ++i)
    if (need[i])
      operandGrads[i] = dy;
  if (getBias() && need[numInputs])
    operandGrads[numInputs] =
        BiasGradOp::create(b, getLoc(), getBias().getType(), dy);
  return success();
}

LogicalResult InteractionOp::buildGradient(OpBuilder &b,
                                           ArrayRef<Value> resultGrads,
                                           ArrayRef<bool> need,
                                           SmallVectorImpl<Value> &operandGrads) {
  resetGrads(*this, operandGrads);
  if (!resultGrads[0] || llvm::none_of(need, [](bool n) { return n; }))
    return success();
  auto grad = InteractionGradOp::create(
      b, getLoc(), getInputs().getTypes(), resultGrads[0], getInputs(),
      getSelfAttr());
  for (auto [i, g] : llvm::enumerate(grad.getResults()))
    if (need[i])
      operandGrads[i] = g;
  return success();
}

LogicalResult CrossOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     ArrayRef<bool> need,
                                     SmallVectorImpl<Value> &operandGrads) {
  resetGrads(*this, operandGrads);
  if (!resultGrads[0] || llvm::none_of(need, [](bool n) { return n; }))
    return success();
  // With the forward's xl W (its `linear` result), the gradient reads it
  // instead of computing it again.
  auto grad = CrossGradOp::create(
      b, getLoc(), getX0().getType(), getX0().getType(), getWeight().getType(),
      getBias().getType(), resultGrads[0], getX0(), getXl(), getWeight(),
      getBias(), getLinear());
  Value grads[] = {grad.getDx0(), grad.getDxl(), grad.getDweight(),
                   grad.getDbias()};
  for (unsigned i = 0; i < 4; ++i)
    if (need[i])
      operandGrads[i] = grads[i];
  return success();
}

LogicalResult DotOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   ArrayRef<bool> need,
                                   SmallVectorImpl<Value> &operandGrads) {
  resetGrads(*this, operandGrads);
  if (!resultGrads[0] || !(need[0] || need[1]))
    return success();
  auto grad = DotGradOp::create(b, getLoc(), getLhs().getType(),
                                getRhs().getType(), resultGrads[0], getLhs(),
                                getRhs());
  if (need[0])
    operandGrads[0] = grad.getDlhs();
  if (need[1])
    operandGrads[1] = grad.getDrhs();
  return success();
}

LogicalResult LossOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    ArrayRef<bool> need,
                                    SmallVectorImpl<Value> &operandGrads) {
  resetGrads(*this, operandGrads);
  // The loss is the root: its own result as gradient means d loss/d loss = 1.
  if (resultGrads[0] != getResult())
    return emitOpError("a loss can only be the root of the backward pass; its "
                       "value cannot feed other differentiable ops");
  bool twoSided = getKind() == LossKind::neg_sampling;
  if (!need[0] && !(twoSided && need[1]))
    return success(); // nothing trainable reaches this loss
  SmallVector<Type> types = {getInput().getType()};
  if (twoSided)
    types.push_back(getTarget().getType());
  auto grad = LossGradOp::create(b, getLoc(), types, getKindAttr(), getInput(),
                                 getTarget());
  if (need[0])
    operandGrads[0] = grad.getGrads()[0];
  if (twoSided && need[1])
    operandGrads[1] = grad.getGrads()[1];
  return success();
}
