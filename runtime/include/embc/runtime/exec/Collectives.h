//===- Collectives.h - the host side of a plan's collectives ----*- C++ -*-===//
//
// What the CPU backend (runtime/lib/backends/cpu/CommBindings.cpp, ShardBindings.cpp)
// and the CUDA backend (runtime/lib/backends/cuda/CudaCollectives.cpp) share about the
// collective kernels -emb-distribute puts in a plan: the check that the job
// has the ranks the plan was compiled for, shard_ids' exchange, which splits
// bags by the rank that stores each row on the host either way (the CUDA
// backend stages the ids through host memory; docs/distributed.md), and the
// exchange of a sharded table's pooled rows.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_EXEC_COLLECTIVES_H
#define EMBC_RUNTIME_EXEC_COLLECTIVES_H

#include "embc/runtime/exec/Executor.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace embc::runtime {

/// The job's communicator (ExecState::comm), checked against the plan's
/// rank count; a PlanError naming kernel `op` when it has another.
comm::Communicator &jobCommunicator(const ExecState &s, const std::string &op);

/// What shard_ids knows about its table and its bags.
struct ShardIdsSpec {
  std::string op;              ///< the kernel, for errors
  std::string table;           ///< its name, for errors
  int64_t rows = 0;            ///< logical rows: every id must be below
  std::vector<int64_t> bounds; ///< shard_rows: N + 1 ascending row boundaries
  int64_t bags = 0;            ///< B, this rank's bags
  int64_t capacity = 0;        ///< of the local ids (and weights)
  bool perBagMean = false;     ///< divide each weight by its whole bag's size
  bool weightsOut = false;     ///< write local weights (weighted or perBagMean)
};

/// One member's ids going out of a shard_ids exchange: `n` ids in the B
/// bags of `offsets` (B + 1 entries), optional per-id `weights`.
struct ShardIdsIn {
  const int64_t *ids = nullptr;
  int64_t n = 0;
  const int64_t *offsets = nullptr;
  const float *weights = nullptr;
};

/// One member's local bags coming in: at most spec.capacity ids, N B + 1
/// offsets and, with spec.weightsOut, local weights.
struct ShardIdsOut {
  int64_t *localIds = nullptr;
  int64_t *localOffsets = nullptr;
  float *localWeights = nullptr;
};

/// shard_ids (one table) and shard_ids_group (several) on host memory. Each
/// rank splits each member's B bags by the rank that stores each id's row
/// and sends every rank its part as local rows (id - bounds[d]) with
/// per-bag counts; the receiver rebuilds each member's N x B bags (source
/// rank order) as offsets. Three all-to-alls for the whole group: counts,
/// ids, weights (the last only when a member has weights; members without
/// send 1s there). Keeps its staging between steps.
class ShardIdsExchange {
public:
  explicit ShardIdsExchange(ShardIdsSpec spec);
  /// A group: the members' bounds must have the same number of ranks.
  explicit ShardIdsExchange(std::vector<ShardIdsSpec> members);

  const ShardIdsSpec &spec() const { return members_.front(); }
  const std::vector<ShardIdsSpec> &members() const { return members_; }

  /// One table: returns the local id count.
  int64_t run(comm::Communicator &c, const int64_t *ids, int64_t n, const int64_t *offsets,
              const float *weights, int64_t *localIds, int64_t *localOffsets,
              float *localWeights);
  /// Every member at once; returns each member's local id count. Throws
  /// data::DataError for an id outside its table or bags that do not span
  /// the ids (before anything is sent), std::runtime_error when more ids
  /// arrive than fit.
  const std::vector<int64_t> &runGroup(comm::Communicator &c, const std::vector<ShardIdsIn> &in,
                                       const std::vector<ShardIdsOut> &out);

private:
  std::vector<ShardIdsSpec> members_;
  int64_t ranks_ = 0, allBags_ = 0;     ///< N; the members' bags together
  std::vector<int64_t> firstBag_;      ///< per member, in a rank's count row
  bool anyWeights_ = false;
  std::vector<int64_t> counts_, recvCounts_, cursor_, dest_, sendIds_, recvIds_, totals_;
  std::vector<float> sendWeights_, recvWeights_;
};

/// A member of a group of pooled-row exchanges: B x dim floats a rank, and
/// the single rank that stores the table's rows (table_wise), or -1.
struct PooledMember {
  size_t block = 0;
  int owner = -1;
};

/// What the pooled-row exchanges need of the memory they work on (host
/// memory for MPI, device memory for NCCL).
struct PooledMemory {
  std::function<void(void *dst, const void *src, size_t bytes)> copy;
  std::function<void(void *dst, size_t bytes)> zero;
};

/// shard_pool_group and shard_pool_grad_group: each member exactly as
/// exchangePooledRows, with the row_wise members in one reduce-scatter
/// (pool) or all-gather (gradient) and the table_wise members in one
/// all-to-all. Members are packed into staging buffers of stagingFloats()
/// each, given by the caller; a kind with a single member skips them.
class PooledRowsGroup {
public:
  PooledRowsGroup(std::vector<PooledMember> members, int ranks);

  const std::vector<PooledMember> &members() const { return members_; }
  size_t stagingFloats() const;
  /// `in[i]`/`out[i]`: member i's buffers, as exchangePooledRows takes them.
  void run(comm::Communicator &c, const std::vector<const float *> &in,
           const std::vector<float *> &out, bool gradient, float *sendStaging,
           float *recvStaging, const PooledMemory &memory) const;

private:
  void rowWise(comm::Communicator &c, const std::vector<const float *> &in,
               const std::vector<float *> &out, bool gradient, float *send, float *recv,
               const PooledMemory &memory) const;
  void tableWise(comm::Communicator &c, const std::vector<const float *> &in,
                 const std::vector<float *> &out, bool gradient, float *send, float *recv,
                 const PooledMemory &memory) const;

  std::vector<PooledMember> members_;
  int ranks_;
  std::vector<size_t> rowWise_, tableWise_; ///< member indices of each kind
};

/// shard_pool (gradient false) and shard_pool_grad (true) on buffers the
/// communicator reaches (host memory for MPI, device memory for NCCL).
/// pool: block r of the N x `block` partial rows in `in` goes to rank r,
/// which sums what it receives into `out` (reduce-scatter); its gradient:
/// every rank's `block` to the ranks that store rows (all-gather). With a
/// single `owner` (>= 0) only it sends the pooled rows and only it receives
/// the gradients; the other ranks' gradient output is cleared with
/// `zero(out, bytes)`.
void exchangePooledRows(comm::Communicator &c, const void *in, void *out, size_t block, int owner,
                        bool gradient, const std::function<void(void *, size_t)> &zero);

} // namespace embc::runtime

#endif // EMBC_RUNTIME_EXEC_COLLECTIVES_H
