//===- Remat.cpp - -emb-remat ----------------------------------------------===//
//
// Keeps some forward activations of @train_step until the backward and
// recomputes the others there (see Passes.td). This file reads the IR into a
// chain of stages, asks RematSchedule.cpp which stages to keep, and rewrites
// the backward to read clones of the forward ops for the dropped ones.
//
//===----------------------------------------------------------------------===//

#include "GradientsFromOutputs.h"
#include "RematSchedule.h"
#include "TrainingFuncs.h"

#include "embc/passes/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "emb-remat"

namespace embc {
#define GEN_PASS_DEF_EMBREMATPASS
#include "embc/passes/Passes.h.inc"
} // namespace embc

using namespace mlir;
using namespace embc;
using namespace embc::emb;

namespace {

/// Unit attribute on every op the pass clones into the backward.
constexpr StringLiteral kRematAttrName = "emb.remat";
/// Module attribute: the pass's summary line, shown by the plan report.
constexpr StringLiteral kRematNoteAttrName = "emb.remat_note";

/// Bytes of a tensor value; dynamic shapes count the argument's
/// emb.max_ids bound when it has one, else 0 (they cannot be sized here).
int64_t valueBytes(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.getElementType().isIntOrFloat())
    return 0;
  int64_t elementBytes = (type.getElementType().getIntOrFloatBitWidth() + 7) / 8;
  if (type.hasStaticShape())
    return type.getNumElements() * elementBytes;
  if (auto arg = dyn_cast<BlockArgument>(v))
    if (auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()))
      if (auto maxIds = fn.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                         kMaxIdsArgAttrName))
        return maxIds.getInt() * elementBytes;
  return 0;
}

/// Optimizer state bytes for a value of `elements` f32 in `rows` rows.
int64_t stateBytes(OptimizerAttr opt, int64_t elements, int64_t rows) {
  switch (opt.getKind()) {
  case OptimizerKind::sgd:
    return opt.getMomentum() != 0.0 ? 4 * elements : 0;
  case OptimizerKind::adagrad:
    return 4 * elements;
  case OptimizerKind::rowwise_adagrad:
    return 4 * rows;
  default: // adam, adamw, lamb: two moments
    return 8 * elements;
  }
}

/// Ops the pass may run a second time: side-effect free, with a cost (so
/// the recomputation can be counted) and static shapes. Lookups, gathers
/// and the loss are never recomputed.
bool isRecomputable(Operation *op) {
  if (!isPure(op) || !isa<CostOpInterface>(op) || op->getNumRegions() != 0 ||
      isa<LossOp, LookupOp, GatherOp>(op))
    return false;
  return llvm::all_of(op->getResultTypes(), [](Type t) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    return tensor && tensor.hasStaticShape();
  });
}

/// Peak bytes of the step's values live at once, walking its ops in order:
/// a value lives from its definition to its last use (arguments from the
/// start). emb.get results are views of parameters and not counted.
int64_t livenessPeak(Block &body) {
  DenseMap<Operation *, int64_t> position;
  int64_t n = 0;
  for (Operation &op : body)
    position[&op] = n++;
  std::vector<int64_t> delta(n + 2, 0);
  auto addValue = [&](Value v, int64_t from) {
    int64_t bytes = valueBytes(v), last = from;
    if (!bytes)
      return;
    for (Operation *user : v.getUsers())
      last = std::max(last, position.lookup(body.findAncestorOpInBlock(*user)));
    delta[from + 1] += bytes; // shifted by one so arguments start at 0
    delta[last + 2] -= bytes;
  };
  for (BlockArgument arg : body.getArguments())
    addValue(arg, -1);
  for (Operation &op : body)
    if (!isa<GetOp>(op))
      for (Value result : op.getResults())
        addValue(result, position[&op]);
  int64_t live = 0, peak = 0;
  for (int64_t d : delta)
    peak = std::max(peak, live += d);
  return peak;
}

std::string formatPercent(double x) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.1f", x);
  return s;
}

struct RematPass : embc::impl::EmbRematPassBase<RematPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  /// Bytes that stay whatever the pass decides (tables, parameters with
  /// their gradients and optimizer state, inputs, always-kept activations).
  int64_t persistentBytes(ModuleOp module, Block &body, Operation *firstBackward,
                          const DenseSet<Value> &candidates);
  /// The clone of dropped value `v` for uses at the builder's point.
  Value materialise(Value v, OpBuilder &b);
  /// A recomputable op of the step's forward part.
  bool isForwardRecomputable(Operation *op) {
    return op->getBlock() == firstBackward->getBlock() &&
           op->isBeforeInBlock(firstBackward) && isRecomputable(op);
  }

  DenseSet<Value> checkpoints; ///< forward values kept for the backward
  DenseMap<Value, Value> clones;
  Operation *firstBackward = nullptr;
  int64_t clonedFlops = 0;
  /// Counted here too: statistics are compiled out of release LLVM builds.
  int64_t clonedOps = 0;
};

