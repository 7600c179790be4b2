//===- PipelineSchedule.cpp - stage assignment and GPipe/1F1B schedules ---===//
//
// The two halves of -emb-pipeline that concern stages: which ops each stage
// runs (a balanced contiguous split of the forward by cost; backward ops
// follow the values they read) and the instruction list of one optimizer
// step. The schedule is linearised by the same round-robin simulation the
// checker (emb.schedule's verifier) runs, so the listed order is one that a
// single device can execute in sequence.
//
//===----------------------------------------------------------------------===//

#include "PipelineSchedule.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallSet.h"

#include <numeric>
#include <set>

using namespace mlir;
using namespace embc;
using namespace embc::emb;
using namespace embc::pipeline;

int64_t embc::pipeline::stageOf(Operation *op) {
  if (auto attr = op->getAttrOfType<IntegerAttr>(kStageAttrName))
    return attr.getInt();
  if (auto fused = dyn_cast<FusedOp>(op))
    if (!fused.getBody().empty() && !fused.getBody().front().empty())
      return stageOf(&fused.getBody().front().front());
  return 0;
}

Operation *embc::pipeline::firstBackwardOp(func::FuncOp step) {
  for (Operation &op : step.getBody().front()) {
    auto fused = dyn_cast<FusedOp>(op);
    Operation *first = fused ? &fused.getBody().front().front() : &op;
    if (first->hasTrait<BackwardOp>())
      return &op;
  }
  return nullptr;
}

bool embc::pipeline::isBackwardPhase(Operation *op, Operation *firstBackward) {
  return firstBackward && (op == firstBackward || firstBackward->isBeforeInBlock(op));
}

