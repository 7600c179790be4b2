//===- Passes.h - emb passes ------------------------------------*- C++ -*-===//

#ifndef EMBC_PASSES_PASSES_H
#define EMBC_PASSES_PASSES_H

#include "embc/dialect/EmbDialect.h"
#include "embc/runtime/plan/Enums.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace embc {
#define GEN_PASS_DECL
#include "embc/passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "embc/passes/Passes.h.inc"
} // namespace embc

#endif // EMBC_PASSES_PASSES_H
