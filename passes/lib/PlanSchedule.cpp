//===- PlanSchedule.cpp - -emb-pipeline's results in the plan -------------===//
//
// The part of -emb-to-plan that lowers what -emb-pipeline made: the
// micro-batch count, stages and schedule (config), each instruction of the
// emb.schedule with its boundary buffers (Plan.schedule), and the copies a
// buffer needs while several micro-batches are in flight (Buffer.slots).
//
//===----------------------------------------------------------------------===//

#include "PipelineSchedule.h"
#include "PlanBuilder.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include <set>

using namespace mlir;
using namespace embc::emb;
using namespace embc::planbuilder;
using namespace embc::pipeline;

LogicalResult PlanBuilder::readPipelineConfig(func::FuncOp step) {
  auto schedules = llvm::to_vector(module.getOps<ScheduleOp>());
  auto planAttr = module->getAttrOfType<PlanAttr>(kPlanAttrName);
  if (schedules.size() > 1)
    return schedules[1].emitOpError("is a second schedule; a module has one");
  if (schedules.empty()) {
    if (planAttr && (planAttr.getMicroBatches() > 1 || planAttr.getPipelineStages() > 1))
      return module.emitError("emb.plan asks for ")
             << planAttr.getMicroBatches() << " micro-batch(es) and "
             << planAttr.getPipelineStages()
             << " stage(s) but the module has no emb.schedule: run -emb-pipeline";
    return success();
  }
  ScheduleOp sched = schedules.front();
  rt::TrainingConfig &config = plan_.config;
  config.microBatches = int64_t(sched.getMicroBatches());
  config.pipelineStages = int64_t(sched.getStages());
  config.schedule = toPlanSchedule(sched.getKind());
  if (std::optional<ArrayRef<int64_t>> ranks = sched.getRanks())
    config.stageRanks.assign(ranks->begin(), ranks->end());
  else if (planAttr && planAttr.getPipelineRanks() > 1)
    return sched.emitOpError("runs on one device but emb.plan asks for pipeline_ranks ")
           << planAttr.getPipelineRanks() << ": run -emb-distribute";
  auto m = step->getAttrOfType<IntegerAttr>(kMicroBatchesAttrName);
  if (!m || m.getInt() != config.microBatches)
    return sched.emitOpError("schedules ")
           << config.microBatches << " micro-batch(es) but @train_step was "
           << (m ? "rewritten for " + std::to_string(m.getInt()) : std::string("not rewritten"));
  return success();
}

LogicalResult PlanBuilder::lowerSchedule(func::FuncOp step) {
  auto schedules = module.getOps<ScheduleOp>();
  if (schedules.empty())
    return success();
  ScheduleOp sched = *schedules.begin();

  // The values each stage reads from another, in definition order.
  Block &body = step.getBody().front();
  llvm::MapVector<std::pair<int64_t, int64_t>, llvm::SetVector<Value>> links;
  for (Operation &op : body) {
    if (sched.getStages() > 1 && !isa<func::ReturnOp>(op) && !op.hasAttr(kStageAttrName))
      return op.emitOpError("has no emb.stage: a pass after -emb-pipeline created it "
                            "without keeping its stage");
    int64_t to = stageOf(&op);
    op.walk([&](Operation *inner) {
      for (Value v : inner->getOperands()) {
        Operation *def = v.getDefiningOp();
        if (def && def->getBlock() == &body && stageOf(def) != to &&
            !isa<func::ReturnOp>(op))
          links[{stageOf(def), to}].insert(v);
      }
    });
  }

  std::set<std::pair<int64_t, int64_t>> transferred;
  for (Operation &inst : sched.getBody().front()) {
    rt::ScheduleOp s;
    s.kind = inst.getName().stripDialect().drop_front(strlen("sched.")).str();
    auto attr = [&](StringRef name) -> int32_t {
      auto a = inst.getAttrOfType<IntegerAttr>(name);
      return a ? int32_t(a.getInt()) : -1;
    };
    s.stage = attr("stage");
    s.microBatch = attr("mb");
    s.peer = attr("peer");
    if (isa<SchedSendOp, SchedRecvOp>(inst)) {
      bool send = isa<SchedSendOp>(inst);
      std::pair<int64_t, int64_t> link =
          send ? std::pair<int64_t, int64_t>{s.stage, s.peer} : std::pair<int64_t, int64_t>{s.peer, s.stage};
      // The buffers come from the step as lowered: passes after
      // -emb-pipeline (fusion) may change which values cross, not whether.
      if (!links.count(link))
        return inst.emitOpError("transfers from stage ")
               << link.first << " to stage " << link.second
               << " but no value of @train_step crosses between them";
      for (Value v : links.lookup(link)) {
        auto it = bufferOf.find(v);
        if (it == bufferOf.end())
          return inst.emitOpError("carries a value the plan has no buffer for");
        s.buffers.push_back(it->second);
      }
      transferred.insert(link);
    }
    plan_.schedule.push_back(std::move(s));
  }
  for (auto &[link, values] : links)
    if (!transferred.count(link))
      return sched.emitOpError("never transfers the values @train_step's stage ")
             << link.second << " reads from stage " << link.first;
  computeSlots();
  placeBuffersOnRanks();
  int64_t slotted = llvm::count_if(plan_.buffers, [](const rt::Buffer &b) { return b.slots > 1; });
  plan_.notes.push_back("-emb-pipeline: " + std::to_string(plan_.config.microBatches) +
                       " micro-batch(es) of " +
                       std::to_string(plan_.config.batchSize / plan_.config.microBatches) +
                       ", " + std::to_string(plan_.config.pipelineStages) + " stage(s), " +
                       embc::runtime::enumString(plan_.config.schedule) + " schedule of " +
                       std::to_string(plan_.schedule.size()) + " instructions; " +
                       std::to_string(slotted) + " buffer(s) with several slots");
  return success();
}

