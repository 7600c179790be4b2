//===- RematScheduleTest.cpp - -emb-remat's planner against brute force ---===//

#include "RematSchedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace embc::remat;

namespace {

/// Every keep/drop choice of a small chain, evaluated.
std::vector<Schedule> allSchedules(const std::vector<Stage> &stages) {
  std::vector<Schedule> out;
  const size_t n = stages.size();
  for (uint64_t mask = 0; mask < (uint64_t(1) << n); ++mask) {
    std::vector<bool> keep(n);
    for (size_t i = 0; i < n; ++i)
      keep[i] = (mask >> i) & 1;
    out.push_back(evaluate(stages, keep));
  }
  return out;
}

std::vector<Stage> randomChain(std::mt19937 &rng, int n) {
  std::uniform_int_distribution<int64_t> bytes(1, 40), flops(0, 100);
  std::vector<Stage> stages(n);
  for (Stage &s : stages)
    s = {bytes(rng), flops(rng)};
  return stages;
}

TEST(RematSchedule, EvaluateCountsKeptBytesSegmentsAndFlops) {
  std::vector<Stage> chain = {{10, 1}, {20, 2}, {30, 4}, {40, 8}, {50, 16}};
  Schedule s = evaluate(chain, {false, false, true, false, true});
  EXPECT_EQ(s.keptBytes, 80);
  EXPECT_EQ(s.maxSegmentBytes, 40); // stage 3 alone; stages 0 and 1 make 30
  EXPECT_EQ(s.recomputeFlops, 1 + 2 + 8);
  EXPECT_EQ(s.peak(), 120);
  EXPECT_EQ(s.numDropped(), 3);

  Schedule all = keepAll(chain);
  EXPECT_EQ(all.peak(), 150);
  EXPECT_EQ(all.recomputeFlops, 0);
  EXPECT_EQ(all.numDropped(), 0);
}

TEST(RematSchedule, SqrtKeepsAboutSqrtNOfEqualStages) {
  std::vector<Stage> chain(16, Stage{100, 10});
  Schedule s = sqrtSchedule(chain);
  // Threshold 1600 / 4 = 400: every fifth stage passes it.
  EXPECT_EQ(s.keep, std::vector<bool>({false, false, false, false, true, false, false,
                                       false, false, true, false, false, false, false,
                                       true, false}));
  EXPECT_EQ(s.keptBytes, 300);
  EXPECT_EQ(s.maxSegmentBytes, 400);
  EXPECT_EQ(s.recomputeFlops, 130);
}

TEST(RematSchedule, OptimalMatchesBruteForceOnRandomChains) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Stage> chain = randomChain(rng, 1 + trial % 10);
    std::vector<Schedule> all = allSchedules(chain);
    int64_t lowest = all.front().peak(), highest = all.front().peak();
    for (const Schedule &s : all) {
      lowest = std::min(lowest, s.peak());
      highest = std::max(highest, s.peak());
    }
    for (int64_t budget = lowest - 1; budget <= highest; ++budget) {
      std::optional<int64_t> bruteFlops;
      for (const Schedule &s : all)
        if (s.peak() <= budget && (!bruteFlops || s.recomputeFlops < *bruteFlops))
          bruteFlops = s.recomputeFlops;
      std::optional<Schedule> dp = optimalSchedule(chain, budget);
      ASSERT_EQ(dp.has_value(), bruteFlops.has_value())
          << "trial " << trial << " budget " << budget;
      if (!dp)
        continue;
      EXPECT_EQ(dp->recomputeFlops, *bruteFlops) << "trial " << trial << " budget " << budget;
      EXPECT_LE(dp->peak(), budget);
      // The figures the DP reports are those of the choice it returns.
      Schedule again = evaluate(chain, dp->keep);
      EXPECT_EQ(again.peak(), dp->peak());
      EXPECT_EQ(again.recomputeFlops, dp->recomputeFlops);
    }
    // No budget at all: nothing recomputed.
    EXPECT_EQ(optimalSchedule(chain, highest)->recomputeFlops, 0);

    Schedule minimum = minimumMemorySchedule(chain);
    EXPECT_EQ(minimum.peak(), lowest) << "trial " << trial;
    int64_t cheapestAtLowest = INT64_MAX;
    for (const Schedule &s : all)
      if (s.peak() == lowest)
        cheapestAtLowest = std::min(cheapestAtLowest, s.recomputeFlops);
    EXPECT_EQ(minimum.recomputeFlops, cheapestAtLowest) << "trial " << trial;
  }
}

TEST(RematSchedule, OptimalIsNeverWorseThanSqrt) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<Stage> chain = randomChain(rng, 2 + trial % 30);
    Schedule sqrt = sqrtSchedule(chain);
    // At the baseline's own peak the DP recomputes at most as much...
    std::optional<Schedule> dp = optimalSchedule(chain, sqrt.peak());
    ASSERT_TRUE(dp.has_value());
    EXPECT_LE(dp->recomputeFlops, sqrt.recomputeFlops);
    EXPECT_LE(dp->peak(), sqrt.peak());
    // ...and its minimum-memory point is at most the baseline's peak.
    EXPECT_LE(minimumMemorySchedule(chain).peak(), sqrt.peak());
  }
}

TEST(RematSchedule, LongEqualChainsReachAboutTwoSqrtN) {
  // n equal stages: the best peak is about 2 sqrt(n) stages (Chen et al.).
  for (int n : {4, 9, 25, 49}) {
    std::vector<Stage> chain(n, Stage{1, 1});
    Schedule minimum = minimumMemorySchedule(chain);
    EXPECT_LE(minimum.peak(), int64_t(std::ceil(2 * std::sqrt(double(n))))) << n;
    EXPECT_LE(sqrtSchedule(chain).peak(), int64_t(std::ceil(2 * std::sqrt(double(n)))) + 1)
        << n;
  }
}

TEST(RematSchedule, EmptyChainAndImpossibleBudget) {
  std::vector<Stage> none;
  ASSERT_TRUE(optimalSchedule(none, 0).has_value());
  EXPECT_EQ(optimalSchedule(none, 0)->peak(), 0);
  EXPECT_EQ(sqrtSchedule(none).peak(), 0);
  std::vector<Stage> chain = {{10, 1}, {10, 1}};
  // Keeping nothing leaves one segment of 20; keeping one: 10 + 10.
  EXPECT_EQ(minimumMemorySchedule(chain).peak(), 20);
  EXPECT_FALSE(optimalSchedule(chain, 19).has_value());
}

} // namespace
