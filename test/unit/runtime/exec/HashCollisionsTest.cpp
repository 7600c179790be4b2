//===- HashCollisionsTest.cpp - raw ids per hashed bucket -----------------===//
//
// HashCollisions (runtime/lib/exec/HashCollisions.h): the buckets are the
// hash kernel's (cpu::hashIds), the rate is exact for a small id set, the
// distinct-id estimate is within 2% for a large one, and hashedFeatures
// finds the plan's hashed inputs in `hash` kernels and fused lookups.
//
//===----------------------------------------------------------------------===//

#include "HashCollisions.h"

#include "../PlanBuffers.h"
#include "embc/runtime/cpu/Kernels.h"

#include <gtest/gtest.h>

#include <set>

using namespace embc::runtime;
using embc::runtime::testing::addBuffer;
using embc::runtime::testing::addIdsInput;
using embc::runtime::testing::makeKernel;

namespace {

data::FeatureSpec sparse(const std::string &name) {
  data::FeatureSpec s;
  s.name = name;
  s.kind = data::FeatureKind::Sparse;
  return s;
}

/// One feature of `ids`, one id per row; `valid` rows count.
data::Batch batchOf(const std::vector<int64_t> &ids, int64_t valid) {
  data::Batch b;
  b.size = int64_t(ids.size());
  b.valid = valid;
  b.features.resize(1);
  b.features[0].ids = ids;
  for (size_t i = 0; i <= ids.size(); ++i)
    b.features[0].offsets.push_back(int64_t(i));
  return b;
}

} // namespace

TEST(HashCollisions, TheRateOfASmallIdSetIsExact) {
  constexpr int64_t kBuckets = 1000, kIds = 600;
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < kIds; ++i)
    ids.push_back(i * 7919 + 3);
  ids.push_back(ids[0]); // a repeat is no collision
  ids.push_back(-5);     // a padding row: not valid, not counted
  std::vector<int64_t> buckets(ids.size());
  cpu::hashIds(ids.data(), buckets.data(), int64_t(ids.size()), kBuckets, 42);
  const std::set<int64_t> occupied(buckets.begin(), buckets.end() - 1);
  HashCollisions c({{"f", kBuckets, 42}}, {sparse("f")});
  c.add(batchOf(ids, int64_t(ids.size()) - 1));
  const double rate = c.rates().at("f");
  EXPECT_NEAR(rate, 1.0 - double(occupied.size()) / double(kIds), 0.005);
  EXPECT_GT(rate, 0.2); // 600 ids in 1000 buckets: about a quarter collide
}

TEST(HashCollisions, TheDistinctCountOfManyIdsIsWithinTwoPercent) {
  HashCollisions c({{"f", 1 << 24, 1}}, {sparse("f")});
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 200000; ++i)
    ids.push_back(i * 2654435761LL % 1000003 + (i / 1000003) * 1000003);
  for (int pass = 0; pass < 2; ++pass) // each id twice
    c.add(batchOf(ids, int64_t(ids.size())));
  // 200,000 distinct ids in 16M buckets: ~0.6% collide; the estimate's
  // error shows as a rate off by as much.
  EXPECT_NEAR(c.rates().at("f"), 0.006, 0.02);
  std::vector<uint8_t> empty(size_t(1) << HashCollisions::kPrecision, 0);
  EXPECT_EQ(HashCollisions::estimate(empty), 0.0);
}

TEST(HashCollisions, HashedFeaturesComeFromHashKernelsAndFusedLookups) {
  Plan plan;
  auto input = [&](const std::string &feature) { return addIdsInput(plan, feature, 8, 4); };
  auto [a, aOff] = input("a");
  auto [b, bOff] = input("b");
  auto [c, cOff] = input("c");
  const int32_t hashed = addBuffer(plan, "h", BufferRole::Activation, DType::I64, {8}, true);
  const int32_t y = addBuffer(plan, "y", BufferRole::Activation, DType::F32, {4, 8});
  plan.step.push_back(makeKernel("hash", {a}, {hashed}, {{"buckets", 100}, {"seed", 7}}));
  nlohmann::json members = nlohmann::json::array();
  members.push_back({{"table", 0}, {"hash", false}});
  members.push_back({{"table", 1}, {"hash", true}, {"buckets", 50}, {"seed", 3}});
  plan.step.push_back(makeKernel("fused_lookup", {b, bOff, c, cOff}, {y, y}, {{"members", members}}));
  const std::vector<HashedFeature> found = hashedFeatures(plan);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].feature, "a");
  EXPECT_EQ(found[0].buckets, 100);
  EXPECT_EQ(found[0].seed, 7u);
  EXPECT_EQ(found[1].feature, "c");
  EXPECT_EQ(found[1].buckets, 50);
  (void)aOff;
}
