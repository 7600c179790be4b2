//===- ToPlan.h - lowering a training module to a runtime plan --*- C++ -*-===//
//
// The codegen behind -emb-to-plan, callable from embc without a pass
// manager. The result is the runtime's own Plan struct, so the compiler and
// the runtime share one definition of the format.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_TOPLAN_H
#define EMBC_PASSES_TOPLAN_H

#include "embc/runtime/Plan.h"
#include "mlir/IR/BuiltinOps.h"

namespace embc {

/// Lowers a module holding @train_step and @update (after -emb-autodiff) to
/// a plan, with its CUDA program unless `cuda` is false. Reports errors on
/// the offending op (a kernel without a CUDA lowering on the module) and
/// returns failure.
mlir::FailureOr<runtime::Plan> buildPlan(mlir::ModuleOp module, bool cuda = false);

/// A human-readable report of a plan: memory (peak, lower bound, totals per
/// role; with `everything`, every buffer and a timeline of live bytes),
/// kernels and notes.
std::string formatPlanReport(const runtime::Plan &plan, bool everything = true);

} // namespace embc

#endif // EMBC_PASSES_TOPLAN_H
