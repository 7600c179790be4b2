//===- NcclCommunicator.cpp - collectives over NCCL, for device buffers ---===//
//
// Bootstrap: rank 0 creates the ncclUniqueId and broadcasts it over the
// bootstrap communicator (MPI), then every rank joins with
// ncclCommInitRankConfig on its device.
//
// Stream order: every collective is enqueued on the communicator's CUDA
// stream and returns once enqueued, like a kernel launch; its result is
// ready for later work on the same stream. wait(request) and barrier()
// synchronise the host with the stream; anything else that reads the result
// on the host must synchronise the stream first.
//
// Failure: the communicator is non-blocking (config.blocking = 0), so no NCCL
// call blocks the host inside NCCL; a call that returns ncclInProgress is
// polled with ncclCommGetAsyncError. Every collective records a CUDA event
// after itself, and the watchdog retires the collective when that event has
// completed, so a collective that hangs on the device is noticed even when
// the host waits for it outside this class (a cudaStreamSynchronize in the
// executor). On a timeout the watchdog calls abort(): ncclCommAbort (which
// stops the hung kernels) and then the bootstrap's abort (MPI_Abort), which
// ends every rank.
//
//===----------------------------------------------------------------------===//

#include "CommSupport.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

using namespace embc::runtime::comm;
using namespace embc::runtime::comm::detail;

namespace {

[[noreturn]] void throwCuda(const char *call, cudaError_t err) {
  throw CommError(std::string(call) + " failed: " + cudaGetErrorName(err) + " (" +
                  cudaGetErrorString(err) + ")");
}

[[noreturn]] void throwNccl(const char *call, ncclResult_t result, ncclComm_t comm) {
  std::string message = std::string(call) + " failed: " + ncclGetErrorString(result);
  // NCCL keeps a more specific line for the last failure ("peer ... closed").
  const char *detail = ncclGetLastError(comm);
  if (detail && *detail)
    message += ": " + std::string(detail);
  if (result == ncclRemoteError || result == ncclSystemError)
    message += " (a peer rank may have died)";
  throw CommError(message);
}

} // namespace

/// Throws CommError naming the call when it does not return cudaSuccess.
#define EMB_COMM_CUDA_CHECK(CALL) checkStatus(#CALL, cudaError_t(CALL), cudaSuccess, throwCuda)

namespace {

ncclDataType_t ncclType(DType type) {
  return byDType(type, ncclFloat32, ncclFloat64, ncclInt32, ncclInt64, ncclUint8);
}

ncclRedOp_t ncclOp(ReduceOp op) { return byReduceOp(op, ncclSum, ncclMax, ncclMin); }

/// A CUDA event marking the end of one collective on the stream; shared by
/// the watchdog's probe and a pending request.
class Marker {
public:
  Marker(int device, cudaStream_t stream) : device_(device) {
    EMB_COMM_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
    cudaError_t err = cudaEventRecord(event_, stream);
    if (err != cudaSuccess) {
      cudaEventDestroy(event_);
      throwCuda("cudaEventRecord(marker, stream)", err);
    }
  }
  ~Marker() { cudaEventDestroy(event_); }
  Marker(const Marker &) = delete;
  Marker &operator=(const Marker &) = delete;

