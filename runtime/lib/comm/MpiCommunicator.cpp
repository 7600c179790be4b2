//===- MpiCommunicator.cpp - collectives over MPI, for host buffers -------===//
//
// MPI is initialised on first use with MPI_THREAD_MULTIPLE, because the
// watchdog thread calls MPI_Abort while the main thread sits in a
// collective, and finalised once at exit (never when aborting: MPI_Abort and
// std::_Exit skip atexit). Every communicator works on its own duplicate of
// MPI_COMM_WORLD with MPI_ERRORS_RETURN, so a failing call throws CommError
// naming the call and MPI's error text instead of MPI killing the process
// with its own message.
//
// MPI counts are ints. Calls whose buffers are one contiguous run (allReduce,
// startAllReduce, broadcast, send, recv) are split into chunks of at most
// INT_MAX elements; the gathers, reduce-scatter and all-to-all, whose layout
// spans ranks, refuse larger counts with a CommError.
//
//===----------------------------------------------------------------------===//

#include "CommSupport.h"

#include <mpi.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

using namespace embc::runtime::comm;
using namespace embc::runtime::comm::detail;

namespace {

[[noreturn]] void throwMpi(const char *call, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    length = std::snprintf(text, sizeof(text), "MPI error code %d", code);
  throw CommError(std::string(call) + " failed: " + std::string(text, static_cast<size_t>(length)));
}

} // namespace

/// Throws CommError naming the call when it does not return MPI_SUCCESS.
#define EMB_MPI_CHECK(CALL) checkStatus(#CALL, int(CALL), MPI_SUCCESS, throwMpi)

namespace {

/// Whether MPI_Abort may be called from the watchdog thread, and else the
/// one thread that may call MPI (the one that initialised it).
bool threadMultiple = false;
std::thread::id mpiThread;

void finalizeAtExit() {
  int finalized = 0;
  if (MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized)
    MPI_Finalize();
}

void initMpiOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    int initialized = 0;
    EMB_MPI_CHECK(MPI_Initialized(&initialized));
    int provided = MPI_THREAD_SINGLE;
    if (initialized) {
      // Someone else initialised MPI (a test harness, a host application):
      // they own MPI_Finalize too.
      EMB_MPI_CHECK(MPI_Query_thread(&provided));
    } else {
      EMB_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided));
      std::atexit(finalizeAtExit);
    }
    threadMultiple = provided >= MPI_THREAD_MULTIPLE;
    mpiThread = std::this_thread::get_id();
  });
}

/// This process's rank as the launcher set it (OpenMPI, PMIx, MPICH's PMI,
/// Slurm), for messages before MPI knows it; -1 when none says.
int launcherRank() {
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const char *value = std::getenv(name)) {
      char *end = nullptr;
      long rank = std::strtol(value, &end, 10);
      if (*value && *end == '\0' && rank >= 0 && rank < INT_MAX)
        return int(rank);
    }
  return -1;
}

MPI_Datatype mpiType(DType type) {
  return byDType(type, MPI_FLOAT, MPI_DOUBLE, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T);
}

MPI_Op mpiOp(ReduceOp op) { return byReduceOp(op, MPI_SUM, MPI_MAX, MPI_MIN); }

constexpr size_t kMaxChunk = INT_MAX;

/// `count` as an MPI int, or a CommError naming the call and the count.
int intCount(const char *call, const char *what, size_t count) {
  if (count > kMaxChunk)
    throw CommError(std::string(call) + ": " + what + " is " + std::to_string(count) +
                    " elements, more than MPI's int count allows (" + std::to_string(INT_MAX) +
                    "); split the call");
  return static_cast<int>(count);
}

/// Per-rank counts and their prefix-sum displacements as MPI ints.
void intCountsAndDispls(const char *call, const char *what, const std::vector<size_t> &counts,
                        std::vector<int> &outCounts, std::vector<int> &outDispls) {
  std::vector<size_t> displs = prefixSums(counts);
  outCounts.resize(counts.size());
  outDispls.resize(counts.size());
  for (size_t r = 0; r < counts.size(); ++r) {
    outCounts[r] = intCount(call, what, counts[r]);
    outDispls[r] = intCount(call, "the displacement (prefix sum of counts)", displs[r]);
  }
}

