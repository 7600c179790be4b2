//===- ToPlan.cpp - -emb-to-plan ---------------------------------------------===//
//
// Codegen for the runtime: the driver that turns @train_step and @update
// into a plan (docs/plan-format.md). It reads the training configuration,
// lays out the plan's storage (PlanStorage.cpp), then asks each op to lower
// itself to kernels of the catalogue through the PlanEmitter this builder
// implements (PlanLoweringOpInterface, beside each op in dialect/lib), then
// runs the plan-level steps: the pipeline schedule, the memory layout, the
// byte estimates and the notes. A new op or pass adds nothing here.
//
//===----------------------------------------------------------------------===//

#include "Distribute.h"
#include "PipelineSchedule.h"
#include "PlanBuilder.h"
#include "TrainingFuncs.h"

#include "embc/passes/CudaCodegen.h"
#include "embc/passes/Passes.h"
#include "embc/passes/ToPlan.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

#define DEBUG_TYPE "emb-to-plan"

namespace embc {
#define GEN_PASS_DEF_EMBTOPLANPASS
#include "embc/passes/Passes.h.inc"
} // namespace embc

using namespace mlir;
using namespace embc;
using namespace embc::emb;
using namespace embc::planbuilder;
namespace rt = embc::runtime;

#ifndef EMBC_VERSION
#define EMBC_VERSION "unknown"
#endif

LogicalResult PlanBuilder::lowerOps(func::FuncOp func, std::vector<rt::Kernel> &kernels,
                                    bool isStep) {
  emitted = &kernels;
  bool inBackward = false;
  for (Operation &op : func.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      if (isStep) { // the loss, then the predictions if returned
        plan_.lossBuffer = bufferOf.lookup(ret.getOperand(0));
        if (ret.getNumOperands() > 1)
          plan_.predictionBuffer = bufferOf.lookup(ret.getOperand(1));
      }
      continue;
    }
    auto lowering = dyn_cast<PlanLoweringOpInterface>(op);
    if (!lowering)
      return op.emitOpError(isStep ? "has no kernel in the plan's catalogue"
                                   : "has no kernel in the plan's update catalogue");
    if (isStep) { // the forward prefix ends at the first backward op
      auto fused = dyn_cast<FusedOp>(op);
      Operation *first = fused ? &fused.getBody().front().front() : &op;
      if (first->hasTrait<BackwardOp>() && !inBackward) {
        inBackward = true;
        plan_.forwardKernels = int64_t(kernels.size());
      }
    }
    const size_t before = kernels.size();
    if (failed(lowering.lowerToPlan(*this)))
      return failure();
    if (!isStep)
      continue;
    for (size_t i = before; i < kernels.size(); ++i) {
      precisionAttrs(&op, kernels[i].attrs);
      kernels[i].stage = int32_t(pipeline::stageOf(&op));
    }
  }
  if (isStep && !inBackward)
    plan_.forwardKernels = int64_t(kernels.size());
  emitted = nullptr;
  return success();
}

