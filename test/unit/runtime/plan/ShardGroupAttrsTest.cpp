//===- ShardGroupAttrsTest.cpp - a shard group kernel's attributes --------===//
//
// readShardGroupAttrs, shared by the CPU binding and the CUDA lowering of
// -emb-batch-exchanges' kernels: what it reads, and each malformed plan it
// refuses with a message saying what is wrong.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/ShardGroupAttrs.h"

#include <gtest/gtest.h>

using namespace embc::runtime;

namespace {

Plan twoRankPlan() {
  Plan p;
  Table a, b, c, plain;
  a.name = "a";
  a.rows = 10;
  a.shardRows = {0, 10, 10};
  b.name = "b";
  b.rows = 10;
  b.shardRows = {0, 5, 10};
  c.name = "c";
  c.rows = 9;
  c.shardRows = {0, 3, 6, 9}; // three ranks
  plain.name = "plain";
  p.tables = {a, b, c, plain};
  return p;
}

Kernel group(const char *op, nlohmann::json attrs) {
  Kernel k;
  k.op = op;
  k.attrs = std::move(attrs);
  return k;
}

std::string refusal(const Plan &p, const Kernel &k) {
  try {
    readShardGroupAttrs(p, k);
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "accepted";
}

TEST(ShardGroupAttrs, ReadsTablesAndPerMemberFlags) {
  Plan p = twoRankPlan();
  ShardGroupAttrs a = readShardGroupAttrs(
      p, group("shard_ids_group",
               {{"tables", {1, 0}}, {"weighted", {true, false}}, {"per_bag_mean", {true, false}}}));
  ASSERT_EQ(a.tables.size(), 2u);
  EXPECT_EQ(a.tables[0]->name, "b");
  EXPECT_EQ(a.ranks(), 2);
  EXPECT_EQ(a.weights(), 1u);
  EXPECT_EQ(a.localWeights(), 1u);
  EXPECT_TRUE(a.weightsOut(0));
  EXPECT_FALSE(a.weightsOut(1));
  // The pooled-row groups have no flags.
  ShardGroupAttrs pool = readShardGroupAttrs(p, group("shard_pool_group", {{"tables", {0, 1}}}));
  EXPECT_TRUE(pool.weighted.empty());
}

TEST(ShardGroupAttrs, RefusesMalformedGroups) {
  Plan p = twoRankPlan();
  EXPECT_EQ(refusal(p, group("shard_pool_group", nlohmann::json::object())),
            "needs 'tables', a non-empty array of table indices");
  EXPECT_EQ(refusal(p, group("shard_pool_group", {{"tables", nlohmann::json::array()}})),
            "needs 'tables', a non-empty array of table indices");
  EXPECT_EQ(refusal(p, group("shard_pool_group", {{"tables", {0, 7}}})),
            "'tables' holds 7, not a table index below 4");
  EXPECT_EQ(refusal(p, group("shard_pool_group", {{"tables", {0, "1"}}})),
            "'tables' holds \"1\", not a table index below 4");
  EXPECT_EQ(refusal(p, group("shard_pool_group", {{"tables", {0, 3}}})),
            "table 'plain' is not sharded (no shard_rows)");
  EXPECT_EQ(refusal(p, group("shard_pool_grad_group", {{"tables", {0, 2}}})),
            "table 'c' has 3 shards, table 'a' 2");
  EXPECT_EQ(refusal(p, group("shard_ids_group", {{"tables", {0, 1}}, {"weighted", {true}},
                                                  {"per_bag_mean", {false, false}}})),
            "needs 'weighted', one boolean per table (2)");
  EXPECT_EQ(refusal(p, group("shard_ids_group", {{"tables", {0, 1}}, {"weighted", {true, 1}},
                                                  {"per_bag_mean", {false, false}}})),
            "'weighted' holds 1, not a boolean");
  EXPECT_EQ(refusal(p, group("shard_ids_group", {{"tables", {0, 1}}, {"weighted", {true, false}}})),
            "needs 'per_bag_mean', one boolean per table (2)");
}

} // namespace
