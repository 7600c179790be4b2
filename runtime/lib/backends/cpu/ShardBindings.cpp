//===- ShardBindings.cpp - the exchanges of sharded tables (CPU) -----------===//
//
// A sharded table (Table::shardRows) stores rows [b_r, b_{r+1}) on rank r.
// Its lookups run as three kernels around a local lookup (docs/distributed.md):
//
//  - shard_ids: each rank splits its B bags by the rank that stores each
//    id's row and sends every rank its part as local rows (id - b_d), with
//    per-bag counts, so the receiver rebuilds N x B bags (source rank
//    order) as offsets. Three all-to-alls: counts, ids, weights
//    (ShardIdsExchange, shared with the CUDA backend).
//  - shard_pool: block r of the N x B pooled rows goes back to rank r and
//    the blocks from all ranks are summed (reduce-scatter); a table with one
//    owner sends only the owner's blocks (all-to-all).
//  - shard_pool_grad: every rank's B x dim gradient to the ranks that store
//    rows (all-gather; all-to-all to the owner of a table_wise table).
//
//
// -emb-batch-exchanges merges them: shard_ids_group, shard_pool_group and
// shard_pool_grad_group run every member's exchange in one set of
// collectives (ShardIdsExchange and PooledRowsGroup).
//
//===----------------------------------------------------------------------===//

#include "CommBindings.h"

#include "embc/runtime/ShardGroupAttrs.h"

#include <cstring>
#include <string>

using namespace embc::runtime;

