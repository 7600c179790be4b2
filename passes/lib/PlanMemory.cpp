//===- PlanMemory.cpp - -emb-plan-memory ------------------------------------===//
//
// Plans the arena of the training step: builds the plan the IR lowers to
// (the same code -emb-to-plan runs), computes every buffer's lifetime and
// places the buffers so that values whose lifetimes do not meet share
// memory (MemoryPlanner.cpp). The IR is not changed except for the result,
// recorded on the module as `emb.memory_plan`; -emb-to-plan then lays the
// plan out by the recorded strategy and checks that it reaches the
// recorded peak, so a pass that ran in between (and changed the buffers)
// is caught instead of silently getting another layout.
//
//===----------------------------------------------------------------------===//

#include "MemoryPlanner.h"

#include "embc/dialect/EmbDialect.h"
#include "embc/passes/Passes.h"
#include "embc/passes/ToPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "emb-plan-memory"

namespace embc {
#define GEN_PASS_DEF_EMBPLANMEMORYPASS
#include "embc/passes/Passes.h.inc"
} // namespace embc

using namespace mlir;
namespace memory = embc::memory;
namespace rt = embc::runtime;

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
          << "); it runs once, last before -emb-to-plan";
      return signalPassFailure();
    }
    if (!module.lookupSymbol<func::FuncOp>("train_step") ||
        !module.lookupSymbol<func::FuncOp>("update")) {
      module.emitError("-emb-plan-memory needs @train_step and @update: run "
                       "-emb-autodiff first");
      return signalPassFailure();
    }
    // Without the attribute, buildPlan lays the buffers out one after
    // another: the baseline the report compares with.
    FailureOr<rt::Plan> plan = embc::buildPlan(module);
    if (failed(plan))
      return signalPassFailure();
    int64_t sequential = plan->arenaBytes;
    memory::planMemory(*plan, *chosen);

    int64_t shared = 0;
    for (const rt::Buffer &b : plan->buffers)
      shared += b.parent < 0 && b.firstUse >= 0;
    numBuffers = int64_t(plan->buffers.size());
    numTransient = shared;
    peakBytes = plan->memory.peakBytes;

    Builder b(module.getContext());
    NamedAttribute fields[] = {
        b.getNamedAttr("strategy", b.getStringAttr(plan->memory.strategy)),
        b.getNamedAttr("peak", b.getI64IntegerAttr(plan->memory.peakBytes)),
        b.getNamedAttr("lower_bound", b.getI64IntegerAttr(plan->memory.lowerBoundBytes)),
        b.getNamedAttr("sequential", b.getI64IntegerAttr(sequential)),
        b.getNamedAttr("buffers", b.getI64IntegerAttr(int64_t(plan->buffers.size()))),
    };
    module->setAttr(memory::kMemoryPlanAttrName, b.getDictionaryAttr(fields));
    markAllAnalysesPreserved();
  }
};

} // namespace
