//===- ShardGroupTest.cpp - grouped exchanges equal per-table ones --------===//
//
// Run by ctest under `mpirun -np 2` and `-np 3`. For random groups of
// sharded tables (row_wise and table_wise, weighted, per_bag_mean, empty
// bags, several sizes), the grouped exchanges of -emb-batch-exchanges
// (ShardIdsExchange with several members, PooledRowsGroup) must give every
// member exactly what its own per-table exchange gives: the same local
// bags, and pooled rows equal bit for bit. Every rank draws the same group
// (one seed) and its own ids and rows (seed and rank).
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/comm/Communicator.h"
#include "embc/runtime/exec/Collectives.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace embc::runtime;

namespace {

comm::Communicator &world() {
  static std::unique_ptr<comm::Communicator> c = comm::createMpiCommunicator();
  return *c;
}

struct Member {
  int64_t rows = 0, bags = 0, dim = 0;
  int owner = -1; ///< -1: row_wise
  bool weighted = false, perBagMean = false;
};

/// The same group on every rank: drawn from `seed` alone.
std::vector<Member> drawGroup(uint32_t seed, int ranks) {
  std::mt19937 g(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g); };
  std::vector<Member> members(size_t(pick(2, 5)));
  for (Member &m : members) {
    m.rows = pick(1, 40);
    m.bags = pick(1, 6);
    m.dim = pick(1, 9);
    m.owner = pick(-1, ranks - 1);
    m.weighted = pick(0, 1);
    m.perBagMean = m.owner < 0 && pick(0, 1);
  }
  return members;
}

std::vector<int64_t> boundsOf(const Member &m, int ranks) {
  std::vector<int64_t> b(size_t(ranks + 1), 0);
  if (m.owner >= 0) {
    for (int r = m.owner + 1; r <= ranks; ++r)
      b[size_t(r)] = m.rows;
    return b;
  }
  int64_t each = (m.rows + ranks - 1) / ranks;
  for (int r = 0; r <= ranks; ++r)
    b[size_t(r)] = std::min(r * each, m.rows);
  return b;
}

/// One member's bags on this rank.
struct Bags {
  std::vector<int64_t> ids, offsets;
  std::vector<float> weights;
  // What comes back.
  std::vector<int64_t> localIds, localOffsets;
  std::vector<float> localWeights;
};

Bags drawBags(const Member &m, std::mt19937 &g, int ranks) {
  Bags b;
  b.offsets.push_back(0);
  for (int64_t j = 0; j < m.bags; ++j) {
    int n = std::uniform_int_distribution<int>(0, 4)(g); // empty bags too
    for (int i = 0; i < n; ++i) {
      b.ids.push_back(std::uniform_int_distribution<int64_t>(0, m.rows - 1)(g));
      b.weights.push_back(std::uniform_real_distribution<float>(-2, 2)(g));
    }
    b.offsets.push_back(int64_t(b.ids.size()));
  }
  size_t capacity = size_t(4 * m.bags * ranks); // every rank's ids at most
  b.localIds.assign(capacity, -7);
  b.localOffsets.assign(size_t(ranks * m.bags + 1), -7);
  b.localWeights.assign(capacity, -7.0f);
  return b;
}

ShardIdsSpec specOf(const Member &m, int ranks, int64_t capacity) {
  return ShardIdsSpec{"shard_ids_group", "t", m.rows, boundsOf(m, ranks), m.bags, capacity,
                      m.perBagMean, m.weighted || m.perBagMean};
}

TEST(ShardGroup, IdsArriveAsEachTablesOwnExchangeDeliversThem) {
  comm::Communicator &c = world();
  const int N = c.size();
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    std::vector<Member> members = drawGroup(seed, N);
    std::mt19937 g(seed * 7919u + uint32_t(c.rank()));
    // Each rank draws its own ids, but the capacity must agree: the
    // largest a rank could receive is every rank's ids, so bound it by 4
    // per bag.
    std::vector<Bags> grouped, alone;
    std::vector<ShardIdsSpec> specs;
    for (const Member &m : members) {
      grouped.push_back(drawBags(m, g, N));
      alone.push_back(grouped.back());
      specs.push_back(specOf(m, N, 4 * m.bags * N));
    }
    std::vector<ShardIdsIn> in;
    std::vector<ShardIdsOut> out;
    for (size_t t = 0; t < members.size(); ++t) {
      Bags &b = grouped[t];
      in.push_back({b.ids.data(), int64_t(b.ids.size()), b.offsets.data(),
                    members[t].weighted ? b.weights.data() : nullptr});
      out.push_back({b.localIds.data(), b.localOffsets.data(),
                     specs[t].weightsOut ? b.localWeights.data() : nullptr});
    }
    ShardIdsExchange group(specs);
    std::vector<int64_t> totals = group.runGroup(c, in, out);
    for (size_t t = 0; t < members.size(); ++t) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", member " + std::to_string(t));
      Bags &b = alone[t];
      ShardIdsExchange one(specs[t]);
      int64_t total = one.run(c, b.ids.data(), int64_t(b.ids.size()), b.offsets.data(),
                              members[t].weighted ? b.weights.data() : nullptr,
                              b.localIds.data(), b.localOffsets.data(),
                              specs[t].weightsOut ? b.localWeights.data() : nullptr);
      EXPECT_EQ(totals[t], total);
      EXPECT_EQ(grouped[t].localOffsets, b.localOffsets);
      EXPECT_EQ(grouped[t].localIds, b.localIds);
      EXPECT_EQ(0, std::memcmp(grouped[t].localWeights.data(), b.localWeights.data(),
                               b.localWeights.size() * sizeof(float)));
    }
  }
}