int64_t RematPass::persistentBytes(ModuleOp module, Block &body,
                                   Operation *firstBackward,
                                   const DenseSet<Value> &candidates) {
  int64_t bytes = 0;
  auto training = module->getAttrOfType<TrainingAttr>(kTrainingAttrName);
  for (auto table : module.getOps<TableOp>())
    if (table.getPlacement() != Placement::disk) // file-backed: no memory
      bytes += table.getStorageBytes() +
               stateBytes(table.getOptimizer(), int64_t(table.getRows() * table.getDim()),
                          int64_t(table.getRows()));
  for (auto param : module.getOps<ParamOp>()) {
    auto type = cast<RankedTensorType>(param.getType());
    int64_t elements = type.getNumElements();
    bytes += 8 * elements; // value and gradient, f32
    if (training)
      bytes += stateBytes(training.getDenseOptimizer(), elements,
                          type.getRank() ? type.getDimSize(0) : 1);
  }
  for (BlockArgument arg : body.getArguments())
    bytes += valueBytes(arg);
  // Forward values that are always kept: read by the backward or by a
  // recomputable op (which a clone may read in the backward) or returned.
  for (Operation &op : body) {
    if (&op == firstBackward)
      break;
    if (isa<GetOp>(op))
      continue;
    for (Value result : op.getResults()) {
      if (candidates.contains(result))
        continue;
      bool kept = llvm::any_of(result.getUsers(), [&](Operation *user) {
        Operation *top = body.findAncestorOpInBlock(*user);
        return !top->isBeforeInBlock(firstBackward) ||
               (!isRecomputable(&op) && isRecomputable(user));
      });
      if (kept)
        bytes += valueBytes(result);
    }
  }
  return bytes;
}

Value RematPass::materialise(Value v, OpBuilder &b) {
  if (auto it = clones.find(v); it != clones.end())
    return it->second; // built for an earlier backward use: it dominates
  Operation *def = v.getDefiningOp();
  // Inputs, checkpoints and what cannot be recomputed are read as they are.
  if (!def || !isForwardRecomputable(def) || checkpoints.contains(v))
    return v;
  IRMapping mapping;
  for (Value operand : def->getOperands())
    mapping.map(operand, materialise(operand, b));
  Operation *clone = b.clone(*def, mapping);
  clone->setAttr(kRematAttrName, UnitAttr::get(clone->getContext()));
  clonedFlops += cast<CostOpInterface>(clone).getForwardFlops();
  ++clonedOps;
  ++numClonedOps;
  for (auto [from, to] : llvm::zip(def->getResults(), clone->getResults()))
    clones[from] = to;
  return clones.lookup(v);
}

} // namespace

void RematPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto plan = module->getAttrOfType<PlanAttr>(kPlanAttrName);
  RematMode remat = plan ? plan.getRemat() : RematMode::none;
  if (!mode.empty()) {
    std::optional<RematMode> parsed = symbolizeRematMode(mode);
    if (!parsed) {
      module.emitError("-emb-remat: unknown mode '")
          << mode.getValue() << "' (expected none, auto or all)";
      return signalPassFailure();
    }
    remat = *parsed;
  }
  int64_t memoryBudget = budget >= 0 ? int64_t(budget) : (plan ? plan.getMemoryBudget() : 0);
  if (!strategy.empty() && strategy != "sqrt" && strategy != "dp") {
    module.emitError("-emb-remat: unknown strategy '")
        << strategy.getValue() << "' (expected sqrt or dp)";
    return signalPassFailure();
  }
  if (remat == RematMode::none)
    return; // nothing to do: the IR stays as it is

  FailureOr<TrainingFuncs> funcs = lookupTrainingFuncs(module, "-emb-remat");
  if (failed(funcs))
    return signalPassFailure();

  if (module->hasAttr(kRematNoteAttrName) ||
      funcs->step.walk([](Operation *op) {
            return op->hasAttr(kRematAttrName) ? WalkResult::interrupt()
                                               : WalkResult::advance();
          }).wasInterrupted()) {
    module.emitError("-emb-remat has already run on this module (it has ")
        << kRematNoteAttrName << " or ops marked " << kRematAttrName << ")";
    return signalPassFailure();
  }
  if (funcs->step.walk([](FusedOp) { return WalkResult::interrupt(); }).wasInterrupted()) {
    module.emitError("-emb-remat runs before -emb-fuse: @train_step already "
                     "holds emb.fused groups");
    return signalPassFailure();
  }
  if (remat == RematMode::automatic) {
    if (memoryBudget <= 0) {
      module.emitError("remat = auto needs a memory budget: set the plan's "
                       "memory_budget or pass budget=BYTES");
      return signalPassFailure();
    }
    if (strategy == "sqrt") {
      module.emitError("strategy=sqrt does not look at the budget: it is a "
                       "schedule for remat = all; auto uses the dynamic program");
      return signalPassFailure();
    }
  }

  Block &body = funcs->step.front();
  firstBackward = nullptr;
  for (Operation &op : body)
    if (op.hasTrait<BackwardOp>()) {
      firstBackward = &op;
      break;
    }
  if (!firstBackward) {
    funcs->step.emitOpError("has no backward ops: nothing to rematerialise");
    return signalPassFailure();
  }
  // As -emb-fuse does: the backward then reads only the activation's output.
  gradientsFromOutputs(body, /*keepAttrs=*/false);
  int64_t before = livenessPeak(body);

  // The chain: each recomputable forward op whose results the backward
  // reads is a stage; its FLOPs are those of the recomputable ops since the
  // previous stage (what rebuilding it from there costs).
  std::vector<remat::Stage> stages;
  std::vector<SmallVector<Value>> stageValues;
  DenseSet<Value> candidates;
  int64_t pendingFlops = 0, forwardFlops = 0;
  for (Operation &op : body) {
    if (&op == firstBackward)
      break;
    if (auto cost = dyn_cast<CostOpInterface>(op))
      forwardFlops += cost.getForwardFlops();
    if (!isRecomputable(&op))
      continue;
    pendingFlops += cast<CostOpInterface>(op).getForwardFlops();
    SmallVector<Value> read;
    bool returned = false;
    for (Value result : op.getResults()) {
      bool backward = false;
      for (Operation *user : result.getUsers()) {
        Operation *top = body.findAncestorOpInBlock(*user);
        if (top->hasTrait<OpTrait::IsTerminator>())
          returned = true;
        else if (!top->isBeforeInBlock(firstBackward))
          backward = true;
      }
      if (backward)
        read.push_back(result);
    }
    if (returned) { // lives to the end anyway: a free checkpoint
      pendingFlops = 0;
      continue;
    }
    if (read.empty())
      continue;
    remat::Stage stage;
    for (Value v : read) {
      stage.bytes += valueBytes(v);
      candidates.insert(v);
    }
    stage.flops = pendingFlops;
    pendingFlops = 0;
    stages.push_back(stage);
    stageValues.push_back(std::move(read));
  }

  int64_t persistent = persistentBytes(module, body, firstBackward, candidates);
  remat::Schedule schedule;
  std::string how;
  if (remat == RematMode::all) {
    bool dp = strategy == "dp";
    schedule = dp ? remat::minimumMemorySchedule(stages) : remat::sqrtSchedule(stages);
    how = dp ? "all, dp minimum memory" : "all, sqrt(n) segments";
  } else {
    remat::Schedule lowest = remat::minimumMemorySchedule(stages);
    if (persistent + lowest.peak() > memoryBudget) {
      module.emitError("memory budget ")
          << memoryBudget
          << " bytes is below the smallest this model reaches with "
             "rematerialisation ("
          << persistent + lowest.peak() << " bytes)";
      return signalPassFailure();
    }
    schedule = *remat::optimalSchedule(stages, memoryBudget - persistent);
    how = "auto, budget " + std::to_string(memoryBudget) + " bytes";
  }

  DenseSet<Value> dropped;
  for (auto [keep, values] : llvm::zip(schedule.keep, stageValues))
    for (Value v : values)
      (keep ? checkpoints : dropped).insert(v);
  numRecomputed += dropped.size();

  // Rewire the backward, in order: the first use of a dropped value clones
  // its segment right before it; later uses find the clones in `clones`.
  SmallVector<Operation *> backwardOps;
  for (Operation *op = firstBackward; op; op = op->getNextNode())
    backwardOps.push_back(op);
  OpBuilder b(module.getContext());
  for (Operation *top : backwardOps)
    top->walk([&](Operation *op) {
      for (OpOperand &use : op->getOpOperands()) {
        if (!dropped.contains(use.get()))
          continue;
        b.setInsertionPoint(top);
        use.set(materialise(use.get(), b));
      }
    });

  int64_t after = livenessPeak(body);
  double extra = forwardFlops ? 100.0 * double(clonedFlops) / (3.0 * double(forwardFlops)) : 0.0;
  LLVM_DEBUG(llvm::dbgs() << "emb-remat: keeps " << checkpoints.size() << ", recomputes "
                          << dropped.size() << " values\n");
  std::string note = "recomputes " + std::to_string(dropped.size()) + " values (" +
                     std::to_string(clonedOps) + " ops), +" +
                     formatPercent(extra) + "% step FLOPs, activation estimate " +
                     std::to_string(before) + " -> " + std::to_string(after) +
                     " bytes (" + how + "; chain peak " +
                     std::to_string(remat::keepAll(stages).peak()) + " -> " +
                     std::to_string(schedule.peak()) + " bytes over " +
                     std::to_string(persistent) + " persistent)";
  module->setAttr(kRematNoteAttrName, StringAttr::get(module.getContext(), note));
}
