//===- Quantize.cpp - -emb-quantize ------------------------------------------===//
//
// Makes quantised table storage explicit in the training IR. The frontend
// already records each table's storage (f32, f16, bf16, int8_rowwise,
// int4_rowwise) on
// emb.table; this pass marks every op that reads a quantised table as
// dequantising (`emb.dequantize`, the storage it converts from) and every
// update of one as requantising with stochastic rounding (`emb.requantize`),
// and tags the module `emb.quantized`. -emb-to-plan then gives such tables
// buffers of their storage dtype (plus per-row scale/bias for int8) and
// refuses quantised tables in a module this pass has not seen, so a table is
// never silently trained in a precision nobody asked for.
//
// Why attributes, not emb.quantize/emb.dequantize ops: the table is a module
// symbol, not an SSA value, so there is no value to convert; the lookup
// reads rows straight from quantised storage (the dequantise is fused into
// it, as the issue asks), and the sparse update's f32 row exists only inside
// the kernel. An attribute on the op that does the conversion says exactly
// that, survives -emb-fuse (ops move into groups with their attributes) and
// shows in `embc --emit=train-ir`.
//
// The optimizer state stays f32; only the table rows are quantised.
//
//===----------------------------------------------------------------------===//

#include "Quantize.h"
#include "QuantizeDense.h"
#include "TrainingFuncs.h"

#include "embc/passes/Passes.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "emb-quantize"

namespace embc {
#define GEN_PASS_DEF_EMBQUANTIZEPASS
#include "embc/passes/Passes.h.inc"
} // namespace embc

using namespace mlir;
using namespace embc;
using namespace embc::emb;

namespace {

struct QuantizePass : embc::impl::EmbQuantizePassBase<QuantizePass> {
  using Base::Base;
  void runOnOperation() override;

private:
  /// Applies the `tables` option and checks each quantised table can train;
  /// fills `storage` with the quantised tables.
  LogicalResult chooseStorage(ModuleOp module, llvm::StringMap<StorageType> &storage);
};

LogicalResult QuantizePass::chooseStorage(ModuleOp module,
                                          llvm::StringMap<StorageType> &storage) {
  std::optional<StorageType> override;
  if (!tables.empty()) {
    override = parseStorage(tables);
    if (!override)
      return module.emitError("-emb-quantize: tables=")
             << tables << " is not a table storage (f32, f16, bf16, int8, int4)";
  }
  for (auto table : module.getOps<TableOp>()) {
    // int4 packs two elements per byte; say so here rather than leave the
    // table's verifier to reject the rewritten op.
    if (override == StorageType::int4_rowwise && table.getDim() % 2 != 0)
      return table.emitOpError("has an odd dim (")
             << table.getDim()
             << "), which tables=int4 cannot store: int4_rowwise packs two "
                "elements per byte; use an even dim or int8";
    if (override)
      table.setStorage(*override);
    if (table.getStorage() == StorageType::f32)
      continue;
    OptimizerAttr opt = table.getOptimizer();
    // Global decay scales every row of the table each step; on quantised
    // storage that would requantise the whole table per step (and, for
    // f16/bf16, let rounding erase the decay of small rows).
    if (opt.getWeightDecay() != 0.0 &&
        opt.getWeightDecayMode() == WeightDecayMode::global)
      return table.emitOpError("is stored as ")
             << stringifyStorageType(table.getStorage())
             << " with global weight decay, which would requantise every row "
                "every step; use weight_decay_mode 'lazy' (touched rows only)";
    storage[table.getSymName()] = table.getStorage();
    LLVM_DEBUG(llvm::dbgs() << "emb-quantize: @" << table.getSymName() << " stored as "
                            << stringifyStorageType(table.getStorage()) << "\n");
  }
  return success();
}

void QuantizePass::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<TrainingFuncs> funcs = lookupTrainingFuncs(module, "-emb-quantize");
  if (failed(funcs))
    return signalPassFailure();
  if (module->hasAttr(kQuantizedAttrName)) {
    module.emitError("the module is already quantised (it has ")
        << kQuantizedAttrName << "): -emb-quantize runs once";
    return signalPassFailure();
  }
  // Packing replaces the tables' updates by one per batch, and fusion moves
  // lookups into groups: mark the ops while each still names its table.
  if (!module.getOps<TableBatchOp>().empty() || !module.getOps<ParamPackOp>().empty() ||
      funcs->step.walk([](FusedOp) { return WalkResult::interrupt(); }).wasInterrupted()) {
    module.emitError("-emb-quantize runs before -emb-pack-params and -emb-fuse "
                     "(the module is already packed or fused)");
    return signalPassFailure();
  }

  llvm::StringMap<StorageType> storage;
  if (failed(chooseStorage(module, storage)))
    return signalPassFailure();
  numQuantizedTables = storage.size();

  MLIRContext *ctx = &getContext();
  auto mark = [&](Operation *op, StringRef table, StringRef name, Attribute value) {
    if (!storage.contains(table))
      return;
    op->setAttr(name, value ? value : StorageTypeAttr::get(ctx, storage.lookup(table)));
    ++numMarkedOps;
  };
  funcs->step.walk([&](Operation *op) {
    if (auto lookup = dyn_cast<LookupOp>(op))
      mark(op, lookup.getTable(), kDequantizeAttrName, {});
    else if (auto gather = dyn_cast<GatherOp>(op))
      mark(op, gather.getTable(), kDequantizeAttrName, {});
    else if (auto sequence = dyn_cast<SequenceLookupOp>(op))
      mark(op, sequence.getTable(), kDequantizeAttrName, {});
    else if (auto grad = dyn_cast<LookupGradOp>(op); grad && grad.getPooling() == Pooling::max)
      mark(op, grad.getTable(), kDequantizeAttrName, {}); // finds the max in the rows
  });
  auto stochastic = StringAttr::get(
      ctx, embc::runtime::enumString(embc::runtime::Requantize::Stochastic));
  for (auto upd : funcs->update.getOps<UpdateOp>())
    mark(upd, upd.getTarget(), kRequantizeAttrName, stochastic);

  // Dense half (bf16/fp16 compute, fp16 loss scaling): QuantizeDense.cpp.
  if (failed(quantizeDense(module, funcs->step, funcs->update)))
    return signalPassFailure();

  module->setAttr(kQuantizedAttrName,
                  DictionaryAttr::get(ctx, {NamedAttribute(StringAttr::get(ctx, "rounding"),
                                                           stochastic),
                                            NamedAttribute(StringAttr::get(ctx, "tables"),
                                                           IntegerAttr::get(IntegerType::get(ctx, 64),
                                                                            int64_t(storage.size())))}));
}

} // namespace
