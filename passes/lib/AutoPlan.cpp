//===- AutoPlan.cpp - -emb-auto --------------------------------------------===//
//
// Fits a model into `plan.memory_budget`. The levers, in the order they are
// tried:
//
//   1. exact ones, which do not change what the model learns: micro-batches
//      (each divisor of the batch up to `max-micro-batches`) and activation
//      rematerialisation (none or all);
//   2. with data parallelism (N > 1 ranks), sharding tables row_wise, the
//      k largest first (k = 1..T): exact too (the sums only change their
//      rounding), each rank then stores 1/N of those tables;
//   3. moving tables to `disk` placement (CPU targets), the k tables with
//      the most bytes per lookup first (k = 1..T): exact as well (the
//      kernels read the same rows through the page cache), only slower
//      where the rows a batch touches are not in memory;
//   4. table quantisation, only when no exact choice fits, as a ladder:
//      the k largest tables at level L and the others at level L-1, for
//      L = bf16, int8, int4 (row-wise) and k = 1..T. Each rung needs no more
//      memory than the one before and loses no less precision, so the
//      lowest rung that fits is the mildest quantisation that does.
//
// Every candidate is compiled for real: the module is cloned, the choice
// written into it, the planning passes run on the clone and the plan built,
// so the peak is the plan's own, not an estimate. This is a driver loop
// over compilations (fitMemoryBudget, Pipeline.h): embc runs it between
// -emb-autodiff and the planning passes, outside any pass manager; the
// -emb-auto pass is its adapter for emb-opt. Among the candidates of the best quality that fit, the one with
// the best estimated step time wins (bytes moved at `bandwidth-gbs`, FLOPs
// at `tflops`, `launch-us` per kernel launch: a nominal GPU by default).
// The choice is written into the module (table storage, emb.plan remat and
// micro_batches) and explained in `emb.auto`, which the plan report shows.
//
// A `disk` table's pages are mapped from a file and need no memory: the
// budget counts the plan's device and host bytes (memory::tierBytes), and
// disk tables are neither quantised nor sharded by it (neither would save
// memory; a sharded table lives on its ranks' devices), nor are host ones
// sharded. The bytes per lookup that order the disk ladder are a table's
// storage over the ids its lookups read per example (the ids argument's
// size or emb.max_ids bound): the tables whose rows are each read least
// often lose the least by living in the page cache.
//
//===----------------------------------------------------------------------===//

#include "MemoryPlanner.h"

#include "embc/passes/Passes.h"
#include "embc/passes/Pipeline.h"
#include "embc/passes/ToPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"

#include <optional>
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "emb-auto"

namespace embc {
#define GEN_PASS_DEF_EMBAUTOPASS
#include "embc/passes/Passes.h.inc"
} // namespace embc

using namespace mlir;
using namespace embc;
using namespace embc::emb;

namespace {

/// Bytes for the notes (GiB with two decimals).
std::string mib(int64_t bytes) { return memory::readableBytes(bytes, 2); }

/// The quantisation ladder's storages; level 0 is the tables' own (f32).
constexpr StorageType kLevels[] = {StorageType::f32, StorageType::bf16,
                                   StorageType::int8_rowwise,
                                   StorageType::int4_rowwise};
constexpr int64_t kNumLevels = std::size(kLevels);

/// One configuration the planner may choose.
struct Choice {
  int64_t microBatches = 1;
  RematMode remat = RematMode::none;
  /// Quantisation rung: the `quantized` largest tables at kLevels[level],
  /// the others at kLevels[level - 1]. Level 0: no table quantised.
  int64_t level = 0, quantized = 0;
  /// The `sharded` largest tables sharded row_wise (data parallelism only;
  /// never together with quantisation: sharded tables train in f32).
  int64_t sharded = 0;
  /// The `onDisk` first tables of the offload order placed on disk (never
  /// together with sharding or quantisation).
  int64_t onDisk = 0;

