//===- emb-opt.cpp - mlir-opt for the emb dialect --------------------------===//
//
// Parses emb IR, runs -emb-* passes and prints the result; lit tests drive
// every pass through this tool.
//
//===----------------------------------------------------------------------===//

#include "embc/passes/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  embc::registerAllEmbDialects(registry);
  embc::registerAllEmbPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "emb optimizer driver\n", registry));
}
