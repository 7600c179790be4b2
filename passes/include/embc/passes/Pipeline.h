//===- Pipeline.h - embc's default training pipeline ------------*- C++ -*-===//

#ifndef EMBC_PASSES_PIPELINE_H
#define EMBC_PASSES_PIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace embc {

/// Which optional passes the pipeline runs (embc --no-pack / --no-fuse).
struct TrainingPipelineOptions {
  bool pack = true;
  bool fuse = true;
};

/// -emb-autodiff, then -emb-pack-params and -emb-fuse unless turned off.
/// -emb-to-plan is not part of it: embc builds the plan from the result.
void addTrainingPipeline(mlir::OpPassManager &pm,
                         const TrainingPipelineOptions &options = {});

} // namespace embc

#endif // EMBC_PASSES_PIPELINE_H
