//===- EmbDialect.h - the emb dialect ---------------------------*- C++ -*-===//
//
// One header for users of the dialect: the dialect, its enums, attributes,
// interfaces and ops.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_DIALECT_EMBDIALECT_H
#define EMBC_DIALECT_EMBDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "embc/runtime/plan/Enums.h"

namespace embc::emb {
/// A double attribute parameter. MLIR hashes and compares parameters; a bare
/// double has no llvm::hash_value, so this wrapper supplies one (bitwise).
struct Real {
  double value = 0.0;
  operator double() const { return value; }
  bool operator==(const Real &other) const {
    return llvm::bit_cast<uint64_t>(value) ==
           llvm::bit_cast<uint64_t>(other.value);
  }
  friend llvm::hash_code hash_value(const Real &r) {
    return llvm::hash_value(llvm::bit_cast<uint64_t>(r.value));
  }
};

/// Prints `r` in the shortest form that parses back to the same double
/// ("0.05", "1.0e-08"), instead of printFloat's "5.000000e-02".
void printReal(mlir::AsmPrinter &printer, Real r);

class PlanEmitter; // PlanEmitter.h: what an op sees of -emb-to-plan
/// The default plan lowering (PlanLoweringOpInterface): the catalogue's
/// kernel named like the op, operands in, results out, no attributes.
mlir::LogicalResult lowerToNamedKernel(mlir::Operation *op, PlanEmitter &emitter);
} // namespace embc::emb

#include "embc/dialect/EmbDialect.h.inc"
#include "embc/dialect/EmbEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "embc/dialect/EmbAttrs.h.inc"

#include "embc/dialect/EmbInterfaces.h.inc"

namespace embc::emb {
/// Marks the ops of the backward pass and the optimizer step (EmbGradOps.td):
/// a training step's forward prefix is everything before its first such op.
template <typename ConcreteType>
class BackwardOp : public mlir::OpTrait::TraitBase<ConcreteType, BackwardOp> {};
} // namespace embc::emb

#define GET_OP_CLASSES
#include "embc/dialect/EmbOps.h.inc"

namespace embc::emb {
/// Name of the module attribute that holds the TrainingAttr.
constexpr llvm::StringLiteral kTrainingAttrName = "emb.training";
/// Name of the module attribute that holds the PlanAttr.
constexpr llvm::StringLiteral kPlanAttrName = "emb.plan";
/// Function argument attribute naming the feature an input belongs to.
constexpr llvm::StringLiteral kFeatureArgAttrName = "emb.feature";
/// Function argument attribute: what part of the feature the input holds
/// ("dense", "ids", "offsets", "weights", "label", "negatives").
constexpr llvm::StringLiteral kRoleArgAttrName = "emb.role";
/// Function argument attribute: upper bound on the number of ids per batch.
constexpr llvm::StringLiteral kMaxIdsArgAttrName = "emb.max_ids";
/// Function argument attribute: the data column a feature reads (absent:
/// the column named like the feature).
constexpr llvm::StringLiteral kSourceArgAttrName = "emb.source";
/// Function argument attribute: the raw id range of a sparse feature.
constexpr llvm::StringLiteral kVocabArgAttrName = "emb.vocab";
/// Function argument attribute: the max ids per example of a sparse feature.
constexpr llvm::StringLiteral kHotnessArgAttrName = "emb.hotness";
/// Function argument attribute: binary, real or class, for a label.
constexpr llvm::StringLiteral kLabelKindArgAttrName = "emb.label_kind";
/// Function argument attribute: the unigram exponent of sampled negatives.
constexpr llvm::StringLiteral kPowerArgAttrName = "emb.power";
/// Table attribute (-emb-distribute): N + 1 ascending row boundaries; rank r
/// stores rows [b[r], b[r+1]) of a sharded table.
constexpr llvm::StringLiteral kShardRowsAttrName = "emb.shard_rows";
/// emb.loss attribute (the model file's "sampled"): -emb-sample-softmax
/// computes the loss's logits at the target and this many sampled classes.
constexpr llvm::StringLiteral kSampledAttrName = "emb.sampled";
/// Name of the forward function the frontend emits.
constexpr llvm::StringLiteral kForwardFuncName = "forward";

/// Checks that every float tensor among `op`'s operands and results has the
/// same element type (compute ops do not mix precisions implicitly).
mlir::LogicalResult verifySameFloatElementType(mlir::Operation *op);

/// Checks that `v` is a static tensor of rank 2 or more, read as a matrix of
/// rows (every dimension but the last: B, or B x L for a sequence) by its
/// last dimension; names it `what` in the error. Dense layers, sums and
/// their gradients apply to each row alike.
mlir::LogicalResult verifyRowMatrix(mlir::Operation *op, mlir::Value v, llvm::StringRef what);

/// The rows of a tensor `verifyRowMatrix` accepts: the product of every
/// dimension but the last.
int64_t getRowCount(mlir::Value v);

/// `shape` with its last dimension replaced by `width`.
llvm::SmallVector<int64_t> withLastDim(llvm::ArrayRef<int64_t> shape, int64_t width);

/// Bytes of one element of the tensor `v` (2 for f16/bf16, 4 for f32); the
/// cost model multiplies element counts by it.
int64_t getElementBytes(mlir::Value v);

/// Finds the emb.table named by `table` or reports on `op` that it is missing.
mlir::FailureOr<TableOp> lookupTable(mlir::Operation *op,
                                     mlir::FlatSymbolRefAttr table,
                                     mlir::SymbolTableCollection &symbolTable);

/// Bits of one element of a table stored as `storage`: 32, 16, 8 or 4 (int4
/// packs two elements per byte, so a row of `dim` takes dim * bits / 8
/// bytes; row-wise storages carry an fp16 scale and bias per row on top, see
/// TableOp::getStorageBytes).
int64_t getStorageElementBits(StorageType storage);
/// Bytes per row of the per-row scale and bias of row-wise quantised
/// storage (int8_rowwise, int4_rowwise: 2 x fp16 = 4); 0 for the others.
int64_t getStorageRowParamBytes(StorageType storage);

/// The plan's schedule (config.schedule) of a dialect schedule, and back.
/// The two list the same schedules in the same order; the dialect spells
/// 1f1b one_f_one_b, as an MLIR keyword cannot start with a digit
/// (EnumSpellingsTest checks the correspondence).
inline runtime::ScheduleKind toPlanSchedule(PipelineSchedule kind) {
  return runtime::ScheduleKind(static_cast<uint32_t>(kind));
}
inline PipelineSchedule toDialectSchedule(runtime::ScheduleKind kind) {
  return PipelineSchedule(static_cast<uint32_t>(kind));
}
} // namespace embc::emb

#endif // EMBC_DIALECT_EMBDIALECT_H