namespace {

/// The sharded table a kernel names, or a bind-time error.
const Table &shardedTable(const Binder &b) {
  const Table &t = b.table();
  if (t.shardRows.empty())
    b.fail("table '" + t.name + "' is not sharded (no shard_rows)");
  return t;
}

BoundKernel bindShardIds(const Binder &b) {
  const Kernel &k = b.k;
  const Table &t = shardedTable(b);
  bool weighted = k.inputs.size() == 3, perBagMean = b.k.attrs.value("per_bag_mean", false);
  bool weightsOut = weighted || perBagMean;
  b.expectCounts(weighted ? 3 : 2, weightsOut ? 3 : 2);
  int64_t B = Binder::numel(b.in(1)) - 1;
  int64_t ranks = int64_t(t.shardRows.size()) - 1;
  if (Binder::numel(b.out(1)) != ranks * B + 1)
    b.fail("local offsets must hold " + std::to_string(ranks) + " x " + std::to_string(B) +
           " + 1 entries, not " + std::to_string(Binder::numel(b.out(1))));
  int32_t ids = k.inputs[0], offsets = k.inputs[1], weights = weighted ? k.inputs[2] : -1;
  int32_t localIds = k.outputs[0], localOffsets = k.outputs[1],
          localWeights = weightsOut ? k.outputs[2] : -1;
  auto exchange = std::make_shared<ShardIdsExchange>(ShardIdsSpec{
      k.op, t.name, t.rows, t.shardRows, B, b.out(0).shape[0], perBagMean, weightsOut});
  return [=](ExecState &s) {
    comm::Communicator &c = jobCommunicator(s, exchange->spec().op);
    int64_t total = exchange->run(
        c, s.data<int64_t>(ids), idCount(s, ids), s.data<int64_t>(offsets),
        weights >= 0 ? s.data<float>(weights) : nullptr, s.data<int64_t>(localIds),
        s.data<int64_t>(localOffsets), weightsOut ? s.data<float>(localWeights) : nullptr);
    s.length[localIds] = total;
    if (weightsOut)
      s.length[localWeights] = total;
  };
}

BoundKernel bindShardPool(const Binder &b, bool gradient) {
  const Kernel &k = b.k;
  const Table &t = shardedTable(b);
  b.expectCounts(1, 1);
  int64_t ranks = int64_t(t.shardRows.size()) - 1;
  // pool: N x B rows in, B out; its gradient: B in, N x B out.
  const Buffer &few = gradient ? b.in(0) : b.out(0), &many = gradient ? b.out(0) : b.in(0);
  int64_t B = b.dim(few, 0), D = t.dim;
  if (b.dim(few, 1) != D || b.dim(many, 1) != D || b.dim(many, 0) != ranks * B)
    b.fail("expected " + std::to_string(ranks) + " x " + std::to_string(B) + " rows of " +
           std::to_string(D) + " on one side and " + std::to_string(B) + " on the other");
  int32_t in = k.inputs[0], out = k.outputs[0];
  // The single rank that stores rows (table_wise), which the plan records
  // on the table's buffer; -1 when several do.
  int owner = b.p.buffers[t.buffer].rank;
  std::string op = k.op;
  size_t block = size_t(B * D);
  return [=](ExecState &s) {
    exchangePooledRows(jobCommunicator(s, op), s.data<float>(in), s.data<float>(out), block,
                       owner, gradient, [](void *p, size_t bytes) { std::memset(p, 0, bytes); });
  };
}

/// A group kernel's attributes, or a bind-time error.
ShardGroupAttrs groupAttrs(const Binder &b) {
  try {
    return readShardGroupAttrs(b.p, b.k);
  } catch (const std::invalid_argument &e) {
    b.fail(e.what());
  }
}

/// shard_ids_group: inputs ids[T], offsets[T], weights of the weighted
/// members; outputs local ids[T], local offsets[T], local weights of the
/// members that are weighted or per_bag_mean.
BoundKernel bindShardIdsGroup(const Binder &b) {
  const Kernel &k = b.k;
  ShardGroupAttrs a = groupAttrs(b);
  const std::vector<const Table *> &tables = a.tables;
  const size_t T = tables.size();
  b.expectCounts(2 * T + a.weights(), 2 * T + a.localWeights());
  struct Member {
    int32_t ids, offsets, weights = -1, localIds, localOffsets, localWeights = -1;
  };
  std::vector<Member> members(T);
  std::vector<ShardIdsSpec> specs;
  size_t w = 2 * T, lw = 2 * T;
  for (size_t t = 0; t < T; ++t) {
    const Table &table = *tables[t];
    Member &m = members[t];
    m.ids = k.inputs[t];
    m.offsets = k.inputs[T + t];
    m.localIds = k.outputs[t];
    m.localOffsets = k.outputs[T + t];
    if (a.weighted[t])
      m.weights = k.inputs[w++];
    bool weightsOut = a.weightsOut(t);
    if (weightsOut)
      m.localWeights = k.outputs[lw++];
    int64_t B = Binder::numel(b.in(T + t)) - 1;
    int64_t ranks = int64_t(table.shardRows.size()) - 1;
    if (Binder::numel(b.out(T + t)) != ranks * B + 1)
      b.fail("local offsets of table '" + table.name + "' must hold " +
             std::to_string(ranks) + " x " + std::to_string(B) + " + 1 entries, not " +
             std::to_string(Binder::numel(b.out(T + t))));
    specs.push_back(ShardIdsSpec{k.op, table.name, table.rows, table.shardRows, B,
                                 b.out(t).shape[0], a.perBagMean[t], weightsOut});
  }
  std::shared_ptr<ShardIdsExchange> exchange;
  try {
    exchange = std::make_shared<ShardIdsExchange>(std::move(specs));
  } catch (const std::invalid_argument &e) {
    b.fail(e.what());
  }
  return [=](ExecState &s) {
    std::vector<ShardIdsIn> in(T);
    std::vector<ShardIdsOut> out(T);
    for (size_t t = 0; t < T; ++t) {
      const Member &m = members[t];
      in[t] = {s.data<int64_t>(m.ids), idCount(s, m.ids), s.data<int64_t>(m.offsets),
               m.weights >= 0 ? s.data<float>(m.weights) : nullptr};
      out[t] = {s.data<int64_t>(m.localIds), s.data<int64_t>(m.localOffsets),
                m.localWeights >= 0 ? s.data<float>(m.localWeights) : nullptr};
    }
    const std::vector<int64_t> &totals =
        exchange->runGroup(jobCommunicator(s, exchange->spec().op), in, out);
    for (size_t t = 0; t < T; ++t) {
      s.length[members[t].localIds] = totals[t];
      if (members[t].localWeights >= 0)
        s.length[members[t].localWeights] = totals[t];
    }
  };
}

/// shard_pool_group / shard_pool_grad_group: member i's buffer in, its
/// buffer out, shaped as shard_pool / shard_pool_grad's.
BoundKernel bindShardPoolGroup(const Binder &b, bool gradient) {
  const Kernel &k = b.k;
  ShardGroupAttrs a = groupAttrs(b);
  const size_t T = a.tables.size();
  b.expectCounts(T, T);
  int64_t ranks = a.ranks();
  std::vector<PooledMember> members;
  for (size_t t = 0; t < T; ++t) {
    const Table &table = *a.tables[t];
    const Buffer &few = gradient ? b.in(t) : b.out(t), &many = gradient ? b.out(t) : b.in(t);
    int64_t B = b.dim(few, 0), D = table.dim;
    if (b.dim(few, 1) != D || b.dim(many, 1) != D || b.dim(many, 0) != ranks * B)
      b.fail("table '" + table.name + "': expected " + std::to_string(ranks) + " x " +
             std::to_string(B) + " rows of " + std::to_string(D) + " on one side and " +
             std::to_string(B) + " on the other");
    members.push_back({size_t(B * D), b.p.buffers[table.buffer].rank});
  }
  auto group = std::make_shared<PooledRowsGroup>(std::move(members), int(ranks));
  auto staging = std::make_shared<std::vector<float>>(2 * group->stagingFloats());
  std::vector<int32_t> in = k.inputs, out = k.outputs;
  std::string op = k.op;
  return [=](ExecState &s) {
    std::vector<const float *> from(T);
    std::vector<float *> to(T);
    for (size_t t = 0; t < T; ++t) {
      from[t] = s.data<float>(in[t]);
      to[t] = s.data<float>(out[t]);
    }
    float *send = staging->data(), *recv = send + group->stagingFloats();
    static const PooledMemory host{
        [](void *dst, const void *src, size_t bytes) { std::memcpy(dst, src, bytes); },
        [](void *dst, size_t bytes) { std::memset(dst, 0, bytes); }};
    group->run(jobCommunicator(s, op), from, to, gradient, send, recv, host);
  };
}

} // namespace

std::vector<CpuBinding> embc::runtime::shardBindings() {
  return {{KernelOp::ShardIds, bindShardIds},
          {KernelOp::ShardPool, [](const Binder &b) { return bindShardPool(b, false); }},
          {KernelOp::ShardPoolGrad, [](const Binder &b) { return bindShardPool(b, true); }},
          {KernelOp::ShardIdsGroup, bindShardIdsGroup},
          {KernelOp::ShardPoolGroup, [](const Binder &b) { return bindShardPoolGroup(b, false); }},
          {KernelOp::ShardPoolGradGroup,
           [](const Binder &b) { return bindShardPoolGroup(b, true); }}};
}