  cudaEvent_t event() const { return event_; }
  /// Called on the watchdog thread, hence the device. An error other than
  /// "not ready" counts as done: it resurfaces at the next synchronising call.
  bool done() const {
    cudaSetDevice(device_);
    return cudaEventQuery(event_) != cudaErrorNotReady;
  }

private:
  int device_;
  cudaEvent_t event_ = nullptr;
};

class NcclCommunicator final : public Communicator {
public:
  NcclCommunicator(Communicator &bootstrap, int device, void *stream, const CommOptions &options)
      : bootstrap_(bootstrap), device_(device), stream_(static_cast<cudaStream_t>(stream)),
        rank_(bootstrap.rank()), size_(bootstrap.size()) {
    double timeout = resolveTimeout(options);
    if (cudaError_t err = cudaSetDevice(device_); err != cudaSuccess)
      throw CommError("NCCL communicator of rank " + std::to_string(rank_) + ": cudaSetDevice(" +
                      std::to_string(device_) + ") failed: " + cudaGetErrorName(err) + " (" +
                      cudaGetErrorString(err) + ")");

    // Rank 0's id travels with a flag, so that when rank 0 cannot create it
    // every rank fails now rather than waiting for the timeout.
    struct {
      ncclUniqueId id;
      char ok;
    } hello;
    std::memset(&hello, 0, sizeof(hello));
    std::string rootError;
    if (rank_ == 0) {
      ncclResult_t result = ncclGetUniqueId(&hello.id);
      hello.ok = result == ncclSuccess;
      if (!hello.ok)
        rootError = ncclGetErrorString(result);
    }
    bootstrap_.broadcast(&hello, sizeof(hello), DType::U8, 0);
    if (!hello.ok)
      throw CommError(rank_ == 0 ? "ncclGetUniqueId failed: " + rootError
                                 : "rank 0 could not create the NCCL unique id (see its error)");

    watchdog_ = std::make_unique<Watchdog>(rank_, timeout,
                                           [this](const std::string &why) { abort(why, 1); });
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    {
      std::lock_guard<std::timed_mutex> lock(commMutex_);
      ncclResult_t result = ncclCommInitRankConfig(&comm_, size_, hello.id, rank_, &config);
      if (result != ncclSuccess && result != ncclInProgress)
        throwNccl("ncclCommInitRankConfig", result, comm_);
    }
    try {
      settle("ncclCommInitRankConfig");
      EMB_COMM_CUDA_CHECK(cudaMalloc(&scratch_, sizeof(int32_t)));
    } catch (...) {
      // No destructor runs for a half-built object: release the communicator.
      watchdog_.reset();
      ncclCommAbort(comm_);
      throw;
    }
  }

