//===- EmbDialect.cpp - emb dialect registration and attributes ----------===//

#include "embc/dialect/EmbDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace embc::emb;

#include "embc/dialect/EmbDialect.cpp.inc"
#include "embc/dialect/EmbEnums.cpp.inc"
#include "embc/dialect/EmbInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "embc/dialect/EmbAttrs.cpp.inc"

void EmbDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "embc/dialect/EmbAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "embc/dialect/EmbOps.cpp.inc"
      >();
}

LogicalResult embc::emb::verifySameFloatElementType(Operation *op) {
  Type first;
  auto check = [&](Type type) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !isa<FloatType>(tensor.getElementType()))
      return success();
    if (!first) {
      first = tensor.getElementType();
      return success();
    }
    if (tensor.getElementType() != first)
      return op->emitOpError("operands and result must share one element "
                             "type, got ")
             << first << " and " << tensor.getElementType();
    return success();
  };
  for (Type t : op->getOperandTypes())
    if (failed(check(t)))
      return failure();
  for (Type t : op->getResultTypes())
    if (failed(check(t)))
      return failure();
  return success();
}

LogicalResult embc::emb::verifyRowMatrix(Operation *op, Value v, StringRef what) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() < 2 || !type.hasStaticShape())
    return op->emitOpError() << what << " must be a static tensor of rank 2 or more (rows x "
                             << "columns, or B x L x columns), got " << type;
  return success();
}

int64_t embc::emb::getRowCount(Value v) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(v.getType()).getShape();
  int64_t rows = 1;
  for (int64_t d : shape.drop_back())
    rows *= d;
  return rows;
}

SmallVector<int64_t> embc::emb::withLastDim(ArrayRef<int64_t> shape, int64_t width) {
  SmallVector<int64_t> out(shape);
  out.back() = width;
  return out;
}

int64_t embc::emb::getElementBytes(Value v) {
  Type element = cast<ShapedType>(v.getType()).getElementType();
  return std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
}

int64_t embc::emb::getStorageElementBits(StorageType storage) {
  switch (storage) {
  case StorageType::f32:
    return 32;
  case StorageType::f16:
  case StorageType::bf16:
    return 16;
  case StorageType::int8_rowwise:
    return 8;
  case StorageType::int4_rowwise:
    return 4;
  }
  llvm_unreachable("unknown storage type");
}

int64_t embc::emb::getStorageRowParamBytes(StorageType storage) {
  // FBGEMM's "SBHalf" layout: the scale and bias of a row as two fp16.
  return storage == StorageType::int8_rowwise || storage == StorageType::int4_rowwise ? 4 : 0;
}

void embc::emb::printReal(AsmPrinter &printer, Real r) {
  double v = r;
  if (!std::isfinite(v)) {
    printer.printFloat(llvm::APFloat(v));
    return;
  }
  char buffer[40];
  for (int precision = 1; precision <= 17; ++precision) {
    snprintf(buffer, sizeof(buffer), "%.*g", precision, v);
    if (strtod(buffer, nullptr) == v)
      break;
  }
  // MLIR float literals need a '.': "1e-08" would lex as an integer.
  std::string text(buffer);
  if (text.find('.') == std::string::npos) {
    size_t e = text.find('e');
    text.insert(e == std::string::npos ? text.size() : e, ".0");
  }
  printer.getStream() << text;
}

//===----------------------------------------------------------------------===//
// Attribute verifiers
//===----------------------------------------------------------------------===//

LogicalResult
InitializerAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        InitKind kind, Real value, Real low, Real high,
                        Real mean, Real std, Real gain) {
  if (!std::isfinite(value) || !std::isfinite(low) || !std::isfinite(high) ||
      !std::isfinite(mean) || !std::isfinite(std) || !std::isfinite(gain))
    return emitError() << "initializer parameters must be finite";
  if (kind == InitKind::uniform && !(low < high))
    return emitError() << "uniform initializer needs low < high, got low = "
                       << low << ", high = " << high;
  if (kind == InitKind::normal && !(std > 0))
    return emitError() << "normal initializer needs std > 0, got " << std;
  if ((kind == InitKind::xavier_uniform || kind == InitKind::xavier_normal) &&
      !(gain > 0))
    return emitError() << "xavier initializer needs gain > 0, got " << gain;
  return success();
}

