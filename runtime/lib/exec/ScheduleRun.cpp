//===- ScheduleRun.cpp - running a micro-batch schedule on one device -----===//
//
// -emb-pipeline's plans run their step kernels on micro-batches of
// batchSize / microBatches examples, in the order of Plan.schedule. On one
// device every stage runs here, in the listed order (which the compiler
// checked is a valid sequential execution): a value crossing stages lies in
// the same slot for sender and receiver, so send and recv copy nothing, and
// reduce has no peer. With stages on ranks each rank runs the listed
// instructions of its own stages, and a send or recv between ranks is a
// message (StageRanks.cpp); since sends never block and the listed order is
// a sequential execution, every recv's send comes. Each slotted buffer
// (Buffer.slots > 1) is used at copy mb % slots; the filled length of a
// dynamic one (ids of jagged bags) is kept per copy too.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/exec/Executor.h"

#include <algorithm>
#include <chrono>

using namespace embc::runtime;
namespace data = embc::runtime::data;

void Executor::prepareSchedule() {
  int64_t p = plan_.config.pipelineStages;
  stageForward_.assign(size_t(p), {});
  stageBackward_.assign(size_t(p), {});
  stageInputs_.assign(size_t(p), {});
  for (size_t i = 0; i < plan_.step.size(); ++i) {
    const Kernel &k = plan_.step[i];
    (int64_t(i) < plan_.forwardKernels ? stageForward_ : stageBackward_)[size_t(k.stage)]
        .push_back(i);
    if (k.outputs.size() && std::count(k.outputs.begin(), k.outputs.end(), plan_.lossBuffer))
      lossStage_ = k.stage;
  }
  for (const ScheduleOp &op : plan_.schedule)
    if (op.kind == "send" && op.microBatch == 0 && op.peer > op.stage)
      forwardSends_.push_back(&op);
  for (size_t b = 0; b < plan_.buffers.size(); ++b)
    if (plan_.buffers[b].dynamic && plan_.buffers[b].slots > 1) {
      slottedDynamic_.push_back(int32_t(b));
      savedLength_.emplace_back(size_t(plan_.buffers[b].slots), 0);
    }
}

void Executor::selectMicroBatch(int32_t mb) {
  if (mb == state_.microBatch)
    return;
  for (size_t i = 0; i < slottedDynamic_.size(); ++i) {
    int32_t b = slottedDynamic_[i];
    int32_t slots = plan_.buffers[b].slots;
    savedLength_[i][size_t(state_.microBatch % slots)] = state_.length[b];
    state_.length[b] = savedLength_[i][size_t(mb % slots)];
  }
  state_.microBatch = mb;
}

void Executor::runKernels(const std::vector<size_t> &kernels, int key) {
  backend_->run(step_, &kernels, state_, key,
                profiling_ ? &stepTimings_ : nullptr);
}

double Executor::runSchedule(const std::vector<data::Batch> &microBatches,
                             const std::function<void(int32_t, float)> &afterForward) {
  if (int64_t(microBatches.size()) != plan_.config.microBatches)
    throw PlanError("the schedule runs " + std::to_string(plan_.config.microBatches) +
                    " micro-batches, " + std::to_string(microBatches.size()) + " were given");
  settleUpdate();
  double lossSum = 0;
  bool onRanks = plan_.config.pipelineRanks() > 1;
  std::vector<comm::Request> sends;
  std::vector<std::vector<std::byte>> staged;
  state_.training = true;
  backend_->beginBatch(state_);
  backend_->useLoadedBatch(); // its micro-batches load between the runs
  // Dynamic padding: every micro-batch at the step's longest sequence.
  std::vector<const data::Batch *> all;
  for (const data::Batch &mb : microBatches)
    all.push_back(&mb);
  loadedLengths_ = longestSequences(all);
  useLengths(loadedLengths_);
  for (const ScheduleOp &op : plan_.schedule) {
    if (op.kind == "reduce" || op.kind == "step" || !mineStage(op.stage))
      continue; // the update is update(); another rank runs that stage
    bool transfer = op.kind == "send" || op.kind == "recv";
    if (transfer && (!onRanks || mineStage(op.peer)))
      continue; // one device: the boundary buffers are shared slots
    selectMicroBatch(op.microBatch);
    size_t stage = size_t(op.stage);
    if (op.kind == "send") {
      sendBoundary(op.stage, op.peer, op.buffers, sends, staged);
    } else if (op.kind == "recv") {
      receiveBoundary(op.peer, op.stage, op.buffers);
    } else if (op.kind == "load") {
      loadInputs(microBatches[size_t(op.microBatch)], stageInputs_[stage]);
    } else if (op.kind == "forward") {
      runKernels(stageForward_[stage], kScheduleKey + 2 * int(stage));
      if (op.stage == lossStage_) {
        backend_->finish(state_);
        fetchOutputs();
        float loss = *data<float>(plan_.lossBuffer);
        lossSum += loss;
        if (afterForward)
          afterForward(op.microBatch, loss);
      }
    } else {
      runKernels(stageBackward_[stage], kScheduleKey + 2 * int(stage) + 1);
    }
  }
  backend_->finish(state_);
  selectMicroBatch(0);
  double loss = lossSum / double(plan_.config.microBatches);
  if (onRanks) {
    for (comm::Request r : sends)
      state_.comm->wait(r);
    // Every rank reports (and checks) the same loss.
    state_.comm->broadcast(&loss, 1, comm::DType::F64, plan_.config.rankOfStage(lossStage_));
  }
  return loss;
}
