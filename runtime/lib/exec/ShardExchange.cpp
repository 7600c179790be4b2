//===- ShardExchange.cpp - the job's ranks, sharded tables' exchanges -----===//
//
// Shared by both backends (embc/runtime/exec/Collectives.h): the check of
// the job's communicator every collective kernel makes, and the exchanges
// of sharded tables. shard_ids
// works on host memory: the CPU binds it directly, the CUDA backend copies
// the ids to the host, runs it, and copies the local ids back. The pooled
// rows move wherever the communicator reaches (NCCL: device memory).
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/exec/Collectives.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

using namespace embc::runtime;

comm::Communicator &embc::runtime::jobCommunicator(const ExecState &s, const std::string &op) {
  int64_t ranks = s.plan->config.jobRanks();
  std::string prefix = "kernel '" + op + "': the plan is compiled for " +
                       std::string(s.plan->config.pipelineRanks() == 1 ? "data_parallel "
                                                                     : "pipeline ranks ") +
                       std::to_string(ranks);
  if (!s.comm)
    throw PlanError(prefix + " and needs a job of " + std::to_string(ranks) +
                    " ranks (mpirun -np " + std::to_string(ranks) +
                    " embrun ...), but this process has no communicator");
  if (s.comm->size() != ranks)
    throw PlanError(prefix + ", but the job has " + std::to_string(s.comm->size()) +
                    " rank(s): run it with mpirun -np " + std::to_string(ranks));
  return *s.comm;
}

ShardIdsExchange::ShardIdsExchange(ShardIdsSpec spec)
    : ShardIdsExchange(std::vector<ShardIdsSpec>{std::move(spec)}) {}

ShardIdsExchange::ShardIdsExchange(std::vector<ShardIdsSpec> members)
    : members_(std::move(members)) {
  if (members_.empty())
    throw std::invalid_argument("a shard_ids exchange needs at least one table");
  ranks_ = int64_t(members_.front().bounds.size()) - 1;
  for (const ShardIdsSpec &m : members_) {
    if (int64_t(m.bounds.size()) - 1 != ranks_)
      throw std::invalid_argument("kernel '" + m.op + "': table '" + m.table + "' has " +
                                  std::to_string(m.bounds.size() - 1) + " shards, table '" +
                                  members_.front().table + "' " + std::to_string(ranks_));
    firstBag_.push_back(allBags_);
    allBags_ += m.bags;
    anyWeights_ = anyWeights_ || m.weightsOut;
  }
}

int64_t ShardIdsExchange::run(comm::Communicator &c, const int64_t *id, int64_t n,
                              const int64_t *bag, const float *w, int64_t *localIds,
                              int64_t *localOffsets, float *localWeights) {
  return runGroup(c, {ShardIdsIn{id, n, bag, w}},
                  {ShardIdsOut{localIds, localOffsets, localWeights}})
      .front();
}