  std::string describe() const {
    std::string s = std::to_string(microBatches) + " micro-batch" +
                    (microBatches > 1 ? "es" : "") + ", remat " +
                    stringifyRematMode(remat).str();
    if (level > 0) {
      s += ", " + std::to_string(quantized) + " largest table(s) " +
           stringifyStorageType(kLevels[level]).str();
      if (level > 1)
        s += ", the others " + stringifyStorageType(kLevels[level - 1]).str();
    }
    if (sharded > 0)
      s += ", " + std::to_string(sharded) + " largest table(s) row_wise";
    if (onDisk > 0)
      s += ", " + std::to_string(onDisk) + " table(s) on disk";
    return s;
  }
};

/// What compiling a choice gave.
struct Outcome {
  /// The memory the plan needs: its arena but for disk tables' pages.
  int64_t peak = 0;
  double seconds = 0; ///< estimated step time
};

struct DeviceModel {
  double bytesPerSecond, flopsPerSecond, launchSeconds;
};

/// Estimated time of one optimizer step of `plan` compiled from `module`:
/// the step kernels run once per micro-batch.
double estimateSeconds(ModuleOp module, const runtime::Plan &plan,
                       const DeviceModel &device) {
  double flops = 0;
  if (auto step = module.lookupSymbol<func::FuncOp>("train_step"))
    step.walk([&](CostOpInterface op) {
      // Forward FLOPs; the backward costs about twice the forward, a
      // recomputed op only its forward again.
      double f = double(op.getForwardFlops());
      flops += op->hasAttr("emb.remat") ? f : 3.0 * f;
    });
  double m = double(plan.config.microBatches);
  double bytes = 0;
  for (const runtime::Kernel &k : plan.step)
    bytes += m * double(k.bytes);
  for (const runtime::Kernel &k : plan.update)
    bytes += double(k.bytes);
  double launches = m * double(plan.step.size()) + double(plan.update.size());
  return m * flops / device.flopsPerSecond + bytes / device.bytesPerSecond +
         launches * device.launchSeconds;
}

/// The ids the lookups of each table read per example in @train_step's
/// forward: an ids tensor's size (or its argument's emb.max_ids bound,
/// through emb.hash) over the batch. A table no lookup reads counts 1.
llvm::StringMap<double> lookupsPerExample(func::FuncOp step, int64_t batch) {
  llvm::StringMap<double> lookups;
  step.walk([&](LookupOp lookup) {
    Value ids = lookup.getIds();
    if (auto hash = ids.getDefiningOp<HashOp>())
      ids = hash.getIds();
    int64_t count = 0;
    auto type = cast<RankedTensorType>(ids.getType());
    if (type.hasStaticShape())
      count = type.getNumElements();
    else if (auto arg = dyn_cast<BlockArgument>(ids))
      if (auto bound = step.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), "emb.max_ids"))
        count = bound.getInt();
    lookups[lookup.getTable()] += double(std::max<int64_t>(count, 1)) / double(batch);
  });
  return lookups;
}

/// The search of fitMemoryBudget over one module.
class BudgetPlanner {
public:
  explicit BudgetPlanner(const BudgetOptions &options) : options(options) {}
  LogicalResult run(ModuleOp module);

private:
  const BudgetOptions &options;
  /// The tables that may move to disk, the most bytes per lookup first.
  SmallVector<StringRef> offloadOrder;
  /// Writes `choice` into `module` (tables sorted largest first).
  void apply(ModuleOp module, const Choice &choice,
             ArrayRef<StringRef> tablesBySize) const;
  /// Compiles `choice` on a clone; nothing when a pass refuses it (the
  /// reason goes to `why`).
  std::optional<Outcome> evaluate(ModuleOp module, const Choice &choice,
                                  ArrayRef<StringRef> tablesBySize,
                                  std::string &why) const;
};

void BudgetPlanner::apply(ModuleOp module, const Choice &choice,
                     ArrayRef<StringRef> tablesBySize) const {
  MLIRContext *ctx = module.getContext();
  if (choice.level > 0)
    for (auto [i, name] : llvm::enumerate(tablesBySize))
      if (auto table = module.lookupSymbol<TableOp>(name)) {
        StorageType storage =
            kLevels[int64_t(i) < choice.quantized ? choice.level : choice.level - 1];
        // int4 packs two values per byte: an odd-dim table stays int8.
        if (storage == StorageType::int4_rowwise && table.getDim() % 2)
          storage = StorageType::int8_rowwise;
        table.setStorage(storage);
      }
  for (StringRef name : tablesBySize.take_front(size_t(choice.sharded)))
    if (auto table = module.lookupSymbol<TableOp>(name);
        table && table.getSharding() == Sharding::none &&
        table.getPlacement() == Placement::device)
      table.setSharding(Sharding::row_wise);
  for (StringRef name : ArrayRef(offloadOrder).take_front(size_t(choice.onDisk)))
    if (auto table = module.lookupSymbol<TableOp>(name))
      table.setPlacement(Placement::disk);
  auto old = module->getAttrOfType<PlanAttr>(kPlanAttrName);
  module->setAttr(kPlanAttrName,
                  PlanAttr::get(ctx, old.getMemoryBudget(), choice.remat,
                                choice.microBatches, old.getPipelineStages(),
                                old.getSchedule(), old.getDataParallel(),
                                old.getPipelineRanks()));
}

