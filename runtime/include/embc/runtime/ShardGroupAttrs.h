//===- ShardGroupAttrs.h - a shard exchange group's attributes --*- C++ -*-===//
//
// The attributes of the group kernels of -emb-batch-exchanges
// (shard_ids_group, shard_pool_group, shard_pool_grad_group;
// docs/plan-format.md), read and checked in one place for the CPU binding
// (runtime/lib/backends/cpu/ShardBindings.cpp) and the CUDA lowering
// (passes/lib/cuda/CollectiveLowering.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_SHARDGROUPATTRS_H
#define EMBC_RUNTIME_SHARDGROUPATTRS_H

#include "embc/runtime/Plan.h"

#include <vector>

namespace embc::runtime {

struct ShardGroupAttrs {
  /// The members' tables, all sharded over the same ranks.
  std::vector<const Table *> tables;
  /// shard_ids_group: which members have input weights and which divide
  /// by the bag size; empty for the pooled-row groups.
  std::vector<bool> weighted, perBagMean;

  int64_t ranks() const { return int64_t(tables.front()->shardRows.size()) - 1; }
  /// Members with input weights / with local weights (weighted or per_bag_mean).
  size_t weights() const;
  size_t localWeights() const;
  bool weightsOut(size_t member) const { return weighted[member] || perBagMean[member]; }
};

/// Reads `tables` (and for shard_ids_group `weighted` and `per_bag_mean`)
/// of kernel `k`. Throws std::invalid_argument saying what is wrong: no
/// tables, an index out of range, a table that is not sharded, tables
/// sharded over different numbers of ranks, flags not one boolean per table.
ShardGroupAttrs readShardGroupAttrs(const Plan &plan, const Kernel &k);

} // namespace embc::runtime

#endif // EMBC_RUNTIME_SHARDGROUPATTRS_H
