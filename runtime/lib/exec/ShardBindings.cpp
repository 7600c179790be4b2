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
//===----------------------------------------------------------------------===//

#include "CommBindings.h"

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

} // namespace

BoundKernel embc::runtime::bindShardKernel(const Binder &b) {
  if (b.k.op == "shard_ids")
    return bindShardIds(b);
  if (b.k.op == "shard_pool")
    return bindShardPool(b, false);
  if (b.k.op == "shard_pool_grad")
    return bindShardPool(b, true);
  return nullptr;
}
