//===- Pipeline.cpp - embc's default training pipeline --------------------===//

#include "embc/passes/Pipeline.h"
#include "embc/passes/Passes.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

namespace {
/// The pipeline's switches on the emb-opt command line:
/// -emb-train-pipeline="fuse=false pack=false".
struct TrainingPipelineCLOptions
    : mlir::PassPipelineOptions<TrainingPipelineCLOptions> {
  Option<bool> selectTargets{*this, "select-targets", llvm::cl::desc("Run -emb-select-targets"),
                             llvm::cl::init(true)};
  Option<bool> pack{*this, "pack", llvm::cl::desc("Run -emb-pack-params"),
                    llvm::cl::init(true)};
  Option<bool> fuse{*this, "fuse", llvm::cl::desc("Run -emb-fuse"), llvm::cl::init(true)};
  Option<bool> batchExchanges{*this, "batch-exchanges",
                              llvm::cl::desc("Run -emb-batch-exchanges"),
                              llvm::cl::init(true)};
  Option<bool> planMemory{*this, "plan-memory", llvm::cl::desc("Run -emb-plan-memory"),
                          llvm::cl::init(true)};
};
} // namespace

void embc::registerTrainingPipeline() {
  mlir::PassPipelineRegistration<TrainingPipelineCLOptions>(
      "emb-train-pipeline",
      "embc's training pipeline on a model's emb IR: -emb-select-targets, -emb-sample-softmax, -emb-autodiff, -emb-auto, -emb-quantize, "
      "-emb-pack-params, -emb-remat, -emb-pipeline, -emb-distribute, -emb-batch-exchanges, "
      "-emb-fuse, -emb-plan-memory (what embc runs before -emb-to-plan)",
      [](mlir::OpPassManager &pm, const TrainingPipelineCLOptions &cl) {
        TrainingPipelineOptions options;
        options.selectTargets = cl.selectTargets;
        options.pack = cl.pack;
        options.fuse = cl.fuse;
        options.batchExchanges = cl.batchExchanges;
        options.planMemory = cl.planMemory;
        addTrainingPipeline(pm, options);
      });
}

void embc::addTrainingPipeline(mlir::OpPassManager &pm,
                               const TrainingPipelineOptions &options) {
  // On the forward, so that the backward is built from the selected rows.
  if (options.selectTargets)
    pm.addPass(createEmbSelectTargetsPass());
  pm.addPass(createEmbSampleSoftmaxPass());
  pm.addPass(createEmbAutodiffPass());
  // With plan.memory_budget: chooses table storage, remat and micro-batches
  // for the passes below, compiling each candidate with them.
  EmbAutoPassOptions autoOptions;
  autoOptions.pack = options.pack;
  autoOptions.fuse = options.fuse;
  autoOptions.batchExchanges = options.batchExchanges;
  pm.addPass(createEmbAutoPass(autoOptions));
  addPlanningPasses(pm, options);
}

mlir::LogicalResult embc::runTrainingPipeline(mlir::ModuleOp module,
                                              const TrainingPipelineOptions &options) {
  mlir::PassManager autodiff(module.getContext());
  if (options.selectTargets)
    autodiff.addPass(createEmbSelectTargetsPass());
  autodiff.addPass(createEmbSampleSoftmaxPass());
  autodiff.addPass(createEmbAutodiffPass());
  if (failed(autodiff.run(module)))
    return mlir::failure();
  // With plan.memory_budget: table storage, remat and micro-batches for the
  // passes below, each candidate compiled with them.
  BudgetOptions budget;
  budget.pipeline.pack = options.pack;
  budget.pipeline.fuse = options.fuse;
  budget.pipeline.batchExchanges = options.batchExchanges;
  budget.diskTables = options.diskTables;
  if (failed(fitMemoryBudget(module, budget)))
    return mlir::failure();
  mlir::PassManager planning(module.getContext());
  addPlanningPasses(planning, options);
  return planning.run(module);
}

void embc::addPlanningPasses(mlir::OpPassManager &pm,
                             const TrainingPipelineOptions &options) {
  // Before packing and fusion: it marks each table's own lookups and update.
  pm.addPass(createEmbQuantizePass());
  // Packing first: fusion then sees one update per pack and batch, and an
  // embedding_update group serves a whole table batch.
  if (options.pack)
    pm.addPass(createEmbPackParamsPass());
  // Remat follows the plan's `remat` (none: no change); before fusion, which
  // then groups the recomputed forward ops like the originals.
  pm.addPass(createEmbRematPass());
  // Micro-batches and stages follow the plan's settings (1 and 1: no
  // change); before fusion, which never groups ops of different stages.
  pm.addPass(createEmbPipelinePass());
  // Data parallelism (1 rank: no change): after packing, whose buckets it
  // all-reduces, and pipelining, which decides whether the step runs once
  // per update (then the all-reduce overlaps the backward); before fusion,
  // which keeps the collectives in place and leaves gathered tables unfused.
  pm.addPass(createEmbDistributePass());
  // One set of collectives for all sharded tables instead of five per
  // table (no change without sharded tables); before fusion, which leaves
  // the local lookups between the exchanges unfused.
  if (options.batchExchanges)
    pm.addPass(createEmbBatchExchangesPass());
  if (options.fuse)
    pm.addPass(createEmbFusePass());
  // The arena's strategy; -emb-to-plan plans the arena of the plan it lowers.
  if (options.planMemory)
    pm.addPass(createEmbPlanMemoryPass());
}
