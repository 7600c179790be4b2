//===- DenseOps.cpp - dense, activation, layer norm, dropout, concat, add -===//

#include "embc/dialect/EmbDialect.h"
#include "embc/dialect/PlanEmitter.h"

#include <cmath>

using namespace mlir;
using namespace embc::emb;
namespace rt = embc::runtime;

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

static int64_t numElements(Value v) {
  RankedTensorType t = tensorType(v);
  return t.hasStaticShape() ? t.getNumElements() : 0;
}

/// Checks that `v` is a static 2-D tensor; names it `what` in the error.
static LogicalResult verifyMatrix(Operation *op, Value v, StringRef what) {
  RankedTensorType t = tensorType(v);
  if (t.getRank() != 2 || !t.hasStaticShape())
    return op->emitOpError("'") << what << "' must be a static 2-D tensor, got "
                                << t;
  return success();
}

/// What concat and add check first: one float element type, at least one
/// input and a static 2-D result.
static LogicalResult verifyInputsAndMatrixResult(Operation *op, ValueRange inputs,
                                                 Value result) {
  if (failed(verifySameFloatElementType(op)))
    return failure();
  if (inputs.empty())
    return op->emitOpError("needs at least one input");
  return verifyMatrix(op, result, "result");
}

//===----------------------------------------------------------------------===//
// DenseOp
//===----------------------------------------------------------------------===//

LogicalResult DenseOp::verify() {
  if (failed(verifySameFloatElementType(*this)))
    return failure();
  if (failed(verifyRowMatrix(*this, getInput(), "'input'")) ||
      failed(verifyMatrix(*this, getWeight(), "weight")))
    return failure();
  ArrayRef<int64_t> x = tensorType(getInput()).getShape();
  ArrayRef<int64_t> w = tensorType(getWeight()).getShape();
  if (x.back() != w[0])
    return emitOpError("input width (")
           << x.back() << ") != weight rows (" << w[0] << ")";
  // Each row (a B x K batch, or every position of a B x L x K sequence)
  // goes through the same layer.
  auto expected = tensorType(getInput()).clone(withLastDim(x, w[1]));
  if (getResult().getType() != expected)
    return emitOpError("result type must be ") << expected << ", got " << getResult().getType();
  if (Value bias = getBias()) {
    RankedTensorType b = tensorType(bias);
    if (b.getRank() != 1 || b.getDimSize(0) != w[1])
      return emitOpError("bias must have ")
             << w[1] << " entries (the output width), got " << b;
  }
  return success();
}

int64_t DenseOp::getForwardFlops() {
  const int64_t rows = getRowCount(getInput());
  ArrayRef<int64_t> w = tensorType(getWeight()).getShape();
  return 2 * rows * w[0] * w[1] + (getBias() ? rows * w[1] : 0);
}

int64_t DenseOp::getForwardBytes() {
  int64_t n = numElements(getInput()) + numElements(getWeight()) +
              numElements(getResult());
  if (getBias())
    n += numElements(getBias());
  return getElementBytes(getResult()) * n;
}

//===----------------------------------------------------------------------===//
// ActivationOp
//===----------------------------------------------------------------------===//

int64_t ActivationOp::getForwardFlops() {
  // relu is one compare; the transcendental ones cost roughly ten.
  return numElements(getInput()) * (getKind() == Activation::relu ? 1 : 10);
}

int64_t ActivationOp::getForwardBytes() {
  return 2 * getElementBytes(getResult()) * numElements(getInput());
}

//===----------------------------------------------------------------------===//
// LayerNormOp, LayerNormGradOp
//===----------------------------------------------------------------------===//

/// `x` (rank >= 2, static) and `gamma`, `beta` of D entries, D its last
/// dimension; `eps` positive and finite.
static LogicalResult verifyLayerNorm(Operation *op, Value x, ArrayRef<Value> perColumn,
                                     double eps) {
  RankedTensorType t = tensorType(x);
  if (t.getRank() < 2 || !t.hasStaticShape())
    return op->emitOpError("input must be a static tensor of rank 2 or more, got ") << t;
  const int64_t width = t.getShape().back();
  for (Value v : perColumn) {
    RankedTensorType c = tensorType(v);
    if (c.getRank() != 1 || c.getDimSize(0) != width)
      return op->emitOpError("gamma and beta must have ")
             << width << " entries (the input's last dimension), got " << c;
  }
  if (!(eps > 0.0) || !std::isfinite(eps))
    return op->emitOpError("eps must be positive and finite, got ") << eps;
  return success();
}

