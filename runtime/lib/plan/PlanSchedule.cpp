//===- PlanSchedule.cpp - validation of the micro-batch schedule ---------===//
//
// The runtime's re-check of what the compiler's schedule checker (the
// verifier of emb.schedule) proved: the settings are coherent, every
// instruction names a stage, micro-batch and buffers that exist, and the
// listed order, which one device runs in sequence, does every micro-batch's
// forward and backward once per stage, the backward after the forward,
// each recv after its send (same buffers), and each stage's step last.
//
//===----------------------------------------------------------------------===//

#include "PlanInternal.h"

#include <map>
#include <set>
#include <tuple>

using namespace embc::runtime;
using namespace embc::runtime::detail;

namespace {

const std::vector<std::string> kKinds = {"load",     "forward", "backward", "send",
                                         "recv",     "reduce",  "step"};

std::string num(int64_t v) { return std::to_string(v); }

} // namespace

void embc::runtime::detail::validateSchedule(const Plan &plan) {
  const TrainingConfig &config = plan.config;
  int64_t m = config.microBatches, p = config.pipelineStages;
  if (m < 1)
    failAt("config.micro_batches", "must be at least 1, got " + num(m));
  if (config.batchSize % m != 0)
    failAt("config.micro_batches", num(m) + " micro-batches do not divide the batch of " +
                                       num(config.batchSize));
  if (p < 1)
    failAt("config.pipeline_stages", "must be at least 1, got " + num(p));
  if (!config.stageRanks.empty()) {
    if (int64_t(config.stageRanks.size()) != p)
      failAt("config.stage_ranks", "places " + num(int64_t(config.stageRanks.size())) +
                                       " stage(s), but the plan has " + num(p));
    for (size_t s = 0; s < config.stageRanks.size(); ++s) {
      int32_t previous = s == 0 ? 0 : config.stageRanks[s - 1], r = config.stageRanks[s];
      if (s == 0 ? r != 0 : r != previous && r != previous + 1)
        failAt(childPath("config.stage_ranks", s),
               "rank " + num(r) + " after rank " + num(previous) +
                   ": ranks start at 0 and take contiguous stages in order");
    }
    if (config.dataParallel != 1)
      failAt("config.stage_ranks", "stages on ranks with data_parallel " +
                                       num(config.dataParallel) + " are not supported");
  }
  for (const auto *kernels : {&plan.step, &plan.update})
    for (size_t k = 0; k < kernels->size(); ++k)
      if ((*kernels)[k].stage < 0 || (*kernels)[k].stage >= p)
        failAt(childPath(childPath(kernels == &plan.step ? "step" : "update", k), "stage"),
               "stage " + num((*kernels)[k].stage) + " is not one of the " + num(p) +
                   " pipeline stages");
  if (plan.schedule.empty()) {
    if (m != 1 || p != 1)
      failAt("schedule", "is empty, but the plan has " + num(m) + " micro-batch(es) and " +
                             num(p) + " stage(s)");
    return;
  }

  std::map<std::tuple<std::string, int32_t, int32_t>, size_t> done; // (kind, stage, mb)
  std::map<std::tuple<int32_t, int32_t, int32_t>, size_t> sent;     // (from, to, mb)
  std::vector<int> steps(size_t(p), 0);
  for (size_t i = 0; i < plan.schedule.size(); ++i) {
    const ScheduleOp &op = plan.schedule[i];
    std::string at = childPath("schedule", i);
    bool known = false;
    for (const std::string &k : kKinds)
      known |= k == op.kind;
    if (!known)
      failAt(childPath(at, "kind"), "unknown instruction '" + op.kind + "', expected " +
                                        joinAlternatives(kKinds));
    if (op.stage < 0 || op.stage >= p)
      failAt(childPath(at, "stage"), num(op.stage) + " is not one of the " + num(p) + " stages");
    bool perMicroBatch = op.kind != "reduce" && op.kind != "step";
    bool transfer = op.kind == "send" || op.kind == "recv";
    if (perMicroBatch ? (op.microBatch < 0 || op.microBatch >= m) : op.microBatch != -1)
      failAt(childPath(at, "micro_batch"),
             perMicroBatch ? num(op.microBatch) + " is not one of the " + num(m) + " micro-batches"
                           : "must be -1 for a " + op.kind);
    if (transfer ? (op.peer < 0 || op.peer >= p || op.peer == op.stage) : op.peer != -1)
      failAt(childPath(at, "peer"), transfer ? num(op.peer) + " is not another stage"
                                             : "must be -1 for a " + op.kind);
    if (!transfer && !op.buffers.empty())
      failAt(childPath(at, "buffers"), "only send and recv carry buffers");
    for (size_t b = 0; b < op.buffers.size(); ++b)
      if (op.buffers[b] < 0 || size_t(op.buffers[b]) >= plan.buffers.size())
        failAt(childPath(childPath(at, "buffers"), b),
               num(op.buffers[b]) + " is not a buffer index");
    if (steps[size_t(op.stage)] > 0)
      failAt(at, "stage " + num(op.stage) + " has an instruction after its step");
    auto key = std::make_tuple(op.kind, op.stage, op.microBatch);
    if (op.kind == "load" || op.kind == "forward" || op.kind == "backward") {
      if (!done.emplace(key, i).second)
        failAt(at, "repeats the " + op.kind + " of micro-batch " + num(op.microBatch) +
                       " on stage " + num(op.stage));
      if (op.kind == "backward" && !done.count({"forward", op.stage, op.microBatch}))
        failAt(at, "backward of micro-batch " + num(op.microBatch) + " on stage " +
                       num(op.stage) + " before its forward");
    } else if (op.kind == "send") {
      sent.emplace(std::make_tuple(op.stage, op.peer, op.microBatch), i);
    } else if (op.kind == "recv") {
      auto it = sent.find({op.peer, op.stage, op.microBatch});
      if (it == sent.end())
        failAt(at, "recv of micro-batch " + num(op.microBatch) + " from stage " +
                       num(op.peer) + " before any matching send");
      if (plan.schedule[it->second].buffers != op.buffers)
        failAt(childPath(at, "buffers"), "differ from those of the matching send at " +
                                             childPath("schedule", it->second));
    } else if (op.kind == "step") {
      for (int32_t mb = 0; mb < m; ++mb)
        if (!done.count({"backward", op.stage, mb}))
          failAt(at, "step of stage " + num(op.stage) + " before the backward of micro-batch " +
                         num(mb));
      ++steps[size_t(op.stage)];
    }
  }
  for (int32_t s = 0; s < p; ++s) {
    if (steps[size_t(s)] != 1)
      failAt("schedule", "stage " + num(s) + " has no step");
    for (int32_t mb = 0; mb < m; ++mb)
      if (!done.count({"forward", s, mb}))
        failAt("schedule", "stage " + num(s) + " never runs micro-batch " + num(mb));
  }
  for (int32_t mb = 0; mb < m; ++mb)
    if (!done.count({"load", 0, mb}))
      failAt("schedule", "micro-batch " + num(mb) + " is never loaded on stage 0");
}
