//===- Collectives.h - the host side of a plan's collectives ----*- C++ -*-===//
//
// What the CPU backend (runtime/lib/exec/CommBindings.cpp, ShardBindings.cpp)
// and the CUDA backend (runtime/lib/cuda/CudaCollectives.cpp) share about the
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

/// shard_ids on host memory. Each rank splits its B bags by the rank that
/// stores each id's row and sends every rank its part as local rows
/// (id - bounds[d]) with per-bag counts; the receiver rebuilds N x B bags
/// (source rank order) as offsets. Three all-to-alls: counts, ids, weights.
/// Keeps its staging between steps.
class ShardIdsExchange {
public:
  explicit ShardIdsExchange(ShardIdsSpec spec) : spec_(std::move(spec)) {}

  const ShardIdsSpec &spec() const { return spec_; }
  /// `n` ids in `offsets`' B bags (optional per-id `weights`) go out; the
  /// local ids (at most spec.capacity), N B + 1 local offsets and, with
  /// spec.weightsOut, local weights come in. Returns the local id count.
  /// Throws data::DataError for an id outside the table or bags that do not
  /// span the ids, std::runtime_error when more ids arrive than fit.
  int64_t run(comm::Communicator &c, const int64_t *ids, int64_t n, const int64_t *offsets,
              const float *weights, int64_t *localIds, int64_t *localOffsets,
              float *localWeights);

private:
  ShardIdsSpec spec_;
  std::vector<int64_t> counts_, sendIds_, recvCounts_, cursor_, dest_;
  std::vector<float> sendWeights_;
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
