//===- PlanMemory.cpp - -emb-plan-memory ------------------------------------===//
//
// Records the memory-planning strategy on the module (`emb.memory_plan`).
// The planning itself (MemoryPlanner.cpp: lifetimes, then offsets in one
// arena shared by buffers whose lifetimes do not meet) is a plan-level
// step that -emb-to-plan runs on the plan it has lowered (PlanLayout.cpp),
// so no pass re-enters the lowering and no later pass can invalidate it.
//
//===----------------------------------------------------------------------===//

#include "MemoryPlanner.h"

#include "embc/dialect/EmbDialect.h"
#include "embc/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "emb-plan-memory"

namespace embc {
#define GEN_PASS_DEF_EMBPLANMEMORYPASS
#include "embc/passes/Passes.h.inc"
} // namespace embc

using namespace mlir;
namespace memory = embc::memory;

namespace {

struct PlanMemoryPass : embc::impl::EmbPlanMemoryPassBase<PlanMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<memory::Strategy> chosen = memory::parseStrategy(strategy);
    if (!chosen) {
      module.emitError("-emb-plan-memory: unknown strategy '")
          << strategy << "' (expected " << memory::strategyNames() << ")";
      return signalPassFailure();
    }
    if (Attribute done = module->getAttr(memory::kMemoryPlanAttrName)) {
      module.emitError("-emb-plan-memory has already run on this module (it has ")
          << memory::kMemoryPlanAttrName << " = " << done
          << "); it runs once";
      return signalPassFailure();
    }
    Builder b(module.getContext());
    module->setAttr(memory::kMemoryPlanAttrName,
                    b.getDictionaryAttr(b.getNamedAttr(
                        "strategy", b.getStringAttr(memory::strategyName(*chosen)))));
    markAllAnalysesPreserved();
  }
};

} // namespace