namespace {

/// Cost of a forward op for the split: FLOPs plus bytes moved (a device
/// balanced at about one FLOP per byte; embedding lookups are bytes).
int64_t costOf(Operation *op) {
  if (auto cost = dyn_cast<CostOpInterface>(op))
    return cost.getForwardFlops() + cost.getForwardBytes();
  return 0;
}

/// Splits costs into `parts` contiguous non-empty groups minimising the
/// largest group's cost; returns the first index of each group.
SmallVector<size_t> balancedSplit(ArrayRef<int64_t> costs, int64_t parts) {
  size_t n = costs.size();
  SmallVector<int64_t> prefix(n + 1, 0);
  for (size_t i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + costs[i];
  const int64_t inf = std::numeric_limits<int64_t>::max();
  // best[k][j]: the smallest maximum over k groups covering costs[0, j).
  std::vector<std::vector<int64_t>> best(parts + 1, std::vector<int64_t>(n + 1, inf));
  std::vector<std::vector<size_t>> cut(parts + 1, std::vector<size_t>(n + 1, 0));
  best[0][0] = 0;
  for (int64_t k = 1; k <= parts; ++k)
    for (size_t j = size_t(k); j <= n; ++j)
      for (size_t i = size_t(k - 1); i < j; ++i) {
        if (best[k - 1][i] == inf)
          continue;
        int64_t worst = std::max(best[k - 1][i], prefix[j] - prefix[i]);
        if (worst < best[k][j])
          best[k][j] = worst, cut[k][j] = i;
      }
  SmallVector<size_t> starts(parts, 0);
  size_t j = n;
  for (int64_t k = parts; k >= 1; --k) {
    starts[k - 1] = cut[k][j];
    j = cut[k][j];
  }
  return starts;
}

void setStage(Operation *op, int64_t stage) {
  op->setAttr(kStageAttrName,
              IntegerAttr::get(IntegerType::get(op->getContext(), 64), stage));
}

} // namespace

LogicalResult embc::pipeline::assignStages(func::FuncOp step, int64_t stages) {
  Block &body = step.getBody().front();
  Operation *firstBackward = firstBackwardOp(step);
  SmallVector<Operation *> forward; // ops that take a stage by the split
  bool anyGiven = false, anyMissing = false;
  for (Operation &op : body) {
    if (isBackwardPhase(&op, firstBackward))
      break;
    if (isa<GetOp, func::ReturnOp>(op))
      continue;
    forward.push_back(&op);
    (op.hasAttr(kStageAttrName) ? anyGiven : anyMissing) = true;
  }
  if (int64_t(forward.size()) < stages)
    return step.emitOpError("cannot split ")
           << forward.size() << " forward op(s) into " << stages
           << " pipeline stages: each stage needs at least one";
  if (anyGiven && anyMissing)
    return step.emitOpError("has forward ops with and without emb.stage: give "
                            "every forward op a stage, or none");
  if (!anyGiven) {
    SmallVector<int64_t> costs;
    for (Operation *op : forward)
      costs.push_back(costOf(op));
    SmallVector<size_t> starts = balancedSplit(costs, stages);
    for (int64_t s = 0; s < stages; ++s) {
      size_t end = s + 1 < stages ? starts[s + 1] : forward.size();
      for (size_t i = starts[s]; i < end; ++i)
        setStage(forward[i], s);
    }
  }

  // Forward ops never read a later stage's value; parameters are read on
  // the stage of their first reader, inputs are loaded there too.
  llvm::DenseMap<Value, int64_t> inputStage;
  for (Operation *op : forward) {
    int64_t s = stageOf(op);
    if (s < 0 || s >= stages)
      return op->emitOpError("has emb.stage ") << s << " outside [0, " << stages << ")";
    for (Value v : op->getOperands()) {
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        auto [it, fresh] = inputStage.try_emplace(v, s);
        if (!fresh)
          it->second = std::min(it->second, s);
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (isa<GetOp>(def))
        continue;
      if (stageOf(def) > s)
        return op->emitOpError("on stage ")
               << s << " reads a value of stage " << stageOf(def)
               << ": forward values only flow to the same or later stages";
    }
  }
  for (GetOp get : body.getOps<GetOp>()) {
    if (isBackwardPhase(get, firstBackward))
      continue;
    int64_t s = 0;
    for (Operation *user : get->getUsers())
      if (!isBackwardPhase(user, firstBackward)) {
        s = stageOf(user);
        break;
      }
    setStage(get, s);
  }

  // Where each forward value is present: its stage and those of its forward
  // readers (it is sent there anyway).
  llvm::DenseMap<Value, llvm::SmallSet<int64_t, 4>> present;
  for (Operation &op : body) {
    if (isBackwardPhase(&op, firstBackward))
      break;
    for (Value v : op.getOperands())
      present[v].insert(stageOf(&op));
    for (Value r : op.getResults())
      present[r].insert(stageOf(&op));
  }

  // Backward ops: at least the stages of the forward values they read, at
  // most those of the gradients they read (gradients flow to earlier
  // stages). Within that range, the latest stage where every forward value
  // read is already present, so no extra value crosses.
  for (Operation &op : body) {
    if (!isBackwardPhase(&op, firstBackward) || isa<func::ReturnOp>(op))
      continue;
    int64_t lo = -1, hi = stages;
    Operation *loFrom = nullptr, *hiFrom = nullptr;
    for (Value v : op.getOperands()) {
      if (isa<BlockArgument>(v)) {
        int64_t s = inputStage.lookup(v);
        if (s > lo)
          lo = s, loFrom = nullptr;
        continue;
      }
      Operation *def = v.getDefiningOp();
      int64_t s = stageOf(def);
      if (!isBackwardPhase(def, firstBackward) && s > lo)
        lo = s, loFrom = def;
      if (isBackwardPhase(def, firstBackward) && s < hi)
        hi = s, hiFrom = def;
    }
    if (lo > hi) {
      InFlightDiagnostic diag = op.emitOpError("has inconsistent stages: it reads forward "
                                               "values of stage ")
                                << lo << " but gradients of stage " << hi
                                << ", and a backward op runs on a stage between them";
      if (loFrom)
        diag.attachNote(loFrom->getLoc()) << "the forward value of stage " << lo;
      if (hiFrom)
        diag.attachNote(hiFrom->getLoc()) << "the gradient of stage " << hi;
      return diag;
    }
    int64_t chosen = lo >= 0 ? lo : (hi < stages ? hi : 0);
    for (int64_t s = std::min(hi, stages - 1); s > std::max<int64_t>(lo, 0); --s)
      if (llvm::all_of(op.getOperands(), [&](Value v) {
            bool forwardValue = isa<BlockArgument>(v) ||
                                !isBackwardPhase(v.getDefiningOp(), firstBackward);
            return !forwardValue || present.lookup(v).contains(s);
          })) {
        chosen = s;
        break;
      }
    setStage(&op, chosen);
  }
  return success();
}

namespace {

struct Instr {
  enum Kind { Load, Forward, Backward, Send, Recv, Reduce, Step } kind;
  int64_t stage, mb = -1, peer = -1;
};

/// Values crossing from one stage to another, per (from, to) in def order.
using Links = llvm::MapVector<std::pair<int64_t, int64_t>, SmallVector<Type>>;

Links boundaryLinks(func::FuncOp step, SmallVectorImpl<bool> &loads, int64_t stages) {
  Links links;
  llvm::MapVector<std::pair<int64_t, int64_t>, llvm::SetVector<Value>> values;
  loads.assign(stages, false);
  loads[0] = true;
  for (Operation &op : step.getBody().front()) {
    if (isa<func::ReturnOp>(op))
      continue;
    int64_t to = stageOf(&op);
    op.walk([&](Operation *inner) {
      for (Value v : inner->getOperands()) {
        if (isa<BlockArgument>(v) && v.getParentBlock() == &step.getBody().front()) {
          loads[to] = true;
          continue;
        }
        Operation *def = v.getDefiningOp();
        if (!def || def->getBlock() != &step.getBody().front())
          continue; // defined inside the same group
        int64_t from = stageOf(def);
        if (from != to)
          values[{from, to}].insert(v);
      }
    });
  }
  for (auto &[key, set] : values)
    for (Value v : set)
      links[key].push_back(v.getType());
  return links;
}

} // namespace

LogicalResult embc::pipeline::emitSchedule(ModuleOp module, func::FuncOp step,
                                           PipelineSchedule kind, int64_t p,
                                           int64_t m, int64_t &instructions) {
  SmallVector<bool> loads;
  Links links = boundaryLinks(step, loads, p);
  std::vector<std::vector<Instr>> programs(p);
  for (int64_t s = 0; s < p; ++s) {
    auto &prog = programs[s];
    auto forward = [&](int64_t mb) {
      if (loads[s])
        prog.push_back({Instr::Load, s, mb});
      for (int64_t r = 0; r < s; ++r)
        if (links.count({r, s}))
          prog.push_back({Instr::Recv, s, mb, r});
      prog.push_back({Instr::Forward, s, mb});
      for (int64_t t = s + 1; t < p; ++t)
        if (links.count({s, t}))
          prog.push_back({Instr::Send, s, mb, t});
    };
    auto backward = [&](int64_t mb) {
      for (int64_t t = p - 1; t > s; --t)
        if (links.count({t, s}))
          prog.push_back({Instr::Recv, s, mb, t});
      prog.push_back({Instr::Backward, s, mb});
      for (int64_t r = s - 1; r >= 0; --r)
        if (links.count({s, r}))
          prog.push_back({Instr::Send, s, mb, r});
    };
    // GPipe fills the pipeline with every forward first. 1F1B (and any
    // schedule on one stage, where running ahead gains nothing and would
    // keep every micro-batch's activations) warms up with p-s-1 forwards,
    // then alternates, then drains.
    int64_t warmup = kind == PipelineSchedule::gpipe && p > 1 ? m : std::min(p - s - 1, m);
    for (int64_t mb = 0; mb < warmup; ++mb)
      forward(mb);
    for (int64_t i = 0; i + warmup < m; ++i) {
      forward(warmup + i);
      backward(i);
    }
    for (int64_t mb = m - warmup; mb < m; ++mb)
      backward(mb);
    prog.push_back({Instr::Reduce, s});
    prog.push_back({Instr::Step, s});
  }

  // Linearise: rounds in which every stage runs its next instruction unless
  // it is a recv whose send has not run (the checker's simulation).
  std::vector<Instr> order;
  std::vector<size_t> head(p, 0);
  std::set<std::tuple<int64_t, int64_t, int64_t>> sent;
  while (int64_t(order.size()) <
         std::accumulate(programs.begin(), programs.end(), int64_t(0),
                         [](int64_t n, auto &prog) { return n + int64_t(prog.size()); })) {
    bool progress = false;
    for (int64_t s = 0; s < p; ++s) {
      if (head[s] == programs[s].size())
        continue;
      const Instr &in = programs[s][head[s]];
      if (in.kind == Instr::Recv && !sent.count({in.peer, s, in.mb}))
        continue;
      if (in.kind == Instr::Send)
        sent.insert({s, in.peer, in.mb});
      order.push_back(in);
      ++head[s];
      progress = true;
    }
    if (!progress)
      return step.emitOpError("-emb-pipeline generated a schedule that deadlocks "
                              "(a bug in the generator)");
  }

  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  Location loc = step.getLoc();
  auto sched = ScheduleOp::create(b, loc, kind, uint64_t(p), uint64_t(m),
                                 /*ranks=*/DenseI64ArrayAttr());
  b.createBlock(&sched.getBody());
  for (const Instr &in : order) {
    uint64_t s = uint64_t(in.stage), mb = uint64_t(in.mb), peer = uint64_t(in.peer);
    switch (in.kind) {
    case Instr::Load: SchedLoadOp::create(b, loc, s, mb); break;
    case Instr::Forward: SchedForwardOp::create(b, loc, s, mb); break;
    case Instr::Backward: SchedBackwardOp::create(b, loc, s, mb); break;
    case Instr::Send:
      SchedSendOp::create(b, loc, s, mb, peer, b.getTypeArrayAttr(links.lookup({in.stage, in.peer})));
      break;
    case Instr::Recv:
      SchedRecvOp::create(b, loc, s, mb, peer, b.getTypeArrayAttr(links.lookup({in.peer, in.stage})));
      break;
    case Instr::Reduce: SchedReduceOp::create(b, loc, s); break;
    case Instr::Step: SchedStepOp::create(b, loc, s); break;
    }
  }
  instructions = int64_t(order.size());
  return success();
}
