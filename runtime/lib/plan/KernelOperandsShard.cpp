//===- KernelOperandsShard.cpp - operands of the sharding exchanges -------===//
//
// KernelOperands.cpp's checks for the kernels around a sharded table's
// lookup (docs/distributed.md): the ids exchange gives every rank N x B bags
// of local ids, the pooled-row exchanges turn N x B partial rows into B and
// back. Each member of a group is checked as the lone kernel would be.
//
//===----------------------------------------------------------------------===//

#include "OperandChecks.h"

#include "embc/runtime/ShardGroupAttrs.h"

#include <stdexcept>

namespace embc::runtime::operands {
namespace {

/// The number of shards of `t`, or 0 (with the problem noted) when it has none.
int64_t shardsOf(Operands &o, const Table &t) {
  if (t.shardRows.size() < 2) {
    o.failAt("attrs", "looks up table '" + t.name + "', which is not sharded (no shard_rows)");
    return 0;
  }
  return int64_t(t.shardRows.size()) - 1;
}

/// One table's ids exchange: ids, offsets (B + 1), [weights] in; local ids
/// (N x the ids' capacity), local offsets (N B + 1), [local weights] out.
void idsExchange(Operands &o, int64_t N, size_t ids, size_t offsets, int weights, size_t localIds,
                 size_t localOffsets, int localWeights) {
  const int64_t B = numel(o.in(offsets)) - 1;
  o.bags(ids, offsets, B, weights);
  o.i64(false, localIds);
  o.vector(false, localIds);
  o.count(false, localIds, N * numel(o.in(ids)));
  o.i64(false, localOffsets);
  o.count(false, localOffsets, N * B + 1);
  if (localWeights >= 0) {
    o.f32(false, size_t(localWeights));
    o.count(false, size_t(localWeights), numel(o.out(localIds)));
  }
}

/// One table's pooled rows: B x dim on one side, N B x dim on the other.
void pooledRows(Operands &o, int64_t N, int64_t dim, size_t i, bool gradient) {
  o.f32(true, i);
  o.f32(false, i);
  // shard_pool: N B partial rows in, B out; its gradient the other way.
  const bool fewIn = gradient;
  const auto [B, D] = o.matrix(fewIn, i, -1, dim);
  (void)D;
  o.matrix(!fewIn, i, N * B, dim);
}

} // namespace

bool checkShardOperands(KernelOp op, Operands &o, const Kernel &kernel, const Plan &plan) {
  switch (op) {
  case KernelOp::ShardIds: {
    const Table &t = plan.tables[size_t(kernel.attrs.at("table").get<int64_t>())];
    const int64_t N = shardsOf(o, t);
    const bool weighted = kernel.inputs.size() == 3;
    const bool weightsOut = weighted || kernel.attrs.value("per_bag_mean", false);
    if (o.ok() && kernel.outputs.size() != (weightsOut ? 3u : 2u))
      o.failAt("outputs", std::string("writes local ids and offsets") +
                              (weightsOut ? " and weights" : "") + ", got " +
                              std::to_string(kernel.outputs.size()) + " outputs");
    if (o.ok())
      idsExchange(o, N, 0, 1, weighted ? 2 : -1, 0, 1, weightsOut ? 2 : -1);
    break;
  }
  case KernelOp::ShardPool:
  case KernelOp::ShardPoolGrad: {
    const Table &t = plan.tables[size_t(kernel.attrs.at("table").get<int64_t>())];
    if (const int64_t N = shardsOf(o, t))
      pooledRows(o, N, t.dim, 0, op == KernelOp::ShardPoolGrad);
    break;
  }
  case KernelOp::ShardIdsGroup:
  case KernelOp::ShardPoolGroup:
  case KernelOp::ShardPoolGradGroup: {
    ShardGroupAttrs a;
    try {
      a = readShardGroupAttrs(plan, kernel);
    } catch (const std::invalid_argument &e) {
      o.failAt("attrs", e.what());
      break;
    }
    const size_t T = a.tables.size();
    if (op != KernelOp::ShardIdsGroup) { // one input and one output per member
      if (kernel.inputs.size() != T || kernel.outputs.size() != T) {
        o.failAt("inputs", "has " + std::to_string(T) + " members, so as many inputs and outputs");
        break;
      }
      for (size_t m = 0; m < T && o.ok(); ++m)
        pooledRows(o, a.ranks(), a.tables[m]->dim, m, op == KernelOp::ShardPoolGradGroup);
      break;
    }
    // ids[T], offsets[T], the weighted members' weights in; local ids[T],
    // local offsets[T], the local weights of those weighted or per_bag_mean.
    if (kernel.inputs.size() != 2 * T + a.weights() ||
        kernel.outputs.size() != 2 * T + a.localWeights()) {
      o.failAt("inputs", "has " + std::to_string(kernel.inputs.size()) + " inputs and " +
                             std::to_string(kernel.outputs.size()) + " outputs; its " +
                             std::to_string(T) + " members take " +
                             std::to_string(2 * T + a.weights()) + " and " +
                             std::to_string(2 * T + a.localWeights()));
      break;
    }
    size_t weights = 2 * T, localWeights = 2 * T;
    for (size_t m = 0; m < T && o.ok(); ++m)
      idsExchange(o, a.ranks(), m, T + m, a.weighted[m] ? int(weights++) : -1, m, T + m,
                  a.weightsOut(m) ? int(localWeights++) : -1);
    break;
  }
  default:
    return false;
  }
  return true;
}

} // namespace embc::runtime::operands