LogicalResult
OptimizerAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      OptimizerKind kind, Real lr, Real momentum,
                      Real beta1, Real beta2, Real eps,
                      Real weightDecay, WeightDecayMode weightDecayMode,
                      Real initialAccumulator) {
  if (!(lr > 0) || !std::isfinite(lr))
    return emitError() << "optimizer 'lr' must be positive and finite, got "
                       << lr;
  if (!(momentum >= 0 && momentum < 1))
    return emitError() << "optimizer 'momentum' must be in [0, 1), got "
                       << momentum;
  if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1))
    return emitError() << "optimizer betas must be in [0, 1), got beta1 = "
                       << beta1 << ", beta2 = " << beta2;
  if (!(eps > 0) || !std::isfinite(eps))
    return emitError() << "optimizer 'eps' must be positive, got " << eps;
  if (!(weightDecay >= 0) || !std::isfinite(weightDecay))
    return emitError() << "optimizer 'weight_decay' must be >= 0, got "
                       << weightDecay;
  if (!(initialAccumulator >= 0) || !std::isfinite(initialAccumulator))
    return emitError()
           << "optimizer 'initial_accumulator' must be >= 0, got "
           << initialAccumulator;
  if (momentum != 0 && kind != OptimizerKind::sgd)
    return emitError() << "'momentum' applies only to sgd, not to "
                       << stringifyOptimizerKind(kind);
  return success();
}

LogicalResult
TrainingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                     int64_t batchSize, OptimizerAttr denseOptimizer,
                     Precision precision, Real gradClipNorm,
                     int64_t gradAccumulation, int64_t warmupSteps,
                     LrSchedule lrSchedule, int64_t decaySteps, int64_t seed,
                     EmbeddingUpdates embeddingUpdates) {
  if (batchSize <= 0)
    return emitError() << "'batch_size' must be positive, got " << batchSize;
  if (!denseOptimizer)
    return emitError() << "'dense_optimizer' is required";
  if (!(gradClipNorm >= 0) || !std::isfinite(gradClipNorm))
    return emitError() << "'grad_clip_norm' must be >= 0, got "
                       << gradClipNorm;
  if (gradAccumulation <= 0)
    return emitError() << "'grad_accumulation' must be positive, got "
                       << gradAccumulation;
  if (warmupSteps < 0 || decaySteps < 0)
    return emitError() << "'warmup_steps' and 'decay_steps' must be >= 0";
  if (lrSchedule != LrSchedule::constant && decaySteps == 0)
    return emitError() << "lr_schedule '" << stringifyLrSchedule(lrSchedule)
                       << "' needs 'decay_steps' > 0";
  if (seed < 0)
    return emitError() << "'seed' must be >= 0, got " << seed;
  return success();
}

LogicalResult PlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t memoryBudget, RematMode remat,
                               int64_t microBatches, int64_t pipelineStages,
                               PipelineSchedule schedule,
                               int64_t dataParallel, int64_t pipelineRanks) {
  if (memoryBudget < 0)
    return emitError() << "'memory_budget' must be >= 0, got " << memoryBudget;
  if (microBatches <= 0 || pipelineStages <= 0 || dataParallel <= 0 || pipelineRanks <= 0)
    return emitError() << "'micro_batches', 'pipeline_stages', 'data_parallel' and "
                          "'pipeline_ranks' must be positive";
  if (pipelineRanks > pipelineStages)
    return emitError() << "'pipeline_ranks' (" << pipelineRanks
                       << ") must not exceed 'pipeline_stages' (" << pipelineStages
                       << "): each rank runs at least one stage";
  return success();
}
