//===- ShardExchange.cpp - the exchanges of sharded tables ----------------===//
//
// Shared by both backends (embc/runtime/exec/Collectives.h). shard_ids
// works on host memory: the CPU binds it directly, the CUDA backend copies
// the ids to the host, runs it, and copies the local ids back. The pooled
// rows move wherever the communicator reaches (NCCL: device memory).
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/exec/Collectives.h"

#include <algorithm>
#include <cstring>

using namespace embc::runtime;

int64_t ShardIdsExchange::run(comm::Communicator &c, const int64_t *id, int64_t n,
                              const int64_t *bag, const float *w, int64_t *localIds,
                              int64_t *localOffsets, float *localWeights) {
  const ShardIdsSpec &sp = spec_;
  const int64_t B = sp.bags, ranks = int64_t(sp.bounds.size()) - 1;
  if (bag[0] != 0 || bag[B] != n)
    throw data::DataError("kernel '" + sp.op + "': the bags of table '" + sp.table +
                          "' span ids [" + std::to_string(bag[0]) + ", " +
                          std::to_string(bag[B]) + "), not the batch's " + std::to_string(n));
  for (int64_t i = 0; i < n; ++i)
    if (id[i] < 0 || id[i] >= sp.rows)
      throw data::DataError("id " + std::to_string(id[i]) + " is outside table '" + sp.table +
                            "' (rows 0.." + std::to_string(sp.rows - 1) + ")");
  const std::vector<int64_t> &bounds = sp.bounds;
  // Which rank stores each id's row: bounds are few, ids many.
  auto ownerOf = [&](int64_t row) {
    return int64_t(std::upper_bound(bounds.begin(), bounds.end(), row) - bounds.begin()) - 1;
  };
  counts_.assign(size_t(ranks * B), 0);
  dest_.resize(size_t(n));
  for (int64_t j = 0; j < B; ++j)
    for (int64_t i = bag[j]; i < bag[j + 1]; ++i) {
      dest_[size_t(i)] = ownerOf(id[i]);
      ++counts_[size_t(dest_[size_t(i)] * B + j)];
    }
  // Destination-major, bag-minor: where each (rank, bag) part starts.
  cursor_.assign(size_t(ranks * B), 0);
  std::vector<size_t> sendCounts(size_t(ranks), 0);
  int64_t at = 0;
  for (int64_t d = 0; d < ranks; ++d)
    for (int64_t j = 0; j < B; ++j) {
      cursor_[size_t(d * B + j)] = at;
      at += counts_[size_t(d * B + j)];
      sendCounts[size_t(d)] += size_t(counts_[size_t(d * B + j)]);
    }
  sendIds_.resize(size_t(n));
  if (sp.weightsOut)
    sendWeights_.resize(size_t(n));
  for (int64_t j = 0; j < B; ++j) {
    int64_t size = bag[j + 1] - bag[j];
    for (int64_t i = bag[j]; i < bag[j + 1]; ++i) {
      int64_t d = dest_[size_t(i)];
      int64_t slot = cursor_[size_t(d * B + j)]++;
      sendIds_[size_t(slot)] = id[i] - bounds[size_t(d)];
      if (sp.weightsOut) {
        float weight = w ? w[i] : 1.0f;
        sendWeights_[size_t(slot)] = sp.perBagMean ? weight / float(size) : weight;
      }
    }
  }
  // Per-bag counts first: every rank sends B to every rank.
  std::vector<size_t> perRank(static_cast<size_t>(ranks), static_cast<size_t>(B));
  recvCounts_.assign(size_t(ranks * B), 0);
  c.allToAllV(counts_.data(), perRank, recvCounts_.data(), perRank, comm::DType::I64);
  std::vector<size_t> recvCounts(size_t(ranks), 0);
  localOffsets[0] = 0;
  for (int64_t s = 0; s < ranks * B; ++s) {
    localOffsets[s + 1] = localOffsets[s] + recvCounts_[size_t(s)];
    recvCounts[size_t(s / B)] += size_t(recvCounts_[size_t(s)]);
  }
  int64_t total = localOffsets[ranks * B];
  if (total > sp.capacity)
    throw std::runtime_error("kernel '" + sp.op + "': " + std::to_string(total) +
                             " ids of table '" + sp.table + "' arrived, over the capacity " +
                             std::to_string(sp.capacity));
  c.allToAllV(sendIds_.data(), sendCounts, localIds, recvCounts, comm::DType::I64);
  if (sp.weightsOut)
    c.allToAllV(sendWeights_.data(), sendCounts, localWeights, recvCounts, comm::DType::F32);
  return total;
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
