//===- ModelImporter.h - model.json -> emb IR -------------------*- C++ -*-===//

#ifndef EMBC_FRONTEND_MODELIMPORTER_H
#define EMBC_FRONTEND_MODELIMPORTER_H

#include "embc/frontend/Model.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace embc::frontend {

/// Builds the emb IR of a checked model: tables, parameters, the training
/// configuration and `func.func @forward`. Locations carry the JSON pointer
/// of the model element each op comes from. Returns null (after emitting a
/// diagnostic) if the result does not verify, which means a frontend bug.
mlir::OwningOpRef<mlir::ModuleOp> importModel(const Model &model,
                                              mlir::MLIRContext &context,
                                              llvm::StringRef fileName);

} // namespace embc::frontend

#endif // EMBC_FRONTEND_MODELIMPORTER_H
