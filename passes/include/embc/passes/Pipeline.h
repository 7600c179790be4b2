//===- Pipeline.h - embc's default training pipeline ------------*- C++ -*-===//

#ifndef EMBC_PASSES_PIPELINE_H
#define EMBC_PASSES_PIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace embc {

/// Which optional passes the pipeline runs (embc --no-pack, --no-fuse,
/// --no-batch-exchanges, --no-plan-memory). Quantisation, remat and pipelining follow the model's
/// `plan` settings (each pass reads them from the module).
struct TrainingPipelineOptions {
  bool pack = true;
  bool fuse = true;
  bool batchExchanges = true;
  bool planMemory = true;
};

/// In order: -emb-autodiff, -emb-auto, -emb-quantize, -emb-pack-params,
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

/// Registers the whole pipeline as `-emb-train-pipeline` (options pack, fuse,
/// batch-exchanges, plan-memory) for emb-opt; registerAllEmbPasses calls it.
void registerTrainingPipeline();

} // namespace embc

#endif // EMBC_PASSES_PIPELINE_H
