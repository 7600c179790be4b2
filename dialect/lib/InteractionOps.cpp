//===- InteractionOps.cpp - emb.interaction and emb.cross ------------------===//

#include "embc/dialect/EmbDialect.h"
#include "embc/dialect/PlanEmitter.h"

using namespace mlir;
using namespace embc::emb;
namespace rt = embc::runtime;

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

//===----------------------------------------------------------------------===//
// InteractionOp
//===----------------------------------------------------------------------===//

LogicalResult InteractionOp::verify() {
  if (failed(verifySameFloatElementType(*this)))
    return failure();
  int64_t numFeatures = getInputs().size();
  if (numFeatures < 2)
    return emitOpError("needs at least 2 inputs, got ") << numFeatures;
  RankedTensorType first = tensorType(getInputs().front());
  if (first.getRank() != 2 || !first.hasStaticShape())
    return emitOpError("input #0 must be a static B x D tensor, got ") << first;
  for (auto [i, input] : llvm::enumerate(getInputs()))
    if (input.getType() != first)
      return emitOpError("all inputs must have the same B x D type: input #")
             << i << " is " << input.getType() << ", input #0 is " << first;
  int64_t pairs = getSelf() ? numFeatures * (numFeatures + 1) / 2
                            : numFeatures * (numFeatures - 1) / 2;
  RankedTensorType result = tensorType(getResult());
  if (result.getRank() != 2 || result.getDimSize(0) != first.getDimSize(0) ||
      result.getDimSize(1) != pairs)
    return emitOpError("result must be ")
           << first.getDimSize(0) << "x" << pairs << " for " << numFeatures
           << " features, got " << result;
  return success();
}

int64_t InteractionOp::getForwardFlops() {
  RankedTensorType in = tensorType(getInputs().front());
  return 2 * tensorType(getResult()).getNumElements() * in.getDimSize(1);
}

int64_t InteractionOp::getForwardBytes() {
  RankedTensorType in = tensorType(getInputs().front());
  return getElementBytes(getResult()) * (in.getNumElements() * getInputs().size() +
              tensorType(getResult()).getNumElements());
}

//===----------------------------------------------------------------------===//
// CrossOp
//===----------------------------------------------------------------------===//

LogicalResult CrossOp::verify() {
  if (failed(verifySameFloatElementType(*this)))
    return failure();
  RankedTensorType x = tensorType(getX0());
  if (x.getRank() != 2 || !x.hasStaticShape())
    return emitOpError("'x0' must be a static B x D tensor, got ") << x;
  int64_t dim = x.getDimSize(1);
  RankedTensorType w = tensorType(getWeight());
  if (w.getRank() != 2 || w.getDimSize(0) != dim || w.getDimSize(1) != dim)
    return emitOpError("weight must be ")
           << dim << "x" << dim << " (D x D), got " << w;
  RankedTensorType b = tensorType(getBias());
  if (b.getRank() != 1 || b.getDimSize(0) != dim)
    return emitOpError("bias must have ") << dim << " entries, got " << b;
  if (Value linear = getLinear(); linear && linear.getType() != getResult().getType())
    return emitOpError("'linear' (xl W) must have the result's type ")
           << getResult().getType() << ", got " << linear.getType();
  return success();
}

LogicalResult CrossGradOp::verify() {
  // The shapes are checked with the forward op's rules by its verifier; the
  // gradient's operands mirror them.
  RankedTensorType x = tensorType(getX0());
  RankedTensorType w = tensorType(getWeight());
  if (x.getRank() != 2 || w.getRank() != 2 || w.getDimSize(0) != x.getDimSize(1) ||
      w.getDimSize(1) != x.getDimSize(1))
    return emitOpError("weight must be D x D for x0 ") << x << ", got " << w;
  return success();
}

int64_t CrossOp::getForwardFlops() {
  RankedTensorType x = tensorType(getX0());
  int64_t b = x.getDimSize(0), d = x.getDimSize(1);
  return 2 * b * d * d + 3 * b * d;
}

int64_t CrossOp::getForwardBytes() {
  RankedTensorType x = tensorType(getX0());
  int64_t d = x.getDimSize(1);
  return getElementBytes(getResult()) * (3 * x.getNumElements() + d * d + d);
}

LogicalResult InteractionOp::lowerToPlan(PlanEmitter &e) {
  rt::Kernel k = PlanEmitter::kernel(rt::KernelOp::Interaction);
  k.attrs["self"] = bool(getSelf());
  return e.emitOnOperands(*this, std::move(k));
}