const std::vector<int64_t> &ShardIdsExchange::runGroup(comm::Communicator &c,
                                                       const std::vector<ShardIdsIn> &in,
                                                       const std::vector<ShardIdsOut> &out) {
  const size_t T = members_.size();
  const int64_t ranks = ranks_, all = allBags_;
  int64_t sent = 0;
  for (size_t t = 0; t < T; ++t) {
    const ShardIdsSpec &sp = members_[t];
    const ShardIdsIn &x = in[t];
    if (x.offsets[0] != 0 || x.offsets[sp.bags] != x.n)
      throw data::DataError("kernel '" + sp.op + "': the bags of table '" + sp.table +
                            "' span ids [" + std::to_string(x.offsets[0]) + ", " +
                            std::to_string(x.offsets[sp.bags]) + "), not the batch's " +
                            std::to_string(x.n));
    for (int64_t i = 0; i < x.n; ++i)
      if (x.ids[i] < 0 || x.ids[i] >= sp.rows)
        throw data::DataError("id " + std::to_string(x.ids[i]) + " is outside table '" +
                              sp.table + "' (rows 0.." + std::to_string(sp.rows - 1) + ")");
    sent += x.n;
  }
  // Which rank stores each id's row (bounds are few, ids many), counted per
  // (destination, member's bag): a rank's counts are all members' bags.
  counts_.assign(size_t(ranks * all), 0);
  dest_.resize(size_t(sent));
  for (size_t t = 0, at = 0; t < T; ++t) {
    const std::vector<int64_t> &bounds = members_[t].bounds;
    const ShardIdsIn &x = in[t];
    for (int64_t j = 0; j < members_[t].bags; ++j)
      for (int64_t i = x.offsets[j]; i < x.offsets[j + 1]; ++i, ++at) {
        int64_t d = int64_t(std::upper_bound(bounds.begin(), bounds.end(), x.ids[i]) -
                            bounds.begin()) - 1;
        dest_[at] = d;
        ++counts_[size_t(d * all + firstBag_[t] + j)];
      }
  }
  // Destination-major, then member, then bag: where each part starts.
  cursor_.assign(size_t(ranks * all), 0);
  std::vector<size_t> sendCounts(size_t(ranks), 0);
  int64_t at = 0;
  for (int64_t s = 0; s < ranks * all; ++s) {
    cursor_[size_t(s)] = at;
    at += counts_[size_t(s)];
    sendCounts[size_t(s / all)] += size_t(counts_[size_t(s)]);
  }
  sendIds_.resize(size_t(sent));
  if (anyWeights_)
    sendWeights_.resize(size_t(sent));
  for (size_t t = 0, i = 0; t < T; ++t) {
    const ShardIdsSpec &sp = members_[t];
    const ShardIdsIn &x = in[t];
    for (int64_t j = 0; j < sp.bags; ++j) {
      int64_t size = x.offsets[j + 1] - x.offsets[j];
      for (int64_t k = x.offsets[j]; k < x.offsets[j + 1]; ++k, ++i) {
        int64_t d = dest_[i];
        int64_t slot = cursor_[size_t(d * all + firstBag_[t] + j)]++;
        sendIds_[size_t(slot)] = x.ids[k] - sp.bounds[size_t(d)];
        if (anyWeights_) {
          float weight = x.weights ? x.weights[k] : 1.0f;
          sendWeights_[size_t(slot)] = sp.perBagMean ? weight / float(size) : weight;
        }
      }
    }
  }
  // Per-bag counts first: every rank sends every rank one count per bag.
  std::vector<size_t> perRank(static_cast<size_t>(ranks), static_cast<size_t>(all));
  recvCounts_.assign(size_t(ranks * all), 0);
  c.allToAllV(counts_.data(), perRank, recvCounts_.data(), perRank, comm::DType::I64);
  // Member t's local bags are (source rank, bag): offsets from the counts.
  std::vector<size_t> recvCounts(size_t(ranks), 0);
  totals_.assign(T, 0);
  for (size_t t = 0; t < T; ++t) {
    const ShardIdsSpec &sp = members_[t];
    int64_t *offsets = out[t].localOffsets;
    offsets[0] = 0;
    for (int64_t r = 0; r < ranks; ++r)
      for (int64_t j = 0; j < sp.bags; ++j) {
        int64_t b = r * sp.bags + j;
        offsets[b + 1] = offsets[b] + recvCounts_[size_t(r * all + firstBag_[t] + j)];
      }
    totals_[t] = offsets[ranks * sp.bags];
    if (totals_[t] > sp.capacity)
      throw std::runtime_error("kernel '" + sp.op + "': " + std::to_string(totals_[t]) +
                               " ids of table '" + sp.table + "' arrived, over the capacity " +
                               std::to_string(sp.capacity));
  }
  int64_t received = 0;
  for (int64_t s = 0; s < ranks * all; ++s) {
    recvCounts[size_t(s / all)] += size_t(recvCounts_[size_t(s)]);
    received += recvCounts_[size_t(s)];
  }
  // One table receives in place; a group through staging, then each
  // (source rank, member) part to its place in the member's local ids.
  if (T == 1) {
    c.allToAllV(sendIds_.data(), sendCounts, out[0].localIds, recvCounts, comm::DType::I64);
    if (anyWeights_)
      c.allToAllV(sendWeights_.data(), sendCounts, out[0].localWeights, recvCounts,
                  comm::DType::F32);
    return totals_;
  }
  recvIds_.resize(size_t(received));
  c.allToAllV(sendIds_.data(), sendCounts, recvIds_.data(), recvCounts, comm::DType::I64);
  if (anyWeights_) {
    recvWeights_.resize(size_t(received));
    c.allToAllV(sendWeights_.data(), sendCounts, recvWeights_.data(), recvCounts,
                comm::DType::F32);
  }
  int64_t from = 0;
  for (int64_t r = 0; r < ranks; ++r)
    for (size_t t = 0; t < T; ++t) {
      const ShardIdsSpec &sp = members_[t];
      int64_t to = out[t].localOffsets[r * sp.bags];
      int64_t size = out[t].localOffsets[(r + 1) * sp.bags] - to;
      std::copy_n(recvIds_.data() + from, size, out[t].localIds + to);
      if (sp.weightsOut)
        std::copy_n(recvWeights_.data() + from, size, out[t].localWeights + to);
      from += size;
    }
  return totals_;
}

PooledRowsGroup::PooledRowsGroup(std::vector<PooledMember> members, int ranks)
    : members_(std::move(members)), ranks_(ranks) {
  for (size_t i = 0; i < members_.size(); ++i)
    (members_[i].owner < 0 ? rowWise_ : tableWise_).push_back(i);
}

size_t PooledRowsGroup::stagingFloats() const {
  size_t row = 0, table = 0;
  for (size_t i : rowWise_)
    row += members_[i].block;
  for (size_t i : tableWise_)
    table += members_[i].block;
  // Every case moves at most N blocks of one kind's members.
  return size_t(ranks_) * std::max(rowWise_.size() > 1 ? row : 0,
                                   tableWise_.size() > 1 ? table : 0);
}

