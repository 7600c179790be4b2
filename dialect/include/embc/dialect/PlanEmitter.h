//===- PlanEmitter.h - what an op sees of -emb-to-plan ----------*- C++ -*-===//
//
// Each op lowers itself to kernels of the runtime plan
// (PlanLoweringOpInterface::lowerToPlan). It sees the plan being built
// through this small interface: the buffer of each SSA value, new buffers
// for its results, the plan's parameters, tables, packs and table batches
// by symbol, and `emit` for each kernel. -emb-to-plan (passes/lib/ToPlan.cpp)
// implements it and drives the lowering; the kernel catalogue
// (runtime/include/embc/runtime/plan/KernelCatalogue.h) names the kernels.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_DIALECT_PLANEMITTER_H
#define EMBC_DIALECT_PLANEMITTER_H

#include "embc/dialect/EmbDialect.h"
#include "embc/runtime/Plan.h"
#include "embc/runtime/plan/KernelCatalogue.h"

#include <optional>

namespace embc::emb {

class PlanEmitter {
public:
  virtual ~PlanEmitter();

  /// The plan built so far: buffers, parameters, tables, packs, table
  /// batches and the training configuration.
  virtual runtime::Plan &plan() = 0;

  /// The buffer of a value defined earlier (or bound with `bind`).
  virtual int32_t buffer(mlir::Value v) = 0;
  virtual bool hasBuffer(mlir::Value v) = 0;
  /// Makes `v` live in `buffer` (a result that is another value's storage).
  virtual void bind(mlir::Value v, int32_t buffer) = 0;
  /// The buffer of `v`, created on first use as an activation named
  /// "act/<id>/<what>". Dynamic tensors are sized by their ids' bound.
  virtual mlir::FailureOr<int32_t> activation(mlir::Operation *op, mlir::Value v,
                                              llvm::StringRef what) = 0;
  /// A buffer no SSA value names (a workspace, a scale).
  virtual int32_t addBuffer(std::string name, runtime::BufferRole role, runtime::DType dtype,
                            std::vector<int64_t> shape) = 0;

  /// The index into plan().tables of table `name` (a verified symbol).
  virtual int32_t table(llvm::StringRef name) = 0;
  /// Indices into plan().params / packs / tableBatches, if `name` is one.
  virtual std::optional<int32_t> param(llvm::StringRef name) = 0;
  virtual std::optional<int32_t> pack(llvm::StringRef name) = 0;
  virtual std::optional<int32_t> batch(llvm::StringRef name) = 0;
  /// The first row of table `name` in its table batch (0 if not batched).
  virtual int64_t batchRowOffset(llvm::StringRef name) = 0;
  /// For an op reading `table`: when the table is quantised, checks that
  /// -emb-quantize marked the op and records "dequantize" in `attrs`.
  virtual mlir::LogicalResult dequantize(mlir::Operation *op, llvm::StringRef table,
                                         nlohmann::json &attrs) = 0;

  /// Appends a kernel to the function being lowered (@train_step's step
  /// or @update's update list).
  virtual void emit(runtime::Kernel kernel) = 0;

  /// The factor that turns summed gradients into means: over the
  /// accumulation steps, the micro-batches and the data-parallel ranks.
  double gradScale();
  /// An empty kernel of the catalogue.
  static runtime::Kernel kernel(runtime::KernelOp op);
  /// Emits `k` with the buffers of `op`'s operands as inputs and new
  /// activation buffers for its results as outputs.
  mlir::LogicalResult emitOnOperands(mlir::Operation *op, runtime::Kernel k);
  /// The update target `name` (a table batch or a table) as outputs of `k`
  /// (its values, then its optimizer state) and its index as the attribute
  /// "batch" or "table". Returns the target's storage.
  runtime::Storage updateTarget(llvm::StringRef name, runtime::Kernel &k);
};

} // namespace embc::emb

#endif // EMBC_DIALECT_PLANEMITTER_H
