//===- InitAll.h - one registration for every tool --------------*- C++ -*-===//
//
// emb-opt, embc and the unit tests all register the same dialects and passes
// through these two functions, so a pass added once is available everywhere.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_INITALL_H
#define EMBC_PASSES_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace embc {
/// Adds the emb dialect and the upstream dialects emb IR uses (func).
void registerAllEmbDialects(mlir::DialectRegistry &registry);
/// Registers every -emb-* pass and the upstream passes the pipeline uses.
void registerAllEmbPasses();
} // namespace embc

#endif // EMBC_PASSES_INITALL_H