FailureOr<rt::Plan> PlanBuilder::build() {
  FailureOr<TrainingFuncs> funcs = lookupTrainingFuncs(module, "-emb-to-plan");
  if (failed(funcs))
    return failure();
  func::FuncOp step = funcs->step, update = funcs->update;
  auto training = module->getAttrOfType<TrainingAttr>(kTrainingAttrName);
  if (!training)
    return module.emitError("the module has no emb.training attribute");

  plan_.model = module.getSymName() ? module.getSymName()->str() : "model";
  plan_.compiler = std::string("embc ") + EMBC_VERSION;
  if (auto overrides = module->getAttrOfType<ArrayAttr>(kOverridesAttrName))
    for (Attribute o : overrides)
      if (auto text = dyn_cast<StringAttr>(o))
        plan_.overrides.push_back(text.str());
  if (auto data = module->getAttrOfType<StringAttr>(kDataAttrName)) {
    // The importer wrote it from a checked schema; IR from elsewhere is
    // checked here by the same parser.
    std::string error;
    plan_.dataSchema = rt::parseDataSchemaText(data.getValue().str(), error);
    if (!plan_.dataSchema)
      return module.emitError("the ") << kDataAttrName << " attribute is not a data schema: "
                                      << error;
  } else if (module->hasAttr(kDataAttrName)) {
    return module.emitError("the ") << kDataAttrName << " attribute must be a string";
  }
  rt::TrainingConfig &config = plan_.config;
  config.batchSize = training.getBatchSize();
  config.gradAccumulation = training.getGradAccumulation();
  config.gradClipNorm = training.getGradClipNorm();
  config.lrSchedule = planEnum<rt::LrSchedule>(stringifyLrSchedule(training.getLrSchedule()));
  config.warmupSteps = training.getWarmupSteps();
  config.decaySteps = training.getDecaySteps();
  config.seed = uint64_t(training.getSeed());
  config.precision = planEnum<rt::ComputeType>(stringifyPrecision(training.getPrecision()));
  // Ranks: what -emb-distribute inserted collectives for. A plan asking for
  // more ranks without them would train each rank on its own.
  auto planAttr = module->getAttrOfType<PlanAttr>(kPlanAttrName);
  auto ranks = module->getAttrOfType<IntegerAttr>(distribute::kDataParallelAttrName);
  config.dataParallel = ranks ? ranks.getInt() : 1;
  if (planAttr && planAttr.getDataParallel() > 1 && !ranks)
    return module.emitError("the plan asks for data_parallel ")
           << planAttr.getDataParallel()
           << " but the module has no collectives: run -emb-distribute";
  step.walk([&](LossOp loss) {
    config.loss = planEnum<rt::LossKind>(stringifyLossKind(loss.getKind()));
  });
  // Per-example updates exist only as -emb-fuse's skipgram kernel: without
  // it (embc --no-fuse) the plan would silently train with batch updates.
  if (training.getEmbeddingUpdates() != EmbeddingUpdates::batch &&
      !step.walk([](FusedOp f) {
             return f.getKind() == FusionKind::skipgram ? WalkResult::interrupt()
                                                        : WalkResult::advance();
           }).wasInterrupted())
    return module.emitError("embedding_updates = ")
           << stringifyEmbeddingUpdates(training.getEmbeddingUpdates())
           << " runs as -emb-fuse's skipgram kernel, and the step has none: run -emb-fuse "
              "(embc without --no-fuse)";
  if (failed(checkPrecision(step, update)))
    return failure();

  if (failed(readPipelineConfig(step)) ||
      failed(addParamsAndTables(step, config.gradAccumulation * config.microBatches)) ||
      failed(addInputs(step)) || failed(lowerOps(step, plan_.step, /*isStep=*/true)) ||
      failed(lowerOps(update, plan_.update, /*isStep=*/false)) || failed(lowerSchedule(step)))
    return failure();
  layout();
  assignOrigins();
  if (failed(layoutMemory()))
    return failure();
  for (std::vector<rt::Kernel> *kernels : {&plan_.step, &plan_.update})
    for (rt::Kernel &k : *kernels)
      k.bytes = rt::estimateKernelBytes(plan_, k);
  addNotes(step);
  plan_.notes.push_back(memoryNote);
  return plan_;
}

namespace {

struct ToPlanPass : embc::impl::EmbToPlanPassBase<ToPlanPass> {
  using Base::Base;
  void runOnOperation() override {
    FailureOr<rt::Plan> plan = buildPlan(getOperation(), *findPlanTarget(cuda ? "cuda" : "cpu"));
    if (failed(plan))
      return signalPassFailure();
    std::string error;
    auto output = openOutputFile(outputFile, &error);
    if (!output) {
      getOperation().emitError(error);
      return signalPassFailure();
    }
    if (emitJson)
      output->os() << rt::planToJson(*plan).dump(2) << "\n";
    else
      output->os() << rt::serializePlan(*plan);
    output->keep();
    markAllAnalysesPreserved();
  }
};

} // namespace

llvm::ArrayRef<PlanTarget> embc::planTargets() {
  static const PlanTarget targets[] = {
      {"cpu", "the CPU backend only (default)", nullptr},
      {"cuda", "the CPU backend and a GPU: also generate the CUDA program "
               "(embrun --device cuda|emulated)",
       codegen::generateCuda},
  };
  return targets;
}

const PlanTarget *embc::findPlanTarget(llvm::StringRef name) {
  for (const PlanTarget &t : planTargets())
    if (name == t.name)
      return &t;
  return nullptr;
}

FailureOr<rt::Plan> embc::buildPlan(ModuleOp module, const PlanTarget &target) {
  FailureOr<rt::Plan> plan = PlanBuilder(module).build();
  if (failed(plan) || !target.generate)
    return plan;
  // Host and disk tables live in the CPU backend's arena (disk: pages
  // mapped from a file); the CUDA backend would need a row cache on the
  // device, which is issue 24's next part.
  for (const rt::Table &t : plan->tables)
    if (t.placement != rt::Placement::Device) {
      auto table = module.lookupSymbol<TableOp>(t.name);
      return emitError(table ? table.getLoc() : module.getLoc(), "table '")
             << t.name << "' has placement " << rt::enumString(t.placement) << ": placement "
             << rt::enumString(t.placement)
             << " runs on the CPU backend only; the CUDA row cache is not built yet";
    }
  std::string error;
  if (!target.generate(*plan, error))
    return module.emitError(error);
  return plan;
}
