//===- Pipeline.h - embc's default training pipeline ------------*- C++ -*-===//

#ifndef EMBC_PASSES_PIPELINE_H
#define EMBC_PASSES_PIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace embc {

/// Which optional passes the pipeline runs (embc --no-select-targets,
/// --no-pack, --no-fuse, --no-batch-exchanges, --no-plan-memory). Quantisation, remat and pipelining follow the model's
/// `plan` settings (each pass reads them from the module).
struct TrainingPipelineOptions {
  bool selectTargets = true; ///< -emb-select-targets, before -emb-autodiff
  bool pack = true;
  bool fuse = true;
  bool batchExchanges = true;
  bool planMemory = true;
  /// -emb-auto may move tables to `disk` (off for a target whose backend
  /// cannot run disk tables: CUDA).
  bool diskTables = true;
};

/// In order: -emb-select-targets, -emb-autodiff, -emb-auto, -emb-quantize, -emb-pack-params,
/// -emb-remat, -emb-pipeline, -emb-distribute (data parallelism; nothing
/// on one rank), -emb-batch-exchanges (sharded tables only), -emb-fuse,
/// -emb-plan-memory.
/// -emb-to-plan is not part of it: embc builds the plan from the result.
void addTrainingPipeline(mlir::OpPassManager &pm,
                         const TrainingPipelineOptions &options = {});

/// The pipeline after -emb-autodiff and -emb-auto (-emb-quantize to
/// -emb-plan-memory): what -emb-auto compiles each candidate with.
void addPlanningPasses(mlir::OpPassManager &pm,
                       const TrainingPipelineOptions &options = {});

/// What the budget planner (fitMemoryBudget) tries and how it ranks.
struct BudgetOptions {
  int64_t budgetBytes = 0;       ///< 0: the module's plan.memory_budget
  int64_t maxMicroBatches = 64;  ///< largest micro-batch count tried
  double bandwidthGBs = 3000.0;  ///< device model of the step-time estimate
  double tflops = 100.0;
  double launchUs = 5.0;
  /// Tables may be moved to `disk` placement, before any is quantised.
  bool diskTables = true;
  TrainingPipelineOptions pipeline; ///< the passes each candidate is compiled with
};

/// The budget planner: with a memory budget, compiles candidate choices of
/// micro-batches, remat, sharding, table placement and table storage (each on a clone, with
/// the planning passes and buildPlan) and writes the fastest that fits
/// into `module` (and `emb.auto`, its reasons). A driver loop over
/// compilations, run between -emb-autodiff and the planning passes; the
/// -emb-auto pass is its adapter for emb-opt. Fails (with the smallest
/// budget that would fit) when nothing fits.
mlir::LogicalResult fitMemoryBudget(mlir::ModuleOp module, const BudgetOptions &options = {});

/// embc's compilation of a model's IR, top to bottom: -emb-autodiff, the
/// budget planner, then the planning passes (addPlanningPasses). The plan
/// is then built by buildPlan (ToPlan.h).
mlir::LogicalResult runTrainingPipeline(mlir::ModuleOp module,
                                        const TrainingPipelineOptions &options = {});

/// Registers the whole pipeline as `-emb-train-pipeline` (options pack, fuse,
/// batch-exchanges, plan-memory) for emb-opt; registerAllEmbPasses calls it.
void registerTrainingPipeline();

} // namespace embc

#endif // EMBC_PASSES_PIPELINE_H
