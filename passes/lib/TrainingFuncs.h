//===- TrainingFuncs.h - the functions -emb-autodiff leaves -----*- C++ -*-===//
//
// Private to EmbPasses: the passes after -emb-autodiff start by finding its
// @train_step and @update, and refuse a module without them the same way.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_LIB_TRAININGFUNCS_H
#define EMBC_PASSES_LIB_TRAININGFUNCS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/Twine.h"

namespace embc {

/// The module's @train_step and @update.
struct TrainingFuncs {
  mlir::func::FuncOp step, update;
};

/// @train_step and @update of `module`; without them, an error on the
/// module that `flag` (the pass, "-emb-fuse") needs -emb-autodiff first.
inline mlir::FailureOr<TrainingFuncs> lookupTrainingFuncs(mlir::ModuleOp module,
                                                         llvm::StringRef flag) {
  TrainingFuncs funcs;
  funcs.step = module.lookupSymbol<mlir::func::FuncOp>("train_step");
  funcs.update = module.lookupSymbol<mlir::func::FuncOp>("update");
  if (!funcs.step || !funcs.update)
    return module.emitError(flag + " needs @train_step and @update: run -emb-autodiff first");
  return funcs;
}

} // namespace embc

#endif // EMBC_PASSES_LIB_TRAININGFUNCS_H
