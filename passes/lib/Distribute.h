//===- Distribute.h - what -emb-distribute leaves for later passes -*- C++ -*-===//
//
// Shared by -emb-distribute (Distribute.cpp), -emb-fuse and -emb-to-plan.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_LIB_DISTRIBUTE_H
#define EMBC_PASSES_LIB_DISTRIBUTE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringRef.h"

namespace embc::distribute {

/// On the module after -emb-distribute with N > 1 ranks: `N : i64`. The plan
/// takes its `data_parallel` from it, and refuses a module whose emb.plan
/// asks for ranks that no collective serves.
constexpr llvm::StringLiteral kDataParallelAttrName = "emb.data_parallel";

/// Splits the tables whose `sharding` is table_wise or row_wise across `n`
/// ranks (DistributeShards.cpp): sets their emb.shard_rows and rewrites
/// their lookups, lookup gradients and accumulated rows in `step` into the
/// exchanges of emb.shard_ids / shard_pool / shard_pool_grad. Adds the
/// names of the sharded tables to `sharded`; errors go on the table or op.
mlir::LogicalResult shardTables(mlir::ModuleOp module, int64_t n, mlir::func::FuncOp step,
                                mlir::func::FuncOp update,
                                llvm::DenseSet<llvm::StringRef> &sharded);

/// Row boundaries over `ranks` ranks that give all `rows` to `owner`.
mlir::DenseI64ArrayAttr singleOwnerRows(mlir::MLIRContext *ctx, int64_t rows, int64_t ranks,
                                        int64_t owner);

/// Places the stages of the module's emb.schedule on `ranks` ranks
/// (DistributeStages.cpp): sets the schedule's `ranks`, and gives each f32
/// table read by one rank's stages only an emb.shard_rows with that single
/// owner (adding its name to `owned`); the other tables stay replicated.
/// Errors go on the module, the schedule or the table.
mlir::LogicalResult placeStages(mlir::ModuleOp module, int64_t ranks, mlir::func::FuncOp step,
                                mlir::func::FuncOp update,
                                llvm::DenseSet<llvm::StringRef> &owned);

} // namespace embc::distribute

#endif // EMBC_PASSES_LIB_DISTRIBUTE_H