LogicalResult LayerNormOp::verify() {
  if (failed(verifySameFloatElementType(*this)))
    return failure();
  if (getResult().getType() != getInput().getType())
    return emitOpError("result type ")
           << getResult().getType() << " must be the input's, " << getInput().getType();
  return verifyLayerNorm(*this, getInput(), {getGamma(), getBeta()},
                         getEps().convertToDouble());
}

LogicalResult LayerNormGradOp::verify() {
  if (failed(verifySameFloatElementType(*this)))
    return failure();
  if (getGrad().getType() != getInput().getType() ||
      getInputGrad().getType() != getInput().getType())
    return emitOpError("grad and input_grad must have the input's type ")
           << getInput().getType();
  if (getGammaGrad().getType() != getGamma().getType() ||
      getBetaGrad().getType() != getGamma().getType())
    return emitOpError("gamma_grad and beta_grad must have gamma's type ")
           << getGamma().getType();
  return verifyLayerNorm(*this, getInput(), {getGamma()}, getEps().convertToDouble());
}

// Per element: subtract the mean, square, scale, shift; per row: two sums.
int64_t LayerNormOp::getForwardFlops() { return 8 * numElements(getInput()); }

int64_t LayerNormOp::getForwardBytes() {
  return getElementBytes(getResult()) *
         (2 * numElements(getInput()) + 2 * numElements(getGamma()));
}

LogicalResult LayerNormOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                         ArrayRef<bool> need,
                                         SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(getNumOperands(), Value());
  if (!resultGrads[0] || llvm::none_of(need, [](bool n) { return n; }))
    return success();
  // One kernel gives all three: the row statistics are shared.
  auto grad = LayerNormGradOp::create(b, getLoc(), getInput().getType(), getGamma().getType(),
                                      getBeta().getType(), resultGrads[0], getInput(),
                                      getGamma(), getEpsAttr());
  for (auto [i, g] : llvm::enumerate(grad.getResults()))
    if (need[i])
      operandGrads[i] = g;
  return success();
}

//===----------------------------------------------------------------------===//
// DropoutOp, DropoutGradOp
//===----------------------------------------------------------------------===//

/// `rate` in [0, 1) and `stream` non-negative (the kernels key draws on it).
static LogicalResult verifyDropout(Operation *op, Value x, double rate, int64_t stream) {
  RankedTensorType t = tensorType(x);
  if (t.getRank() < 1 || !t.hasStaticShape())
    return op->emitOpError("input must be a static tensor of rank 1 or more, got ") << t;
  if (!(rate >= 0.0 && rate < 1.0))
    return op->emitOpError("rate must be in [0, 1), got ") << rate;
  if (stream < 0)
    return op->emitOpError("stream must be non-negative, got ") << stream;
  return success();
}

LogicalResult DropoutOp::verify() {
  return verifyDropout(*this, getInput(), getRate().convertToDouble(), getStream());
}

LogicalResult DropoutGradOp::verify() {
  return verifyDropout(*this, getGrad(), getRate().convertToDouble(), getStream());
}

// A hash and a multiply per element.
int64_t DropoutOp::getForwardFlops() { return numElements(getInput()); }

int64_t DropoutOp::getForwardBytes() {
  return getElementBytes(getResult()) * 2 * numElements(getInput());
}

LogicalResult DropoutOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                       ArrayRef<bool> need,
                                       SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  if (!resultGrads[0] || !need[0])
    return success();
  operandGrads[0] = DropoutGradOp::create(b, getLoc(), getInput().getType(), resultGrads[0],
                                          getRateAttr(), getStreamAttr());
  return success();
}

//===----------------------------------------------------------------------===//
// ConcatOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::verify() {
  if (failed(verifyInputsAndMatrixResult(*this, getInputs(), getResult())))
    return failure();
  int64_t batch = tensorType(getResult()).getDimSize(0);
  int64_t width = 0;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    if (failed(verifyMatrix(*this, input, "input #" + std::to_string(i))))
      return failure();
    RankedTensorType t = tensorType(input);
    if (t.getDimSize(0) != batch)
      return emitOpError("input #")
             << i << " has batch " << t.getDimSize(0) << ", expected "
             << batch;
    width += t.getDimSize(1);
  }
  if (width != tensorType(getResult()).getDimSize(1))
    return emitOpError("result width (")
           << tensorType(getResult()).getDimSize(1)
           << ") != sum of input widths (" << width << ")";
  return success();
}