  ~NcclCommunicator() override {
    // Flush what is queued (watched: a dead peer must not hang the exit),
    // then stop the watchdog before the communicator it aborts goes away.
    bool clean = false;
    if (comm_ && !aborted_) {
      try {
        call("ncclCommFinalize", [&] { return ncclCommFinalize(comm_); });
        clean = true;
      } catch (const CommError &error) {
        std::fprintf(stderr, "embrun: rank %d: closing NCCL: %s\n", rank_, error.what());
      }
    }
    watchdog_.reset();
    if (comm_ && !aborted_)
      clean ? ncclCommDestroy(comm_) : ncclCommAbort(comm_);
    if (scratch_)
      cudaFree(scratch_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int localRank() const override { return bootstrap_.localRank(); }
  const char *name() const override { return "nccl"; }

  void allReduce(void *buf, size_t count, DType type, ReduceOp op) override {
    call("ncclAllReduce", [&] {
      return ncclAllReduce(buf, buf, count, ncclType(type), ncclOp(op), comm_, stream_);
    });
    watchQueued("allReduce", count * sizeOf(type));
  }

  Request startAllReduce(void *buf, size_t count, DType type, ReduceOp op) override {
    call("ncclAllReduce", [&] {
      return ncclAllReduce(buf, buf, count, ncclType(type), ncclOp(op), comm_, stream_);
    });
    std::shared_ptr<Marker> marker = watchQueued("allReduce", count * sizeOf(type));
    return requests_.add(Pending{std::move(marker), count * sizeOf(type)});
  }

  void wait(Request request) override {
    Pending pending = requests_.take(request);
    Watchdog::Scope watched(*watchdog_, "allReduce or send (wait)", pending.bytes);
    EMB_COMM_CUDA_CHECK(cudaEventSynchronize(pending.marker->event()));
  }

  void allGather(const void *send, void *recv, size_t count, DType type) override {
    call("ncclAllGather",
         [&] { return ncclAllGather(send, recv, count, ncclType(type), comm_, stream_); });
    watchQueued("allGather", count * size_ * sizeOf(type));
  }

  void allGatherV(const void *send, void *recv, const std::vector<size_t> &counts,
                  DType type) override {
    checkPerRank("allGatherV", "counts", counts, size_);
    // NCCL has no all-gather-v: one broadcast per rank, fused in a group.
    std::vector<size_t> displs = prefixSums(counts);
    call("ncclGroupEnd (allGatherV)", [&] {
      ncclResult_t result = ncclGroupStart();
      for (int r = 0; r < size_ && result == ncclSuccess; ++r)
        if (counts[r])
          result = ncclBroadcast(r == rank_ ? send : nullptr, at(recv, displs[r], type), counts[r],
                                 ncclType(type), r, comm_, stream_);
      ncclResult_t end = ncclGroupEnd();
      return result != ncclSuccess ? result : end;
    });
    watchQueued("allGatherV", (displs.back() + counts.back()) * sizeOf(type));
  }

  void reduceScatter(const void *send, void *recv, size_t count, DType type, ReduceOp op) override {
    // NCCL's in-place form is recv == send + rank * count; recv == send
    // would overwrite blocks still to be read.
    if (send == recv && rank_ != 0)
      throw CommError(
          "reduceScatter: send and recv are the same buffer; on NCCL pass recv = send + "
          "rank() * count to reduce in place");
    call("ncclReduceScatter", [&] {
      return ncclReduceScatter(send, recv, count, ncclType(type), ncclOp(op), comm_, stream_);
    });
    watchQueued("reduceScatter", count * size_ * sizeOf(type));
  }

  void allToAllV(const void *send, const std::vector<size_t> &sendCounts, void *recv,
                 const std::vector<size_t> &recvCounts, DType type) override {
    checkPerRank("allToAllV", "sendCounts", sendCounts, size_);
    checkPerRank("allToAllV", "recvCounts", recvCounts, size_);
    std::vector<size_t> sd = prefixSums(sendCounts), rd = prefixSums(recvCounts);
    call("ncclGroupEnd (allToAllV)", [&] {
      ncclResult_t result = ncclGroupStart();
      for (int r = 0; r < size_ && result == ncclSuccess; ++r) {
        if (sendCounts[r])
          result =
              ncclSend(at(send, sd[r], type), sendCounts[r], ncclType(type), r, comm_, stream_);
        if (recvCounts[r] && result == ncclSuccess)
          result =
              ncclRecv(at(recv, rd[r], type), recvCounts[r], ncclType(type), r, comm_, stream_);
      }
      ncclResult_t end = ncclGroupEnd();
      return result != ncclSuccess ? result : end;
    });
    watchQueued("allToAllV", (sd.back() + sendCounts.back()) * sizeOf(type));
  }

  /// NCCL has no tags: messages between two ranks match in the order they
  /// are posted, so `tag` only has to agree by construction.
  void send(const void *buf, size_t count, DType type, int peer, int) override {
    checkPeer("send", peer);
    call("ncclSend", [&] { return ncclSend(buf, count, ncclType(type), peer, comm_, stream_); });
    watchQueued("send", count * sizeOf(type));
  }

  /// Queued on the stream like every NCCL call: the host never blocks in it.
  Request startSend(const void *buf, size_t count, DType type, int peer, int) override {
    checkPeer("startSend", peer);
    call("ncclSend", [&] { return ncclSend(buf, count, ncclType(type), peer, comm_, stream_); });
    std::shared_ptr<Marker> marker = watchQueued("send", count * sizeOf(type));
    return requests_.add(Pending{std::move(marker), count * sizeOf(type)});
  }

  void recv(void *buf, size_t count, DType type, int peer, int) override {
    checkPeer("recv", peer);
    call("ncclRecv", [&] { return ncclRecv(buf, count, ncclType(type), peer, comm_, stream_); });
    watchQueued("recv", count * sizeOf(type));
  }

  void broadcast(void *buf, size_t count, DType type, int root) override {
    checkRank("broadcast", "root", root, size_);
    call("ncclBroadcast",
         [&] { return ncclBroadcast(buf, buf, count, ncclType(type), root, comm_, stream_); });
    watchQueued("broadcast", count * sizeOf(type));
  }

  /// A one-element all-reduce every rank must join, then the host waits for
  /// the stream: returns once every rank has reached the barrier.
  void barrier() override {
    call("ncclAllReduce (barrier)",
         [&] { return ncclAllReduce(scratch_, scratch_, 1, ncclInt32, ncclSum, comm_, stream_); });
    watchQueued("barrier", 0);
    Watchdog::Scope watched(*watchdog_, "barrier", 0);
    EMB_COMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  [[noreturn]] void abort(const std::string &why, int code) override {
    // Stop the kernels that wait for a dead peer, unless the host is stuck
    // inside an NCCL call holding the communicator: ending the processes
    // (the bootstrap's abort) stops them as well.
    std::unique_lock<std::timed_mutex> lock(commMutex_, std::defer_lock);
    if (lock.try_lock_for(std::chrono::seconds(2)) && comm_ && !aborted_) {
      aborted_ = true;
      ncclCommAbort(comm_);
    }
    bootstrap_.abort(why, code);
    std::_Exit(code); // an override that returned would break its contract
  }

private:
  struct Pending {
    std::shared_ptr<Marker> marker;
    size_t bytes = 0;
  };

  void checkPeer(const char *call, int peer) const {
    checkRank(call, "peer", peer, size_);
    if (peer == rank_)
      throw CommError(std::string(call) + " to itself (rank " + std::to_string(peer) +
                      "): NCCL point-to-point needs another rank");
  }

  /// Runs `issue` (an NCCL call on comm_) under the communicator lock, then
  /// waits for it to leave ncclInProgress; throws CommError naming `what`.
  template <typename Issue> void call(const char *what, Issue issue) {
    {
      std::lock_guard<std::timed_mutex> lock(commMutex_);
      if (aborted_)
        throw CommError(std::string(what) + ": the NCCL communicator was aborted");
      EMB_COMM_CUDA_CHECK(cudaSetDevice(device_));
      ncclResult_t result = issue();
      if (result != ncclSuccess && result != ncclInProgress)
        throwNccl(what, result, comm_);
      if (result == ncclSuccess)
        return;
    }
    settle(what);
  }

  /// Polls a non-blocking call to completion (connection setup may wait for
  /// peers, hence watched).
  void settle(const char *what) {
    Watchdog::Scope watched(*watchdog_, what, 0);
    for (;;) {
      ncclResult_t state = ncclInProgress;
      {
        std::lock_guard<std::timed_mutex> lock(commMutex_);
        if (aborted_)
          throw CommError(std::string(what) + ": the NCCL communicator was aborted");
        ncclResult_t result = ncclCommGetAsyncError(comm_, &state);
        if (result != ncclSuccess)
          throwNccl("ncclCommGetAsyncError", result, comm_);
      }
      if (state == ncclSuccess)
        return;
      if (state != ncclInProgress)
        throwNccl(what, state, comm_);
      std::this_thread::yield();
    }
  }

  /// Marks the end of the collective just enqueued and has the watchdog
  /// watch it until the device gets there.
  std::shared_ptr<Marker> watchQueued(const char *what, size_t bytes) {
    auto marker = std::make_shared<Marker>(device_, stream_);
    watchdog_->watchUntil(what, bytes, [marker] { return marker->done(); });
    return marker;
  }

  Communicator &bootstrap_;
  int device_;
  cudaStream_t stream_;
  int rank_;
  int size_;
  ncclComm_t comm_ = nullptr;
  /// Held around every NCCL call on comm_, so that the watchdog's
  /// ncclCommAbort never runs in the middle of one.
  std::timed_mutex commMutex_;
  bool aborted_ = false;
  void *scratch_ = nullptr;
  RequestTable<Pending> requests_;
  std::unique_ptr<Watchdog> watchdog_;
};

} // namespace

std::unique_ptr<Communicator>
embc::runtime::comm::createNcclCommunicator(Communicator &bootstrap, int device, void *stream,
                                            const CommOptions &options) {
  return std::make_unique<NcclCommunicator>(bootstrap, device, stream, options);
}
