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

/// Binds shard_ids, shard_pool and shard_pool_grad (ShardBindings.cpp), the
/// exchanges of sharded tables; nullptr for another op.
BoundKernel bindShardKernel(const Binder &b);

/// Binds grad_all_reduce_start, grad_all_reduce_wait, gather_rows and the
/// shard exchanges (bindShardKernel). One per
/// backend: a start and the wait of the same gradient, bound separately,
/// share the requests in flight through it.
class CommBinder {
public:
  /// nullptr for an op that is not a collective.
  BoundKernel bind(const Binder &b);

private:
  using Requests = std::vector<comm::Request>;
  /// Started and not yet waited for, per gradient buffer. Kernels hold
  /// their own reference, so they outlive the binder safely.
  std::map<int32_t, std::shared_ptr<Requests>> pending_;
};

} // namespace embc::runtime

#endif // EMBC_RUNTIME_EXEC_COMMBINDINGS_H