int64_t ConcatOp::getForwardFlops() { return 0; }

int64_t ConcatOp::getForwardBytes() {
  return 2 * getElementBytes(getResult()) * numElements(getResult());
}

//===----------------------------------------------------------------------===//
// AddOp
//===----------------------------------------------------------------------===//

LogicalResult AddOp::verify() {
  if (failed(verifySameFloatElementType(*this)))
    return failure();
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  if (failed(verifyRowMatrix(*this, getResult(), "result")))
    return failure();
  Type resultType = getResult().getType();
  for (auto [i, input] : llvm::enumerate(getInputs()))
    if (input.getType() != resultType)
      return emitOpError("input #") << i << " has type " << input.getType()
                                    << ", expected the result type "
                                    << resultType;
  if (Value bias = getBias()) {
    RankedTensorType b = tensorType(bias);
    int64_t width = tensorType(getResult()).getShape().back();
    if (b.getRank() != 1 || b.getDimSize(0) != width)
      return emitOpError("bias must have ") << width << " entries, got " << b;
  }
  return success();
}

int64_t AddOp::getForwardFlops() {
  // n inputs take n - 1 adds per element, the bias one more.
  return numElements(getResult()) *
         (getInputs().size() - 1 + (getBias() ? 1 : 0));
}

int64_t AddOp::getForwardBytes() {
  return getElementBytes(getResult()) * numElements(getResult()) *
         (getInputs().size() + 1);
}

//===----------------------------------------------------------------------===//
// DotOp
//===----------------------------------------------------------------------===//

LogicalResult DotOp::verify() {
  if (failed(verifySameFloatElementType(*this)))
    return failure();
  if (failed(verifyMatrix(*this, getLhs(), "lhs")) ||
      failed(verifyMatrix(*this, getResult(), "result")))
    return failure();
  RankedTensorType lhs = tensorType(getLhs());
  RankedTensorType rhs = tensorType(getRhs());
  int64_t batch = lhs.getDimSize(0), dim = lhs.getDimSize(1);
  if (!rhs.hasStaticShape() || (rhs.getRank() != 2 && rhs.getRank() != 3))
    return emitOpError("'rhs' must be a static B x D or B x K x D tensor, got ")
           << rhs;
  if (rhs.getDimSize(0) != batch || rhs.getShape().back() != dim)
    return emitOpError("'rhs' ")
           << rhs << " does not match 'lhs' " << lhs
           << " (expected batch " << batch << " and width " << dim << ")";
  int64_t k = rhs.getRank() == 3 ? rhs.getDimSize(1) : 1;
  ArrayRef<int64_t> y = tensorType(getResult()).getShape();
  if (y[0] != batch || y[1] != k)
    return emitOpError("result shape must be ")
           << batch << "x" << k << ", got " << y[0] << "x" << y[1];
  return success();
}

int64_t DotOp::getForwardFlops() { return 2 * numElements(getRhs()); }

int64_t DotOp::getForwardBytes() {
  return getElementBytes(getResult()) * (numElements(getLhs()) + numElements(getRhs()) +
              numElements(getResult()));
}

//===----------------------------------------------------------------------===//
// Folders (canonicalize): ops that copy their only input
//===----------------------------------------------------------------------===//

/// A concatenation of one tensor is that tensor.
OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  return {};
}

/// A sum of one tensor without a bias is that tensor.
OpFoldResult AddOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && !getBias() && getInputs()[0].getType() == getType())
    return getInputs()[0];
  return {};
}

//===----------------------------------------------------------------------===//
// Plan lowering
//===----------------------------------------------------------------------===//

LogicalResult DenseOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::Dense);
  k.attrs["bias"] = bool(getBias());
  return e.emitOnOperands(*this, std::move(k));
}

LogicalResult ActivationOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::Activation);
  k.attrs["kind"] = stringifyActivation(getKind()).str();
  return e.emitOnOperands(*this, std::move(k));
}

LogicalResult AddOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::Add);
  k.attrs["bias"] = bool(getBias());
  return e.emitOnOperands(*this, std::move(k));
}
