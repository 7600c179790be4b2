//===- SelfCommunicator.cpp - a job of one rank ---------------------------===//
//
// With one rank every collective's result is this rank's contribution: the
// gathers and reduce-scatter copy send to recv (nothing when they are the
// same buffer), the in-place reductions and broadcast leave the buffer as it
// is, and there is nobody to wait for, so nothing is watched.
//
//===----------------------------------------------------------------------===//

#include "CommSupport.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace embc::runtime::comm;
using namespace embc::runtime::comm::detail;

namespace {

void copy(const void *send, void *recv, size_t count, DType type) {
  if (send != recv && count)
    std::memmove(recv, send, count * sizeOf(type));
}

class SelfCommunicator final : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int localRank() const override { return 0; }
  const char *name() const override { return "self"; }

  void allReduce(void *, size_t, DType, ReduceOp) override {}
  Request startAllReduce(void *, size_t, DType, ReduceOp) override { return nextRequest_++; }
  void wait(Request request) override {
    if (request < 0 || request >= nextRequest_)
      throw CommError("wait: request " + std::to_string(request) +
                      " was not returned by startAllReduce");
  }

  void allGather(const void *send, void *recv, size_t count, DType type) override {
    copy(send, recv, count, type);
  }
  void allGatherV(const void *send, void *recv, const std::vector<size_t> &counts,
                  DType type) override {
    checkPerRank("allGatherV", "counts", counts, 1);
    copy(send, recv, counts[0], type);
  }
  void reduceScatter(const void *send, void *recv, size_t count, DType type, ReduceOp) override {
    copy(send, recv, count, type);
  }
  void allToAllV(const void *send, const std::vector<size_t> &sendCounts, void *recv,
                 const std::vector<size_t> &recvCounts, DType type) override {
    checkPerRank("allToAllV", "sendCounts", sendCounts, 1);
    checkPerRank("allToAllV", "recvCounts", recvCounts, 1);
    if (sendCounts[0] != recvCounts[0])
      throw CommError("allToAllV: rank 0 sends itself " + std::to_string(sendCounts[0]) +
                      " elements but expects to receive " + std::to_string(recvCounts[0]));
    copy(send, recv, sendCounts[0], type);
  }
  void send(const void *, size_t, DType, int peer, int) override { noPeer("send", peer); }
  void recv(void *, size_t, DType, int peer, int) override { noPeer("recv", peer); }
  Request startSend(const void *, size_t, DType, int peer, int) override {
    noPeer("startSend", peer);
  }
  void broadcast(void *, size_t, DType, int root) override {
    checkRank("broadcast", "root", root, 1);
  }
  void barrier() override {}

  [[noreturn]] void abort(const std::string &why, int code) override {
    std::string text = why + "\n";
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
    std::_Exit(code);
  }

private:
  /// A message to oneself would block forever (nobody else posts the
  /// matching call), so it is a misuse in a job of one rank.
  [[noreturn]] static void noPeer(const char *call, int peer) {
    throw CommError(std::string(call) + " to rank " + std::to_string(peer) +
                    " in a job of one rank: there is no peer to talk to");
  }

  Request nextRequest_ = 0;
};

} // namespace

std::unique_ptr<Communicator> embc::runtime::comm::createSelfCommunicator() {
  return std::make_unique<SelfCommunicator>();
}