void PooledRowsGroup::run(comm::Communicator &c, const std::vector<const float *> &in,
                          const std::vector<float *> &out, bool gradient, float *send,
                          float *recv, const PooledMemory &memory) const {
  // Row-wise first, then table-wise: every rank runs them in this order.
  rowWise(c, in, out, gradient, send, recv, memory);
  tableWise(c, in, out, gradient, send, recv, memory);
}

void PooledRowsGroup::rowWise(comm::Communicator &c, const std::vector<const float *> &in,
                              const std::vector<float *> &out, bool gradient, float *send,
                              float *recv, const PooledMemory &memory) const {
  if (rowWise_.empty())
    return;
  if (rowWise_.size() == 1) {
    size_t i = rowWise_.front();
    exchangePooledRows(c, in[i], out[i], members_[i].block, -1, gradient, memory.zero);
    return;
  }
  // A rank's part of every member, side by side: [rank][member][block].
  size_t all = 0;
  for (size_t i : rowWise_)
    all += members_[i].block;
  const size_t N = size_t(ranks_), F = sizeof(float);
  size_t at = 0;
  for (size_t i : rowWise_) {
    size_t block = members_[i].block;
    if (gradient) // every rank's gradient to every rank
      memory.copy(send + at, in[i], block * F);
    else // block r of the partial rows to rank r
      for (size_t r = 0; r < N; ++r)
        memory.copy(send + r * all + at, in[i] + r * block, block * F);
    at += block;
  }
  if (gradient)
    c.allGather(send, recv, all, comm::DType::F32);
  else
    c.reduceScatter(send, recv, all, comm::DType::F32, comm::ReduceOp::Sum);
  at = 0;
  for (size_t i : rowWise_) {
    size_t block = members_[i].block;
    if (gradient)
      for (size_t r = 0; r < N; ++r)
        memory.copy(out[i] + r * block, recv + r * all + at, block * F);
    else
      memory.copy(out[i], recv + at, block * F);
    at += block;
  }
}

void PooledRowsGroup::tableWise(comm::Communicator &c, const std::vector<const float *> &in,
                                const std::vector<float *> &out, bool gradient, float *send,
                                float *recv, const PooledMemory &memory) const {
  if (tableWise_.empty())
    return;
  if (tableWise_.size() == 1) {
    size_t i = tableWise_.front();
    exchangePooledRows(c, in[i], out[i], members_[i].block, members_[i].owner, gradient,
                       memory.zero);
    return;
  }
  const size_t N = size_t(ranks_), F = sizeof(float);
  const int me = c.rank();
  // pool: owners send block r of their members' partial rows to rank r;
  // gradient: every rank sends its gradient of each member to its owner.
  // Either way a message holds members in group order.
  std::vector<size_t> sendCounts(N, 0), recvCounts(N, 0);
  for (size_t i : tableWise_) {
    const PooledMember &m = members_[i];
    for (size_t r = 0; r < N; ++r) {
      if (gradient ? size_t(m.owner) == r : m.owner == me)
        sendCounts[r] += m.block;
      if (gradient ? m.owner == me : size_t(m.owner) == r)
        recvCounts[r] += m.block;
    }
  }
  size_t at = 0;
  for (size_t r = 0; r < N; ++r)
    for (size_t i : tableWise_) {
      const PooledMember &m = members_[i];
      if (gradient ? size_t(m.owner) == r : m.owner == me) {
        memory.copy(send + at, gradient ? in[i] : in[i] + r * m.block, m.block * F);
        at += m.block;
      }
    }
  c.allToAllV(send, sendCounts, recv, recvCounts, comm::DType::F32);
  at = 0;
  for (size_t r = 0; r < N; ++r)
    for (size_t i : tableWise_) {
      const PooledMember &m = members_[i];
      if (gradient ? m.owner == me : size_t(m.owner) == r) {
        memory.copy(gradient ? out[i] + r * m.block : out[i], recv + at, m.block * F);
        at += m.block;
      }
    }
  if (gradient) // the ranks that store none of a member's rows get zeros
    for (size_t i : tableWise_)
      if (members_[i].owner != me)
        memory.zero(out[i], N * members_[i].block * F);
}

void embc::runtime::exchangePooledRows(comm::Communicator &c, const void *in, void *out,
                                       size_t block, int owner, bool gradient,
                                       const std::function<void(void *, size_t)> &zero) {
  if (owner < 0) {
    if (gradient)
      c.allGather(in, out, block, comm::DType::F32);
    else
      c.reduceScatter(in, out, block, comm::DType::F32, comm::ReduceOp::Sum);
    return;
  }
  // One owner: it alone pools (sends) and alone receives the gradients.
  size_t ranks = size_t(c.size());
  bool mine = c.rank() == owner;
  std::vector<size_t> sendCounts(ranks, 0), recvCounts(ranks, 0);
  if (gradient) {
    sendCounts[size_t(owner)] = block;
    if (mine)
      recvCounts.assign(ranks, block);
    else
      zero(out, block * ranks * sizeof(float));
  } else {
    recvCounts[size_t(owner)] = block;
    if (mine)
      sendCounts.assign(ranks, block);
  }
  c.allToAllV(in, sendCounts, out, recvCounts, comm::DType::F32);
}
