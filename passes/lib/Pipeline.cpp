//===- Pipeline.cpp - embc's default training pipeline --------------------===//

#include "embc/passes/Pipeline.h"
#include "embc/passes/Passes.h"

void embc::addTrainingPipeline(mlir::OpPassManager &pm,
                               const TrainingPipelineOptions &options) {
  pm.addPass(createEmbAutodiffPass());
  // Packing first: fusion then sees one update per pack and batch, and an
  // embedding_update group serves a whole table batch.
  if (options.pack)
    pm.addPass(createEmbPackParamsPass());
  if (options.fuse)
    pm.addPass(createEmbFusePass());
}
