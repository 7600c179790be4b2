//===- StageRanks.cpp - pipeline stages on several ranks ------------------===//
//
// A plan whose stages are placed on ranks (config.stageRanks, -emb-distribute
// with pipeline_ranks) runs on every rank with the whole batch; each rank
// runs its own stages' kernels and loads only the inputs they read (the
// other ranks' buffers may share its bytes, Buffer.rank). The values that
// cross from a stage to another rank's travel as one message per schedule
// send: a header (the micro-batch, then each buffer's filled length) and
// each buffer's bytes in the micro-batch's slot. Sends are started, not
// waited for, so two ranks that both send before they receive (1F1B) go on;
// the message is copied first, so the slot may be reused at once.
//
// On a device backend (CUDA) the boundary's slot is read back to the host
// before the send and written to the device after the receive: boundaries
// travel over the job's (MPI) communicator from host memory either way.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/exec/Executor.h"

#include <cmath>
#include <cstring>

using namespace embc::runtime;

namespace {

/// One tag per (sender stage, receiver stage): MPI keeps a link's messages
/// in order, and each link carries its micro-batches in order.
int linkTag(int32_t from, int32_t to, int64_t stages) {
  return 8000 + int(from * stages + to);
}

size_t messageBytes(const Plan &plan, const std::vector<int32_t> &buffers) {
  size_t bytes = sizeof(int64_t) * (1 + buffers.size());
  for (int32_t b : buffers)
    bytes += size_t(plan.buffers[b].bytes);
  return bytes;
}

} // namespace

void Executor::setCommunicator(comm::Communicator *comm) {
  state_.comm = comm;
  placeOnRank();
}

bool Executor::mineStage(int32_t stage) const {
  return plan_.config.pipelineRanks() == 1 || plan_.config.rankOfStage(stage) == state_.rank();
}

bool Executor::computesLoss() const { return mineStage(lossStage_); }

void Executor::placeOnRank() {
  bool onRanks = plan_.config.pipelineRanks() > 1;
  // An input is loaded by the first stage that reads it (of this rank's);
  // later stages read the same slot.
  std::vector<int32_t> firstReader(plan_.buffers.size(), -1);
  for (const Kernel &k : plan_.step)
    if (mineStage(k.stage))
      for (int32_t b : k.inputs)
        if (firstReader[b] < 0 || k.stage < firstReader[b])
          firstReader[b] = k.stage;
  stageInputs_.assign(size_t(plan_.config.pipelineStages), {});
  allInputs_.clear();
  for (size_t i = 0; i < plan_.inputs.size(); ++i) {
    int32_t stage = firstReader[plan_.inputs[i].buffer];
    if (stage < 0 && onRanks)
      continue; // only other ranks read it: its buffer may not be ours
    stageInputs_[size_t(std::max(stage, 0))].push_back(i);
    allInputs_.push_back(i);
  }
}

void Executor::sendBoundary(int32_t from, int32_t to, const std::vector<int32_t> &buffers,
                            std::vector<comm::Request> &sends,
                            std::vector<std::vector<std::byte>> &staged) {
  std::vector<std::byte> message(messageBytes(plan_, buffers));
  auto *header = reinterpret_cast<int64_t *>(message.data());
  header[0] = state_.microBatch;
  std::byte *at = message.data() + sizeof(int64_t) * (1 + buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer &b = plan_.buffers[buffers[i]];
    if (backend_->deviceArena()) {
      backend_->toHost(state_, data<std::byte>(buffers[i]) - state_.arena, b.bytes);
      state_.length[buffers[i]] = backend_->readLength(state_, buffers[i]);
    }
    header[1 + i] = state_.length[buffers[i]];
    std::memcpy(at, data<std::byte>(buffers[i]), size_t(b.bytes));
    at += b.bytes;
  }
  sends.push_back(state_.comm->startSend(message.data(), message.size(), comm::DType::U8,
                                         plan_.config.rankOfStage(to),
                                         linkTag(from, to, plan_.config.pipelineStages)));
  staged.push_back(std::move(message)); // the heap block the send reads stays put
}

void Executor::receiveBoundary(int32_t from, int32_t to, const std::vector<int32_t> &buffers) {
  std::vector<std::byte> message(messageBytes(plan_, buffers));
  state_.comm->recv(message.data(), message.size(), comm::DType::U8,
                    plan_.config.rankOfStage(from),
                    linkTag(from, to, plan_.config.pipelineStages));
  const auto *header = reinterpret_cast<const int64_t *>(message.data());
  std::string link = "stage " + std::to_string(to) + " received from stage " +
                     std::to_string(from) + " ";
  if (header[0] != state_.microBatch)
    throw comm::CommError(link + "micro-batch " + std::to_string(header[0]) + ", expected " +
                          std::to_string(state_.microBatch) +
                          " (do all ranks run the same plan?)");
  const std::byte *at = message.data() + sizeof(int64_t) * (1 + buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer &b = plan_.buffers[buffers[i]];
    int64_t length = header[1 + i];
    if (length < 0 || length > b.shape[0])
      throw comm::CommError(link + "a length of " + std::to_string(length) + " for '" + b.name +
                            "', which holds " + std::to_string(b.shape[0]));
    std::memcpy(data<std::byte>(buffers[i]), at, size_t(b.bytes));
    state_.length[buffers[i]] = length;
    if (backend_->deviceArena()) {
      backend_->toDevice(state_, data<std::byte>(buffers[i]) - state_.arena, b.bytes);
      backend_->setLength(state_, buffers[i]);
    }
    at += b.bytes;
  }
}

float Executor::forwardOnRanks() {
  std::vector<comm::Request> sends;
  std::vector<std::vector<std::byte>> staged;
  for (int32_t s = 0; s < int32_t(plan_.config.pipelineStages); ++s) {
    if (!mineStage(s))
      continue;
    for (const ScheduleOp *send : forwardSends_)
      if (send->peer == s && !mineStage(send->stage))
        receiveBoundary(send->stage, s, send->buffers);
    runKernels(stageForward_[size_t(s)], kScheduleKey + 2 * s);
    for (const ScheduleOp *send : forwardSends_)
      if (send->stage == s && !mineStage(send->peer))
        sendBoundary(s, send->peer, send->buffers, sends, staged);
  }
  backend_->finish(state_);
  for (comm::Request r : sends)
    state_.comm->wait(r);
  if (!computesLoss())
    return std::nanf(""); // the loss rank's Trainer records it
  fetchOutputs();
  return *data<float>(plan_.lossBuffer);
}
