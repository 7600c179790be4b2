//===- CommSupport.h - the watchdog and argument checks of the comm layer -*- C++ -*-===//
//
// Shared by the self, MPI and NCCL communicators (private to runtime/lib/comm):
//
//  - Watchdog: a background thread that ends the job when a collective has
//    waited longer than the timeout for its peers, so a dead or hung rank
//    never leaves the others hanging forever.
//  - the argument checks every implementation makes before talking to its
//    peers (a count vector of the wrong length, a peer out of range), so a
//    misuse is a CommError naming the call on this rank rather than a
//    mismatched collective that hangs until the timeout.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_COMM_COMMSUPPORT_H
#define EMBC_RUNTIME_LIB_COMM_COMMSUPPORT_H

#include "embc/runtime/comm/Communicator.h"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <thread>

namespace embc::runtime::comm::detail {

/// What EMB_MPI_CHECK and EMB_COMM_CUDA_CHECK expand to: `fail(call,
/// status)` (it throws) unless the library call returned `ok`; `call` is
/// the call's source text.
template <class Status, class Ok, class Fail>
void checkStatus(const char *call, Status status, Ok ok, Fail fail) {
  if (status != ok)
    fail(call, status);
}

/// The timeout in seconds: $EMBC_COMM_TIMEOUT when set (validated: a
/// number > 0), else `options.timeoutSeconds` (validated too).
double resolveTimeout(const CommOptions &options);

/// "512 bytes", "4.0 KiB", "1.5 MiB", "2.0 GiB": for messages.
std::string formatBytes(size_t bytes);

/// Throws CommError "<call>: <what> has N entries, expected one per rank (M)".
void checkPerRank(const char *call, const char *what, const std::vector<size_t> &counts, int size);
/// Throws CommError when `peer` is not a rank in [0, size).
void checkRank(const char *call, const char *role, int peer, int size);
/// Prefix sums of `counts` (the displacements of the V collectives).
std::vector<size_t> prefixSums(const std::vector<size_t> &counts);

/// The address of element `elements` of a buffer of `type`.
inline const char *at(const void *base, size_t elements, DType type) {
  return static_cast<const char *>(base) + elements * sizeOf(type);
}
inline char *at(void *base, size_t elements, DType type) {
  return static_cast<char *>(base) + elements * sizeOf(type);
}

/// The non-blocking calls of one communicator in flight, by Request id
/// (thread-safe): a start*() call adds its backend's `Pending` record,
/// wait() takes it out again.
template <typename Pending>
class RequestTable {
public:
  /// Records `pending` under a fresh id.
  Request add(Pending pending) {
    std::lock_guard<std::mutex> lock(mutex_);
    Request id = next_++;
    pending_.emplace(id, std::move(pending));
    return id;
  }

  /// Removes and returns the record of `request`; a CommError when it is not
  /// in flight (never started, or waited for already).
  Pending take(Request request) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = pending_.find(request);
    if (it == pending_.end())
      throw CommError("wait: request " + std::to_string(request) +
                      " is not an all-reduce or send in flight (never started, or waited "
                      "for already)");
    Pending pending = std::move(it->second);
    pending_.erase(it);
    return pending;
  }

private:
  std::mutex mutex_;
  std::map<Request, Pending> pending_;
  Request next_ = 0;
};

/// A backend's name for `type` (MPI_FLOAT, ncclFloat32, ...), given in the
/// enum's order: the one switch over DType every backend's table shares.
template <typename T>
T byDType(DType type, T f32, T f64, T i32, T i64, T u8) {
  switch (type) {
  case DType::F32:
    return f32;
  case DType::F64:
    return f64;
  case DType::I32:
    return i32;
  case DType::I64:
    return i64;
  case DType::U8:
    return u8;
  }
  throw CommError("unknown comm DType " + std::to_string(static_cast<int>(type)));
}

/// A backend's name for `op` (MPI_SUM, ncclSum, ...), in the enum's order.
template <typename T>
T byReduceOp(ReduceOp op, T sum, T max, T min) {
  switch (op) {
  case ReduceOp::Sum:
    return sum;
  case ReduceOp::Max:
    return max;
  case ReduceOp::Min:
    return min;
  }
  throw CommError("unknown comm ReduceOp " + std::to_string(static_cast<int>(op)));
}

/// Watches the blocking calls of one communicator. Each call registers
/// itself while it runs (a Scope); a call still in flight after `timeout`
/// seconds ends the job with the message
///   embrun: rank R: <call> (<bytes>) waited <T> s for its peers: a rank died
///   or hangs; aborting the job
/// (the line is handed to `abortJob`, which prints it on stderr and ends the
/// job: Communicator::abort; should it return, the watchdog prints the line
/// and std::_Exit(1)s this process).
///
/// The thread sleeps on a condition variable while nothing is in flight, so
/// it costs nothing between collectives; while something is, it wakes every
/// 100 ms. An entry may carry a probe (NCCL: "has the event recorded after
/// the collective completed?"): the watchdog then removes the entry itself
/// once the probe says done, which watches work that finishes on a device
/// stream after the call that enqueued it has returned.
class Watchdog {
public:
  using Clock = std::chrono::steady_clock;
  /// Returns true when the watched work has completed.
  using Probe = std::function<bool()>;

  Watchdog(int rank, double timeoutSeconds, std::function<void(const std::string &)> abortJob);
  ~Watchdog();
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;

  double timeoutSeconds() const { return timeout_; }

  /// Registers a blocking call for the lifetime of the scope.
  class Scope {
  public:
    Scope(Watchdog &dog, const char *what, size_t bytes) : dog_(dog), id_(dog.begin(what, bytes)) {}
    ~Scope() { dog_.end(id_); }
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    Watchdog &dog_;
    uint64_t id_;
  };

  /// Registers work that the watchdog itself retires once `done` says so.
  void watchUntil(const char *what, size_t bytes, Probe done);

private:
  struct Entry {
    uint64_t id;
    const char *what;
    size_t bytes;
    Clock::time_point start;
    Probe done; // empty for a Scope
  };

  uint64_t begin(const char *what, size_t bytes);
  void end(uint64_t id);
  void run();
  [[noreturn]] void fire(const Entry &entry, double waited);

  int rank_;
  double timeout_;
  std::function<void(const std::string &)> abortJob_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::list<Entry> inFlight_; // oldest first
  uint64_t nextId_ = 0;
  bool stopping_ = false;
  std::thread thread_; // last: started once everything above exists
};

} // namespace embc::runtime::comm::detail

#endif // EMBC_RUNTIME_LIB_COMM_COMMSUPPORT_H
