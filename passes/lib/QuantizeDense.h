//===- QuantizeDense.h - the dense half of -emb-quantize -------*- C++ -*-===//
//
// -emb-quantize (Quantize.cpp) handles embedding-table storage itself and
// hands the dense half (bf16/fp16 dense compute with f32 master weights,
// fp16 dynamic loss scaling) to quantizeDense, implemented in
// QuantizeDense.cpp.
//
// Quantize.cpp calls it after marking the tables' lookups and updates and
// before tagging the module `emb.quantized`.
// Contract: called once per module, after -emb-autodiff and before
// -emb-pack-params; @train_step and @update exist; emits its own
// diagnostics (emitOpError on the op) and returns failure on refusal; reads
// the precision from the module's emb.training attribute; must not touch
// tables, emb.lookup/gather or the `emb.dequantize`/`emb.requantize`
// attributes.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_LIB_QUANTIZEDENSE_H
#define EMBC_PASSES_LIB_QUANTIZEDENSE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

namespace embc {

/// Dense compute precision and loss scaling of @train_step / @update.
mlir::LogicalResult quantizeDense(mlir::ModuleOp module, mlir::func::FuncOp step,
                                  mlir::func::FuncOp update);

/// On emb.dense, emb.interaction, emb.cross and their gradient ops: the
/// precision their products compute in (#emb<precision bf16|fp16>); absent
/// means f32. -emb-to-plan turns it into the kernel attribute "compute".
constexpr llvm::StringLiteral kComputeAttrName = "emb.compute";
/// On the emb.loss_grad of an fp16 model: its result is multiplied by the
/// runtime's loss scale (kernel attribute "loss_scaled").
constexpr llvm::StringLiteral kLossScaledAttrName = "emb.loss_scaled";
/// The loss-scaling policy quantizeDense writes into emb.unscale_grads
/// (PyTorch GradScaler's defaults; embrun --loss-scale overrides the start).
constexpr double kDefaultInitialLossScale = 65536.0;
constexpr int64_t kDefaultLossScaleInterval = 2000;

/// Whether `op` is one of the ops whose products take kComputeAttrName.
bool computesInPrecision(mlir::Operation *op);

} // namespace embc

#endif // EMBC_PASSES_LIB_QUANTIZEDENSE_H
