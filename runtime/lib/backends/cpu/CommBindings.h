//===- CommBindings.h - collective kernels on the CPU backend ---*- C++ -*-===//
//
// The kernels -emb-distribute adds to a data-parallel plan
// (docs/plan-format.md, "Collectives"), bound to the job's communicator,
// which they find at run time in ExecState::comm.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_EXEC_COMMBINDINGS_H
#define EMBC_RUNTIME_EXEC_COMMBINDINGS_H

#include "CpuBinder.h"
#include "embc/runtime/exec/Collectives.h"

#include <map>
#include <memory>
#include <vector>

namespace embc::runtime {

/// The exchanges of sharded tables (ShardBindings.cpp): shard_ids,
/// shard_pool, shard_pool_grad and their groups.
std::vector<CpuBinding> shardBindings();

/// The state of grad_all_reduce_start and grad_all_reduce_wait, one per
/// backend (Binder::comm): a start and the wait of the same gradient, bound
/// separately, share the requests in flight through it.
class CommBinder {
public:
  BoundKernel bindAllReduceStart(const Binder &b);
  BoundKernel bindAllReduceWait(const Binder &b);

private:
  using Requests = std::vector<comm::Request>;
  /// Started and not yet waited for, per gradient buffer. Kernels hold
  /// their own reference, so they outlive the binder safely.
  std::map<int32_t, std::shared_ptr<Requests>> pending_;
};

} // namespace embc::runtime

#endif // EMBC_RUNTIME_EXEC_COMMBINDINGS_H
