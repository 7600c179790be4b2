//===- Communicator.h - collectives between the ranks of a job --*- C++ -*-===//
//
// Distributed training (issue 7) talks to the other ranks through one
// interface, with three implementations:
//
//  - createSelfCommunicator(): a job of one rank. Every collective is a
//    copy or nothing; a single process needs neither MPI nor NCCL.
//  - createMpiCommunicator(): OpenMPI, for buffers in host memory (the CPU
//    backend) and for bootstrap. `mpirun -np N embrun PLAN ...`.
//  - createNcclCommunicator(): NCCL, for buffers in device memory (the CUDA
//    backend), bootstrapped by broadcasting rank 0's ncclUniqueId over an
//    MPI communicator; it runs its collectives on the given CUDA stream.
//
// Every blocking call is watched: when it has not finished after
// `timeoutSeconds` (a rank died or hangs), the job is aborted with a message
// naming the rank, the call and the wait, instead of hanging forever.
// Failures of MPI/NCCL calls throw CommError naming the call.
//
// Buffers are raw pointers to `count` elements of `type`; in-place calls
// read and write the same buffer. Ranks must make the same calls in the
// same order with the same counts (except where counts are per rank).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_COMM_COMMUNICATOR_H
#define EMBC_RUNTIME_COMM_COMMUNICATOR_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace embc::runtime::comm {

/// An MPI/NCCL failure, a timeout noticed by the caller, or a misuse.
class CommError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

enum class DType { F32, F64, I32, I64, U8 };
enum class ReduceOp { Sum, Max, Min };

size_t sizeOf(DType type);

/// A non-blocking collective or send in flight; wait() completes it.
using Request = int64_t;

struct CommOptions {
  /// Seconds a blocking call may wait for its peers before the job is
  /// aborted. $EMBC_COMM_TIMEOUT overrides the default.
  double timeoutSeconds = 60;
};

class Communicator {
public:
  virtual ~Communicator();

  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// This rank's index among the ranks on its host (0 .. ranks there - 1):
  /// which GPU of the host it takes, whatever launched the job.
  virtual int localRank() const = 0;
  /// "self", "mpi" or "nccl", for logs.
  virtual const char *name() const = 0;

  /// In place: buf[i] = op over ranks of buf[i].
  virtual void allReduce(void *buf, size_t count, DType type, ReduceOp op) = 0;
  /// Starts an in-place all-reduce that overlaps later work; wait() ends it.
  /// `buf` must not be touched until then.
  virtual Request startAllReduce(void *buf, size_t count, DType type, ReduceOp op) = 0;
  virtual void wait(Request request) = 0;

  /// recv holds size() blocks of `count` elements, rank r's at r * count.
  virtual void allGather(const void *send, void *recv, size_t count, DType type) = 0;
  /// Rank r sends counts[r] elements; recv gets them one after another in
  /// rank order (displacements are the prefix sums of counts).
  virtual void allGatherV(const void *send, void *recv, const std::vector<size_t> &counts,
                          DType type) = 0;
  /// send holds size() blocks of `count` elements; rank r receives the sum
  /// (op) over ranks of block r into recv (`count` elements).
  virtual void reduceScatter(const void *send, void *recv, size_t count, DType type,
                             ReduceOp op) = 0;
  /// sendCounts[r] elements go to rank r, starting at the prefix sum of
  /// sendCounts; recvCounts[r] come from rank r, stored likewise.
  virtual void allToAllV(const void *send, const std::vector<size_t> &sendCounts, void *recv,
                         const std::vector<size_t> &recvCounts, DType type) = 0;
  virtual void send(const void *buf, size_t count, DType type, int peer, int tag) = 0;
  /// Starts a send and returns at once; wait() ends it, and `buf` must not
  /// change until then. A sender that never blocks cannot deadlock two ranks
  /// that each send before they receive (pipeline stages on ranks).
  virtual Request startSend(const void *buf, size_t count, DType type, int peer, int tag) = 0;
  virtual void recv(void *buf, size_t count, DType type, int peer, int tag) = 0;
  virtual void broadcast(void *buf, size_t count, DType type, int root) = 0;
  virtual void barrier() = 0;

  /// Ends the whole job at once (every rank), after printing `why` on this
  /// rank's stderr. Used for errors one rank finds that the others cannot
  /// see, so they do not wait for it until the timeout.
  [[noreturn]] virtual void abort(const std::string &why, int code = 1) = 0;
};

/// A job of one rank.
std::unique_ptr<Communicator> createSelfCommunicator();

/// Whether this process was started by mpirun (OMPI_COMM_WORLD_SIZE,
/// PMI_SIZE or PMIX_RANK is set), whether or not the build has MPI: a
/// build without it must then refuse (createMpiCommunicator throws) rather
/// than run N unrelated copies.
bool launchedByMpi();
/// MPI_COMM_WORLD (initialising MPI on first use; finalised at exit).
/// Throws CommError when the build has no MPI.
std::unique_ptr<Communicator> createMpiCommunicator(const CommOptions &options = {});
/// NCCL over `bootstrap`'s ranks, on CUDA device `device`, enqueuing on
/// `stream` (a cudaStream_t). Throws CommError when the build has no NCCL.
std::unique_ptr<Communicator> createNcclCommunicator(Communicator &bootstrap, int device,
                                                     void *stream,
                                                     const CommOptions &options = {});

/// Start-up check that every rank runs the same thing: all-gathers
/// `fingerprint` (a hash of the plan, say) and throws CommError on every
/// rank when they differ, naming the ranks that disagree with rank 0 and
/// `what` ("the plan", ...).
void checkSameEverywhere(Communicator &comm, uint64_t fingerprint, const std::string &what);

} // namespace embc::runtime::comm

#endif // EMBC_RUNTIME_COMM_COMMUNICATOR_H
