//===- ScheduleRun.cpp - running a micro-batch schedule on one device -----===//
//
// -emb-pipeline's plans run their step kernels on micro-batches of
// batchSize / microBatches examples, in the order of Plan.schedule. On one
// device every stage runs here, in the listed order (which the compiler
// checked is a valid sequential execution): a value crossing stages lies in
// the same slot for sender and receiver, so send and recv copy nothing
// (issue 7 turns them into device transfers), and reduce has no peer. Each
// slotted buffer (Buffer.slots > 1) is used at copy mb % slots; the filled
// length of a dynamic one (ids of jagged bags) is kept per copy too.
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
  std::vector<int32_t> firstReader(plan_.buffers.size(), -1);
  for (size_t i = 0; i < plan_.step.size(); ++i) {
    const Kernel &k = plan_.step[i];
    (int64_t(i) < plan_.forwardKernels ? stageForward_ : stageBackward_)[size_t(k.stage)]
        .push_back(i);
    for (int32_t b : k.inputs)
      if (firstReader[b] < 0 || k.stage < firstReader[b])
        firstReader[b] = k.stage;
    if (k.outputs.size() && std::count(k.outputs.begin(), k.outputs.end(), plan_.lossBuffer))
      lossStage_ = k.stage;
  }
  // An input is loaded by the first stage that reads it; later stages read
  // the same slot on one device.
  for (size_t i = 0; i < plan_.inputs.size(); ++i)
    stageInputs_[size_t(std::max(firstReader[plan_.inputs[i].buffer], 0))].push_back(i);
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
  backend_->beginBatch(state_);
  for (const ScheduleOp &op : plan_.schedule) {
    if (op.kind == "send" || op.kind == "recv" || op.kind == "reduce" || op.kind == "step")
      continue; // one device: shared slots, no peers; the update is update()
    selectMicroBatch(op.microBatch);
    size_t stage = size_t(op.stage);
    if (op.kind == "load") {
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
  return lossSum / double(plan_.config.microBatches);
}
