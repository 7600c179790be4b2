//===- InitAll.cpp - one registration for every tool -----------------------===//

#include "embc/passes/InitAll.h"

#include "embc/dialect/EmbDialect.h"
#include "embc/passes/Passes.h"
#include "embc/passes/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void embc::registerAllEmbDialects(mlir::DialectRegistry &registry) {
  registry.insert<emb::EmbDialect, mlir::func::FuncDialect>();
}

void embc::registerAllEmbPasses() {
  registerEmbPasses();
  registerTrainingPipeline();
  // canonicalize, cse and friends: the pipeline runs them between lowerings.
  mlir::registerTransformsPasses();
}