std::optional<Outcome> BudgetPlanner::evaluate(ModuleOp module, const Choice &choice,
                                          ArrayRef<StringRef> tablesBySize,
                                          std::string &why) const {
  OwningOpRef<ModuleOp> clone(module.clone());
  apply(*clone, choice, tablesBySize);
  // A candidate a pass refuses is not an error of the model: keep the
  // reason, show nothing.
  ScopedDiagnosticHandler quiet(module.getContext(), [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error && why.empty())
      why = diag.str();
    return success();
  });
  PassManager pm(module.getContext());
  addPlanningPasses(pm, options.pipeline);
  if (failed(pm.run(*clone)))
    return std::nullopt;
  FailureOr<runtime::Plan> plan = buildPlan(*clone);
  if (failed(plan))
    return std::nullopt;
  DeviceModel device{options.bandwidthGBs * 1e9, options.tflops * 1e12,
                     options.launchUs * 1e-6};
  return Outcome{memory::tierBytes(*plan).resident(), estimateSeconds(*clone, *plan, device)};
}

LogicalResult BudgetPlanner::run(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  auto planAttr = module->getAttrOfType<PlanAttr>(kPlanAttrName);
  auto training = module->getAttrOfType<TrainingAttr>(kTrainingAttrName);
  int64_t budget = options.budgetBytes ? options.budgetBytes
                                       : (planAttr ? planAttr.getMemoryBudget() : 0);
  if (budget == 0)
    return success(); // no budget: nothing to fit
  if (!planAttr || !training)
    return module.emitError("-emb-auto needs the emb.plan and emb.training attributes");
  if (!module.lookupSymbol<func::FuncOp>("train_step"))
    return module.emitError("-emb-auto needs @train_step: run -emb-autodiff first");
  if (module->hasAttr("emb.auto"))
    return module.emitError("-emb-auto has already chosen this module's plan");
  // Knobs set by hand are the user's plan: remat auto then fits the budget
  // by itself, and -emb-auto stays out of the way.
  if (planAttr.getPipelineStages() > 1 || planAttr.getMicroBatches() > 1 ||
      planAttr.getRemat() != RematMode::none) {
    module->setAttr("emb.auto",
                    ArrayAttr::get(ctx, {StringAttr::get(ctx, "-emb-auto: micro_batches, remat or "
                                                              "pipeline_stages set in the model; "
                                                              "nothing chosen")}));
    return success();
  }

  // Tables that may be quantised (still f32, not on disk), largest first.
  SmallVector<TableOp> tables;
  int64_t onDisk = 0;
  for (TableOp t : module.getOps<TableOp>()) {
    onDisk += t.getPlacement() == Placement::disk;
    if (t.getStorage() == StorageType::f32 && t.getPlacement() != Placement::disk)
      tables.push_back(t);
  }
  llvm::stable_sort(tables, [](TableOp a, TableOp b) {
    return a.getRows() * a.getDim() > b.getRows() * b.getDim();
  });
  SmallVector<StringRef> bySize;
  for (TableOp t : tables)
    bySize.push_back(t.getSymName());

  int64_t batch = training.getBatchSize();
  // Tables that may move to disk (in memory, not sharded), the most bytes
  // per lookup first.
  if (options.diskTables) {
    llvm::StringMap<double> lookups =
        lookupsPerExample(module.lookupSymbol<func::FuncOp>("train_step"), batch);
    SmallVector<std::pair<double, StringRef>> offload;
    for (TableOp t : module.getOps<TableOp>())
      if (t.getPlacement() == Placement::device && t.getSharding() == Sharding::none) {
        double reads = lookups.lookup(t.getSymName());
        offload.push_back({double(t.getRows() * t.getDim()) / (reads > 0 ? reads : 1.0),
                           t.getSymName()});
      }
    llvm::stable_sort(offload, [](auto &a, auto &b) { return a.first > b.first; });
    for (auto &[bytes, name] : offload)
      offloadOrder.push_back(name);
  }

  SmallVector<int64_t> microBatches;
  for (int64_t m = 1; m <= std::min<int64_t>(batch, options.maxMicroBatches); ++m)
    if (batch % m == 0)
      microBatches.push_back(m);

  SmallVector<std::string> lines;
  lines.push_back("-emb-auto: memory budget " + mib(budget));
  if (onDisk > 0)
    lines.push_back("  " + std::to_string(onDisk) +
                    " disk table(s): file-backed, not counted against the budget");
  std::string none; // why the exact levers alone do not fit
  std::optional<std::pair<Choice, Outcome>> best, smallest;
  /// Compiles `c`; tracks the smallest peak seen and, when `pick`, the
  /// fastest choice that fits.
  auto consider = [&](const Choice &c, bool pick) -> std::optional<Outcome> {
    std::string why;
    std::optional<Outcome> out = evaluate(module, c, bySize, why);
    LLVM_DEBUG(llvm::dbgs() << "emb-auto: candidate level " << c.level << ", "
                            << c.quantized << " quantised, " << c.sharded << " sharded, "
                            << c.microBatches << " micro-batches: "
                            << (out ? "peak " + std::to_string(out->peak) + " bytes"
                                    : "refused (" + why + ")")
                            << "\n");
    if (!out)
      return std::nullopt;
    if (!smallest || out->peak < smallest->second.peak)
      smallest = {c, *out};
    if (pick && out->peak <= budget && (!best || out->seconds < best->second.seconds))
      best = {c, *out};
    return out;
  };
  auto fits = [&](const Choice &c) {
    std::optional<Outcome> out = consider(c, /*pick=*/false);
    return out && out->peak <= budget;
  };
  /// The lowest rung r in [lo, hi] whose choice fits (a ladder's rungs need
  /// ever less memory), by binary search; nothing when even `hi` does not.
  auto lowestFitting = [&](int64_t lo, int64_t hi,
                           llvm::function_ref<Choice(int64_t)> rung) -> std::optional<int64_t> {
    if (!fits(rung(hi)))
      return std::nullopt;
    while (lo < hi) {
      int64_t mid = (lo + hi) / 2;
      if (fits(rung(mid)))
        hi = mid;
      else
        lo = mid + 1;
    }
    return lo;
  };

  // 1. Exact levers.
  int64_t fullPeak = 0;
  for (int64_t m : microBatches)
    for (RematMode remat : {RematMode::none, RematMode::all}) {
      std::optional<Outcome> out = consider(Choice{m, remat}, /*pick=*/true);
      if (m == 1 && remat == RematMode::none && out)
        fullPeak = out->peak;
    }
  if (best) {
    lines.push_back("  fits without quantisation (" + mib(fullPeak) +
                    " with 1 micro-batch and no remat); the fastest that fits: " +
                    best->first.describe());
  } else if (smallest && !bySize.empty()) {
    Choice lean = smallest->first;
    int64_t tablesCount = int64_t(bySize.size());
    none = "  no choice of micro-batches and remat fits (the smallest, " + lean.describe() +
           ", needs " + mib(smallest->second.peak) + ")";
    // 2. Sharding over the ranks: the fewest largest tables row_wise that
    // fit with the leanest exact choice, then the fastest exact choice.
    int64_t ranks = planAttr.getDataParallel();
    if (ranks > 1) {
      lines.push_back(none + ": sharding tables row_wise over " + std::to_string(ranks) +
                      " ranks, largest first");
      auto shard = [&](int64_t k) { return Choice{lean.microBatches, lean.remat, 0, 0, k}; };
      if (std::optional<int64_t> k = lowestFitting(1, tablesCount, shard))
        for (int64_t m : microBatches)
          for (RematMode remat : {RematMode::none, RematMode::all})
            consider(Choice{m, remat, 0, 0, *k}, /*pick=*/true);
      none = "  sharding every table does not fit either";
    }
  }
  if (!best && smallest && !offloadOrder.empty()) {
    // 3. Disk: the fewest tables, most bytes per lookup first, that fit
    // with the leanest exact choice, then the fastest exact choice.
    Choice lean = smallest->first;
    lines.push_back(none + ": moving tables to disk, the most bytes per lookup first");
    auto onDisk = [&](int64_t m, RematMode remat, int64_t k) {
      Choice c{m, remat};
      c.onDisk = k;
      return c;
    };
    auto rung = [&](int64_t k) { return onDisk(lean.microBatches, lean.remat, k); };
    if (std::optional<int64_t> k = lowestFitting(1, int64_t(offloadOrder.size()), rung))
      for (int64_t m : microBatches)
        for (RematMode remat : {RematMode::none, RematMode::all})
          consider(onDisk(m, remat, *k), /*pick=*/true);
    none = "  every table on disk does not fit either";
  }
  if (!best && smallest && !bySize.empty()) {
    Choice lean = smallest->first;
    lean.sharded = 0; // sharded tables are f32: quantise replicated ones
    lean.onDisk = 0;  // disk tables are not quantised
    lines.push_back(none + ": quantising tables, largest first");
    // 3. The lowest rung of the quantisation ladder that fits with the
    // leanest exact choice (binary search over the rungs), then the fastest
    // exact choice at that rung.
    int64_t tablesCount = int64_t(bySize.size());
    auto rung = [&](int64_t r) {
      return Choice{lean.microBatches, lean.remat, 1 + r / tablesCount,
                    1 + r % tablesCount};
    };
    if (std::optional<int64_t> r = lowestFitting(0, (kNumLevels - 1) * tablesCount - 1, rung)) {
      Choice chosen = rung(*r);
      for (int64_t m : microBatches)
        for (RematMode remat : {RematMode::none, RematMode::all})
          consider(Choice{m, remat, chosen.level, chosen.quantized}, /*pick=*/true);
    }
  }
  // The location names the model's knob (embc prints its JSON pointer).
  Location budgetLoc = NameLoc::get(StringAttr::get(module.getContext(), "/plan/memory_budget"),
                                    module.getLoc());
  if (!best)
    return emitError(budgetLoc, "memory budget ")
           << mib(budget) << " (" << budget
           << " bytes) is too small: the smallest plan found needs "
           << mib(smallest ? smallest->second.peak : 0) << " ("
           << (smallest ? smallest->second.peak : 0) << " bytes), with "
           << (smallest ? smallest->first.describe() : std::string("no choice"));

  const auto &[choice, outcome] = *best;
  apply(module, choice, bySize);
  lines.push_back("  chose " + choice.describe() + ": peak " + mib(outcome.peak) + " (" +
                  std::to_string(outcome.peak) + " bytes" +
                  (onDisk + choice.onDisk > 0 ? " without the disk tables" : "") + "), estimated step " +
                  std::to_string(int64_t(outcome.seconds * 1e6)) + " us");
  if (choice.sharded > 0) {
    std::string names;
    for (int64_t i = 0; i < choice.sharded; ++i)
      names += (i ? ", @" : "@") + bySize[i].str();
    lines.push_back("  row_wise: " + names);
  }
  if (choice.onDisk > 0) {
    std::string names;
    for (int64_t i = 0; i < choice.onDisk; ++i)
      names += (i ? ", @" : "@") + offloadOrder[i].str();
    lines.push_back("  disk: " + names);
  }
  if (choice.level > 0) {
    std::string names;
    for (int64_t i = 0; i < choice.quantized; ++i)
      names += (i ? ", @" : "@") + bySize[i].str();
    lines.push_back("  " + stringifyStorageType(kLevels[choice.level]).str() +
                    ": " + names);
  }
  SmallVector<Attribute> attrs;
  for (const std::string &l : lines)
    attrs.push_back(StringAttr::get(ctx, l));
  module->setAttr("emb.auto", ArrayAttr::get(ctx, attrs));
  return success();
}

/// emb-opt's -emb-auto: the driver loop on the pass's module.
struct AutoPass : embc::impl::EmbAutoPassBase<AutoPass> {
  using Base::Base;
  void runOnOperation() override {
    BudgetOptions options;
    options.budgetBytes = budgetBytes;
    options.maxMicroBatches = maxMicroBatches;
    options.bandwidthGBs = bandwidthGBs;
    options.tflops = tflops;
    options.launchUs = launchUs;
    options.pipeline.pack = pack;
    options.pipeline.fuse = fuse;
    options.pipeline.batchExchanges = batchExchanges;
    options.diskTables = diskTables;
    if (failed(fitMemoryBudget(getOperation(), options)))
      signalPassFailure();
  }
};

} // namespace

LogicalResult embc::fitMemoryBudget(ModuleOp module, const BudgetOptions &options) {
  return BudgetPlanner(options).run(module);
}
