//===- PlanBuilder.h - -emb-to-plan's state, shared by its files -*- C++ -*-===//
//
// -emb-to-plan is one pass in ToPlan.cpp; the lowering of what the
// optimisation passes produce lives beside it: PlanPacking.cpp (packed
// parameters and table batches become views of one buffer) and PlanFused.cpp
// (each emb.fused group becomes one kernel).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_LIB_PLANBUILDER_H
#define EMBC_PASSES_LIB_PLANBUILDER_H

#include "embc/dialect/EmbDialect.h"
#include "embc/runtime/Plan.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>

namespace embc::planbuilder {

using namespace mlir;
using namespace embc::emb;
namespace rt = embc::runtime;

inline rt::Initializer convertInit(InitializerAttr init) {
  rt::Initializer out;
  out.kind = stringifyInitKind(init.getKind()).str();
  out.value = init.getValue();
  out.low = init.getLow();
  out.high = init.getHigh();
  out.mean = init.getMean();
  out.std = init.getStd();
  out.gain = init.getGain();
  return out;
}

inline rt::Optimizer convertOptimizer(OptimizerAttr opt) {
  rt::Optimizer out;
  out.kind = stringifyOptimizerKind(opt.getKind()).str();
  out.lr = opt.getLr();
  out.momentum = opt.getMomentum();
  out.beta1 = opt.getBeta1();
  out.beta2 = opt.getBeta2();
  out.eps = opt.getEps();
  out.weightDecay = opt.getWeightDecay();
  out.initialAccumulator = opt.getInitialAccumulator();
  out.weightDecayMode = stringifyWeightDecayMode(opt.getWeightDecayMode()).str();
  return out;
}

/// Optimizer state buffers (shape of each) for a value of `shape`; rowwise
/// Adagrad keeps one accumulator per row (leading dimension).
inline SmallVector<std::vector<int64_t>> stateShapes(const rt::Optimizer &opt,
                                             const std::vector<int64_t> &shape) {
  if (opt.kind == "sgd")
    return opt.momentum != 0.0 ? SmallVector<std::vector<int64_t>>{shape}
                               : SmallVector<std::vector<int64_t>>{};
  if (opt.kind == "adagrad")
    return {shape};
  if (opt.kind == "rowwise_adagrad")
    return {{shape.size() > 1 ? shape.front() : 1}};
  return {shape, shape}; // adam, adamw, lamb: first and second moments
}

/// Kernel name: the op's name without the dialect prefix.
rt::Kernel kernelFor(Operation *op);

class PlanBuilder {
public:
  explicit PlanBuilder(ModuleOp module) : module(module) {}
  FailureOr<rt::Plan> build();

private:
  ModuleOp module;
  rt::Plan plan;
  DenseMap<Value, int32_t> bufferOf;
  llvm::StringMap<int32_t> paramIndex, tableIndex, packIndex, batchIndex;
  /// Per table in a batch: its batch and first batch row.
  llvm::StringMap<std::pair<int32_t, int64_t>> batchOfTable;
  /// Views (packing): buffer -> bytes from its parent's start.
  DenseMap<int32_t, int64_t> viewOffset;
  SymbolTableCollection symbols;

  int32_t addBuffer(std::string name, rt::BufferRole role, rt::DType dtype,
                    std::vector<int64_t> shape, bool dynamic = false);
  /// A buffer that lies inside `parent`, `relativeBytes` from its start.
  int32_t addView(std::string name, int32_t parent, int64_t relativeBytes,
                  std::vector<int64_t> shape);
  FailureOr<int32_t> valueBuffer(Operation *op, Value v, rt::BufferRole role,
                                 StringRef name);
  int64_t idCapacity(Value ids);
  LogicalResult addParamsAndTables(func::FuncOp step, int64_t accumulation);
  LogicalResult addInputs(func::FuncOp step);
  LogicalResult lowerStep(func::FuncOp step);
  LogicalResult lowerUpdate(func::FuncOp update);
  FailureOr<rt::Kernel> lowerOp(Operation *op);
  void layout();
  void estimateBytes(rt::Kernel &kernel);

  // PlanPacking.cpp
  /// Creates the packs' buffers; members then get views (packedParam).
  LogicalResult addPacks(const rt::Optimizer &dense);
  /// Creates the batches' buffers, given each table's sparse-gradient capacity.
  LogicalResult addTableBatches(const llvm::StringMap<int64_t> &gradCapacity);
  /// Fills a packed parameter's buffers as views; false if not packed.
  bool packedParam(ParamOp param, rt::Param &p);
  /// Fills a batched table's buffers as views; false if not batched.
  bool batchedTable(TableOp table, rt::Table &t);
  /// The update kernel of a pack or batch target (or nothing if neither).
  std::optional<rt::Kernel> groupUpdate(UpdateOp op, double gradScale);

  // PlanFused.cpp
  FailureOr<rt::Kernel> lowerFused(FusedOp fused);
  FailureOr<rt::Kernel> lowerFusedLookup(FusedOp fused);
  FailureOr<rt::Kernel> lowerDenseAct(FusedOp fused);
  FailureOr<rt::Kernel> lowerDenseActGrad(FusedOp fused);
  FailureOr<rt::Kernel> lowerElementwise(FusedOp fused);
  FailureOr<rt::Kernel> lowerInteractionConcat(FusedOp fused);
  FailureOr<rt::Kernel> lowerInteractionConcatGrad(FusedOp fused);
  FailureOr<rt::Kernel> lowerEmbeddingUpdate(FusedOp fused);
  /// The buffer of a value read by a group (defined outside it, or yielded).
  int32_t read(Value v) { return bufferOf.lookup(v); }
  /// Buffers for the group's results, mapped to the yielded inner values.
  LogicalResult bindResults(FusedOp fused);
};

} // namespace embc::planbuilder

#endif // EMBC_PASSES_LIB_PLANBUILDER_H
