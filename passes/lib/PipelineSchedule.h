//===- PipelineSchedule.h - stages and schedules of -emb-pipeline -*- C++ -*-===//
//
// Shared by -emb-pipeline (MicroBatchPipeline.cpp, PipelineSchedule.cpp),
// -emb-fuse (which never fuses across stages) and -emb-to-plan
// (PlanSchedule.cpp: Kernel.stage, Plan.schedule, Buffer.slots).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_PASSES_LIB_PIPELINESCHEDULE_H
#define EMBC_PASSES_LIB_PIPELINESCHEDULE_H

#include "embc/dialect/EmbDialect.h"

namespace embc::pipeline {

/// The pipeline stage of an op (`emb.stage = N : i64`).
constexpr llvm::StringLiteral kStageAttrName = "emb.stage";
/// On @train_step after -emb-pipeline: the micro-batch count and stages.
constexpr llvm::StringLiteral kMicroBatchesAttrName = "emb.micro_batches";
constexpr llvm::StringLiteral kStagesAttrName = "emb.pipeline_stages";

/// The stage of an op (of an emb.fused group: of its first inner op); 0
/// when it has none.
int64_t stageOf(mlir::Operation *op);

/// Whether `op` (a top-level op of @train_step) runs in the backward phase:
/// it is at or after the first op with the BackwardOp trait.
bool isBackwardPhase(mlir::Operation *op, mlir::Operation *firstBackward);
mlir::Operation *firstBackwardOp(mlir::func::FuncOp step);

/// Assigns every op of @train_step to one of `stages` stages (emb.stage):
/// forward ops by a balanced contiguous split of their cost (or as already
/// attributed), backward ops by the stages of the values they read.
mlir::LogicalResult assignStages(mlir::func::FuncOp step, int64_t stages);

/// Emits the emb.schedule of one optimizer step at the end of the module.
mlir::LogicalResult emitSchedule(mlir::ModuleOp module, mlir::func::FuncOp step,
                                 embc::emb::PipelineSchedule kind, int64_t stages,
                                 int64_t microBatches, int64_t &instructions);

} // namespace embc::pipeline

#endif // EMBC_PASSES_LIB_PIPELINESCHEDULE_H