class MpiCommunicator final : public Communicator {
public:
  explicit MpiCommunicator(const CommOptions &options) {
    double timeout = resolveTimeout(options);
    {
      // MPI's init waits for every rank of the job: one that never starts
      // (stopped, or stuck before it) would hold the others there forever.
      // A watchdog started first ends this rank, and so the job, instead.
      Watchdog startup(launcherRank(), timeout,
                       [this](const std::string &why) { abort(why, 1); });
      Watchdog::Scope watched(startup, "MPI_Init (every rank of the job must start)", 0);
      initMpiOnce();
    }
    EMB_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
    EMB_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size_));
    watchdog_ = std::make_unique<Watchdog>(rank_, timeout,
                                           [this](const std::string &why) { abort(why, 1); });
    Watchdog::Scope watched(*watchdog_, "MPI_Comm_dup", 0);
    EMB_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm_));
    EMB_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
    // The ranks that share memory with this one are those of its host; any
    // launcher (mpirun, srun, MPICH's hydra) sets up this split.
    MPI_Comm host = MPI_COMM_NULL;
    EMB_MPI_CHECK(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host));
    const int got = MPI_Comm_rank(host, &localRank_);
    MPI_Comm_free(&host);
    if (got != MPI_SUCCESS)
      throwMpi("MPI_Comm_rank(the ranks of this host)", got);
  }

  ~MpiCommunicator() override {
    watchdog_.reset();
    int finalized = 0;
    if (comm_ != MPI_COMM_NULL && MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized)
      MPI_Comm_free(&comm_); // best effort: a destructor cannot throw
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int localRank() const override { return localRank_; }
  const char *name() const override { return "mpi"; }

  void allReduce(void *buf, size_t count, DType type, ReduceOp op) override {
    Watchdog::Scope watched(*watchdog_, "allReduce", count * sizeOf(type));
    for (size_t done = 0; done < count; done += kMaxChunk) {
      int n = static_cast<int>(std::min(kMaxChunk, count - done));
      EMB_MPI_CHECK(
          MPI_Allreduce(MPI_IN_PLACE, at(buf, done, type), n, mpiType(type), mpiOp(op), comm_));
    }
  }

  Request startAllReduce(void *buf, size_t count, DType type, ReduceOp op) override {
    Pending pending{{}, count * sizeOf(type), "allReduce (wait)"};
    for (size_t done = 0; done < count; done += kMaxChunk) {
      int n = static_cast<int>(std::min(kMaxChunk, count - done));
      MPI_Request request;
      EMB_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, at(buf, done, type), n, mpiType(type), mpiOp(op),
                                   comm_, &request));
      pending.requests.push_back(request);
    }
    return requests_.add(std::move(pending));
  }

  void wait(Request request) override {
    Pending pending = requests_.take(request);
    Watchdog::Scope watched(*watchdog_, pending.what, pending.bytes);
    EMB_MPI_CHECK(MPI_Waitall(static_cast<int>(pending.requests.size()), pending.requests.data(),
                              MPI_STATUSES_IGNORE));
  }

  void allGather(const void *send, void *recv, size_t count, DType type) override {
    int n = intCount("allGather", "count", count);
    intCount("allGather", "count * size()", count * static_cast<size_t>(size_));
    // MPI forbids aliased buffers; this rank's block of recv is MPI_IN_PLACE.
    const void *source = send == at(recv, rank_ * count, type) ? MPI_IN_PLACE : send;
    Watchdog::Scope watched(*watchdog_, "allGather", count * size_ * sizeOf(type));
    EMB_MPI_CHECK(MPI_Allgather(source, n, mpiType(type), recv, n, mpiType(type), comm_));
  }

  void allGatherV(const void *send, void *recv, const std::vector<size_t> &counts,
                  DType type) override {
    checkPerRank("allGatherV", "counts", counts, size_);
    std::vector<int> n, displs;
    intCountsAndDispls("allGatherV", "a rank's count", counts, n, displs);
    const void *source = send == at(recv, displs[rank_], type) ? MPI_IN_PLACE : send;
    size_t total = displs.back() + counts.back();
    Watchdog::Scope watched(*watchdog_, "allGatherV", total * sizeOf(type));
    EMB_MPI_CHECK(MPI_Allgatherv(source, n[rank_], mpiType(type), recv, n.data(), displs.data(),
                                 mpiType(type), comm_));
  }

  void reduceScatter(const void *send, void *recv, size_t count, DType type, ReduceOp op) override {
    int n = intCount("reduceScatter", "count", count);
    intCount("reduceScatter", "count * size()", count * static_cast<size_t>(size_));
    // In place (send == recv): MPI reads all blocks from recv and leaves
    // this rank's result at its start.
    const void *source = send == recv ? MPI_IN_PLACE : send;
    Watchdog::Scope watched(*watchdog_, "reduceScatter", count * size_ * sizeOf(type));
    EMB_MPI_CHECK(MPI_Reduce_scatter_block(source, recv, n, mpiType(type), mpiOp(op), comm_));
  }

  void allToAllV(const void *send, const std::vector<size_t> &sendCounts, void *recv,
                 const std::vector<size_t> &recvCounts, DType type) override {
    checkPerRank("allToAllV", "sendCounts", sendCounts, size_);
    checkPerRank("allToAllV", "recvCounts", recvCounts, size_);
    std::vector<int> sn, sd, rn, rd;
    intCountsAndDispls("allToAllV", "a send count", sendCounts, sn, sd);
    intCountsAndDispls("allToAllV", "a receive count", recvCounts, rn, rd);
    size_t bytes = (static_cast<size_t>(sd.back()) + sendCounts.back()) * sizeOf(type);
    Watchdog::Scope watched(*watchdog_, "allToAllV", bytes);
    EMB_MPI_CHECK(MPI_Alltoallv(send, sn.data(), sd.data(), mpiType(type), recv, rn.data(),
                                rd.data(), mpiType(type), comm_));
  }

  void send(const void *buf, size_t count, DType type, int peer, int tag) override {
    checkRank("send", "peer", peer, size_);
    Watchdog::Scope watched(*watchdog_, "send", count * sizeOf(type));
    // MPI keeps messages between two ranks with one tag in order, so the
    // receiver's chunks match these. A zero count still sends one message.
    size_t done = 0;
    do {
      int n = static_cast<int>(std::min(kMaxChunk, count - done));
      EMB_MPI_CHECK(MPI_Send(at(buf, done, type), n, mpiType(type), peer, tag, comm_));
      done += n;
    } while (done < count);
  }

  Request startSend(const void *buf, size_t count, DType type, int peer, int tag) override {
    checkRank("startSend", "peer", peer, size_);
    Pending pending{{}, count * sizeOf(type), "send (wait)"};
    size_t done = 0;
    do { // chunked like send(), so recv() matches either
      int n = static_cast<int>(std::min(kMaxChunk, count - done));
      MPI_Request request;
      EMB_MPI_CHECK(MPI_Isend(at(buf, done, type), n, mpiType(type), peer, tag, comm_, &request));
      pending.requests.push_back(request);
      done += n;
    } while (done < count);
    return requests_.add(std::move(pending));
  }

  void recv(void *buf, size_t count, DType type, int peer, int tag) override {
    checkRank("recv", "peer", peer, size_);
    Watchdog::Scope watched(*watchdog_, "recv", count * sizeOf(type));
    size_t done = 0;
    do {
      int n = static_cast<int>(std::min(kMaxChunk, count - done));
      MPI_Status status;
      EMB_MPI_CHECK(MPI_Recv(at(buf, done, type), n, mpiType(type), peer, tag, comm_, &status));
      int got = 0;
      EMB_MPI_CHECK(MPI_Get_count(&status, mpiType(type), &got));
      if (got != n)
        throw CommError("recv: rank " + std::to_string(peer) + " sent " + std::to_string(got) +
                        " elements with tag " + std::to_string(tag) + ", expected " +
                        std::to_string(n));
      done += n;
    } while (done < count);
  }

  void broadcast(void *buf, size_t count, DType type, int root) override {
    checkRank("broadcast", "root", root, size_);
    Watchdog::Scope watched(*watchdog_, "broadcast", count * sizeOf(type));
    for (size_t done = 0; done < count; done += kMaxChunk) {
      int n = static_cast<int>(std::min(kMaxChunk, count - done));
      EMB_MPI_CHECK(MPI_Bcast(at(buf, done, type), n, mpiType(type), root, comm_));
    }
  }

  void barrier() override {
    Watchdog::Scope watched(*watchdog_, "barrier", 0);
    EMB_MPI_CHECK(MPI_Barrier(comm_));
  }

  [[noreturn]] void abort(const std::string &why, int code) override {
    std::string text = why + "\n";
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
    // MPI_Abort tells mpirun to end every rank. From another thread it needs
    // MPI_THREAD_MULTIPLE; without it, leaving without MPI_Finalize makes
    // mpirun end the job all the same.
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized && (threadMultiple || std::this_thread::get_id() == mpiThread))
      MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

private:
  struct Pending {
    std::vector<MPI_Request> requests;
    size_t bytes = 0;
    const char *what = ""; ///< for the watchdog's message
  };

  int rank_ = 0;
  int size_ = 1;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int localRank_ = 0;
  RequestTable<Pending> requests_;
  std::unique_ptr<Watchdog> watchdog_;
};

} // namespace

std::unique_ptr<Communicator>
embc::runtime::comm::createMpiCommunicator(const CommOptions &options) {
  return std::make_unique<MpiCommunicator>(options);
}
