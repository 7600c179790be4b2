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
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace embc {

/// A target the plan is compiled for: what runs on the plan once it is
/// built. Every plan runs on the CPU backend; a target adds its program.
struct PlanTarget {
  const char *name;
  const char *description;
  /// Adds the target's program to `plan` (nullptr: nothing to add); false
  /// with `error` when a kernel has no lowering.
  bool (*generate)(runtime::Plan &plan, std::string &error);
};
/// Every target, in the order --help lists them: cpu first (the default).
llvm::ArrayRef<PlanTarget> planTargets();
/// The target named `name`, or nullptr.
const PlanTarget *findPlanTarget(llvm::StringRef name);

/// The module attribute (an array of strings) holding embc's --set
/// overrides, which -emb-to-plan records in Plan::overrides.
constexpr llvm::StringLiteral kOverridesAttrName = "emb.overrides";
/// The module attribute (a string) holding the model's data schema, in the
/// form of data::dataSchemaToJson (the model file's `data` object,
/// normalised; the importer writes it), which -emb-to-plan reads back into
/// Plan::dataSchema.
constexpr llvm::StringLiteral kDataAttrName = "emb.data";

/// Lowers a module holding @train_step and @update (after -emb-autodiff) to
/// a plan (-emb-to-plan), then runs the target's code generation on it.
/// Reports errors on the module and returns failure.
mlir::FailureOr<runtime::Plan> buildPlan(mlir::ModuleOp module,
                                         const PlanTarget &target = planTargets().front());

/// A human-readable report of a plan: memory (peak, lower bound, totals per
/// role; with `everything`, every buffer and a timeline of live bytes),
/// kernels and notes.
std::string formatPlanReport(const runtime::Plan &plan, bool everything = true);

} // namespace embc

#endif // EMBC_PASSES_TOPLAN_H