TEST(ShardGroup, PooledRowsEqualEachTablesOwnExchangeBitForBit) {
  comm::Communicator &c = world();
  const int N = c.size();
  PooledMemory host{[](void *d, const void *s, size_t n) { std::memcpy(d, s, n); },
                    [](void *d, size_t n) { std::memset(d, 0, n); }};
  for (uint32_t seed = 1; seed <= 40; ++seed)
    for (bool gradient : {false, true}) {
      std::vector<Member> members = drawGroup(seed, N);
      std::mt19937 g(seed * 104729u + uint32_t(c.rank()));
      std::vector<PooledMember> pooled;
      std::vector<std::vector<float>> in, grouped, alone;
      for (const Member &m : members) {
        size_t block = size_t(m.bags * m.dim);
        pooled.push_back({block, m.owner});
        std::vector<float> x(gradient ? block : block * size_t(N));
        for (float &v : x)
          v = std::uniform_real_distribution<float>(-1, 1)(g);
        in.push_back(x);
        grouped.emplace_back(gradient ? block * size_t(N) : block, -3.0f);
        alone.push_back(grouped.back());
      }
      PooledRowsGroup group(pooled, N);
      std::vector<float> staging(2 * group.stagingFloats() + 1);
      std::vector<const float *> from;
      std::vector<float *> to;
      for (size_t t = 0; t < members.size(); ++t) {
        from.push_back(in[t].data());
        to.push_back(grouped[t].data());
      }
      group.run(c, from, to, gradient, staging.data(),
                staging.data() + group.stagingFloats(), host);
      for (size_t t = 0; t < members.size(); ++t) {
        SCOPED_TRACE("seed " + std::to_string(seed) + (gradient ? ", gradient" : ", pool") +
                     ", member " + std::to_string(t));
        exchangePooledRows(c, in[t].data(), alone[t].data(), pooled[t].block, pooled[t].owner,
                           gradient, host.zero);
        ASSERT_EQ(grouped[t].size(), alone[t].size());
        EXPECT_EQ(0, std::memcmp(grouped[t].data(), alone[t].data(),
                                 alone[t].size() * sizeof(float)));
      }
    }
}

// Every rank sends an id outside member 1's table: every rank refuses
// before any collective, so none is left waiting.
TEST(ShardGroup, ABadIdInOneMemberIsRefusedBeforeAnythingIsSent) {
  comm::Communicator &c = world();
  const int N = c.size();
  std::vector<Member> members = {{10, 2, 4, -1, false, false}, {5, 2, 4, 0, false, false}};
  std::vector<ShardIdsSpec> specs = {specOf(members[0], N, 64), specOf(members[1], N, 64)};
  std::vector<int64_t> ids0 = {1, 2, 3}, off0 = {0, 1, 3}, ids1 = {4, 5}, off1 = {0, 1, 2};
  std::vector<int64_t> local(64), offsets(size_t(2 * N + 1));
  ShardIdsExchange group(specs);
  try {
    group.runGroup(c, {{ids0.data(), 3, off0.data(), nullptr}, {ids1.data(), 2, off1.data(), nullptr}},
                   {{local.data(), offsets.data(), nullptr}, {local.data(), offsets.data(), nullptr}});
    FAIL() << "id 5 of a 5-row table was accepted";
  } catch (const data::DataError &e) {
    EXPECT_NE(std::string(e.what()).find("id 5 is outside table"), std::string::npos) << e.what();
  }
  // The job goes on: the next collective still matches on every rank.
  int64_t one = 1;
  c.allReduce(&one, 1, comm::DType::I64, comm::ReduceOp::Sum);
  EXPECT_EQ(one, N);
}

} // namespace
