//===- CudaCollectives.h - a plan's collectives on a Device -----*- C++ -*-===//
//
// The `collective` launches of a plan's CUDA program (lowered by
// passes/lib/cuda/CollectiveLowering.cpp from -emb-distribute's kernels),
// run in stream order with the kernels:
//
//  - on a GPU, over the NCCL communicator embrun creates on the device's
//    compute stream (`onDevice`): the dense all-reduce, the gathers of sparse
//    gradients and the pooled rows of sharded tables move between device
//    buffers;
//  - on the emulation, whose "device" memory is host memory, over the job's
//    communicator (MPI) directly, exactly as the CPU backend does.
//
// The counts (a sparse gradient's rows, the ids per rank of a sharded
// table) are known on the host only after the step's kernels ran: those
// collectives read them back first (a synchronisation), so a plan with
// collectives is never captured as a CUDA graph. shard_ids(_group) stages
// the ids through host memory and splits them with ShardIdsExchange, the CPU
// backend's code; its three all-to-alls are small and go over MPI. The
// pooled-row groups pack their members in the launch's scratch with device
// copies (PooledRowsGroup, also the CPU backend's code).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_LIB_CUDA_CUDACOLLECTIVES_H
#define EMBC_RUNTIME_LIB_CUDA_CUDACOLLECTIVES_H

#include "embc/runtime/cuda/Device.h"
#include "embc/runtime/exec/Collectives.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace embc::runtime::cuda {

class CudaCollectives {
public:
  /// `onDevice`: the communicator for device memory (NCCL over the job's
  /// ranks); null: the job's communicator works on the device's memory,
  /// which only the emulation allows.
  CudaCollectives(Device &device, std::unique_ptr<comm::Communicator> onDevice)
      : device_(device), onDevice_(std::move(onDevice)) {}

  /// Checks a collective launch once (PlanError naming `where`); returns
  /// the handle run() takes.
  int32_t prepare(const Plan &plan, const CudaLaunch &launch, const std::string &where);
  /// Runs collective `handle` with its args resolved to device addresses.
  void run(int32_t handle, void *const *args, ExecState &state, const char *op);

private:
  enum class Kind {
    AllReduceStart,
    AllReduceWait,
    GatherRows,
    ShardIds,
    ShardPool,
    ShardPoolGrad,
    ShardPoolGroup,
    ShardPoolGradGroup
  };
  struct Prepared {
    Kind kind;
    std::vector<CudaArg> args;
    int64_t offset = 0, count = 0;     ///< all_reduce_start: the slice (elements)
    int32_t group = -1;                ///< all_reduce_*: the gradient buffer
    int64_t dim = 0, capacity = 0;     ///< gather_rows
    int64_t block = 0;                 ///< shard_pool(_grad): B x dim
    int owner = -1;                    ///< shard_pool(_grad): the single owner, or -1
    std::vector<bool> weighted;        ///< shard_ids(_group): per member
    std::shared_ptr<ShardIdsExchange> exchange; ///< shard_ids(_group)
    std::shared_ptr<PooledRowsGroup> pooled;    ///< shard_pool(_grad)_group
  };

  /// The communicator for device buffers, checked against the plan's ranks.
  comm::Communicator &onDevice(const ExecState &state, const char *op);
  int64_t readCell(void *cell);
  void writeCell(void *cell, int64_t value);

  void gatherRows(const Prepared &p, void *const *args, ExecState &state, const char *op);
  void shardIds(const Prepared &p, void *const *args, ExecState &state, const char *op);
  void shardPool(const Prepared &p, void *const *args, ExecState &state, const char *op);
  void shardPoolGroup(const Prepared &p, void *const *args, ExecState &state, const char *op);

  Device &device_;
  std::unique_ptr<comm::Communicator> onDevice_;
  std::vector<Prepared> prepared_;
  /// Started and not yet waited for, per gradient buffer.
  std::map<int32_t, std::vector<comm::Request>> pending_;
  /// shard_ids' host staging per member, reused across steps.
  struct HostBags {
    std::vector<int64_t> ids, offsets, localIds, localOffsets;
    std::vector<float> weights, localWeights;
  };
  std::vector<HostBags> bags_;
};

} // namespace embc::runtime::cuda

#endif // EMBC_RUNTIME_LIB_CUDA_CUDACOLLECTIVES_H