/// A buffer written for one micro-batch must survive until that
/// micro-batch's last use; while other micro-batches run in between it needs
/// one copy each. The schedule is run in listed order, so a buffer of
/// micro-batch mb lives from the first to the last instruction of mb that
/// touches it (its stage's forward or backward, or the load of an input);
/// `slots` is the fewest copies such that micro-batches alive at once use
/// different copies mb % slots.
void PlanBuilder::computeSlots() {
  enum Phase { Load, Forward, Backward };
  std::map<std::pair<int, int32_t>, std::vector<int32_t>> touched; // (phase, stage) -> buffers
  auto perMicroBatch = [&](int32_t id) {
    const rt::Buffer &b = plan_.buffers[id];
    return b.parent < 0 &&
           (b.role == rt::BufferRole::Activation || b.role == rt::BufferRole::Input);
  };
  std::vector<int32_t> readerStage(plan_.buffers.size(), -1);
  for (auto [i, k] : llvm::enumerate(plan_.step)) {
    int phase = int64_t(i) < plan_.forwardKernels ? Forward : Backward;
    std::set<int32_t> ids(k.inputs.begin(), k.inputs.end());
    ids.insert(k.outputs.begin(), k.outputs.end());
    for (int32_t id : ids) {
      if (readerStage[id] < 0 || k.stage < readerStage[id])
        readerStage[id] = k.stage;
      if (perMicroBatch(id))
        touched[{phase, k.stage}].push_back(id);
    }
  }
  // An input is loaded by the first stage that reads it (the runtime's rule).
  for (const rt::Input &in : plan_.inputs)
    if (perMicroBatch(in.buffer))
      touched[{Load, std::max(readerStage[in.buffer], 0)}].push_back(in.buffer);

  int64_t m = plan_.config.microBatches;
  std::map<int32_t, std::vector<std::pair<int64_t, int64_t>>> life; // per mb: first, last
  for (auto [j, s] : llvm::enumerate(plan_.schedule)) {
    int phase = s.kind == "load" ? Load : s.kind == "forward" ? Forward
              : s.kind == "backward" ? Backward : -1;
    if (phase < 0)
      continue;
    auto it = touched.find({phase, s.stage});
    if (it == touched.end())
      continue;
    for (int32_t id : it->second) {
      auto &spans = life[id];
      if (spans.empty())
        spans.assign(m, {-1, -1});
      auto &[first, last] = spans[s.microBatch];
      if (first < 0)
        first = int64_t(j);
      last = int64_t(j);
    }
  }
  for (auto &[id, spans] : life) {
    auto fits = [&](int64_t k) {
      for (int64_t a = 0; a < m; ++a)
        for (int64_t b = a + 1; b < m; ++b)
          if (a % k == b % k && spans[a].first >= 0 && spans[b].first >= 0 &&
              spans[b].first <= spans[a].second &&
              spans[a].first <= spans[b].second)
            return false;
      return true;
    };
    int64_t k = 1;
    while (!fits(k))
      ++k;
    plan_.buffers[id].slots = int32_t(k);
  }
}

/// With stages on ranks, a buffer that only one rank's kernels touch lives
/// on that rank alone (Buffer.rank), so the memory planner lets it share
/// bytes with the other ranks' buffers. Update kernels run on every rank,
/// and so do parameters, packs and replicated tables; a table owned by one
/// rank was placed by addParamsAndTables already.
void PlanBuilder::placeBuffersOnRanks() {
  const rt::TrainingConfig &config = plan_.config;
  if (config.stageRanks.empty())
    return;
  constexpr int32_t kUntouched = -2, kShared = -1;
  std::vector<int32_t> owner(plan_.buffers.size(), kUntouched);
  auto touch = [&](int32_t b, int32_t rank) {
    while (plan_.buffers[b].parent >= 0) // a view lives where its parent does
      b = plan_.buffers[b].parent;
    owner[b] = owner[b] == kUntouched || owner[b] == rank ? rank : kShared;
  };
  auto touchAll = [&](const std::vector<int32_t> &buffers, int32_t rank) {
    for (int32_t b : buffers)
      if (b >= 0)
        touch(b, rank);
  };
  for (const rt::Kernel &k : plan_.step) {
    touchAll(k.inputs, config.rankOfStage(k.stage));
    touchAll(k.outputs, config.rankOfStage(k.stage));
  }
  for (const rt::Kernel &k : plan_.update) {
    touchAll(k.inputs, kShared);
    touchAll(k.outputs, kShared);
  }
  for (const rt::Param &p : plan_.params)
    touchAll({p.buffer, p.grad}, kShared), touchAll(p.state, kShared);
  for (const rt::ParamPack &p : plan_.packs)
    touchAll({p.buffer, p.grad}, kShared), touchAll(p.state, kShared);
  for (const rt::Table &t : plan_.tables)
    if (t.shardRows.empty())
      touchAll({t.buffer, t.qparams}, kShared), touchAll(t.state, kShared);
  for (size_t b = 0; b < plan_.buffers.size(); ++b)
    if (owner[b] >= 0 && plan_.buffers[b].rank < 0 && plan_.buffers[b].parent < 0)
      plan_.buffers[b].rank = owner[b];
}
